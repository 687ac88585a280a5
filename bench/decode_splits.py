#!/usr/bin/env python3
"""Decode split-count sweep through attn's runtime, in one process.

    python3 bench/decode_splits.py DIR/attn.manifest [--lib build-rt/lib/libattn_runtime.so]

Times attn_decode (partial + combine) for D = 128, bf16, Hq = 32, one query
token, at several forced split counts and the runtime's default (None), and
prints GB/s of K/V read. Timing as bench_attention.py's: CUDA graphs of
back-to-back calls over input sets rotated past the L2 cache. This is the
measurement behind the runtime's split heuristic (lib/Runtime/Plan.cpp,
defaultSplits).
"""
import argparse
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "python"))
import attn_runtime as ar  # noqa: E402
from bench_attention import Timer, rotations  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("manifest")
parser.add_argument("--lib", default="build-rt/lib/libattn_runtime.so")
args = parser.parse_args()
m = ar.Module(args.manifest, lib=args.lib)
timer = Timer(100, warmup=5, min_iters=10, max_iters=500)
l2 = torch.cuda.get_device_properties(0).L2_cache_size
# (B, Hkv, Sk)
for b, hkv, sk in [(1, 8, 1024), (1, 8, 4096), (1, 32, 1024), (8, 32, 1024),
                   (8, 8, 4096), (1, 8, 16384), (8, 8, 131072)]:
    kv_bytes = 2 * b * hkv * sk * 128 * 2
    sets = []
    for _ in range(rotations(kv_bytes, l2)):
        q = torch.randn(b, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, hkv, sk, 128, device="cuda", dtype=torch.bfloat16)
        sets.append((q, k, torch.randn_like(k), torch.empty_like(q)))
    row = []
    for n in [None, 1, 2, 4, 8, 16, 32]:
        calls = [lambda q=q, k=k, v=v, o=o: m.decode(q, k, v, out=o,
                                                     num_splits=n)
                 for q, k, v, o in sets]
        ms = timer.graph_ms(calls) or timer.median_ms(calls)
        chosen = m.decode_splits(*sets[0][:3], num_splits=n)
        row.append(f"{n}->{chosen}:{kv_bytes / ms / 1e6:.0f}")
    print(f"B={b} Hkv={hkv} Sk={sk} splits->used:GB/s", " ".join(row),
          flush=True)
