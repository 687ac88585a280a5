#!/usr/bin/env python3
"""GPU tests of the score and mask modification kernels of
examples/gpu/mods.mlir, through the runtime's binding.

The modifications, as that file writes them (and as the float64 reference
here computes them, independently of the compiler):
  softcap       score_mod  s -> 30 tanh(s / 30)
  alibi16       score_mod  s -> s - 2^(-(h + 1) / 2) |i - j|
  prefix_lm256  mask_mod   keep j < 256 or j <= i
  document512   mask_mod   keep i // 512 == j // 512
Forward cases (bf16, D = 64 and 128) run each modification with the causal
kinds its kernels were built for, ragged Sq != Sk, GQA, and rows that see no
key (the document mask with Sq > Sk: O = 0, LSE = -inf); decode cases run
the soft-cap's split-KV kernels; backward cases compare dQ, dK, dV with
float64 autograd through the same modification; the prefix-LM and
document masks also run at D = 128 with a block mask of themselves (the
blocks=128x128 kernels: unlisted blocks never read, full ones without the
mask). Outputs are NaN first.
Tolerances are gpu_tests.py's. A call without `mod` must not reach these
kernels (the module has no plain ones: ATTN_ERROR_NO_KERNEL), and an
unknown name is ATTN_ERROR_NO_KERNEL too.

    python3 test/GPU/mods_tests.py --manifest DIR/attn.manifest \\
        --lib build-rt/lib/libattn_runtime.so
"""

import argparse
import math
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
import attn_runtime  # noqa: E402
import gpu_tests as gt  # noqa: E402


def score_mod(name, s, h, i, j):
    """The modified scores of s [..., H, Sq, Sk] (float64)."""
    if name == "softcap":
        return 30.0 * torch.tanh(s / 30.0)
    if name == "alibi16":
        slope = torch.exp2(-(h.double() + 1.0) / 2.0)[:, None, None]
        return s - slope * (i[:, None] - j[None, :]).abs().double()
    return s


def keep_mask(name, i, j):
    """[Sq, Sk] keep predicate of a mask modification, or None."""
    if name == "prefix_lm256":
        return (j[None, :] < 256) | (j[None, :] <= i[:, None])
    if name == "document512":
        return (i[:, None] // 512) == (j[None, :] // 512)
    return None


def scores(name, q, k, causal, scale):
    """The masked scores [B, Hq, Sq, Sk] in float64 (autograd-able)."""
    b, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    dev = q.device
    s = torch.einsum("bhqd,bhkd->bhqk", q,
                     k.repeat_interleave(hq // hkv, dim=1)) * scale
    h = torch.arange(hq, device=dev)
    i = torch.arange(sq, device=dev)
    j = torch.arange(sk, device=dev)
    s = score_mod(name, s, h, i, j)
    visible = torch.ones((sq, sk), dtype=torch.bool, device=dev)
    if causal != "none":
        diag = i + (sk - sq if causal == "bottom_right" else 0)
        visible &= j[None, :] <= diag[:, None]
    keep = keep_mask(name, i, j)
    if keep is not None:
        visible &= keep
    return s.masked_fill(~visible, float("-inf")), visible


def attention64(s, v, hq, hkv):
    """O and LSE of the float64 scores s [B, Hq, Sq, Sk] (-inf where
    hidden; a row with none visible: O = 0, LSE = -inf) and V."""
    lse = torch.logsumexp(s, dim=-1)
    p = torch.nan_to_num(torch.exp(s - lse[..., None]), nan=0.0)
    o = torch.einsum("bhqk,bhkd->bhqd", p,
                     v.double().repeat_interleave(hq // hkv, dim=1))
    return o, lse


def grads64(scores_of, q, k, v, dout):
    """dQ, dK, dV by float64 autograd through `scores_of(q, k)` (the
    masked scores and their visibility), and the visibility."""
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    s, visible = scores_of(q64, k64)
    top = s.detach().amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.exp(s - top)
    total = e.sum(dim=-1, keepdim=True)
    p = e / torch.where(total > 0, total, torch.ones_like(total))
    hq, hkv = q.shape[1], k.shape[1]
    o = torch.einsum("bhqk,bhkd->bhqd", p,
                     v64.repeat_interleave(hq // hkv, dim=1))
    o.backward(dout.double())
    return q64.grad, k64.grad, v64.grad, visible


def reference(name, q, k, v, causal):
    scale = 1.0 / math.sqrt(q.shape[-1])
    s, _ = scores(name, q.double(), k.double(), causal, scale)
    return attention64(s, v, q.shape[1], k.shape[1])


def reference_grads(name, q, k, v, dout, causal):
    scale = 1.0 / math.sqrt(q.shape[-1])
    *grads, visible = grads64(
        lambda q, k: scores(name, q, k, causal, scale), q, k, v, dout)
    b, hq, sq, sk = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    return (*grads, visible[None, None].expand(b, hq, sq, sk))


# (modification, causal kinds its kernels have, backward too)
MODS = [("softcap", ("bottom_right", "none")), ("alibi16", ("bottom_right",)),
        ("prefix_lm256", ("none",)), ("document512", ("none",))]
SHAPES = [  # b, hq, hkv, sq, sk
    (2, 16, 16, 1024, 1024), (1, 8, 2, 77, 300), (1, 4, 1, 1100, 600),
    (2, 4, 4, 600, 1100), (1, 2, 2, 1, 1000)]
GRAD_SHAPES = [(1, 4, 2, 300, 500), (1, 2, 2, 700, 700), (2, 4, 4, 129, 77)]


def block_map(name, b, sq, sk):
    """The 128 x 128 block map [B, 1, QB, KB] (0 hidden, 1 partial, 2
    full: blocks_tests.py's) of mask modification `name` (causal none): a
    block is visited where the mask keeps a key in it, full where it keeps
    every one (the kernels skip the mask there)."""
    import blocks_tests as bt  # it imports this file
    i = torch.arange(sq, device="cuda")
    j = torch.arange(sk, device="cuda")
    keep = keep_mask(name, i, j)
    n = bt.BLOCK
    qb, kb = -(-sq // n), -(-sk // n)

    def blocks(fill):
        padded = torch.full((qb * n, kb * n), fill, dtype=torch.bool,
                            device="cuda")
        padded[:sq, :sk] = keep
        return padded.view(qb, n, kb, n)

    seen = blocks(False).any(dim=3).any(dim=1)
    whole = blocks(True).all(dim=3).all(dim=1)
    m = torch.where(seen, torch.where(whole, 2, 1), 0).to(torch.int32)
    return m[None, None].expand(b, 1, qb, kb).contiguous()


def cases():
    for name, kinds in MODS:
        for d in (64, 128):
            for causal in kinds:
                for shape in SHAPES:
                    yield dict(kind="forward", mod=name, d=d, causal=causal,
                               shape=shape)
                for shape in GRAD_SHAPES:
                    yield dict(kind="backward", mod=name, d=d, causal=causal,
                               shape=shape)
    # The masks with a block mask of themselves (mods.mlir's blocks=128x128
    # kernels, D = 128).
    for name in ("prefix_lm256", "document512"):
        for shape in SHAPES[:4]:
            yield dict(kind="forward", mod=name, d=128, causal="none",
                       shape=shape, blocks=True)
        for shape in GRAD_SHAPES:
            yield dict(kind="backward", mod=name, d=128, causal="none",
                       shape=shape, blocks=True)
    for d in (64, 128):
        for shape in [(8, 32, 8, 1, 4096), (3, 32, 8, 1, 1000),
                      (1, 8, 2, 1, 70000)]:
            yield dict(kind="decode", mod="softcap", d=d, causal="none",
                       shape=shape)


def random_qkv(c, gen):
    """bf16 Q [B, Hq, Sq, D], K and V [B, Hkv, Sk, D] of case `c`."""
    b, hq, hkv, sq, sk = c["shape"]
    return (torch.randn((b, h, s, c["d"]), generator=gen, device="cuda").to(
        torch.bfloat16) for h, s in ((hq, sq), (hkv, sk), (hkv, sk)))


def run(module, c, gen):
    b, hq, hkv, sq, sk = c["shape"]
    d, dt = c["d"], torch.bfloat16
    q, k, v = random_qkv(c, gen)
    causal = c["causal"]
    flag = {"none": False, "bottom_right": "bottom_right"}[causal]
    mod = dict(mod=c["mod"])
    if c.get("blocks"):
        import blocks_tests as bt
        mod["block_mask"] = bt.block_mask(block_map(c["mod"], b, sq, sk), gen)
    if c["kind"] == "backward":
        o, lse = module.forward(q, k, v, causal=flag, return_lse=True, **mod)
        dout = torch.randn(o.shape, generator=gen, device="cuda").to(dt)
        grads = [torch.full_like(t, float("nan")) for t in (q, k, v)]
        module.backward(q, k, v, o, dout, lse, *grads, causal=flag, **mod)
        torch.cuda.synchronize()
        *refs, visible = reference_grads(c["mod"], q, k, v, dout, causal)
        return gt.compare_grads(grads, refs, visible, hkv, "bf16")
    out = torch.full((b, hq, sq, d), float("nan"), dtype=dt, device="cuda")
    lse = torch.full((b, hq, sq), float("nan"), device="cuda")
    call = module.decode if c["kind"] == "decode" else module.forward
    call(q, k, v, causal=flag, out=out, lse=lse, **mod)
    torch.cuda.synchronize()
    ref_o, ref_lse = reference(c["mod"], q, k, v, causal)
    return gt.compare(out, lse, ref_o, ref_lse, "bf16")


def error_cases(module):
    """A plain call and an unknown name find no kernel."""
    q = torch.randn((1, 2, 64, 64), device="cuda").to(torch.bfloat16)
    out = []
    for mod in (None, "no_such_mod"):
        try:
            module.forward(q, q, q, mod=mod)
            out.append((mod, gt.FAIL, "launched"))
        except attn_runtime.AttnError as e:
            ok = e.status_name == "ATTN_ERROR_NO_KERNEL"
            out.append((mod, gt.PASS if ok else gt.FAIL, str(e)[:300]))
    return out


class AtomicBackward:
    """`module`, whose backward calls run `atomic`'s kernels of the atomic dQ
    mode (a manifest of attn-compile --atomic-dq has only those: a call
    they do not cover fails instead of falling back)."""

    def __init__(self, module, atomic):
        self.module, self.atomic = module, atomic

    def __getattr__(self, name):
        return getattr(self.module, name)

    def backward(self, *args, **kwargs):
        return self.atomic.backward(*args, atomic_dq=True, **kwargs)


def run_suite(description_seed, cases, name_of, run, errors):
    """The command line of a GPU test script over one manifest: runs every
    case of `cases()` whose `name_of(case)` holds --filter through
    `run(module, case, gen)`, then `errors(module, gen)` ((name, status,
    detail) triples), one PASS/FAIL line each, and the counts; the exit
    code. --atomic-manifest: the backward cases call that manifest's atomic
    dQ kernels (AtomicBackward)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--atomic-manifest", default=None,
                    help="the same ops compiled with attn-compile "
                         "--atomic-dq: its kernels run the backward")
    ap.add_argument("--lib")
    ap.add_argument("--seed", type=int, default=description_seed)
    ap.add_argument("--filter", default="")
    args = ap.parse_args()
    lib = attn_runtime.load_library(args.lib)
    module = attn_runtime.Module(args.manifest, lib=lib)
    if args.atomic_manifest:
        module = AtomicBackward(
            module, attn_runtime.Module(args.atomic_manifest, lib=lib))
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    passed = failed = 0
    t0 = time.time()
    for c in cases():
        name = name_of(c)
        if args.filter not in name:
            continue
        try:
            r = run(module, c, gen)
        except Exception as e:  # noqa: BLE001 - a failing case, reported
            r = {"status": gt.FAIL, "detail": "%s: %s" % (type(e).__name__, e)}
        ok = r["status"] == gt.PASS
        passed += ok
        failed += not ok
        print("%s %-60s rel_err=%.2e %s" % (
            "PASS" if ok else "FAIL", name,
            r.get("rel_err", r.get("dq_rel_err", float("nan"))),
            r.get("detail", "")), flush=True)
        torch.cuda.empty_cache()
    for name, status, detail in errors(module, gen):
        ok = status == gt.PASS
        passed += ok
        failed += not ok
        print("%s error %s: %s" % ("PASS" if ok else "FAIL", name, detail))
    print("time: %.1fs" % (time.time() - t0))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def main():
    return run_suite(
        1234, cases,
        lambda c: "%s %s%s d%d %s %s" % (
            c["kind"], c["mod"], "+blocks" if c.get("blocks") else "",
            c["d"], c["causal"], "x".join(map(str, c["shape"]))),
        run, lambda module, gen: [("mod=%s" % m, status, detail)
                                  for m, status, detail in
                                  error_cases(module)])


if __name__ == "__main__":
    sys.exit(main())
