#!/usr/bin/env python3
"""attn's packed (variable-length) prefill against the same tokens run
dense, in one process on the same GPU.

    python3 bench/bench_varlen.py --manifest DIR/attn.manifest \\
        [--lib build-rt/lib/libattn_runtime.so] [--chunked-only] \\
        [--pages 16,128] [--baseline-manifest BASE/attn.manifest]

Grid: bf16, Hq = 32, Hkv = 8, D = 128, causal (bottom_right); B sequences
of equal length L packed back to back ([T, H, D], T = B L) and run by
forward_varlen with packed keys, against (a) attn's dense forward on
[B, L, H, D] (the sm_90a kernels where the manifest has them: what the
packed kernels, on sm_80's mapping, give up), (b) PyTorch SDPA's flash and
cuDNN backends on the dense batch; and ragged batches (lengths from L / 10
to L) for forward_varlen alone, against SDPA on the batch padded to the
longest with a mask; and chunked prefill (new tokens after a cached
prefix) with the keys packed or in a paged cache of --pages keys a page
(--baseline-manifest: another module's paged kernels timed beside them in
the same process, "base"; --chunked-only: that table alone). TFLOP/s
count the causal half of each sequence's scores (4 L^2 D / 2 per head),
the same for every implementation; CUDA graphs of back-to-back calls
(bench_attention.py's Timer), median.
"""

import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import attn_runtime  # noqa: E402
from bench_attention import (Timer, arguments, cuda_device,  # noqa: E402
                             rel_error)

HQ, HKV, D = 32, 8, 128
DTYPE = torch.bfloat16


def causal_flops(lengths):
    return sum(4 * n * n * D / 2 * HQ for n in lengths)


def sdpa_backend(name):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = {"flash": SDPBackend.FLASH_ATTENTION,
               "cudnn": SDPBackend.CUDNN_ATTENTION}[name]
    return lambda: sdpa_kernel(backend)


def main():
    parser = arguments(__doc__)
    parser.add_argument("--chunked-only", action="store_true",
                        help="only the chunked prefill table")
    parser.add_argument("--pages", default="16,128",
                        help="page sizes of the chunked prefill's paged "
                             "cache, comma-separated")
    parser.add_argument("--baseline-manifest", default=None,
                        help="another module whose paged chunked prefill "
                             "is timed beside attn's (\"base\")")
    args = parser.parse_args()
    props = cuda_device()
    if props is None:
        return 1
    module = attn_runtime.Module(args.manifest, lib=args.lib)
    base = (attn_runtime.Module(args.baseline_manifest, lib=args.lib)
            if args.baseline_manifest else None)
    pages = [int(p) for p in args.pages.split(",")]
    timer = Timer(200, warmup=3, min_iters=5, max_iters=200)
    print("attn packed prefill vs dense, %s (torch %s); bf16 Hq=%d Hkv=%d "
          "D=%d causal; TFLOP/s (causal half), CUDA graphs" % (
              props.name, torch.__version__, HQ, HKV, D))
    if not args.chunked_only:
        print("%-6s %-22s %8s %8s %8s %8s %8s | %s" % (
            "B", "lengths", "varlen", "dense", "flash", "cudnn", "padded",
            "check"))
    gen = torch.Generator()
    gen.manual_seed(0)
    prefill = [(8, 2048, False), (16, 1024, False), (4, 4096, False),
               (16, 2048, True), (64, 512, True)]
    for b, length, ragged in [] if args.chunked_only else prefill:
        if ragged:
            lens = [max(1, int(length * (0.1 + 0.9 * float(u))))
                    for u in torch.rand(b, generator=gen)]
            lens[0] = length
        else:
            lens = [length] * b
        total = sum(lens)
        offsets = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)),
                               dtype=torch.int32, device="cuda")
        q = torch.randn(total, HQ, D, dtype=DTYPE, device="cuda")
        k = torch.randn(total, HKV, D, dtype=DTYPE, device="cuda")
        v = torch.randn(total, HKV, D, dtype=DTYPE, device="cuda")
        out = torch.empty_like(q)
        smax = max(lens)
        # The dense batch padded to the longest: [B, S, H, D] (bshd).
        qd = torch.zeros(b, smax, HQ, D, dtype=DTYPE, device="cuda")
        kd = torch.zeros(b, smax, HKV, D, dtype=DTYPE, device="cuda")
        vd = torch.zeros_like(kd)
        for i, n in enumerate(lens):
            s = int(offsets[i])
            qd[i, :n], kd[i, :n], vd[i, :n] = q[s:s + n], k[s:s + n], v[s:s + n]
        varlen = lambda: module.forward_varlen(  # noqa: E731
            q, k, v, offsets, key_offsets=offsets, max_seqlen_q=smax,
            causal="bottom_right", out=out)
        row = {}
        row["varlen"] = timer.graph_ms([varlen])
        check = "-"
        qt = qd.transpose(1, 2)
        kt = kd.repeat_interleave(HQ // HKV, dim=2).transpose(1, 2)
        vt = vd.repeat_interleave(HQ // HKV, dim=2).transpose(1, 2)
        if not ragged:
            dense_out = torch.empty_like(qd)
            dense = lambda: module.forward(  # noqa: E731
                qd, kd, vd, causal="bottom_right", layout="bshd",
                out=dense_out)
            row["dense"] = timer.graph_ms([dense])
            for name in ("flash", "cudnn"):
                try:
                    with sdpa_backend(name)():
                        call = lambda: F.scaled_dot_product_attention(  # noqa
                            qt, kt, vt, is_causal=True)
                        call()
                        row[name] = timer.graph_ms([call])
                except Exception:  # noqa: BLE001 - a backend may refuse
                    row[name] = None
            varlen()
            dense()
            check = "varlen vs dense %.1e" % rel_error(
                out.view(b, length, HQ, D), dense_out)
        else:
            # Bottom-right causal per sequence, padding keys hidden: keys
            # at or before the query, within the sequence.
            i = torch.arange(smax, device="cuda")
            n = torch.tensor(lens, device="cuda")
            keep = (i[None, None, :] <= i[None, :, None]) & \
                (i[None, None, :] < n[:, None, None])
            mask = keep[:, None]
            call = lambda: F.scaled_dot_product_attention(  # noqa: E731
                qt, kt, vt, attn_mask=mask)
            row["padded"] = timer.graph_ms([call])
            varlen()
            ref = call().transpose(1, 2)
            err = max(rel_error(out[int(offsets[j]):int(offsets[j]) + lens[j]],
                                ref[j, :lens[j]]) for j in range(b))
            check = "varlen vs sdpa %.1e" % err
        flops = causal_flops(lens)
        cells = ["%8.0f" % (flops / (row[key] * 1e-3) / 1e12)
                 if row.get(key) else "%8s" % "-"
                 for key in ("varlen", "dense", "flash", "cudnn", "padded")]
        label = "%d..%d" % (min(lens), max(lens)) if ragged else str(length)
        print("%-6d %-22s %s | %s" % (b, label, " ".join(cells), check),
              flush=True)
    # Chunked prefill: `new` tokens of each sequence after a cached prefix
    # of `prefix` keys, the keys packed (sm_90a's mapping) or in a paged
    # cache of `pages`-key pages in random order; with a baseline, its
    # paged kernels beside each.
    heads = ["page %d" % p for p in pages]
    if base:
        heads = [h for p in pages for h in ("page %d" % p, "base %d" % p)]
    print("\nchunked prefill (bottom_right): %-10s %8s %s | %s" % (
        "B x new+prefix", "packed", " ".join("%8s" % h for h in heads),
        "check"))
    for b, new, prefix in [(8, 512, 8192), (16, 128, 4096), (4, 2048, 16384)]:
        keys = new + prefix
        q = torch.randn(b * new, HQ, D, dtype=DTYPE, device="cuda")
        k = torch.randn(b * keys, HKV, D, dtype=DTYPE, device="cuda")
        v = torch.randn_like(k)
        qo = torch.arange(0, b * new + 1, new, dtype=torch.int32,
                          device="cuda")
        ko = torch.arange(0, b * keys + 1, keys, dtype=torch.int32,
                          device="cuda")
        out = torch.empty_like(q)
        packed = lambda: module.forward_varlen(  # noqa: E731
            q, k, v, qo, key_offsets=ko, max_seqlen_q=new,
            causal="bottom_right", out=out)
        times = [timer.graph_ms([packed])]
        packed()
        ref = out.clone()
        errs = []
        for page in pages:
            per = -(-keys // page)
            order = torch.randperm(b * per, generator=gen).to("cuda")
            table = order.view(b, per).to(torch.int32)
            kc = torch.empty(b * per, page, HKV, D, dtype=DTYPE, device="cuda")
            vc = torch.empty_like(kc)
            for src, dst in ((k, kc), (v, vc)):
                full = torch.zeros(b, per * page, HKV, D, dtype=DTYPE,
                                   device="cuda")
                full[:, :keys] = src.view(b, keys, HKV, D)
                dst[table.view(-1).long()] = full.view(b * per, page, HKV, D)
            lens = torch.full((b,), keys, dtype=torch.int32, device="cuda")
            paged = lambda: module.forward_varlen(  # noqa: E731
                q, kc, vc, qo, kv_lens=lens, block_table=table,
                max_seqlen_q=new, causal="bottom_right", kv_layout="bshd",
                out=out)
            times.append(timer.graph_ms([paged]))
            paged()
            errs.append(rel_error(out, ref))
            if base:
                old = lambda: base.forward_varlen(  # noqa: E731
                    q, kc, vc, qo, kv_lens=lens, block_table=table,
                    max_seqlen_q=new, causal="bottom_right",
                    kv_layout="bshd", out=out)
                times.append(timer.graph_ms([old]))
                old()
                errs.append(rel_error(out, ref))
        # Scores computed: each new query against its prefix and the new
        # tokens before it.
        flops = b * HQ * 4 * D * (new * prefix + new * new / 2)
        cells = ["%8.0f" % (flops / (t * 1e-3) / 1e12) if t else "%8s" % "-"
                 for t in times]
        print("%31s %-14s %s | paged vs packed %.1e" % (
            "", "%dx%d+%d" % (b, new, prefix), " ".join(cells), max(errs)),
            flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
