#!/usr/bin/env python3
"""One attn backward call (bf16, B * S = 16384, H = 2048 / D) for a
profiler: `ncu --kernel-name regex:attn_bwd python3 bench/profile_backward.py
--manifest M --d 64 --s 4096 [--causal] [--atomic-dq]`."""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_runtime  # noqa: E402
from bench_attention import arguments  # noqa: E402


def main():
    parser = arguments(__doc__)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--s", type=int, default=4096)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--atomic-dq", action="store_true",
                        help="the atomic dQ mode's kernels")
    args = parser.parse_args()
    module = attn_runtime.Module(args.manifest, lib=args.lib)
    b, h, s, d = 16384 // args.s, 2048 // args.d, args.s, args.d
    q, k, v, dout = (torch.randn(b, h, s, d, device="cuda",
                                 dtype=torch.bfloat16) for _ in range(4))
    kind = "top_left" if args.causal else "none"
    o, lse = module.forward(q, k, v, causal=kind, return_lse=True)
    module.backward(q, k, v, o, dout, lse, causal=kind,
                    atomic_dq=args.atomic_dq)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
