#!/usr/bin/env python3
"""attn's paged split-KV decode against a padded cache, on ragged batches.

Decode over a paged KV cache (attn_decode_paged, vLLM's layout) on batches
whose lengths vary tenfold, against the two ways to run the same batch
without pages: (e) attn's contiguous decode (attn_decode) on a dense cache
of the same total keys, every sequence at the mean length (the same bytes
read, no padding: paged / even is the cost of the pages), (a) attn_decode
on a dense cache
that holds the same keys, each sequence padded with zeros to the longest
(it reads the padding too, and cannot hide it: only the longest sequence's
output is comparable), and (b) PyTorch SDPA on that padded cache with a
boolean mask [B, 1, 1, S] hiding the padding (GQA as Hkv heads of
(Hq / Hkv) query rows each: exact for one query token, and no copy of K/V
per query head). Each is timed eagerly and as a CUDA graph of one step.

    python3 bench/bench_paged.py --manifest DIR/attn.manifest \\
        [--lib build-rt/lib/libattn_runtime.so] [--quick] \\
        [--configs B:MEAN:PAGE,...] [--json OUT/bench_paged.json] \\
        [--lengths spread|skewed|long|even] [--splits N] \\
        [--baseline-manifest OTHER/attn.manifest]

--lengths skewed (long): one sequence holds a quarter (half) of the
batch's keys, the others share the rest equally; even: every sequence
at the mean (what the pages alone cost). --splits: the paged calls' split count.
--baseline-manifest: another module's paged decode timed as "base" in the
same process (e.g. the per-sequence kernels against the balanced ones).

Grid: bf16, Hq = 32, Hkv = 8, D = 128, one query token; B in {8, 64},
mean length 4k and 16k, page sizes 16 and 128 (--quick: B = 8 and 64 at
16k, pages of 16). Lengths: one sequence of L keys, one of 10 L, the others
uniform in [L, 10 L], L = 2 mean / 11; pages are handed out in random order
over a pool of exactly the pages needed (block_table [B, max pages]).

Bytes: the K/V bytes a paged decode must read, sum(lengths) x Hkv x
(D + Dv) x 2, plus q and o; the same count for every implementation, so
GB/s compare times directly (the padded ones read more than they are
credited with: that is the point). Outputs are checked before timing:
paged against SDPA on every sequence, the padded attn_decode against paged
on the longest one, and the paged CUDA graph, replayed after shortening
the lengths in place, against an eager call (one graph serves every step).

Timing, as bench_attention.py's --timing events: CUDA events around each
call after a 40 us spin of the GPU, the median of many, inputs rotated
among enough copies to exceed 4x the L2 cache. "graph" captures one call
per input copy in a CUDA graph (after a warm-up on a side stream) and
times its replays the same way: no host time, which eager decode steps of
a few tens of microseconds are dominated by.
"""

import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import attn_runtime  # noqa: E402
from bench_attention import (  # noqa: E402
    Timer, arguments, copy_bandwidth, cuda_device, rel_error, rotations)

HQ, HKV, D = 32, 8, 128
DTYPE = torch.bfloat16
CHECK_TOLERANCE = 2e-2  # ||a - b|| / ||b|| for bf16 outputs

CONFIGS_FULL = [(b, mean, page) for b in (8, 64) for mean in (4096, 16384)
                for page in (16, 128)]
CONFIGS_QUICK = [(8, 16384, 16), (64, 16384, 16)]

#===------------------------------------------------------------------------===#
# Inputs
#===------------------------------------------------------------------------===#


# "spread" (lengths from L to 10 L), "skewed" or "long" (--lengths).
LENGTHS = "spread"


def ragged_lengths(b, mean, gen):
    """B lengths from L to 10 L (both present), mean about `mean`; with
    LENGTHS = "skewed", one sequence holds a quarter of the batch's keys
    and the others share the rest; with "long", half of them; with
    "even", every sequence has the mean length (the cost of the pages
    alone, against "even" on the same bytes)."""
    if LENGTHS == "even":
        return [mean] * b
    if LENGTHS in ("skewed", "long") and b > 1:
        long = b * mean // (4 if LENGTHS == "skewed" else 2)
        rest = max(1, (b * mean - long) // (b - 1))
        return [long] + [rest] * (b - 1)
    low = max(1, round(2 * mean / 11))
    u = torch.rand(b, generator=gen)
    lens = (low + u * 9 * low).round().long()
    lens[0] = low
    if b > 1:
        lens[1] = 10 * low
    return lens.tolist()


def build_set(b, mean, page, gen, device="cuda"):
    """One input set: q, the paged cache (vLLM's [P, page, Hkv, D] pools,
    each sequence's pages in random order), its block table and lengths,
    and the same keys as a dense cache [B, Hkv, S_max, D] padded with
    zeros, with the boolean mask [B, 1, 1, S_max] that hides the padding."""
    lens = ragged_lengths(b, mean, gen)
    owned = [-(-n // page) for n in lens]
    pool = sum(owned)
    order = torch.randperm(pool, generator=gen).to(device)
    table = torch.zeros((b, max(owned)), dtype=torch.int32, device=device)
    start = 0
    for i, n in enumerate(owned):
        table[i, :n] = order[start:start + n].to(torch.int32)
        start += n
    k_pages = torch.randn((pool, page, HKV, D), dtype=DTYPE, device=device)
    v_pages = torch.randn((pool, page, HKV, D), dtype=DTYPE, device=device)
    s_max = max(lens)
    k_dense = torch.zeros((b, HKV, s_max, D), dtype=DTYPE, device=device)
    v_dense = torch.zeros_like(k_dense)
    for i, n in enumerate(lens):
        keys = torch.arange(n, device=device)
        pages = table[i, keys // page].long()
        k_dense[i, :, :n] = k_pages[pages, keys % page].permute(1, 0, 2)
        v_dense[i, :, :n] = v_pages[pages, keys % page].permute(1, 0, 2)
    keep = torch.arange(s_max, device=device)[None, :] < torch.tensor(
        lens, device=device)[:, None]
    # The same number of keys as one contiguous cache: every sequence at
    # the mean length (attn_decode's best case, no padding to read).
    even = max(1, round(sum(lens) / b))
    k_even = torch.randn((b, HKV, even, D), dtype=DTYPE, device=device)
    v_even = torch.randn_like(k_even)
    return dict(lens=lens, q=torch.randn((b, HQ, 1, D), dtype=DTYPE,
                                         device=device),
                k_pages=k_pages, v_pages=v_pages, table=table,
                kv_lens=torch.tensor(lens, dtype=torch.int32, device=device),
                k_dense=k_dense, v_dense=v_dense, mask=keep[:, None, None],
                k_even=k_even, v_even=v_even,
                out=torch.empty((b, HQ, 1, D), dtype=DTYPE, device=device))


def set_bytes(b, mean, page):
    """Device bytes of one input set, about: the pools (rounded up to
    pages), the padded cache (S_max = 20 mean / 11) and the mask."""
    token = HKV * 2 * D * 2
    pooled = b * (mean + page) * token
    padded = b * (20 * mean // 11 + 1) * token + b * mean * token
    return pooled + padded + b * (20 * mean // 11 + 1)


def sdpa(s):
    """SDPA on the padded cache, GQA as Hkv heads of Hq / Hkv query rows
    (one query token: the rows of a group are its query heads)."""
    b = s["q"].shape[0]
    q = s["q"].view(b, HKV, HQ // HKV, D)
    o = F.scaled_dot_product_attention(q, s["k_dense"], s["v_dense"],
                                       attn_mask=s["mask"])
    return o.view(b, HQ, 1, D)

#===------------------------------------------------------------------------===#
# Calls
#===------------------------------------------------------------------------===#


def make_calls(module, sets, baseline=None, splits=0):
    """Per implementation, one call per input set, with every buffer
    (outputs, workspaces) allocated here: the calls allocate nothing, so
    that a CUDA graph can capture them. `baseline`: a second module whose
    paged decode is timed as "base"; `splits`: the paged calls' split
    count (0: their default)."""
    paged, even, dense, peer, base = [], [], [], [], []
    for s in sets:
        s["even_out"] = torch.empty_like(s["out"])
        s["even_ws"] = module.decode_workspace(s["q"], s["k_even"],
                                               s["v_even"])
        even.append(lambda s=s: module.decode(
            s["q"], s["k_even"], s["v_even"], out=s["even_out"],
            workspace=s["even_ws"]))
        s["paged_ws"] = module.decode_paged_workspace(
            s["q"], s["k_pages"], s["v_pages"], s["table"], s["kv_lens"],
            kv_layout="bshd", num_splits=splits)
        s["dense_out"] = torch.empty_like(s["out"])
        s["dense_ws"] = module.decode_workspace(s["q"], s["k_dense"],
                                                s["v_dense"])
        paged.append(lambda s=s: module.decode_paged(
            s["q"], s["k_pages"], s["v_pages"], s["table"], s["kv_lens"],
            kv_layout="bshd", out=s["out"], workspace=s["paged_ws"],
            num_splits=splits))
        if baseline is not None:
            s["base_out"] = torch.empty_like(s["out"])
            s["base_ws"] = baseline.decode_paged_workspace(
                s["q"], s["k_pages"], s["v_pages"], s["table"], s["kv_lens"],
                kv_layout="bshd")
            base.append(lambda s=s: baseline.decode_paged(
                s["q"], s["k_pages"], s["v_pages"], s["table"],
                s["kv_lens"], kv_layout="bshd", out=s["base_out"],
                workspace=s["base_ws"]))
        dense.append(lambda s=s: module.decode(
            s["q"], s["k_dense"], s["v_dense"], out=s["dense_out"],
            workspace=s["dense_ws"]))
        peer.append(lambda s=s: sdpa(s))
    calls = dict(paged=paged, even=even, dense=dense, sdpa=peer)
    if baseline is not None:
        calls["base"] = base
    return calls


def capture(call):
    """A CUDA graph of one call, after a warm-up on a side stream (what
    torch.cuda.graph needs of calls that allocate on first use)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    torch.cuda.synchronize()
    return graph


def check(module, sets, calls):
    """The outputs before any timing: {name: text}, and whether all
    agree. Paged against SDPA on every sequence, padded attn_decode against
    paged on the longest sequence (the only one without padding), and a
    graph of the paged call replayed after the lengths were shortened in
    place against an eager call on them."""
    s = sets[0]
    calls["paged"][0]()
    paged = s["out"].clone()
    calls["dense"][0]()
    longest = max(range(len(s["lens"])), key=lambda i: s["lens"][i])
    results, ok = {}, True
    err = rel_error(s["dense_out"][longest], paged[longest])
    results["dense"] = "longest sequence vs paged %.1e" % err
    ok &= err <= CHECK_TOLERANCE
    err = rel_error(paged, calls["sdpa"][0]())
    results["sdpa"] = "paged vs sdpa %.1e" % err
    ok &= err <= CHECK_TOLERANCE
    if "base" in calls:
        calls["base"][0]()
        err = rel_error(paged, s["base_out"])
        results["base"] = "paged vs base %.1e" % err
        ok &= err <= CHECK_TOLERANCE
    graph = capture(calls["paged"][0])
    saved = s["kv_lens"].clone()
    s["kv_lens"].copy_((saved * 2) // 3)
    graph.replay()
    torch.cuda.synchronize()
    replayed = s["out"].clone()
    calls["paged"][0]()
    err = rel_error(replayed, s["out"])
    results["graph"] = "replay after new lengths vs eager %.1e" % err
    ok &= err <= 1e-6
    s["kv_lens"].copy_(saved)
    del graph
    return results, bool(ok)


def time_impl(timer, impl_calls, graphs):
    """{eager, graph} median ms of one call; None where it failed."""
    entry = {}
    try:
        entry["eager"] = timer.median_ms(impl_calls)
    except Exception as e:  # noqa: BLE001 - reported per implementation
        entry["error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
        return entry
    if graphs:
        try:
            captured = [capture(c) for c in impl_calls]
            entry["graph"] = timer.median_ms([g.replay for g in captured])
            del captured
        except Exception as e:  # noqa: BLE001
            entry["graph_error"] = "%s: %s" % (type(e).__name__,
                                               str(e)[:200])
    return entry

#===------------------------------------------------------------------------===#
# One configuration
#===------------------------------------------------------------------------===#


def bench_config(module, timer, b, mean, page, l2, copy_gbs, graphs, seed,
                 baseline=None, splits=0):
    row = dict(b=b, mean=mean, page=page, hq=HQ, hkv=HKV, d=D)
    if not module.has_kernel("decode_partial", "bf16", D, D, "none",
                             paged=True):
        row["skipped"] = "no paged decode_partial kernel for bf16 d128"
        return row
    per_set = set_bytes(b, mean, page)
    count = rotations(b * mean * HKV * 2 * D * 2, l2)
    free, _ = torch.cuda.mem_get_info()
    if count * per_set > 0.7 * free:
        count = 1
    if per_set > 0.7 * free:
        row["skipped"] = "inputs need %.1f GB, %.1f GB free" % (
            per_set / 1e9, free / 1e9)
        return row
    gen = torch.Generator()
    gen.manual_seed(seed)
    sets = [build_set(b, mean, page, gen) for _ in range(count)]
    lens = sets[0]["lens"]
    row.update(rotations=count, lens_min=min(lens), lens_max=max(lens),
               lens_sum=sum(lens))
    kv_bytes = sum(lens) * HKV * (D + D) * 2
    qo_bytes = 2 * b * HQ * D * 2
    row["bytes"] = kv_bytes + qo_bytes
    calls = make_calls(module, sets, baseline, splits)
    row["splits"] = module.decode_paged_splits(
        sets[0]["q"], sets[0]["k_pages"], sets[0]["v_pages"],
        sets[0]["table"], sets[0]["kv_lens"], kv_layout="bshd",
        num_splits=splits)
    row["checks"], row["check_ok"] = check(module, sets, calls)
    results = {}
    # "even" reads its own keys: B x the mean length (the same count up
    # to rounding).
    even_keys = sets[0]["k_even"].shape[2] * b
    impl_bytes = dict(even=even_keys * HKV * (D + D) * 2 + qo_bytes)
    for name in calls:
        entry = time_impl(timer, calls[name], graphs)
        for mode in ("eager", "graph"):
            if entry.get(mode):
                entry[mode + "_gbs"] = impl_bytes.get(name, row["bytes"]) / (
                    entry[mode] * 1e-3) / 1e9
        results[name] = entry
    row["results"] = results
    row["copy_gbs"] = copy_gbs
    del sets, calls
    torch.cuda.empty_cache()
    return row

#===------------------------------------------------------------------------===#
# Table
#===------------------------------------------------------------------------===#


HEADER = ("%-3s %6s %5s %12s | %7s %7s %7s %7s | %7s %7s %7s %7s | %5s %5s"
          " %5s | %s") % (
    "B", "mean", "page", "lens", "paged", "even", "dense", "sdpa", "paged",
    "even", "dense", "sdpa", "x ev", "x dn", "x sd", "check")


def cell(entry, key):
    value = entry.get(key)
    return "%7.0f" % value if value else "%7s" % "n/a"


def print_row(row):
    prefix = "%-3d %6d %5d" % (row["b"], row["mean"], row["page"])
    if "skipped" in row:
        print("%s | skipped: %s" % (prefix, row["skipped"]), flush=True)
        return
    r = row["results"]

    def ratio(mode, other):
        a = r["paged"].get(mode + "_gbs")
        b = r[other].get(mode + "_gbs")
        return "%5.2f" % (a / b) if a and b else "%5s" % "-"

    print("%s %12s | %s %s %s %s | %s %s %s %s | %s %s %s | %s (splits %d)" % (
        prefix, "%d..%d" % (row["lens_min"], row["lens_max"]),
        cell(r["paged"], "eager_gbs"), cell(r["even"], "eager_gbs"),
        cell(r["dense"], "eager_gbs"), cell(r["sdpa"], "eager_gbs"),
        cell(r["paged"], "graph_gbs"), cell(r["even"], "graph_gbs"),
        cell(r["dense"], "graph_gbs"), cell(r["sdpa"], "graph_gbs"),
        ratio("graph", "even"), ratio("graph", "dense"),
        ratio("graph", "sdpa"),
        "ok" if row["check_ok"] else "MISMATCH: " + "; ".join(
            row["checks"].values()), row["splits"]), flush=True)
    if "base" in r and r["base"].get("graph_gbs"):
        print("       base (--baseline-manifest): %7.0f %7.0f GB/s eager, "
              "graph; paged / base (graphs) %.2f" % (
                  r["base"].get("eager_gbs", 0), r["base"]["graph_gbs"],
                  r["paged"].get("graph_gbs", 0) / r["base"]["graph_gbs"]),
              flush=True)
    for name in r:
        for key in ("error", "graph_error"):
            if r[name].get(key):
                print("       %s: %s" % (name, r[name][key]), flush=True)

#===------------------------------------------------------------------------===#
# Driver
#===------------------------------------------------------------------------===#


def main():
    parser = arguments(__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="B = 8 and 64 at a mean of 16k, pages of 16")
    parser.add_argument("--configs", default=None,
                        help="B:MEAN:PAGE,... instead of the grid")
    parser.add_argument("--no-graphs", action="store_true",
                        help="eager timings only")
    parser.add_argument("--json", default=None)
    parser.add_argument("--target-ms", type=float, default=None,
                        help="time spent timing each implementation and "
                             "mode per configuration (default 300, 150 "
                             "with --quick)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline-manifest", default=None,
                        help="also time this manifest's paged decode, in "
                             "the same process (e.g. kernels of another "
                             "compiler)")
    parser.add_argument("--splits", type=int, default=0,
                        help="the paged calls' split count (0: default)")
    parser.add_argument("--lengths",
                        choices=["spread", "skewed", "long", "even"],
                        default="spread",
                        help="spread: L to 10 L; skewed (long): one "
                             "sequence holds a quarter (half) of the keys; "
                             "even: every sequence the mean")
    args = parser.parse_args()
    global LENGTHS
    LENGTHS = args.lengths

    props = cuda_device()
    if props is None:
        return 1
    l2 = getattr(props, "L2_cache_size", 0) or (50 << 20)
    timer = Timer(args.target_ms or (150 if args.quick else 300), warmup=5,
                  min_iters=10, max_iters=500)
    module = attn_runtime.Module(args.manifest, lib=args.lib)
    baseline = (attn_runtime.Module(args.baseline_manifest, lib=args.lib)
                if args.baseline_manifest else None)
    print("attn paged decode vs padded attn_decode and SDPA on %s (torch %s)"
          % (props.name, torch.__version__))
    copy_gbs = copy_bandwidth(timer)
    print("L2 %d MB, measured copy bandwidth %.0f GB/s" % (l2 >> 20,
                                                          copy_gbs))
    configs = CONFIGS_QUICK if args.quick else CONFIGS_FULL
    if args.configs:
        configs = [tuple(int(x) for x in c.split(":"))
                   for c in args.configs.split(",")]
    print("\nbf16, Hq=%d Hkv=%d D=%d, one query token; GB/s of the K/V a "
          "paged decode reads (sum of lengths) + q + o; eager | CUDA graph "
          "of one step; x ev, x dn, x sd = paged / even, dense, sdpa "
          "(graphs)"
          % (HQ, HKV, D))
    print(HEADER)
    report = dict(device=props.name, torch=torch.__version__,
                  capability="sm_%d%d" % (props.major, props.minor),
                  sms=props.multi_processor_count, l2_bytes=l2,
                  copy_gbs=copy_gbs, manifest=os.path.abspath(args.manifest),
                  target=module.target, rows=[])
    started = time.time()
    for b, mean, page in configs:
        row = bench_config(module, timer, b, mean, page, l2, copy_gbs,
                           not args.no_graphs, args.seed, baseline,
                           args.splits)
        report["rows"].append(row)
        print_row(row)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=1, default=str)
    timed = [r for r in report["rows"] if "results" in r]
    mismatches = sum(not r["check_ok"] for r in timed)
    print("\n%d configurations timed in %.0fs; %d output mismatches" % (
        len(timed), time.time() - started, mismatches))
    for other in ("even", "dense", "sdpa", "base"):
        ratios = [r["results"]["paged"]["graph_gbs"] /
                  r["results"][other]["graph_gbs"] for r in timed
                  if r["results"]["paged"].get("graph_gbs")
                  and r["results"].get(other, {}).get("graph_gbs")]
        if ratios:
            print("geometric mean paged / %s (graphs): %.2f" % (
                other, math.exp(sum(map(math.log, ratios)) / len(ratios))))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
