#!/usr/bin/env python3
"""f32 attention: attn's 3xTF32 and TF32 kernels against PyTorch SDPA's
backends that take f32, in one process on the same tensors.

    python3 bench/bench_f32.py --manifest EXACT/attn.manifest \\
        --tf32-manifest TF32/attn.manifest [--lib LIB] [--json OUT]

EXACT is `attn-compile examples/gpu/f32.mlir` (3xTF32 products), TF32 the
same with --tf32 (f32=tf32 kernels, taken with module.allow_tf32). Peers:
SDPA's memory-efficient backend (f32 on CUDA cores) and its math backend
(matmuls and softmax in f32, with torch's TF32 matmuls off); the flash and
cuDNN backends refuse f32 (each row says so when they do). Per shape
(B * S = 16384 tokens, Hq = Hkv = 2048 / D): each implementation's relative
Frobenius error of O against a float64 reference on the first 512 queries
of batch 0, then its time (bench_attention.Timer: CUDA graphs of
back-to-back calls, the median of 10 replays; inputs rotated past 4x the
L2), TFLOP/s (4 B H S^2 D, halved causal) and attn / each peer.
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

PEERS = ["efficient", "math", "flash", "cudnn"]
GRID = [(d, s, c) for d in (64, 128, 256) for s in (1024, 4096, 16384)
        for c in (False, True)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--tf32-manifest", default=None)
    parser.add_argument("--lib", default=None)
    parser.add_argument("--json", default=None)
    parser.add_argument("--shapes", default=None,
                        help="D:S:causal,... instead of the grid")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", module="torch")
    warnings.filterwarnings("ignore", message=".*kernel not used.*")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    exact = attn_runtime.Module(args.manifest, lib=args.lib)
    mods = {"attn": exact}
    if args.tf32_manifest:
        tf32 = attn_runtime.Module(args.tf32_manifest, lib=args.lib)
        tf32.allow_tf32 = True
        mods["attn_tf32"] = tf32
    grid = GRID
    if args.shapes:
        grid = [(int(d), int(s), bool(int(c))) for d, s, c in
                (x.split(":") for x in args.shapes.split(","))]
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    timer = Timer(target_ms=200, warmup=5, min_iters=10, max_iters=200)
    print("device: %s, torch %s" % (props.name, torch.__version__))
    rows = []
    for d, s, causal in grid:
        b, h = 16384 // s, 2048 // d
        count = rotations(4 * b * h * s * d * 4, l2)
        sets = [tuple(torch.randn(b, h, s, d, device="cuda")
                      for _ in range(3)) + (torch.empty(b, h, s, d,
                                                        device="cuda"),)
                for _ in range(count)]
        ref = reference_rows(*sets[0][:3], causal, 512)
        flops = 4.0 * b * h * s * s * d / (2 if causal else 1)
        row = dict(d=d, s=s, causal=causal, b=b, h=h, results={})
        impls = {}
        kind = "bottom_right" if causal else "none"
        for name, m in mods.items():
            if not m.has_kernel("forward", "f32", d, d, kind):
                row["results"][name] = {"skipped": "no kernel"}
                continue
            impls[name] = [lambda q=q, k=k, v=v, o=o, m=m: m.forward(
                q, k, v, causal=kind, out=o) for q, k, v, o in sets]
        for name in PEERS:
            def call(q, k, v, o, backend=backend_of(name)):
                with sdpa_kernel(backend):
                    o.copy_(F.scaled_dot_product_attention(
                        q, k, v, is_causal=causal))
            try:
                call(*sets[0])
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - a backend may refuse f32
                row["results"][name] = {"refused": str(e).split("\n")[0]}
                continue
            impls[name] = [lambda q=q, k=k, v=v, o=o, call=call:
                           call(q, k, v, o) for q, k, v, o in sets]
        for name, calls in impls.items():
            for o in (x[3] for x in sets):
                o.fill_(float("nan"))
            calls[0]()
            torch.cuda.synchronize()
            err = rows_error(sets[0][3], ref)
            ms = timer.graph_ms(calls) or timer.median_ms(calls)
            row["results"][name] = dict(ms=ms, tflops=flops / ms / 1e9,
                                        rel_err=err)
        res = row["results"]
        cells = []
        for name in list(mods) + list(PEERS):
            r = res.get(name, {})
            if "tflops" in r:
                cells.append("%s %6.1f TF/s err %.1e" % (name, r["tflops"],
                                                         r["rel_err"]))
            elif "refused" in r:
                cells.append("%s refused" % name)
        for mine in mods:
            for peer in ("efficient", "math"):
                if "tflops" in res.get(mine, {}) and \
                        "tflops" in res.get(peer, {}):
                    row["%s/%s" % (mine, peer)] = (res[mine]["tflops"] /
                                                   res[peer]["tflops"])
        ratios = " ".join("%s %.2f" % (k, v) for k, v in row.items()
                          if "/" in k)
        print("D=%3d S=%5d causal=%d | %s | %s" % (d, s, causal,
                                                    " | ".join(cells), ratios))
        rows.append(row)
        del sets
        torch.cuda.empty_cache()
    if args.json:
        write_rows(args.json, rows)


if __name__ == "__main__":
    main()
