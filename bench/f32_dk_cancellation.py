#!/usr/bin/env python3
"""dK of one key seen by 4097 queries, in f32: the exact dK is 0 (dS = dP -
D cancels: with one key O = V, so dP = D), and what a kernel gets is its
rounding. Prints the largest absolute error of dq, dk, dv of PyTorch SDPA's
f32 backends (memory-efficient, math) against float64 on the shape of
gpu_tests.py's f32 backward cases that fail there (B = 2, H = 4, Sq = 4097,
Sk = 1, D = 64 and 128), so that attn's error there has a peer's beside it.

    python3 bench/f32_dk_cancellation.py
"""

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    for d in (64, 128):
        q, k, v = (torch.randn(2, 4, s, d, device="cuda", generator=gen)
                   for s in (4097, 1, 1))
        dout = torch.randn(2, 4, 4097, d, device="cuda", generator=gen)
        ref = [t.double().requires_grad_() for t in (q, k, v)]
        F.scaled_dot_product_attention(*ref).backward(dout.double())
        for name, backend in (("efficient", SDPBackend.EFFICIENT_ATTENTION),
                              ("math", SDPBackend.MATH)):
            leaves = [t.clone().requires_grad_() for t in (q, k, v)]
            with sdpa_kernel(backend):
                F.scaled_dot_product_attention(*leaves).backward(dout)
            print("D=%d %s: %s" % (d, name, "; ".join(
                "%s max abs %.2e (ref max %.2e)" % (
                    n, float((t.grad.double() - r.grad).abs().max()),
                    float(r.grad.abs().max()))
                for n, t, r in zip("qkv", leaves, ref))))


if __name__ == "__main__":
    main()
