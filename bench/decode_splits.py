"""Decode split-count sweep through attn's runtime, in one process.

    python3 bench/decode_splits.py DIR/attn.manifest [--lib build-rt/lib/libattn_runtime.so]

Times attn_decode (partial + combine) for B in {1, 8}, Hq/Hkv = 32/8, D = 128,
bf16 at several forced split counts and the runtime's default (None), and
prints GB/s of K/V read. This is the measurement behind the runtime's split
heuristic (lib/Runtime/Plan.cpp, defaultSplits).
"""
import argparse
import sys

import torch
import triton.testing as tt

sys.path.insert(0, "python")
import attn_runtime as ar  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("manifest")
parser.add_argument("--lib", default="build-rt/lib/libattn_runtime.so")
args = parser.parse_args()
m = ar.Module(args.manifest, lib=args.lib)
for B, sk in [(8, 16384), (8, 65536), (8, 131072), (1, 16384), (1, 131072)]:
    q = torch.randn(B, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(B, 8, sk, 128, device="cuda", dtype=torch.bfloat16)
    v = torch.randn_like(k)
    row = []
    for n in [None, 2, 4, 6, 8, 12, 16, 33, 66]:
        def run():
            m.decode(q, k, v, num_splits=n)
        t = tt.do_bench(run, warmup=25, rep=200, return_mode="median")
        row.append(f"{n}:{2 * k.numel() * 2 / t / 1e6:.0f}")
    print(f"B={B} Sk={sk} splits:GB/s", " ".join(row), flush=True)
