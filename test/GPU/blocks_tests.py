#!/usr/bin/env python3
"""GPU tests of the block-sparse kernels of examples/gpu/blocks.mlir (block
masks of 128 x 128 blocks), through the runtime's binding.

A block mask lists, per query block, the key blocks it visits with the
mask modification (partial) and without it (full); every other key block
is hidden (FlexAttention's BlockMask; docs/Runtime.md). Cases:
  - random masks at sparsities 0.1, 0.5 and 0.9 (the fraction of key
    blocks a query block skips), half of the visited blocks full, the
    lists in random order and padded past their counts with entries the
    kernels must not read, some query blocks with no block at all (their
    rows: O = 0, LSE = -inf); per query head or broadcast over heads and
    batch (stride 0);
  - the same under the causal kernels (bottom_right, Sq != Sk);
  - the document512 mask modification with the blocks its documents give
    (full inside one document, hidden across; mods_tests.py's predicate),
    and with random partial blocks, where the modification decides.
Forward (bf16, D = 64 and 128, ragged Sq and Sk, GQA) against a float64
reference of the same visibility, outputs NaN first; backward (dQ, dK, dV
against float64 autograd, the transposed lists built here too). A call
without a block mask, or with other block sizes, finds no kernel.
Tolerances are gpu_tests.py's.

    python3 test/GPU/blocks_tests.py --manifest DIR/attn.manifest \\
        --lib build-rt/lib/libattn_runtime.so
"""

import math
import os
import sys
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
import attn_runtime  # noqa: E402
import gpu_tests as gt  # noqa: E402
import mods_tests as mt  # noqa: E402

BLOCK = 128
# Garbage past a list's count: the kernels must not read it.
PAD = (-7, 1 << 30)


def random_blocks(b, h, qb, kb, sparsity, full_fraction, gen):
    """A dense block map [b, h, qb, kb]: 0 hidden, 1 partial, 2 full."""
    dev = "cuda"
    keep = torch.rand((b, h, qb, kb), generator=gen, device=dev) >= sparsity
    full = torch.rand((b, h, qb, kb), generator=gen, device=dev) < \
        full_fraction
    blocks = torch.where(keep, torch.where(full, 2, 1), 0).to(torch.int32)
    # Some query block with nothing at all.
    if qb > 1:
        blocks[:, :, qb // 2] = 0
    return blocks


def document_blocks(sq, sk, b, h):
    """The blocks of mods_tests.py's document512 mask: full where both
    blocks lie in one document, partial where the documents overlap
    partly (never with 512-token documents and 128 blocks), else hidden."""
    qb, kb = -(-sq // BLOCK), -(-sk // BLOCK)
    i = torch.arange(qb, device="cuda") * BLOCK
    j = torch.arange(kb, device="cuda") * BLOCK
    same = (i[:, None] // 512) == (j[None, :] // 512)
    return torch.where(same, 2, 0).to(torch.int32).expand(b, h, qb, kb)


def lists(blocks, gen, extra=2):
    """(counts, indices, full counts, full indices) of a block map, each
    row's entries in random order, padded past the count with PAD."""
    b, h, rows, cols = blocks.shape
    n = cols + extra
    out = []
    for kind in (1, 2):
        sel = blocks == kind
        counts = sel.sum(dim=-1).to(torch.int32)
        # Random order: sort random keys, selected entries first.
        key = torch.rand(sel.shape, generator=gen, device="cuda")
        key = torch.where(sel, key, key + 2.0)
        order = key.argsort(dim=-1).to(torch.int32)
        idx = torch.full((b, h, rows, n), PAD[0], dtype=torch.int32,
                         device="cuda")
        idx[..., :cols] = order
        pos = torch.arange(n, device="cuda")
        idx = torch.where(pos < counts[..., None], idx,
                          torch.where(pos % 2 == 0, PAD[0], PAD[1]).to(
                              torch.int32))
        out += [counts.contiguous(), idx.contiguous()]
    return out


def block_mask(blocks, gen, broadcast=False):
    """The binding's block mask object of a block map (its transposed
    lists too); with `broadcast`, the lists of batch 0 and head 0 expanded
    (stride 0) over the others."""
    b, h = blocks.shape[:2]
    if broadcast:
        blocks = blocks[:1, :1]
    kv = lists(blocks, gen)
    q = lists(blocks.transpose(2, 3).contiguous(), gen)
    names = ("counts", "indices", "full_counts", "full_indices")
    m = types.SimpleNamespace(block_q=BLOCK, block_k=BLOCK)
    for prefix, tensors in (("kv_", kv), ("q_", q)):
        for name, t in zip(names, tensors):
            if broadcast:
                t = t.expand((b, h) + tuple(t.shape[2:]))
            attr = ("full_" + prefix + name[5:] if name.startswith("full_")
                    else prefix + name)
            setattr(m, attr, t)
    return m


def visibility(blocks, keep, sq, sk, hq):
    """[B, Hq, Sq, Sk] visibility of a block map (partial blocks where
    `keep` [Sq, Sk] or None allows it, full ones wholly)."""
    b = blocks.shape[0]
    expanded = blocks.expand(b, hq, *blocks.shape[2:])
    dense = expanded.repeat_interleave(BLOCK, dim=2).repeat_interleave(
        BLOCK, dim=3)[:, :, :sq, :sk]
    partial = dense == 1
    if keep is not None:
        partial = partial & keep
    return partial | (dense == 2)


def masked_scores(q, k, causal, scale, visible, mod):
    b, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    s = torch.einsum("bhqd,bhkd->bhqk", q,
                     k.repeat_interleave(hq // hkv, dim=1)) * scale
    i = torch.arange(sq, device=q.device)
    j = torch.arange(sk, device=q.device)
    v = visible.clone()
    if causal != "none":
        diag = i + (sk - sq if causal == "bottom_right" else 0)
        v &= (j[None, :] <= diag[:, None])
    return s.masked_fill(~v, float("-inf")), v


def reference(q, k, v, causal, visible, mod):
    scale = 1.0 / math.sqrt(q.shape[-1])
    s, _ = masked_scores(q.double(), k.double(), causal, scale, visible, mod)
    return mt.attention64(s, v, q.shape[1], k.shape[1])


def reference_grads(q, k, v, dout, causal, visible, mod):
    scale = 1.0 / math.sqrt(q.shape[-1])
    return mt.grads64(
        lambda q, k: masked_scores(q, k, causal, scale, visible, mod), q, k,
        v, dout)


SHAPES = [  # b, hq, hkv, sq, sk
    (2, 8, 8, 1024, 1024), (1, 8, 2, 77, 700), (1, 4, 1, 1100, 600),
    (2, 4, 4, 600, 1300)]
GRAD_SHAPES = [(1, 4, 2, 300, 500), (2, 4, 4, 700, 700), (1, 2, 1, 129, 777)]


def cases():
    for d in (64, 128):
        for kind, shapes in (("forward", SHAPES), ("backward", GRAD_SHAPES)):
            for shape in shapes:
                for sparsity in (0.1, 0.5, 0.9):
                    for broadcast in (False, True):
                        yield dict(kind=kind, d=d, shape=shape,
                                   causal="none", mod=None, blocks="random",
                                   sparsity=sparsity, broadcast=broadcast)
                yield dict(kind=kind, d=d, shape=shape, causal="bottom_right",
                           mod=None, blocks="random", sparsity=0.5,
                           broadcast=False)
                yield dict(kind=kind, d=d, shape=shape, causal="none",
                           mod="document512", blocks="document", sparsity=0,
                           broadcast=False)
                yield dict(kind=kind, d=d, shape=shape, causal="none",
                           mod="document512", blocks="random", sparsity=0.3,
                           broadcast=False)


def run(module, c, gen):
    b, hq, hkv, sq, sk = c["shape"]
    d, dt = c["d"], torch.bfloat16
    q, k, v = mt.random_qkv(c, gen)
    qb, kb = -(-sq // BLOCK), -(-sk // BLOCK)
    if c["blocks"] == "document":
        blocks = document_blocks(sq, sk, b, hq)
    else:
        blocks = random_blocks(b, hq, qb, kb, c["sparsity"], 0.5, gen)
    if c["broadcast"]:
        blocks = blocks[:1, :1].expand(b, hq, qb, kb)
    bm = block_mask(blocks, gen, broadcast=c["broadcast"])
    i = torch.arange(sq, device="cuda")
    j = torch.arange(sk, device="cuda")
    keep = mt.keep_mask(c["mod"], i, j) if c["mod"] else None
    visible = visibility(blocks, keep, sq, sk, hq)
    causal = c["causal"]
    flag = {"none": False, "bottom_right": "bottom_right"}[causal]
    if c["kind"] == "backward":
        o, lse = module.forward(q, k, v, causal=flag, return_lse=True,
                                mod=c["mod"], block_mask=bm)
        dout = torch.randn(o.shape, generator=gen, device="cuda").to(dt)
        grads = [torch.full_like(t, float("nan")) for t in (q, k, v)]
        module.backward(q, k, v, o, dout, lse, *grads, causal=flag,
                        mod=c["mod"], block_mask=bm)
        torch.cuda.synchronize()
        *refs, vis = reference_grads(q, k, v, dout, causal, visible, c["mod"])
        return gt.compare_grads(grads, refs, vis, hkv, "bf16")
    out = torch.full((b, hq, sq, d), float("nan"), dtype=dt, device="cuda")
    lse = torch.full((b, hq, sq), float("nan"), device="cuda")
    module.forward(q, k, v, causal=flag, out=out, lse=lse, mod=c["mod"],
                   block_mask=bm)
    torch.cuda.synchronize()
    ref_o, ref_lse = reference(q, k, v, causal, visible, c["mod"])
    return gt.compare(out, lse, ref_o, ref_lse, "bf16")


def error_cases(module, gen):
    """No block mask, or other block sizes: no kernel."""
    q = torch.randn((1, 2, 256, 64), device="cuda").to(torch.bfloat16)
    # Lists of 64 x 64 blocks (4 of each), which the runtime accepts before
    # it looks for a kernel of those blocks.
    other = block_mask(random_blocks(1, 2, 4, 4, 0.5, 0.5, gen), gen)
    other.block_q = other.block_k = 64
    out = []
    for name, bm in (("none", None), ("64x64", other)):
        try:
            module.forward(q, q, q, block_mask=bm)
            out.append((name, gt.FAIL, "launched"))
        except attn_runtime.AttnError as e:
            ok = e.status_name == "ATTN_ERROR_NO_KERNEL"
            out.append((name, gt.PASS if ok else gt.FAIL, str(e)[:300]))
    return out


def case_name(c):
    return "%s d%d %s %s %s s=%.1f%s %s" % (
        c["kind"], c["d"], c["causal"], c["mod"] or "-", c["blocks"],
        c["sparsity"], " bcast" if c["broadcast"] else "",
        "x".join(map(str, c["shape"])))


if __name__ == "__main__":
    sys.exit(mt.run_suite(4321, cases, case_name, run, error_cases))
