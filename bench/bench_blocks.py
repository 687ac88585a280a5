#!/usr/bin/env python3
"""attn's block-sparse kernels (examples/gpu/blocks.mlir, 128 x 128 blocks)
against FlexAttention with the same BlockMask, in one process on the same
tensors; with --plain-manifest also attn's dense kernels
(examples/gpu/kernels.mlir's), for the speedup of sparsity over dense.

Rows: random block masks at sparsities 0, 0.5, 0.9 and 0.95 (the fraction of
key blocks each query block skips; every visited block full, so no
element mask), and the document512 mask (mods_tests.py) with the blocks
FlexAttention's create_block_mask gives it. The BlockMask is FlexAttention's
(its transposed q lists included); attn reads the same tensors. Each
output is checked against flex's before timing. Forward and forward +
backward, bf16, B = 1, Hq = Hkv = 2048 / D. TFLOP/s count the visible
scores only (4 D per visible (query, key) pair forward, 3.5x that forward +
backward); "x dense" is attn's time for the dense problem (its plain
kernels) over attn's time for the sparse one. Timing: bench_attention.py's
Timer.

    python3 bench/bench_blocks.py --manifest DIR/attn.manifest \\
        [--plain-manifest DIR2/attn.manifest] [--shapes 128:16384,...]
"""

import argparse
import os
import sys
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "test", "GPU"))
import bench_attention as ba  # noqa: E402
import attn_runtime  # noqa: E402
# The compiled flex_attention (and dynamo's recompile limits) of
# bench_mods.py.
from bench_mods import create_block_mask, flex  # noqa: E402

if flex is not None:
    from torch.nn.attention.flex_attention import BlockMask

BLOCK = 128


def attn_mask_of(bm):
    """attn's block mask object over FlexAttention's BlockMask tensors."""
    zeros = torch.zeros_like(bm.kv_num_blocks)
    pick = lambda t, z: t if t is not None else z  # noqa: E731
    return types.SimpleNamespace(
        block_q=BLOCK, block_k=BLOCK,
        kv_counts=bm.kv_num_blocks, kv_indices=bm.kv_indices,
        full_kv_counts=pick(bm.full_kv_num_blocks, zeros),
        full_kv_indices=pick(bm.full_kv_indices, bm.kv_indices),
        q_counts=bm.q_num_blocks, q_indices=bm.q_indices,
        full_q_counts=pick(bm.full_q_num_blocks,
                           torch.zeros_like(bm.q_num_blocks)),
        full_q_indices=pick(bm.full_q_indices, bm.q_indices))


def random_block_mask(h, s, sparsity, gen):
    """A FlexAttention BlockMask whose visited blocks are all full:
    each (head, query block) keeps each key block with 1 - sparsity (at
    least one)."""
    n = s // BLOCK
    keep = torch.rand((1, h, n, n), generator=gen, device="cuda") >= sparsity
    keep[..., 0] |= ~keep.any(dim=-1)
    counts = keep.sum(dim=-1).to(torch.int32)
    order = torch.where(keep, 0, 1).argsort(dim=-1, stable=True).to(
        torch.int32)
    none = torch.zeros_like(counts)
    bm = BlockMask.from_kv_blocks(none, order, counts, order,
                                  BLOCK_SIZE=BLOCK, mask_mod=None)
    return bm, float(keep.sum()) * BLOCK * BLOCK


def document(b, h, i, j):
    return (i // 512) == (j // 512)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--plain-manifest")
    ap.add_argument("--lib")
    ap.add_argument("--shapes", default="64:16384,128:16384,128:4096")
    ap.add_argument("--target-ms", type=float, default=200)
    args = ap.parse_args()
    if flex is None:
        print("flex_attention unavailable")
        return 1
    lib = attn_runtime.load_library(args.lib)
    module = attn_runtime.Module(args.manifest, lib=lib)
    plain = (attn_runtime.Module(args.plain_manifest, lib=lib)
             if args.plain_manifest else None)
    timer = ba.Timer(args.target_ms, warmup=3, min_iters=5, max_iters=200)
    gen = torch.Generator(device="cuda").manual_seed(7)
    print("%-14s %4s %6s %-5s %-8s %9s %9s %7s %9s" % (
        "mask", "D", "S", "pass", "what", "attn", "flex", "a/flex",
        "x dense"))
    for shape in args.shapes.split(","):
        d, s = map(int, shape.split(":"))
        h = 2048 // d
        dt = torch.bfloat16
        q, k, v, dout = (torch.randn((1, h, s, d), device="cuda", dtype=dt)
                         for _ in range(4))
        dense_ms = {}
        if plain is not None:
            for what, impl in (
                    ("fwd", lambda: plain.forward(q, k, v)),
                    ("fwd+bwd",
                     lambda: fwd_bwd(plain, q, k, v, dout, None, None))):
                dense_ms[what] = timer.graph_ms([impl]) or timer.median_ms(
                    [impl])
        rows = [("sparse %.2f" % sp,) + random_block_mask(h, s, sp, gen) +
                (None,) for sp in (0.0, 0.5, 0.9, 0.95)]
        bm = create_block_mask(document, None, None, s, s, device="cuda")
        i = torch.arange(s, device="cuda")
        pairs = float(((i[:, None] // 512) == (i[None, :] // 512)).sum()) * h
        rows.append(("document512", bm, pairs, document))
        for name, fbm, pairs, mask_mod in rows:
            row(module, timer, name, d, s, q, k, v, dout, fbm, pairs,
                mask_mod, dense_ms)
        del q, k, v, dout
        torch.cuda.empty_cache()
    return 0


def fwd_bwd(m, q, k, v, dout, bm, mod):
    o, lse = m.forward(q, k, v, return_lse=True, block_mask=bm, mod=mod)
    return m.backward(q, k, v, o, dout, lse, block_mask=bm, mod=mod)


def row(module, timer, name, d, s, q, k, v, dout, fbm, pairs, mask_mod,
        dense_ms):
    bm = attn_mask_of(fbm)
    mod = "document512" if mask_mod is not None else None
    leaf = [t.detach().requires_grad_() for t in (q, k, v)]
    flops = {"fwd": 4 * d * pairs, "fwd+bwd": 14 * d * pairs}

    def attn_fwd():
        return module.forward(q, k, v, block_mask=bm, mod=mod)

    def attn_fwd_bwd():
        return fwd_bwd(module, q, k, v, dout, bm, mod)

    def flex_fwd():
        return flex(q, k, v, block_mask=fbm)

    def flex_fwd_bwd():
        o = flex(*leaf, block_mask=fbm)
        return torch.autograd.grad(o, leaf, dout)

    ref = flex_fwd()
    got = attn_fwd()
    err = ba.rel_error(got, ref)
    check = "ok" if err < 2e-2 else "BAD %.1e" % err
    for what, impls in (("fwd", (attn_fwd, flex_fwd)),
                        ("fwd+bwd", (attn_fwd_bwd, flex_fwd_bwd))):
        times = []
        for impl in impls:
            ms = timer.graph_ms([impl])
            if ms is None:
                ms = timer.median_ms([impl])
            times.append(ms)
        rate = [flops[what] / ms / 1e9 for ms in times]
        dense = dense_ms.get(what)
        print("%-14s %4d %6d %-5s %-8s %9.1f %9.1f %7.2f %9s" % (
            name, d, s, check, what, rate[0], rate[1], rate[0] / rate[1],
            "%.2f" % (dense / times[0]) if dense else "-"), flush=True)


if __name__ == "__main__":
    sys.exit(main())
