#!/usr/bin/env python3
"""GPU tests of the modifications that read tensors (mod_operands), the
kernels of examples/gpu/mod-operands.mlir, through the runtime's binding.

The modifications, as that file writes them (and as the float64 reference
here computes them, independently of the compiler), with the tensors each
call passes (random, fresh per case):
  docmask       mask_mod   keep doc[b, i] == doc[b, j]; doc i64 [B, S]
                           (S = max(Sq, Sk)), documents of random lengths
  padmask       mask_mod   keep pad[b, j]; pad bool [B, Sk], one batch
                           entry with no key kept (O = 0, LSE = -inf)
  relbias       score_mod  s + table[h, j - i + 4095]; table bf16
                           [Hq, 8191] (an offset outside it reads the
                           edge: the kernels clamp indices)
  alibi_slopes  score_mod  s - slopes[h] |i - j|; slopes f32 [Hq]
Forward cases (bf16, D = 64 and 128; padmask 128 only) with the causal
kinds the kernels were built for, ragged Sq != Sk and GQA; the masks also
with a block mask of 128 x 128 blocks computed from the tensor (visited
where a key is kept, full where all are: the kernels skip the
modification there); split-KV decode
cases (padmask, alibi_slopes, D = 128); backward cases against float64
autograd. Outputs are NaN first; tolerances are gpu_tests.py's. The runtime
refuses a call whose tensors do not fit the kernels: none given, another
dtype, another rank.

    python3 test/GPU/mod_operands_tests.py --manifest DIR/attn.manifest \\
        --lib build-rt/lib/libattn_runtime.so
"""

import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
import attn_runtime  # noqa: E402
import blocks_tests as bt  # noqa: E402
import gpu_tests as gt  # noqa: E402
import mods_tests as mt  # noqa: E402


def make_operand(name, shape, gen, doc_length=40):
    """The tensor modification `name` reads for a case of `shape`."""
    b, hq, hkv, sq, sk = shape
    dev = "cuda"
    if name == "docmask":
        s = max(sq, sk)
        # Documents of random lengths: a new one starts at 1 in doc_length
        # tokens.
        starts = torch.rand((b, s), generator=gen, device=dev) < \
            1 / doc_length
        return torch.cumsum(starts.to(torch.int64), dim=1)
    if name == "padmask":
        keep = torch.rand((b, sk), generator=gen, device=dev) < 0.8
        if b > 1:
            keep[-1] = False  # a batch entry whose rows see no key
        return keep
    if name == "relbias":
        return torch.randn((hq, 8191), generator=gen, device=dev).to(
            torch.bfloat16)
    if name == "alibi_slopes":
        return torch.rand((hq,), generator=gen, device=dev) * 0.5 + 0.01
    raise ValueError(name)


def scores(name, t, q, k, causal, scale):
    """The masked float64 scores [B, Hq, Sq, Sk] and their visibility."""
    hq, sq, sk = q.shape[1], q.shape[2], k.shape[2]
    dev = q.device
    s = torch.einsum("bhqd,bhkd->bhqk", q,
                     k.repeat_interleave(hq // k.shape[1], dim=1)) * scale
    i = torch.arange(sq, device=dev)
    j = torch.arange(sk, device=dev)
    visible = torch.ones((q.shape[0], 1, sq, sk), dtype=torch.bool,
                         device=dev)
    if name == "relbias":
        # Past 4096 keys the offset leaves the table: the kernels clamp
        # every index into its dim (edge elements).
        at = (j[None, :] - i[:, None] + 4095).clamp(0, t.shape[1] - 1)
        s = s + t.double()[:, at][None]
    if name == "alibi_slopes":
        dist = (i[:, None] - j[None, :]).abs().double()
        s = s - t.double()[None, :, None, None] * dist
    if name == "docmask":
        visible &= (t[:, :sq, None] == t[:, None, :sk])[:, None]
    if name == "padmask":
        visible &= t[:, None, None, :]
    if causal != "none":
        diag = i + (sk - sq if causal == "bottom_right" else 0)
        visible &= (j[None, :] <= diag[:, None])[None, None]
    visible = visible.expand(s.shape)
    return s.masked_fill(~visible, float("-inf")), visible


def block_map(name, t, causal, sq, sk):
    """The 128 x 128 block map [B, 1, QB, KB] (0 hidden, 1 partial, 2
    full: blocks_tests.py's) of mask modification `name` on tensor t: a
    block is visited where the mask and the causal kind keep a key in it,
    full where the mask keeps every one (the kernels still apply the
    causal kind and the bounds there)."""
    q = torch.zeros((t.shape[0], 1, sq, 1), dtype=torch.float64,
                    device="cuda")
    k = torch.zeros((t.shape[0], 1, sk, 1), dtype=torch.float64,
                    device="cuda")
    _, keep = scores(name, t, q, k, "none", 1.0)
    _, seen = scores(name, t, q, k, causal, 1.0)
    n = bt.BLOCK
    qb, kb = -(-sq // n), -(-sk // n)

    def blocks(x, fill):
        padded = torch.full((x.shape[0], 1, qb * n, kb * n), fill,
                            dtype=torch.bool, device="cuda")
        padded[:, :, :sq, :sk] = x
        return padded.view(x.shape[0], 1, qb, n, kb, n)

    any_seen = blocks(seen, False).any(dim=5).any(dim=3)
    all_kept = blocks(keep, True).all(dim=5).all(dim=3)
    return torch.where(any_seen, torch.where(all_kept, 2, 1), 0).to(
        torch.int32)


# (modification, head dims, causal kinds its kernels have)
MODS = [("docmask", (64, 128), ("none", "top_left")),
        ("relbias", (64, 128), ("none",)),
        ("alibi_slopes", (64, 128), ("bottom_right",)),
        ("padmask", (128,), ("none",))]
SHAPES = mt.SHAPES
GRAD_SHAPES = mt.GRAD_SHAPES
DECODE_SHAPES = [(8, 32, 8, 1, 4096), (3, 32, 8, 1, 1000),
                 (1, 8, 2, 1, 70000), (3, 32, 8, 4, 1000)]


def cases():
    for name, dims, kinds in MODS:
        for d in dims:
            for causal in kinds:
                for shape in SHAPES:
                    yield dict(kind="forward", mod=name, d=d, causal=causal,
                               shape=shape)
                for shape in GRAD_SHAPES:
                    yield dict(kind="backward", mod=name, d=d,
                               causal=causal, shape=shape)
    # With a block mask of the mask (doc ids of 300 tokens on average, so
    # that some blocks are full).
    for name, dims, kinds in MODS:
        if name not in ("docmask", "padmask"):
            continue
        for d in dims:
            for causal in kinds:
                for shape in SHAPES[:4]:
                    yield dict(kind="forward", mod=name, d=d, causal=causal,
                               shape=shape, blocks=True)
                for shape in GRAD_SHAPES:
                    yield dict(kind="backward", mod=name, d=d,
                               causal=causal, shape=shape, blocks=True)
    # Offsets past the table's ends (clamped): compute-sanitizer's memcheck
    # runs this one too.
    for d in (64, 128):
        yield dict(kind="forward", mod="relbias", d=d, causal="none",
                   shape=(1, 2, 2, 300, 6000))
    for name in ("padmask", "alibi_slopes"):
        for shape in DECODE_SHAPES:
            yield dict(kind="decode", mod=name, d=128, causal="none",
                       shape=shape)


def run(module, c, gen):
    b, hq, hkv, sq, sk = c["shape"]
    d, dt = c["d"], torch.bfloat16
    q, k, v = mt.random_qkv(c, gen)
    blocks = c.get("blocks", False)
    t = make_operand(c["mod"], c["shape"], gen, 300 if blocks else 40)
    causal = c["causal"]
    flag = {"none": False, "bottom_right": "bottom_right",
            "top_left": "top_left"}[causal]
    scale = 1.0 / math.sqrt(d)
    mod = dict(mod=c["mod"], mod_operands=[t])
    if blocks:
        mod["block_mask"] = bt.block_mask(
            block_map(c["mod"], t, causal, sq, sk), gen)
    if c["kind"] == "backward":
        o, lse = module.forward(q, k, v, causal=flag, return_lse=True, **mod)
        dout = torch.randn(o.shape, generator=gen, device="cuda").to(dt)
        grads = [torch.full_like(x, float("nan")) for x in (q, k, v)]
        module.backward(q, k, v, o, dout, lse, *grads, causal=flag, **mod)
        torch.cuda.synchronize()
        *refs, visible = mt.grads64(
            lambda q, k: scores(c["mod"], t, q, k, causal, scale), q, k, v,
            dout)
        return gt.compare_grads(grads, refs, visible, hkv, "bf16")
    out = torch.full((b, hq, sq, d), float("nan"), dtype=dt, device="cuda")
    lse = torch.full((b, hq, sq), float("nan"), device="cuda")
    call = module.decode if c["kind"] == "decode" else module.forward
    call(q, k, v, causal=flag, out=out, lse=lse, **mod)
    torch.cuda.synchronize()
    s, _ = scores(c["mod"], t, q.double(), k.double(), causal, scale)
    ref_o, ref_lse = mt.attention64(s, v, hq, hkv)
    return gt.compare(out, lse, ref_o, ref_lse, "bf16")


def error_cases(module, gen):
    """Tensors that do not fit docmask's kernels: each refused, by status."""
    q = torch.randn((1, 2, 64, 64), device="cuda").to(torch.bfloat16)
    doc = torch.zeros((1, 64), dtype=torch.int64, device="cuda")
    tries = [
        ("no tensors", None, "ATTN_ERROR_INVALID_ARGUMENT"),
        ("i32 ids", [doc.to(torch.int32)], "ATTN_ERROR_DTYPE"),
        ("rank 1", [doc[0]], "ATTN_ERROR_SHAPE"),
        ("two tensors", [doc, doc], "ATTN_ERROR_INVALID_ARGUMENT"),
    ]
    out = []
    for label, operands, want in tries:
        try:
            module.forward(q, q, q, mod="docmask", mod_operands=operands)
            out.append((label, gt.FAIL, "launched"))
        except attn_runtime.AttnError as e:
            ok = e.status_name == want
            out.append((label, gt.PASS if ok else gt.FAIL, str(e)[:300]))
    return out


def main():
    return mt.run_suite(
        4321, cases,
        lambda c: "%s %s%s d%d %s %s" % (
            c["kind"], c["mod"], "+blocks" if c.get("blocks") else "",
            c["d"], c["causal"], "x".join(map(str, c["shape"]))),
        run, error_cases)


if __name__ == "__main__":
    sys.exit(main())
