#!/usr/bin/env python3
"""One forward call per implementation, for a profiler to capture.

    ncu --kernel-name regex:attn_fwd|cudnn|flash --set detailed \\
        python3 bench/profile_forward.py --manifest DIR/attn.manifest \\
        [--baseline OTHER/attn.manifest] [--peer cudnn] --shape 1,16,16384,128

Runs attn's forward kernel (and the --baseline manifest's, and an SDPA
backend) once each on the same bf16 tensors, after one untimed warm-up
call each, so that `ncu --launch-skip`/`--launch-count` or the kernel-name
filter picks the calls to profile. --causal uses the top-left kernel.
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
    args = parser.parse_args()
    b, h, s, d = (int(x) for x in args.shape.split(","))
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    out = torch.empty_like(q)
    kind = "top_left" if args.causal else "none"
    for manifest in filter(None, [args.manifest, args.baseline]):
        module = attn_runtime.Module(manifest, lib=args.lib)
        for _ in range(2):
            module.forward(q, k, v, causal=kind, out=out)
        torch.cuda.synchronize()
    if args.peer:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backend = {"cudnn": SDPBackend.CUDNN_ATTENTION,
                   "flash": SDPBackend.FLASH_ATTENTION}[args.peer]
        with sdpa_kernel(backend):
            for _ in range(2):
                F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)
        torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
