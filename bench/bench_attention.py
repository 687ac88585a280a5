#!/usr/bin/env python3
"""attn against PyTorch SDPA's FlashAttention-2 and cuDNN backends.

The benchmark of shared/BENCHMARKS.md: attn's kernels (through
python/attn_runtime.py) and the peers run in one process on the same tensors;
each output is checked against a peer's before anything is timed; the tables
give TFLOP/s (forward) or GB/s of K/V read (decode) and the ratio of attn to
the fastest peer (> 1: attn is faster).

    python3 bench/bench_attention.py --manifest DIR/attn.manifest \\
        [--lib build-rt/lib/libattn_runtime.so] [--quick] \\
        [--json OUT/bench.json] [--png OUT/bench.png] \\
        [--baseline OTHER/attn.manifest] [--shapes D:S:causal,...] \\
        [--decode-shapes B:Hkv:KV,...] [--repeats N]

Grids. Forward: bf16 (--dtype f16 for fp16), B * S = 16384 tokens, hidden
2048 (Hq = Hkv = 2048 / D), D in {64, 128}, S in {512, 1k, 2k, 4k, 8k, 16k},
causal and not. Decode: one query token, D = 128, Hq = 32, Hkv in {32, 8},
B in {1, 8, 64}, KV length in {1k, 4k, 16k, 64k, 128k} (shapes that do not
fit in memory are skipped). --quick runs the rows of BENCHMARKS.md's peer
tables only. --shapes replaces the forward grid (e.g. 128:2048:1 is D = 128,
S = 2k, causal); --decode-shapes the decode grid (8:8:131072 is B = 8,
Hkv = 8, 128k keys). --baseline times a second manifest's kernels beside
attn's in the same process (an A/B of a compiler change: same tensors,
same timer) and prints attn / baseline under each row. --repeats N times
every implementation N times in turn per shape, keeping its fastest round.

Timing (--timing graphs, the default): after a warm-up, each
implementation's calls (the rotated input sets in turn) are captured back
to back in a CUDA graph, and one call's time is a replay's time over the
calls in it, the median of 10 replays: no host time (ctypes, PyTorch's
dispatcher, cuDNN's graph lookup) and no idle gap between calls, for attn
and the peers alike. An implementation that cannot be captured is timed as
with --timing events (its entry says so): CUDA events around each call,
the median of many, after a 40 us spin of the GPU (torch.cuda._sleep) so
that the host has usually queued the call before its start event fires.
That is not always so: the peers take 90 to 660 us to queue one call
(attn 60 to 200), which then lands inside short calls' timings, and
longer spins leave the GPU idle long enough to raise its clocks (H200,
2026-11-23: docs/GPU.md). Inputs are rotated among enough copies to
exceed 4x the L2 cache when one set fits in it, so no call reads a warm
cache.

FLOPs: 4 B Hq Sq Sk D (half with causal, Sq == Sk); %mm is attn's forward
TFLOP/s as a fraction of one 8192 x 8192 x 8192 matmul's in the same
element type (cuBLAS through torch, timed the same way in the same run).
Decode bytes: K and V read once, 2 B Hkv Sk D bytes per element; also shown
as a fraction of the device's measured copy bandwidth.
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import attn_runtime  # noqa: E402

try:
    from torch.nn.attention import SDPBackend, sdpa_kernel
except ImportError:  # torch < 2.3
    SDPBackend = sdpa_kernel = None

PEERS = ["flash", "cudnn"]
IMPLS = ["attn"] + PEERS
CHECK_TOLERANCE = 2e-2  # ||attn - peer|| / ||peer|| for 16-bit outputs

FORWARD_FULL = [(d, s, c) for d in (64, 128, 256)
                for s in (512, 1024, 2048, 4096, 8192, 16384)
                for c in (False, True)]
FORWARD_QUICK = [(64, 2048, False), (64, 16384, False), (128, 512, False),
                 (128, 2048, False), (128, 16384, False), (128, 16384, True),
                 (256, 16384, False)]
DECODE_FULL = [(b, hkv, kv) for hkv in (32, 8) for b in (1, 8, 64)
               for kv in (1024, 4096, 16384, 65536, 131072)]
DECODE_QUICK = [(1, 32, 1024), (1, 8, 16384), (1, 8, 131072),
                (8, 8, 131072), (64, 8, 16384)]

#===------------------------------------------------------------------------===#
# Timing
#===------------------------------------------------------------------------===#


class Timer:
    def __init__(self, target_ms, warmup, min_iters, max_iters):
        self.target_ms = target_ms
        self.warmup = warmup
        self.min_iters = min_iters
        self.max_iters = max_iters
        self.sleep = hasattr(torch.cuda, "_sleep")
        self.graphs = True
        props = torch.cuda.get_device_properties(0)
        # ~40 us of spinning at the device's clock (1.5 GHz when unknown).
        clock_khz = getattr(props, "clock_rate", 0) or 1500000
        self.spin_cycles = int(clock_khz * 1000 * 40e-6)

    def graph_ms(self, calls):
        """Time of one call in ms, from CUDA graphs of back-to-back calls
        (the rotated variants in turn): no host time and no idle gaps in
        it, for attn and the peers alike; the median over replays. None
        when the calls cannot be captured."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for i in range(self.warmup):
                calls[i % len(calls)]()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        once_ms = self.median_ms(calls[:1], iters=5)
        # Calls per graph: about a tenth of the time target per replay.
        per_graph = int(min(200, max(len(calls),
                                     self.target_ms / 10 / max(once_ms, 1e-3))))
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                for i in range(per_graph):
                    calls[i % len(calls)]()
        except Exception:  # noqa: BLE001 - not capturable: the caller falls back
            torch.cuda.synchronize()
            return None
        graph.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(10):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / per_graph)
        del graph
        return statistics.median(times)

    def median_ms(self, calls, iters=None):
        """Median time of one call in ms; `calls` are the rotated variants."""
        for i in range(self.warmup):
            calls[i % len(calls)]()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        calls[0]()
        torch.cuda.synchronize()
        once_ms = (time.perf_counter() - t0) * 1000
        if iters is None:
            iters = int(min(self.max_iters,
                            max(self.min_iters,
                                self.target_ms / max(once_ms, 1e-3))))
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        for i in range(iters):
            if self.sleep:
                torch.cuda._sleep(self.spin_cycles)
            starts[i].record()
            calls[i % len(calls)]()
            ends[i].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e)
                                 for s, e in zip(starts, ends))


def cuda_device():
    """The CUDA device's properties, with torch's RNG seeded; None (and
    why, printed) when torch sees no device."""
    if not torch.cuda.is_available():
        print("no CUDA device visible to torch")
        return None
    torch.manual_seed(0)
    return torch.cuda.get_device_properties(0)


def copy_bandwidth(timer):
    """Device-to-device copy bandwidth in GB/s (bytes read + written)."""
    n = 1 << 30
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = timer.median_ms([lambda: dst.copy_(src)])
    src = dst = None
    torch.cuda.empty_cache()
    return 2 * n / (ms * 1e-3) / 1e9


def matmul_tflops(timer, dtype=torch.bfloat16, n=8192):
    """TFLOP/s of one large matmul (n x n by n x n, `dtype`, cuBLAS through
    torch): the ceiling the attention kernels' tensor-core rates are read
    against."""
    a = torch.randn(n, n, dtype=dtype, device="cuda")
    b = torch.randn(n, n, dtype=dtype, device="cuda")
    c = torch.empty(n, n, dtype=dtype, device="cuda")
    ms = timer.median_ms([lambda: torch.matmul(a, b, out=c)])
    a = b = c = None
    torch.cuda.empty_cache()
    return 2 * n ** 3 / (ms * 1e-3) / 1e12


def rotations(set_bytes, l2_bytes, limit=16):
    if set_bytes >= 4 * l2_bytes:
        return 1
    return int(min(limit, math.ceil(4 * l2_bytes / max(set_bytes, 1))))


def rel_error(a, b):
    a, b = a.float(), b.float()
    return float((a - b).norm() / b.norm().clamp_min(1e-30))

#===------------------------------------------------------------------------===#
# Peers
#===------------------------------------------------------------------------===#


def backend_of(name):
    return {"flash": SDPBackend.FLASH_ATTENTION,
            "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION,
            "math": SDPBackend.MATH}[name]


def reference_rows(q, k, v, causal, rows):
    """float64 O of the first `rows` queries of batch 0 ([1, Hq, rows, Dv]),
    the KV heads repeated over their query heads, causal bottom-right
    (query i sees keys j <= i + Sk - Sq)."""
    q, k, v = (t[:1].double() for t in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = (t.repeat_interleave(group, dim=1) for t in (k, v))
    offset = k.shape[2] - q.shape[2]
    q = q[:, :, :rows]
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        i = torch.arange(q.shape[2], device=q.device)[:, None]
        j = torch.arange(k.shape[2], device=q.device)[None, :]
        s = s.masked_fill(j > i + offset, float("-inf"))
    return torch.softmax(s, -1) @ v


def write_rows(path, rows):
    """The benchmark's rows as JSON at `path`, with the device and torch's
    version (values JSON has no type for, as strings)."""
    with open(path, "w") as f:
        json.dump(dict(device=torch.cuda.get_device_name(),
                       torch=torch.__version__, rows=rows), f, indent=1,
                  default=str)


def rows_error(got, ref):
    """The relative Frobenius error, in float64, of the rows of `got` that
    reference_rows computed."""
    got = got[:1, :, :ref.shape[2]].double()
    return float((got - ref).norm() / ref.norm())


def sdpa_call(name, q, k, v, causal, gqa):
    """A call of SDPA restricted to one backend."""
    backend = backend_of(name)
    kwargs = {"is_causal": causal}
    if gqa:
        kwargs["enable_gqa"] = True

    def call():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, **kwargs)
    return call


def peer_calls(name, sets, causal, hq, hkv):
    """The rotated calls of a peer, the output of the first, and a note;
    GQA goes through enable_gqa, or K/V expanded to Hq heads when the
    backend refuses that (then the note says so)."""
    gqa = hq != hkv
    try:
        calls = [sdpa_call(name, q, k, v, causal, gqa) for q, k, v, _ in sets]
        out = calls[0]()
        torch.cuda.synchronize()
        return calls, out, ""
    except Exception as first:  # noqa: BLE001 - a backend may refuse
        if not gqa:
            raise
        reason = str(first).strip().split("\n")[0][:200]
    group = hq // hkv
    need = sum(k.numel() * k.element_size() * 2 * group for _, k, _, _ in sets)
    if need > 0.8 * torch.cuda.mem_get_info()[0]:
        raise RuntimeError("enable_gqa refused (%s) and K/V expanded to Hq "
                           "heads would need %.1f GB" % (reason, need / 1e9))
    expanded = [(q, k.repeat_interleave(hq // hkv, dim=1),
                 v.repeat_interleave(hq // hkv, dim=1), o)
                for q, k, v, o in sets]
    calls = [sdpa_call(name, q, k, v, causal, False)
             for q, k, v, _ in expanded]
    out = calls[0]()
    torch.cuda.synchronize()
    return calls, out, "K/V expanded to Hq heads (enable_gqa: %s)" % reason

#===------------------------------------------------------------------------===#
# One configuration
#===------------------------------------------------------------------------===#


def measure(timer, impls, make_attn, sets, causal, hq, hkv, own=None,
            repeats=1):
    """Runs attn and the peers on `sets`; returns per-implementation
    {ms, check, note, error}. `own` adds implementations of attn's own
    ({name: make function}, as make_attn: the --baseline kernels).
    `repeats` rounds, each implementation in turn in each; each keeps its
    fastest round (a slower clock in one round then counts against none)."""
    results = measure_round(timer, impls, make_attn, sets, causal, hq, hkv,
                            own)
    for _ in range(repeats - 1):
        again = measure_round(timer, impls, make_attn, sets, causal, hq, hkv,
                              own)
        for name, entry in again.items():
            best = results.get(name, {})
            if entry.get("ms") and entry["ms"] < best.get("ms", math.inf):
                best["ms"] = entry["ms"]
    return results


def measure_round(timer, impls, make_attn, sets, causal, hq, hkv, own):
    """One round of `measure`."""
    results = {}
    outputs = {}
    makers = dict(own or {}, attn=make_attn)
    for name in list(impls) + [n for n in makers if n not in impls]:
        entry = {}
        try:
            if name in makers:
                calls, note = makers[name](sets)
                if calls is None:
                    entry["error"] = note
                    results[name] = entry
                    continue
                out = calls[0]()
                torch.cuda.synchronize()
            else:
                if sdpa_kernel is None:
                    raise RuntimeError("torch.nn.attention.sdpa_kernel is "
                                       "missing (torch < 2.3)")
                calls, out, note = peer_calls(name, sets, causal, hq, hkv)
            if note:
                entry["note"] = note
            outputs[name] = out.clone()
            ms = timer.graph_ms(calls) if timer.graphs else None
            if ms is None:
                ms = timer.median_ms(calls)
                entry["timing"] = "events"
                note = "timed with events: the calls cannot be captured"
                entry["note"] = "; ".join(filter(None, [entry.get("note"),
                                                        note]))
            entry["ms"] = ms
            del calls
        except Exception as e:  # noqa: BLE001 - reported per implementation
            entry["error"] = "%s: %s" % (type(e).__name__,
                                         str(e).strip().split("\n")[0][:300])
        results[name] = entry
    # attn's output against a peer's, on the same inputs.
    reference = next((p for p in PEERS if p in outputs), None)
    if "attn" in outputs and reference:
        err = rel_error(outputs["attn"], outputs[reference])
        results["attn"]["check"] = "%s vs %s: %.1e" % (
            "ok" if err <= CHECK_TOLERANCE else "MISMATCH", reference, err)
        results["attn"]["check_ok"] = err <= CHECK_TOLERANCE
    elif "attn" in outputs:
        results["attn"]["check"] = "unchecked (no peer ran)"
    return results


def ratio(results, metric):
    attn = results.get("attn", {}).get(metric)
    peers = [results[p][metric] for p in PEERS
             if results.get(p, {}).get(metric)]
    if not attn or not peers or not results["attn"].get("check_ok", False):
        return None
    return attn / max(peers)


def bench_forward(module, timer, grid, dtype_name, l2, baseline=None,
                  matmul=None, repeats=1):
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype_name]
    rows = []
    for d, s, causal in grid:
        b, h = 16384 // s, 2048 // d
        kind = "none"
        if causal:
            kind = "top_left" if module.has_kernel(
                "forward", dtype_name, d, d, "top_left") else "bottom_right"
        set_bytes = 4 * b * h * s * d * 2
        count = rotations(set_bytes, l2)
        sets = []
        for _ in range(count):
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dtype)
                       for _ in range(3))
            sets.append((q, k, v, torch.empty_like(q)))

        def make_attn(sets, d=d, kind=kind, module=module):
            if not module.has_kernel("forward", dtype_name, d, d, kind):
                return None, "no forward kernel for %s d%d causal=%s" % (
                    dtype_name, d, kind)
            return [lambda q=q, k=k, v=v, o=o: module.forward(
                q, k, v, causal=kind, out=o) for q, k, v, o in sets], ""

        own = None
        if baseline:
            own = {"base": lambda sets: make_attn(sets, module=baseline)}
        results = measure(timer, IMPLS, make_attn, sets, causal, h, h, own,
                          repeats)
        flops = 4.0 * b * h * s * s * d / (2 if causal else 1)
        for entry in results.values():
            if entry.get("ms"):
                entry["tflops"] = flops / (entry["ms"] * 1e-3) / 1e12
        row = dict(d=d, s=s, causal=causal, b=b, h=h, dtype=dtype_name,
                   attn_causal=kind, rotations=count, flops=flops,
                   results=results, ratio=ratio(results, "tflops"))
        if matmul and results["attn"].get("tflops"):
            row["matmul_fraction"] = results["attn"]["tflops"] / matmul
        rows.append(row)
        print_forward_row(row, matmul)
        del sets
        torch.cuda.empty_cache()
    return rows


def bench_decode(module, timer, grid, l2, copy_gbs, baseline=None,
                 repeats=1):
    dtype = torch.bfloat16
    d, hq = 128, 32
    rows = []
    for b, hkv, kv in grid:
        kv_bytes = 2 * b * hkv * kv * d * 2
        free, _ = torch.cuda.mem_get_info()
        row = dict(b=b, hq=hq, hkv=hkv, kv=kv, d=d, bytes=kv_bytes)
        if kv_bytes > 0.8 * free:
            row["skipped"] = "K/V need %.1f GB, %.1f GB free" % (
                kv_bytes / 1e9, free / 1e9)
            rows.append(row)
            print_decode_row(row, copy_gbs)
            continue
        count = rotations(kv_bytes, l2)
        sets = []
        for _ in range(count):
            q = torch.randn(b, hq, 1, d, device="cuda", dtype=dtype)
            k = torch.randn(b, hkv, kv, d, device="cuda", dtype=dtype)
            v = torch.randn(b, hkv, kv, d, device="cuda", dtype=dtype)
            sets.append((q, k, v, torch.empty_like(q)))

        def make_attn(sets, module=module):
            if not module.has_kernel("decode_partial", "bf16", d, d, "none"):
                return None, "no decode_partial kernel for bf16 d128"
            q, k, v, _ = sets[0]
            if module is not baseline:
                row["splits"] = module.decode_splits(q, k, v)
            workspace = module.decode_workspace(q, k, v)
            return [lambda q=q, k=k, v=v, o=o: module.decode(
                q, k, v, out=o, workspace=workspace)
                for q, k, v, o in sets], ""

        own = None
        if baseline:
            own = {"base": lambda sets: make_attn(sets, module=baseline)}
        results = measure(timer, IMPLS, make_attn, sets, False, hq, hkv, own,
                          repeats)
        for entry in results.values():
            if entry.get("ms"):
                entry["gbs"] = kv_bytes / (entry["ms"] * 1e-3) / 1e9
                entry["copy_fraction"] = entry["gbs"] / copy_gbs
        row.update(rotations=count, results=results,
                   ratio=ratio(results, "gbs"))
        rows.append(row)
        print_decode_row(row, copy_gbs)
        del sets
        torch.cuda.empty_cache()
    return rows

#===------------------------------------------------------------------------===#
# Tables and plot
#===------------------------------------------------------------------------===#


def cell(entry, metric, width=8):
    if entry.get(metric):
        return "%*.0f" % (width, entry[metric])
    return "%*s" % (width, "n/a")


FORWARD_HEADER = "%-4s %6s %-6s %3s %3s | %8s %8s %8s | %6s %5s | %s" % (
    "D", "S", "causal", "B", "H", "attn", "flash", "cudnn", "ratio", "%mm",
    "check")


def print_forward_row(row, matmul):
    r = row["results"]
    tflops = r["attn"].get("tflops")
    print("%-4d %6d %-6s %3d %3d | %s %s %s | %6s %5s | %s" % (
        row["d"], row["s"], "yes" if row["causal"] else "no", row["b"],
        row["h"], cell(r["attn"], "tflops"), cell(r["flash"], "tflops"),
        cell(r["cudnn"], "tflops"),
        "%.2f" % row["ratio"] if row["ratio"] else "-",
        "%.0f%%" % (100 * tflops / matmul) if tflops and matmul else "-",
        r["attn"].get("check", r["attn"].get("error", ""))), flush=True)
    base = r.get("base", {})
    if base.get("tflops") and r["attn"].get("tflops"):
        print("     baseline %.0f TFLOP/s, attn / baseline %.3f" % (
            base["tflops"], r["attn"]["tflops"] / base["tflops"]),
            flush=True)
    elif base:
        print("     baseline: %s" % base.get("error", "no time"), flush=True)
    for name in IMPLS:
        if r[name].get("error") and name != "attn":
            print("       %s: %s" % (name, r[name]["error"]), flush=True)
        if r[name].get("note"):
            print("       %s: %s" % (name, r[name]["note"]), flush=True)


DECODE_HEADER = "%-3s %-6s %6s | %8s %8s %8s | %6s %6s | %s" % (
    "B", "Hq/Hkv", "KV", "attn", "flash", "cudnn", "ratio", "%copy", "check")


def print_decode_row(row, copy_gbs):
    prefix = "%-3d %2d/%-3d %6d" % (row["b"], row["hq"], row["hkv"],
                                    row["kv"])
    if "skipped" in row:
        print("%s | skipped: %s" % (prefix, row["skipped"]), flush=True)
        return
    r = row["results"]
    attn_gbs = r["attn"].get("gbs")
    base = r.get("base", {})
    print("%s | %s %s %s | %6s %6s | %s%s" % (
        prefix, cell(r["attn"], "gbs"), cell(r["flash"], "gbs"),
        cell(r["cudnn"], "gbs"),
        "%.2f" % row["ratio"] if row["ratio"] else "-",
        "%.0f%%" % (100 * attn_gbs / copy_gbs) if attn_gbs else "-",
        r["attn"].get("check", r["attn"].get("error", "")),
        " (splits %d)" % row["splits"] if "splits" in row else ""),
        flush=True)
    if base.get("gbs") and attn_gbs:
        print("     baseline %.0f GB/s, attn / baseline %.3f" % (
            base["gbs"], attn_gbs / base["gbs"]), flush=True)
    elif base:
        print("     baseline: %s" % base.get("error", "no time"), flush=True)
    for name in IMPLS:
        if r[name].get("error") and name != "attn":
            print("       %s: %s" % (name, r[name]["error"]), flush=True)
        if r[name].get("note"):
            print("       %s: %s" % (name, r[name]["note"]), flush=True)


def plot(path, forward, decode, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return False
    panels = [(forward, "tflops", "forward TFLOP/s",
               lambda r: "d%d %dk%s" % (r["d"], r["s"] // 1024,
                                        " c" if r["causal"] else "")
               if r["s"] >= 1024 else "d%d %d%s" % (
                   r["d"], r["s"], " c" if r["causal"] else "")),
              (decode, "gbs", "decode GB/s (K/V read)",
               lambda r: "B%d %d/%d %dk" % (r["b"], r["hq"], r["hkv"],
                                            r["kv"] // 1024))]
    panels = [p for p in panels if any("results" in r for r in p[0])]
    if not panels:
        print("nothing measured: no plot")
        return False
    fig, axes = plt.subplots(len(panels), 1,
                             figsize=(14, 4.5 * len(panels)), squeeze=False)
    for ax, (rows, metric, label, name) in zip(axes[:, 0], panels):
        rows = [r for r in rows if "results" in r]
        width = 0.8 / len(IMPLS)
        for i, impl in enumerate(IMPLS):
            values = [r["results"][impl].get(metric) or 0 for r in rows]
            bars = ax.bar([x + (i - 1) * width for x in range(len(rows))],
                          values, width, label=impl)
            for bar, r in zip(bars, rows):
                if r["results"][impl].get("check_ok") is False:
                    bar.set_hatch("xx")  # attn's output did not match
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([name(r) for r in rows], rotation=45, ha="right",
                           fontsize=8)
        ax.set_ylabel(label)
        ax.legend()
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title + " (hatched: attn's output did not match the "
                 "peer's)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print("plot: %s" % path)
    return True

#===------------------------------------------------------------------------===#
# Driver
#===------------------------------------------------------------------------===#


def arguments(doc):
    """A benchmark's argument parser: the first line of `doc`, --manifest
    (attn's kernels) and --lib (libattn_runtime.so)."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--manifest", required=True,
                        help="attn.manifest of the kernels to time")
    parser.add_argument("--lib", default=None,
                        help="libattn_runtime.so (default: see "
                             "python/attn_runtime.py)")
    return parser


def main():
    parser = arguments(__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="only the shapes of BENCHMARKS.md's tables")
    parser.add_argument("--only", choices=["forward", "decode"])
    parser.add_argument("--dtype", choices=["bf16", "f16"], default="bf16",
                        help="forward element type (decode is bf16)")
    parser.add_argument("--baseline", default=None,
                        help="a second manifest whose kernels are timed "
                             "beside attn's in the same process (an A/B of "
                             "two compilers' kernels)")
    parser.add_argument("--shapes", default=None,
                        help="forward shapes D:S:causal(0/1),... instead of "
                             "the grid")
    parser.add_argument("--decode-shapes", default=None,
                        help="decode shapes B:Hkv:KV,... instead of the grid")
    parser.add_argument("--timing", choices=["graphs", "events"],
                        default="graphs",
                        help="graphs: CUDA graphs of back-to-back calls "
                             "(default); events: events around each call "
                             "after a 40 us spin")
    parser.add_argument("--repeats", type=int, default=1,
                        help="rounds of timing per shape, each "
                             "implementation in turn; the fastest round "
                             "counts")
    parser.add_argument("--json", default=None)
    parser.add_argument("--png", default=None)
    parser.add_argument("--target-ms", type=float, default=None,
                        help="time spent timing each implementation per "
                             "shape (default 300, 150 with --quick)")
    args = parser.parse_args()

    props = cuda_device()
    if props is None:
        return 1
    l2 = getattr(props, "L2_cache_size", 0) or (50 << 20)
    target = args.target_ms or (150 if args.quick else 300)
    timer = Timer(target, warmup=5, min_iters=10, max_iters=500)
    timer.graphs = args.timing == "graphs"
    module = attn_runtime.Module(args.manifest, lib=args.lib)
    baseline = (attn_runtime.Module(args.baseline, lib=args.lib)
                if args.baseline else None)
    title = "attn vs SDPA flash/cuDNN on %s (torch %s)" % (props.name,
                                                          torch.__version__)
    print(title)
    copy_gbs = copy_bandwidth(timer)
    print("L2 %d MB, measured copy bandwidth %.0f GB/s" % (l2 >> 20,
                                                          copy_gbs))
    matmul = None
    if args.only != "decode":
        matmul = matmul_tflops(timer, {"bf16": torch.bfloat16,
                                       "f16": torch.float16}[args.dtype])
        print("%s matmul 8192 x 8192 x 8192 (cuBLAS): %.0f TFLOP/s; %%mm = "
              "attn / that" % (args.dtype, matmul))
    report = dict(device=props.name, torch=torch.__version__,
                  capability="sm_%d%d" % (props.major, props.minor),
                  sms=props.multi_processor_count, l2_bytes=l2,
                  copy_gbs=copy_gbs, matmul_tflops=matmul,
                  manifest=os.path.abspath(args.manifest),
                  quick=args.quick, forward=[], decode=[])

    def save():
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=1, default=str)

    started = time.time()
    if args.only != "decode":
        grid = FORWARD_QUICK if args.quick else FORWARD_FULL
        if args.shapes:
            grid = [tuple(int(x) for x in s.split(":"))
                    for s in args.shapes.split(",")]
            grid = [(d, s, bool(c)) for d, s, c in grid]
        print("\nforward, %s, TFLOP/s (ratio = attn / fastest peer)" %
              args.dtype)
        print(FORWARD_HEADER)
        report["forward"] = bench_forward(module, timer, grid, args.dtype, l2,
                                          baseline, matmul, args.repeats)
        save()
    if args.only != "forward":
        grid = DECODE_QUICK if args.quick else DECODE_FULL
        if args.decode_shapes:
            grid = [tuple(int(x) for x in s.split(":"))
                    for s in args.decode_shapes.split(",")]
        print("\ndecode, bf16, D=128, GB/s of K/V read (ratio = attn / "
              "fastest peer; %%copy = attn / %.0f GB/s)" % copy_gbs)
        print(DECODE_HEADER)
        report["decode"] = bench_decode(module, timer, grid, l2, copy_gbs,
                                        baseline, args.repeats)
        save()

    ratios = [r["ratio"] for r in report["forward"] + report["decode"]
              if r.get("ratio")]
    mismatches = sum(1 for r in report["forward"] + report["decode"]
                     if r.get("results", {}).get("attn", {}).get("check_ok")
                     is False)
    print("\n%d shapes timed in %.0fs; attn ahead of the fastest peer on %d "
          "of %d compared; %d output mismatches" % (
              len(report["forward"]) + len(report["decode"]),
              time.time() - started, sum(x > 1 for x in ratios), len(ratios),
              mismatches))
    if ratios:
        print("geometric mean ratio attn / fastest peer: %.3f" % math.exp(
            sum(math.log(x) for x in ratios) / len(ratios)))
    save()
    if args.png:
        plot(args.png, report["forward"], report["decode"], title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
