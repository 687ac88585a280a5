#!/usr/bin/env python3
"""attn's backward against PyTorch SDPA's FlashAttention-2 and cuDNN
backward, same process, same tensors.

    python3 bench/bench_backward.py --manifest DIR/attn.manifest \\
        [--lib build-rt/lib/libattn_runtime.so] [--shapes D:S:causal,...] \\
        [--with-forward] [--atomic-manifest DIR2/attn.manifest] \
        [--baseline-manifest DIR3/attn.manifest] [--kernel-times] \
        [--repeats N] [--dtype bf16|f16|f32] \
        [--json OUT/bench_backward.json]

Grid (BENCHMARKS.md's forward grid): bf16 (--dtype), B * S = 16384 tokens,
hidden 2048 (H = 2048 / D), D in {64, 128}, S in {1k, 2k, 4k, 8k, 16k}, causal
(top-left, PyTorch's is_causal) and not. Each implementation gets the same
Q, K, V, O, LSE and dO: attn's backward takes O and LSE from attn's own
forward; a peer's backward is `torch.autograd.grad` through its own
forward's graph (retained), so only the backward is timed. attn's dQ, dK,
dV are checked against the first peer's before timing (relative L2 error).
Timing: bench_attention.py's Timer (CUDA graphs of back-to-back calls, or
CUDA events where a call cannot be captured; the entry says which).

FLOPs: 2.5 times the forward's, 10 B H S^2 D (half with causal), as
FlashAttention's papers count the backward (5 matmuls against 2).
--with-forward times a forward and a backward together (attn: its forward
then its backward; a peer: its forward and autograd through it), 14 B H
S^2 D. --atomic-manifest adds "attn-atomic": the backward kernels of the
atomic dQ mode (attn-compile --atomic-dq), the forward from --manifest.
--baseline-manifest adds "attn-base": another module's deterministic
backward kernels (another schedule, an earlier compiler), same tensors.
--kernel-times prints each attn kernel's mean time per call (torch.profiler).
--repeats N times every implementation N times in turn, keeping its best.
--peers picks the SDPA backends (default flash,cudnn; past D = 256 those
refuse, and efficient and math take their place).
"""

import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_attention as ba  # noqa: E402
import attn_runtime  # noqa: E402  (bench_attention put python/ on the path)

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
GRID = [(d, s, c) for d in (64, 128) for s in (1024, 2048, 4096, 8192, 16384)
        for c in (False, True)]


def attn_backward_call(module, q, k, v, dout, causal, with_forward,
                       backward=None, atomic_dq=False):
    """attn's backward on preallocated outputs and workspace, O and LSE
    from attn's forward (run once, or in every call with_forward);
    `backward`: another module whose kernels run the backward (its atomic
    dQ kernels with `atomic_dq`)."""
    kind = "top_left" if causal else "none"
    o, lse = module.forward(q, k, v, causal=kind, return_lse=True)
    grads = [torch.empty_like(t) for t in (q, k, v)]
    backward = backward or module
    workspace = backward.backward_workspace(q, atomic_dq=atomic_dq)

    def call():
        if with_forward:
            module.forward(q, k, v, causal=kind, out=o, lse=lse)
        return backward.backward(q, k, v, o, dout, lse, *grads, causal=kind,
                                 workspace=workspace, atomic_dq=atomic_dq)
    return call


def peer_backward_call(name, q, k, v, dout, causal, with_forward):
    """A peer's backward: autograd through its forward's graph (retained,
    or built anew in every call with_forward)."""
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]

    def forward():
        with ba.sdpa_kernel(ba.backend_of(name)):
            return F.scaled_dot_product_attention(*leaves, is_causal=causal)
    out = forward()

    def call():
        if with_forward:
            return torch.autograd.grad(forward(), leaves, dout)
        return torch.autograd.grad(out, leaves, dout, retain_graph=True)
    return call


def kernel_times(call, iters=20):
    """Mean device time per call of each CUDA kernel named attn_*, in ms."""
    from torch.profiler import ProfilerActivity, profile
    call()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            call()
        torch.cuda.synchronize()
    times = {}
    for e in prof.key_averages():
        if e.key.startswith("attn_"):
            total = getattr(e, "device_time_total", None)
            if total is None:
                total = e.cuda_time_total
            times[e.key] = total / 1e3 / iters
    return times


def time_call(timer, call, entry, flops, per_kernel):
    """Times `call` into `entry`, keeping the fastest of its rounds."""
    # A call that could not be captured once is not tried again: a failed
    # capture leaves the next ones failing too.
    capture = timer.graphs and entry.get("timing") != "events"
    ms = timer.graph_ms([call]) if capture else None
    if ms is None:
        ms = timer.median_ms([call])
        entry["timing"] = "events"
    entry["ms"] = min(ms, entry.get("ms", ms))
    entry["tflops"] = flops / (entry["ms"] * 1e-3) / 1e12
    if per_kernel:
        times = kernel_times(call)
        best = entry.setdefault("kernels", times)
        for kernel, t in times.items():
            best[kernel] = min(t, best.get(kernel, t))


def bench(module, timer, grid, with_forward, atomic=None, baseline=None,
          per_kernel=False, repeats=1, peers=None, dtype="bf16"):
    """`atomic`: a module of atomic dQ kernels, timed as "attn-atomic"
    (its forward from `module`); `baseline`: a module whose deterministic
    backward kernels are timed as "attn-base"."""
    rows = []
    others = {}
    if atomic:
        others["attn-atomic"] = atomic
    if baseline:
        others["attn-base"] = baseline
    mine = ["attn"] + list(others)
    peers = peers or ba.PEERS
    for d, s, causal in grid:
        b, h = 16384 // s, 2048 // d
        q, k, v, dout = (torch.randn(b, h, s, d, device="cuda",
                                     dtype=DTYPES[dtype])
                         for _ in range(4))
        # The backward's 5 products, and the forward's 2 with_forward.
        flops = (14.0 if with_forward else 10.0) * b * h * s * s * d / (
            2 if causal else 1)
        results, grads, calls = {}, {}, {}
        for name in mine + peers:
            entry = {}
            try:
                if name in mine:
                    kind = "top_left" if causal else "none"
                    owner = others.get(name, module)
                    is_atomic = name == "attn-atomic"
                    if not owner.has_backward_kernel("backward_q", dtype, d,
                                                     d, kind,
                                                     atomic_dq=is_atomic):
                        raise RuntimeError("no backward kernels for %s "
                                           "d%d causal=%s" % (dtype, d, kind))
                    call = attn_backward_call(
                        module, q, k, v, dout, causal, with_forward,
                        backward=owner if owner is not module else None,
                        atomic_dq=is_atomic)
                else:
                    call = peer_backward_call(name, q, k, v, dout, causal,
                                              with_forward)
                grads[name] = [g.clone() for g in call()]
                torch.cuda.synchronize()
                calls[name] = call
                time_call(timer, call, entry, flops,
                          per_kernel and name in mine)
            except Exception as e:  # noqa: BLE001 - reported per implementation
                entry["error"] = "%s: %s" % (type(e).__name__,
                                             str(e).strip().split("\n")[0][:200])
            results[name] = entry
        # Further rounds time every implementation again, in turn; each
        # keeps its fastest (a later position can run on a warmer GPU).
        for _ in range(repeats - 1):
            for name, call in calls.items():
                time_call(timer, call, results[name], flops,
                          per_kernel and name in mine)
        reference = next((p for p in peers if p in grads), None)
        for name in mine:
            if name not in grads or not reference:
                continue
            errs = [ba.rel_error(a, r) for a, r in zip(grads[name],
                                                       grads[reference])]
            ok = max(errs) <= ba.CHECK_TOLERANCE
            results[name]["check"] = "%s vs %s: dq %.1e dk %.1e dv %.1e" % (
                "ok" if ok else "MISMATCH", reference, *errs)
            results[name]["check_ok"] = ok
        row = dict(d=d, s=s, causal=causal, b=b, h=h, flops=flops,
                   results=results, ratio=ba.ratio(results, "tflops"))
        for name in others:
            row["ratio_" + name[len("attn-"):]] = ba.ratio(
                dict(results, attn=results[name]), "tflops")
        rows.append(row)
        cells = []
        for name in mine + peers:
            e = results[name]
            cells.append("%8.1f" % e["tflops"] if e.get("tflops") else
                         "%8s" % "-")
        ratios = [row["ratio"]] + [row["ratio_" + n[len("attn-"):]]
                                   for n in others]
        print("D=%-4d S=%-6d %-7s %s  ratio %s  %s" % (
            d, s, "causal" if causal else "", " ".join(cells),
            "/".join("%.2f" % r if r else "-" for r in ratios),
            "; ".join(results[n].get("check") or results[n].get("error", "")
                      for n in mine)),
            flush=True)
        for name in peers:
            if results[name].get("error"):
                print("    %s: %s" % (name, results[name]["error"]))
        for name in mine:
            for kernel, ms in sorted(results[name].get("kernels", {}).items()):
                print("    %-11s %-50s %8.3f ms" % (name, kernel, ms))
        events = [n for n in results if results[n].get("timing") == "events"]
        if events:
            print("    timed with events (not capturable): %s"
                  % ", ".join(events))
        del q, k, v, dout, grads
        torch.cuda.empty_cache()
    return rows


def main():
    parser = ba.arguments(__doc__)
    parser.add_argument("--shapes", default=None,
                        help="D:S:causal(0/1),... instead of the grid")
    parser.add_argument("--with-forward", action="store_true",
                        help="time forward + backward together (FLOPs: "
                             "14 B H S^2 D, half causal)")
    parser.add_argument("--atomic-manifest", default=None,
                        help="a manifest of atomic dQ backward kernels "
                             "(attn-compile --atomic-dq), timed as "
                             "attn-atomic beside the deterministic ones")
    parser.add_argument("--baseline-manifest", default=None,
                        help="a manifest whose deterministic backward "
                             "kernels are timed as attn-base")
    parser.add_argument("--kernel-times", action="store_true",
                        help="print each attn kernel's time per call")
    parser.add_argument("--repeats", type=int, default=1,
                        help="rounds of timing, each implementation in turn; "
                             "the fastest round counts")
    parser.add_argument("--peers", default=",".join(ba.PEERS),
                        help="SDPA backends to time beside attn (flash, "
                             "cudnn, efficient, math)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bf16",
                        help="the operands' dtype (the module needs its "
                             "kernels; flash and cuDNN refuse f32)")
    parser.add_argument("--target-ms", type=float, default=200)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    props = ba.cuda_device()
    if props is None:
        return 1
    timer = ba.Timer(args.target_ms, warmup=3, min_iters=5, max_iters=200)
    module = attn_runtime.Module(args.manifest, lib=args.lib)
    atomic = (attn_runtime.Module(args.atomic_manifest, lib=args.lib)
              if args.atomic_manifest else None)
    baseline = (attn_runtime.Module(args.baseline_manifest, lib=args.lib)
                if args.baseline_manifest else None)
    grid = GRID
    if args.shapes:
        grid = [tuple(int(x) for x in s.split(":"))
                for s in args.shapes.split(",")]
        grid = [(d, s, bool(c)) for d, s, c in grid]
    print("%s on %s (torch %s), %s, TFLOP/s = %d B H S^2 D / t "
          "(half causal); ratio = attn / fastest peer" % (
              "forward + backward" if args.with_forward else "backward",
              props.name, torch.__version__, args.dtype,
              14 if args.with_forward else 10))
    peers = args.peers.split(",")
    print("%-25s %8s%s%s %s" % (
        "shape", "attn", " %8s" % "atomic" if atomic else "",
        " %8s" % "base" if baseline else "",
        " ".join("%8s" % p for p in peers)))
    rows = bench(module, timer, grid, args.with_forward, atomic, baseline,
                 args.kernel_times, args.repeats, peers, args.dtype)
    if args.json:
        ba.write_rows(args.json, rows)
    return 1 if any(not e.get("check_ok", True)
                    for r in rows for n, e in r["results"].items()
                    if n.startswith("attn")) else 0


if __name__ == "__main__":
    sys.exit(main())
