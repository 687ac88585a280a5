#!/usr/bin/env python3
"""attn's score and mask modification kernels against FlexAttention and
SDPA with a materialised mask, in one process on the same tensors.
With --plain-manifest, attn's kernels without a modification run too
("plain": the same FLOP count, so for a mask it is the dense rate).

The kernels are examples/gpu/mods.mlir's (softcap, alibi16, prefix_lm256,
document512; test/GPU/mods_tests.py defines them), or with --operands
examples/gpu/mod-operands.mlir's, which read tensors (docmask, relbias,
alibi_slopes, padmask; test/GPU/mod_operands_tests.py defines them and
makes the tensors, which flex's functions read too). Peers:
  - flex: torch.compile'd flex_attention with the same score_mod, or the
    same mask_mod as a block mask (create_block_mask: it skips the blocks
    the mask hides);
  - sdpa: F.scaled_dot_product_attention with the modification as a
    materialised [Sq, Sk] mask (ALiBi as an additive [Hq, Sq, Sk] bias; the
    soft-cap has none, so no SDPA row).
Each output is checked against flex's before timing. Forward and forward +
backward (attn: forward then backward calls; peers: autograd), bf16, B S =
16384, Hq = Hkv = 2048 / D. TFLOP/s count the visible scores only (4 D per
visible (query, key) pair forward, 3.5x that forward + backward), so that
a mask that hides half the keys does not double anyone's rate. With --operands
the masks also run with flex's block mask handed to attn ("attn+bm":
mod-operands.mlir's blocks=128x128 kernels; without --operands, the
prefix-LM and document masks at D = 128 do, mods.mlir's), and the documents of the
document mask are 1024 tokens long on average. With --atomic-manifest
(the same .mlir compiled with attn-compile --atomic-dq) attn's backward
runs the atomic dQ kernels, as flex's does. Timing:
bench_attention.py's Timer (CUDA graphs where the calls can be captured,
else CUDA events).

    python3 bench/bench_mods.py --manifest DIR/attn.manifest \\
        [--lib build-rt/lib/libattn_runtime.so] [--shapes 64:2048,...]
"""

import argparse
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "test", "GPU"))
import bench_attention as ba  # noqa: E402
import attn_runtime  # noqa: E402
import mod_operands_tests as mot  # noqa: E402
import mods_tests as mt  # noqa: E402

# One compiled flex_attention serves every row: its recompilations (a new
# score_mod, mask, shape or requires_grad) must not hit dynamo's limit of 8,
# past which it runs flex_attention eagerly (and slowly).
torch._dynamo.config.recompile_limit = 256
torch._dynamo.config.accumulated_recompile_limit = 4096

try:
    from torch.nn.attention.flex_attention import (create_block_mask,
                                                   flex_attention)
    flex = torch.compile(flex_attention, dynamic=False)
except Exception as e:  # noqa: BLE001 - reported per row
    flex, create_block_mask = None, None
    FLEX_ERROR = str(e)


def flex_mods(name, causal):
    """(score_mod, mask_mod) of `name` in FlexAttention's terms."""
    def softcap(s, b, h, i, j):
        return 30.0 * torch.tanh(s / 30.0)

    def alibi(s, b, h, i, j):
        slope = torch.exp2(-(h + 1).to(torch.float32) / 2.0)
        return s - slope * (i - j).abs().to(torch.float32)

    def prefix(b, h, i, j):
        return (j < 256) | (j <= i)

    def document(b, h, i, j):
        return (i // 512) == (j // 512)

    def causal_br(b, h, i, j):
        return j <= i  # Sq == Sk here: bottom_right is top_left

    score = {"softcap": softcap, "alibi16": alibi}.get(name)
    mask = {"prefix_lm256": prefix, "document512": document}.get(name)
    if causal == "bottom_right":
        mask = causal_br if mask is None else mask
    return score, mask


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--lib")
    ap.add_argument("--shapes", default="64:2048,128:2048,64:8192,128:8192")
    ap.add_argument("--target-ms", type=float, default=200)
    ap.add_argument("--plain-manifest",
                    help="kernels without modifications (examples/gpu/"
                         "kernels.mlir's): their forward and backward on the "
                         "same shapes, the cost of a modification's absence")
    ap.add_argument("--operands", action="store_true",
                    help="the modifications that read tensors "
                         "(examples/gpu/mod-operands.mlir)")
    ap.add_argument("--atomic-manifest",
                    help="the same ops compiled with attn-compile "
                         "--atomic-dq: attn's backward (fwd+bwd rows) runs "
                         "their atomic dQ kernels")
    args = ap.parse_args()
    lib = attn_runtime.load_library(args.lib)
    module = attn_runtime.Module(args.manifest, lib=lib)
    atomic = (attn_runtime.Module(args.atomic_manifest, lib=lib)
              if args.atomic_manifest else None)
    plain = (attn_runtime.Module(args.plain_manifest, lib=lib)
             if args.plain_manifest else None)
    timer = ba.Timer(args.target_ms, warmup=3, min_iters=5, max_iters=200)
    print("%-14s %4s %6s %-12s %-5s %9s %9s %9s %7s %7s %9s %9s %7s" % (
        "mod", "D", "S", "causal", "pass", "attn", "flex", "sdpa",
        "a/flex", "a/sdpa", "plain", "attn+bm", "bm/flex"))
    for shape in args.shapes.split(","):
        d, s = map(int, shape.split(":"))
        b, h = max(1, 16384 // s), 2048 // d
        if args.operands:
            for name, dims, kinds in mot.MODS:
                for causal in kinds:
                    if d in dims and (name != "relbias" or s <= 4096):
                        row(module, plain, timer, name, causal, b, h, s, d,
                            operand_case, atomic)
            continue
        for name, kinds in mt.MODS:
            for causal in kinds:
                if name == "softcap" and causal == "none" and s > 2048:
                    continue
                row(module, plain, timer, name, causal, b, h, s, d,
                    atomic=atomic)


def plain_case(name, causal, b, h, s, dt):
    """mods.mlir's `name`: (visible [Sq, Sk], flex's score_mod and
    mask_mod, SDPA's mask or None, the tensors attn's call passes)."""
    i = torch.arange(s, device="cuda")
    visible = torch.ones((s, s), dtype=torch.bool, device="cuda")
    if causal != "none":
        visible &= i[None, :] <= i[:, None]
    keep = mt.keep_mask(name, i, i)
    if keep is not None:
        visible &= keep
    score, mask = flex_mods(name, causal)
    sdpa_mask = None
    if name == "alibi16":
        slope = torch.exp2(-(torch.arange(h, device="cuda") + 1.0) / 2.0)
        sdpa_mask = (-slope[:, None, None] *
                     (i[:, None] - i[None, :]).abs().float()).to(dt)
        sdpa_mask = sdpa_mask.masked_fill(~visible, float("-inf"))
    elif name != "softcap":
        sdpa_mask = visible
    return visible, score, mask, sdpa_mask, None


def operand_case(name, causal, b, h, s, dt):
    """mod-operands.mlir's `name`, with a fresh tensor (plain_case's
    terms, `visible` broadcasting to [B, Hq, Sq, Sk]): flex's functions
    index the same tensor."""
    gen = torch.Generator(device="cuda").manual_seed(7)
    t = mot.make_operand(name, (b, h, h, s, s), gen, doc_length=1024)
    i = torch.arange(s, device="cuda")
    visible = torch.ones((s, s), dtype=torch.bool, device="cuda")
    if causal != "none":  # Sq == Sk: both causal kinds hide j > i
        visible &= i[None, :] <= i[:, None]
    score = keep = None
    sdpa_mask = None
    if name == "relbias":
        def score(sc, b_, h_, i_, j_):
            return sc + t[h_, j_ - i_ + 4095].to(torch.float32)
        sdpa_mask = t[:, i[None, :] - i[:, None] + 4095]
    elif name == "alibi_slopes":
        def score(sc, b_, h_, i_, j_):
            return sc - t[h_] * (i_ - j_).abs().to(torch.float32)
        sdpa_mask = (-t[:, None, None] *
                     (i[:, None] - i[None, :]).abs().float()).to(dt)
    elif name == "docmask":
        def keep(b_, h_, i_, j_):
            return t[b_, i_] == t[b_, j_]
        visible = visible & (t[:, :, None] == t[:, None, :])[:, None]
    elif name == "padmask":
        def keep(b_, h_, i_, j_):
            return t[b_, j_]
        visible = visible & t[:, None, None, :]

    def causal_keep(b_, h_, i_, j_):
        return j_ <= i_

    mask = keep
    if causal != "none":
        mask = causal_keep if keep is None else (
            lambda b_, h_, i_, j_: keep(b_, h_, i_, j_) & (j_ <= i_))
    if sdpa_mask is None:
        sdpa_mask = visible
    else:
        sdpa_mask = sdpa_mask.masked_fill(~visible, float("-inf"))
    return visible, score, mask, sdpa_mask, [t]


def row(module, plain, timer, name, causal, b, h, s, d, case=plain_case,
        atomic=None):
    dt = torch.bfloat16
    q, k, v, dout = (torch.randn((b, h, s, d), device="cuda", dtype=dt)
                     for _ in range(4))
    flag = {"none": False, "bottom_right": "bottom_right",
            "top_left": "top_left"}[causal]
    visible, score, mask, sdpa_mask, operands = case(name, causal, b, h, s,
                                                     dt)
    pairs = float(visible.expand(b, h, s, s).sum())
    flops = {"fwd": 4 * d * pairs, "fwd+bwd": 14 * d * pairs}
    # A mask of the batch (a tensor's) needs B in the block mask.
    block = (create_block_mask(mask, b if visible.dim() == 4 else None, None,
                               s, s, device="cuda")
             if mask is not None and create_block_mask else None)
    mod = dict(mod=name)
    if operands:
        mod["mod_operands"] = operands

    leaf = [t.detach().requires_grad_() for t in (q, k, v)]

    def attn_fwd():
        return module.forward(q, k, v, causal=flag, **mod)

    # attn's backward: `module`'s, or the atomic dQ kernels of `atomic`.
    grad = atomic or module
    grad_kw = dict(atomic_dq=True) if atomic else {}

    def attn_fwd_bwd():
        o, lse = module.forward(q, k, v, causal=flag, return_lse=True, **mod)
        return grad.backward(q, k, v, o, dout, lse, causal=flag, **mod,
                             **grad_kw)

    def plain_fwd():
        return plain.forward(q, k, v, causal=flag)

    def plain_fwd_bwd():
        o, lse = plain.forward(q, k, v, causal=flag, return_lse=True)
        return plain.backward(q, k, v, o, dout, lse, causal=flag)

    def flex_fwd():
        return flex(q, k, v, score_mod=score, block_mask=block)

    def flex_fwd_bwd():
        o = flex(*leaf, score_mod=score, block_mask=block)
        return torch.autograd.grad(o, leaf, dout)

    def sdpa_fwd():
        return F.scaled_dot_product_attention(q, k, v, attn_mask=sdpa_mask)

    def sdpa_fwd_bwd():
        o = F.scaled_dot_product_attention(*leaf, attn_mask=sdpa_mask)
        return torch.autograd.grad(o, leaf, dout)

    ref = flex_fwd() if flex else None
    got = attn_fwd()
    check = "n/a" if ref is None else (
        "ok" if ba.rel_error(got, ref) < 2e-2 else
        "BAD %.1e" % ba.rel_error(got, ref))
    # The masks with flex's block mask given to attn too: those that read
    # tensors (mod-operands.mlir's kernels with blocks=128x128) and, at
    # D = 128, mods.mlir's prefix-LM and document masks.
    blocked = None
    if name in ("docmask", "padmask") or (
            d == 128 and name in ("prefix_lm256", "document512")):
        import bench_blocks  # it imports this file's flex
        blocked = dict(mod, block_mask=bench_blocks.attn_mask_of(block))

    def attn_blocks_fwd():
        return module.forward(q, k, v, causal=flag, **blocked)

    def attn_blocks_fwd_bwd():
        o, lse = module.forward(q, k, v, causal=flag, return_lse=True,
                                **blocked)
        return grad.backward(q, k, v, o, dout, lse, causal=flag, **blocked,
                             **grad_kw)

    if blocked and ref is not None:
        got = attn_blocks_fwd()
        check += "" if ba.rel_error(got, ref) < 2e-2 else "/BAD %.1e" % (
            ba.rel_error(got, ref))
    for what, impls in (("fwd", (attn_fwd, flex_fwd, sdpa_fwd, plain_fwd,
                                 attn_blocks_fwd)),
                        ("fwd+bwd", (attn_fwd_bwd, flex_fwd_bwd,
                                     sdpa_fwd_bwd, plain_fwd_bwd,
                                     attn_blocks_fwd_bwd))):
        rates = []
        for impl in impls:
            if (impl in (flex_fwd, flex_fwd_bwd) and not flex) or (
                    impl in (sdpa_fwd, sdpa_fwd_bwd) and sdpa_mask is None) or (
                    impl in (plain_fwd, plain_fwd_bwd) and plain is None) or (
                    impl in (attn_blocks_fwd, attn_blocks_fwd_bwd) and
                    not blocked):
                rates.append(None)
                continue
            try:
                ms = timer.graph_ms([impl])
                if ms is None:
                    ms = timer.median_ms([impl])
                rates.append(flops[what] / ms / 1e9)
            except Exception as e:  # noqa: BLE001 - a peer refused: reported
                print("  %s %s: %s" % (impl.__name__, what, str(e)[:200]))
                rates.append(None)
        fmt = lambda x: "%9.1f" % x if x else "%9s" % "-"  # noqa: E731
        ratio = lambda a, p: "%7.2f" % (a / p) if a and p else "%7s" % "-"  # noqa: E731
        print("%-14s %4d %6d %-12s %-5s %s %s %s %s %s %s %s %s  (%s)" % (
            name, d, s, causal, check, fmt(rates[0]), fmt(rates[1]),
            fmt(rates[2]), ratio(rates[0], rates[1]),
            ratio(rates[0], rates[2]), fmt(rates[3]), fmt(rates[4]),
            ratio(rates[4], rates[1]), what), flush=True)
    del q, k, v, dout, leaf
    torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
