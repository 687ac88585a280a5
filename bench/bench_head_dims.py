#!/usr/bin/env python3
"""Head dims past 256: attn's value-block kernels against PyTorch SDPA's
backends that take them, in one process on the same tensors.

    python3 bench/bench_head_dims.py --manifest DIR/attn.manifest \\
        [--lib LIB] [--json OUT]

DIR is `attn-compile examples/gpu/wide-head-dims.mlir` (bf16). Forward rows
(B * S = 16384 tokens, Hq = Hkv = 16): TFLOP/s counted as 2 B H S^2 (D +
Dv), halved causal. Decode rows (MLA's shape: Hq = 128 query heads sharing
one KV head, D = 576, Dv = 512, one query a sequence): GB/s counted as the
K and V bytes read once; where the manifest has the paged decode kernel,
"paged" is attn_decode_paged on the same keys in page pools of 64 keys
[P, 64, 1, D] and [P, 64, 1, Dv] (FlashMLA's page size; the pages in
random order), which a ratio attn/paged < 1 means is slower than the
contiguous cache. Each row gives every implementation's relative
Frobenius error of O against a float64 reference (the first 256 queries of
batch 0; decode: batch 0), its time (bench_attention.Timer: CUDA graphs of
back-to-back calls, the median of 10 replays; inputs rotated past 4x the
L2) and attn / each peer. The SDPA backends that refuse a shape say so.
"""

import argparse
import os
import sys
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_runtime  # noqa: E402
from bench_attention import (Timer, backend_of, reference_rows,  # noqa: E402
                             rotations, rows_error, write_rows)

PEERS = ["flash", "cudnn", "efficient", "math"]
# (D, Dv, S, causal); the math backend materialises S x S per head.
FORWARD = [(d, dv, s, c) for d, dv in ((320, 320), (512, 512), (576, 512))
           for s in (2048, 8192) for c in (False, True)]
# (B, KV length) of MLA decode.
DECODE = [(1, 16384), (8, 16384), (64, 4096), (8, 65536)]


PAGE = 64


def paged_cache(k, v, gen):
    """k [B, 1, S, D] and v [B, 1, S, Dv] as page pools of PAGE keys
    [P, PAGE, 1, D] and [P, PAGE, 1, Dv] (bshd) in a random page order, the
    block table [B, S / PAGE] int32 and the lengths [B] int32."""
    b, _, s, _ = k.shape
    pages = s // PAGE
    order = torch.randperm(b * pages, generator=gen, device=k.device)
    where = torch.empty_like(order)
    where[order] = torch.arange(b * pages, device=k.device)

    def pool(t):
        blocks = t.reshape(b * pages, PAGE, 1, t.shape[-1])
        return blocks[order].contiguous()
    table = where.reshape(b, pages).to(torch.int32)
    lens = torch.full((b,), s, dtype=torch.int32, device=k.device)
    return pool(k), pool(v), table, lens


def run_row(timer, mine, peers, ref, out_of, work):
    """Times each implementation; `work` converts ms to the row's unit."""
    res = {}
    impls = {"attn": mine}
    for name, calls in peers.items():
        impls[name] = calls
    for name, calls in impls.items():
        if isinstance(calls, str):
            res[name] = {"refused": calls}
            continue
        out = out_of(name)
        for o in out:
            o.fill_(float("nan"))
        calls[0]()
        torch.cuda.synchronize()
        err = rows_error(out[0], ref)
        ms = timer.graph_ms(calls) or timer.median_ms(calls)
        res[name] = dict(ms=ms, rate=work / ms / 1e9, rel_err=err)
    return res


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--lib", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", module="torch")
    warnings.filterwarnings("ignore", message=".*kernel not used.*")
    module = attn_runtime.Module(args.manifest, lib=args.lib)
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    timer = Timer(target_ms=200, warmup=5, min_iters=10, max_iters=200)
    print("device: %s, torch %s" % (props.name, torch.__version__))
    rows = []
    dt = torch.bfloat16

    def peer_calls(sets, causal, gqa):
        calls = {}
        for name in PEERS:
            def call(q, k, v, o, backend=backend_of(name)):
                with sdpa_kernel(backend):
                    o.copy_(F.scaled_dot_product_attention(
                        q, k, v, is_causal=causal, enable_gqa=gqa))
            try:
                call(*sets[0][:3], sets[0][4])
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - a backend may refuse
                calls[name] = str(e).split("\n")[0][:100]
                continue
            calls[name] = [lambda q=q, k=k, v=v, o=o, call=call:
                           call(q, k, v, o) for q, k, v, _, o in sets]
        return calls

    def report(label, res, unit):
        cells = []
        for name, r in res.items():
            if "rate" in r:
                cells.append("%s %7.1f %s err %.1e" % (name, r["rate"], unit,
                                                       r["rel_err"]))
            else:
                cells.append("%s refused" % name)
        ratios = {p: res["attn"]["rate"] / r["rate"] for p, r in res.items()
                  if p != "attn" and "rate" in r and "rate" in res["attn"]}
        print("%s | %s | %s" % (label, " | ".join(cells), " ".join(
            "attn/%s %.2f" % kv for kv in ratios.items())))
        return ratios

    for d, dv, s, causal in FORWARD:
        kind = "bottom_right" if causal else "none"
        if not module.has_kernel("forward", "bf16", d, dv, kind):
            continue
        b, h = 16384 // s, 16
        hkv = 1 if d == 576 else h
        count = rotations(b * s * (h * (d + dv) + hkv * (d + dv)) * 2, l2)
        sets = [(torch.randn(b, h, s, d, device="cuda", dtype=dt),
                 torch.randn(b, hkv, s, d, device="cuda", dtype=dt),
                 torch.randn(b, hkv, s, dv, device="cuda", dtype=dt),
                 torch.empty(b, h, s, dv, device="cuda", dtype=dt),
                 torch.empty(b, h, s, dv, device="cuda", dtype=dt))
                for _ in range(count)]
        ref = reference_rows(*sets[0][:3], causal, 256)
        mine = [lambda q=q, k=k, v=v, o=o: module.forward(
            q, k, v, causal=kind, out=o) for q, k, v, o, _ in sets]
        peers = {} if s > 8192 else peer_calls(sets, causal, hkv != h)
        flops = 2.0 * b * h * s * s * (d + dv) / (2 if causal else 1)
        res = run_row(timer, mine, peers, ref,
                      lambda n: [x[3] if n == "attn" else x[4] for x in sets],
                      flops)
        ratios = report("fwd D=%d Dv=%d S=%5d causal=%d Hkv=%d" %
                        (d, dv, s, causal, hkv), res, "TF/s")
        rows.append(dict(kind="forward", d=d, dv=dv, s=s, causal=causal,
                         b=b, h=h, hkv=hkv, results=res, ratios=ratios))
        del sets
        torch.cuda.empty_cache()

    d, dv, h = 576, 512, 128
    for b, sk in DECODE:
        if not module.has_kernel("decode_partial", "bf16", d, dv, "none"):
            break
        count = rotations(b * sk * (d + dv) * 2, l2)
        sets = [(torch.randn(b, h, 1, d, device="cuda", dtype=dt),
                 torch.randn(b, 1, sk, d, device="cuda", dtype=dt),
                 torch.randn(b, 1, sk, dv, device="cuda", dtype=dt),
                 torch.empty(b, h, 1, dv, device="cuda", dtype=dt),
                 torch.empty(b, h, 1, dv, device="cuda", dtype=dt))
                for _ in range(count)]
        ref = reference_rows(*sets[0][:3], False, 1)
        work = [module.decode_workspace(q, k, v) for q, k, v, _, _ in sets]
        mine = [lambda q=q, k=k, v=v, o=o, w=w: module.decode(
            q, k, v, out=o, workspace=w)
            for (q, k, v, o, _), w in zip(sets, work)]
        peers = peer_calls(sets, False, True)
        if module.has_kernel("decode_partial", "bf16", d, dv, "none",
                             paged=True):
            gen = torch.Generator(device="cuda")
            gen.manual_seed(b * sk)
            caches = [paged_cache(k, v, gen) for _, k, v, _, _ in sets]
            paged_work = [module.decode_paged_workspace(q, *c, kv_layout="bshd")
                          for (q, _, _, _, _), c in zip(sets, caches)]
            peers["paged"] = [
                lambda q=q, c=c, o=o, w=w: module.decode_paged(
                    q, *c, kv_layout="bshd", out=o, workspace=w)
                for (q, _, _, _, o), c, w in zip(sets, caches, paged_work)]
        res = run_row(timer, mine, peers, ref,
                      lambda n: [x[3] if n == "attn" else x[4] for x in sets],
                      b * sk * (d + dv) * 2.0 * 1e3)  # bytes, to GB/s
        ratios = report("MLA decode B=%2d KV=%6d Hq=128" % (b, sk), res,
                        "GB/s")
        rows.append(dict(kind="decode", d=d, dv=dv, b=b, sk=sk, h=h,
                         results=res, ratios=ratios))
        del sets
        torch.cuda.empty_cache()
    if args.json:
        write_rows(args.json, rows)


if __name__ == "__main__":
    main()
