#!/usr/bin/env python3
"""One forward call per implementation, for a profiler to capture.

    ncu --kernel-name regex:attn_fwd|cudnn|flash --set detailed \\
        python3 bench/profile_forward.py --manifest DIR/attn.manifest \\
        [--baseline OTHER/attn.manifest] [--peer cudnn] --shape 1,16,16384,128

Runs attn's forward kernel (and the --baseline manifest's, and an SDPA
backend) twice each on the same bf16 tensors, so that `ncu --launch-skip`/
`--launch-count` or the kernel-name filter picks the calls to profile.
--causal uses the top-left kernel. --decode runs split-KV decode instead:
--shape B,Hq,Sk,D with one query token and --kv-heads K/V heads.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import attn_runtime  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--baseline", default=None)
    parser.add_argument("--lib", default=None)
    parser.add_argument("--peer", choices=["cudnn", "flash"], default=None)
    parser.add_argument("--shape", default="1,16,16384,128",
                        help="B,H,S,D")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--decode", action="store_true")
    parser.add_argument("--kv-heads", type=int, default=8)
    args = parser.parse_args()
    b, h, s, d = (int(x) for x in args.shape.split(","))
    hkv = args.kv_heads if args.decode else h
    sq = 1 if args.decode else s
    q = torch.randn(b, h, sq, d, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16)
            for _ in range(2))
    out = torch.empty_like(q)
    kind = "top_left" if args.causal else "none"
    for manifest in filter(None, [args.manifest, args.baseline]):
        module = attn_runtime.Module(manifest, lib=args.lib)
        for _ in range(2):
            if args.decode:
                module.decode(q, k, v, out=out)
            else:
                module.forward(q, k, v, causal=kind, out=out)
        torch.cuda.synchronize()
    if args.peer:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backend = {"cudnn": SDPBackend.CUDNN_ATTENTION,
                   "flash": SDPBackend.FLASH_ATTENTION}[args.peer]
        with sdpa_kernel(backend):
            for _ in range(2):
                F.scaled_dot_product_attention(
                    q, k, v, is_causal=args.causal, enable_gqa=hkv != h)
        torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
