#!/usr/bin/env python3
"""Where a split-KV decode kernel's time goes, CTA by CTA.

Copies a module's PTX with its decode partial kernels instrumented: each
CTA's thread 0 reads %globaltimer at entry, at its first cp.async (the
first tile's copy, after the prologue that finds its work; --mark moves
it to another instruction) and at its exit, and stores (SM id, the three times) 64 MiB past the partial output
(the workspace the call is given is that much larger; nothing else lives
there). Runs paged decode (and attn_decode on the same bytes) on one
batch and prints, per kernel: the span from the first CTA's entry to the
last CTA's exit, the CTAs' prologues and bodies, when they start
(dispatch waves), and how many working CTAs share an SM.

    python3 bench/cta_timeline.py --manifest DIR/attn.manifest \\
        [--lib build-rt/lib/libattn_runtime.so] [--batch 8] [--mean 4096] \\
        [--page 16] [--lengths even|spread] [--splits N] [--contiguous]

A probe, not a benchmark: the instrumented kernels are slower by a few
instructions a CTA, and the times are one call's after warm-up.
"""

import os
import re
import shutil
import statistics
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import attn_runtime  # noqa: E402
from bench_attention import arguments  # noqa: E402

RECORD_OFFSET = 64 << 20  # bytes past the partial output's base
RECORD_BYTES = 32


def param_index(params, name):
    """The PTX parameter index of memref `name`'s aligned pointer, from the
    manifest's params= list (a memref of rank N is 3 + 2N parameters:
    allocated and aligned pointers, offset, sizes, strides)."""
    index = 0
    for p in params.split(","):
        pname, kind = p.split(":")
        if pname == name:
            return index + 1
        m = re.fullmatch(r"memref(\d+)", kind)
        index += 3 + 2 * int(m.group(1)) if m else 1
    raise KeyError(name)


def instrument(ptx, kernel, out_param, mark="cp.async"):
    """`ptx` with `kernel`'s entry instrumented (see the module doc); the
    middle time is taken before the first instruction that contains
    `mark`."""
    start = ptx.index(".entry %s(" % kernel)
    body = ptx.index("{", ptx.index(")", start))
    end = ptx.find("\n}", body)
    text = ptx[body + 1:end]
    head = ("\n\t.reg .b64 %tlT<6>;\n\t.reg .b32 %tlS<6>;\n"
            "\t.reg .pred %tlP<2>;\n\tmov.u64 %tlT0, %globaltimer;\n"
            "\tmov.u64 %tlT1, 0;")
    first = ("\tsetp.eq.u64 %tlP0, %tlT1, 0;\n"
             "\t@%tlP0 mov.u64 %tlT1, %globaltimer;\n")
    lines, seen, rets = [], False, 0
    for line in text.split("\n"):
        stripped = line.strip()
        if mark in stripped and not seen:
            lines.append(first)
        seen = seen or mark in stripped
        if stripped == "ret;":
            label = "$TL_%d" % rets
            rets += 1
            lines.append(
                "\tmov.u32 %%tlS0, %%tid.x;\n"
                "\tsetp.ne.u32 %%tlP1, %%tlS0, 0;\n"
                "\t@%%tlP1 bra %(label)s;\n"
                "\tmov.u64 %%tlT2, %%globaltimer;\n"
                "\tld.param.u64 %%tlT3, [%(kernel)s_param_%(p)d];\n"
                "\tcvta.to.global.u64 %%tlT3, %%tlT3;\n"
                "\tmov.u32 %%tlS1, %%ctaid.z;\n"
                "\tmov.u32 %%tlS2, %%nctaid.y;\n"
                "\tmov.u32 %%tlS3, %%ctaid.y;\n"
                "\tmad.lo.u32 %%tlS1, %%tlS1, %%tlS2, %%tlS3;\n"
                "\tmov.u32 %%tlS2, %%nctaid.x;\n"
                "\tmov.u32 %%tlS3, %%ctaid.x;\n"
                "\tmad.lo.u32 %%tlS1, %%tlS1, %%tlS2, %%tlS3;\n"
                "\tmul.wide.u32 %%tlT4, %%tlS1, %(rb)d;\n"
                "\tadd.u64 %%tlT3, %%tlT3, %%tlT4;\n"
                "\tadd.u64 %%tlT3, %%tlT3, %(off)d;\n"
                "\tmov.u32 %%tlS4, %%smid;\n"
                "\tcvt.u64.u32 %%tlT5, %%tlS4;\n"
                "\tst.global.u64 [%%tlT3], %%tlT5;\n"
                "\tst.global.u64 [%%tlT3+8], %%tlT0;\n"
                "\tst.global.u64 [%%tlT3+16], %%tlT1;\n"
                "\tst.global.u64 [%%tlT3+24], %%tlT2;\n"
                "%(label)s:" % dict(label=label, kernel=kernel, p=out_param,
                                     rb=RECORD_BYTES, off=RECORD_OFFSET))
        lines.append(line)
    if not rets:
        raise ValueError("%s has no ret" % kernel)
    return ptx[:body + 1] + head + "\n".join(lines) + ptx[end:]


def instrumented_module(manifest, lib, mark="cp.async"):
    """A copy of the manifest's folder with every decode_partial kernel
    instrumented, loaded."""
    folder = tempfile.mkdtemp(prefix="cta_timeline_")
    src = os.path.dirname(os.path.abspath(manifest))
    for name in os.listdir(src):
        shutil.copy(os.path.join(src, name), folder)
    records = [l.split() for l in open(manifest) if l.startswith("kernel ")]
    ptx_names = [l.split()[1] for l in open(manifest) if l.startswith("ptx ")]
    for ptx_name in ptx_names:
        path = os.path.join(folder, ptx_name)
        ptx = open(path).read()
        for r in records:
            fields = dict(f.split("=", 1) for f in r[2:] if "=" in f)
            if fields.get("kind") != "decode_partial" or \
                    (".entry %s(" % r[1]) not in ptx:
                continue
            ptx = instrument(ptx, r[1],
                             param_index(fields["params"], "partial_o"), mark)
        open(path, "w").write(ptx)
    return attn_runtime.Module(os.path.join(folder,
                                            os.path.basename(manifest)),
                               lib=lib)


def summarize(name, records):
    """Prints one kernel's timeline from its CTA records [n, 4]."""
    recs = [r for r in records.tolist() if r[1] > 0]
    if not recs:
        print("%s: no records" % name)
        return
    t0 = min(r[1] for r in recs)
    span = (max(r[3] for r in recs) - t0) / 1e3
    working = [r for r in recs if r[2] > 0]
    idle = [r for r in recs if r[2] == 0]
    print("%s: %d CTAs (%d reach the mark, %d do not), span %.1f us"
          % (name, len(recs), len(working), len(idle), span))

    def stats(label, xs):
        if not xs:
            return
        xs = sorted(xs)
        print("  %-26s min %7.2f  median %7.2f  max %7.2f us"
              % (label, xs[0], statistics.median(xs), xs[-1]))

    stats("start (after first entry)", [(r[1] - t0) / 1e3 for r in recs])
    stats("entry to mark", [(r[2] - r[1]) / 1e3 for r in working])
    stats("mark to exit", [(r[3] - r[2]) / 1e3 for r in working])
    stats("whole CTA (marked)", [(r[3] - r[1]) / 1e3 for r in working])
    stats("whole CTA (no mark)", [(r[3] - r[1]) / 1e3 for r in idle])
    stats("exit (after first entry)", [(r[3] - t0) / 1e3 for r in working])
    per_sm = {}
    for r in working:
        per_sm.setdefault(r[0], []).append(r)
    counts = {}
    for rs in per_sm.values():
        counts[len(rs)] = counts.get(len(rs), 0) + 1
    print("  SMs by marked CTAs: %s (%d SMs used)"
          % (", ".join("%d: %d" % kv for kv in sorted(counts.items())),
             len(per_sm)))
    # The CTAs that finish last: on SMs shared with how many?
    last = sorted(working, key=lambda r: r[3])[-8:]
    print("  last 8 exits: %s" % ", ".join(
        "%.1f (sm %d x%d)" % ((r[3] - t0) / 1e3, r[0], len(per_sm[r[0]]))
        for r in last))


def main():
    parser = arguments(__doc__)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--mean", type=int, default=4096)
    parser.add_argument("--page", type=int, default=16)
    parser.add_argument("--lengths", choices=["even", "spread"],
                        default="even")
    parser.add_argument("--splits", type=int, default=0)
    parser.add_argument("--contiguous", action="store_true",
                        help="also attn_decode on a dense cache of the "
                             "same keys, every sequence at the mean")
    parser.add_argument("--label", default="paged")
    parser.add_argument("--mark", default="cp.async",
                        help="take the middle time before the first PTX "
                             "instruction holding this text (default: the "
                             "first copy)")
    args = parser.parse_args()
    torch.manual_seed(0)
    hq, hkv, d, dt = 32, 8, 128, torch.bfloat16
    b, page = args.batch, args.page
    if args.lengths == "even":
        lens = [args.mean] * b
    else:
        low = max(1, round(2 * args.mean / 11))
        lens = [low, 10 * low] + [int(low + x * 9 * low)
                                  for x in torch.rand(b - 2).tolist()]
        lens = lens[:b]
    owned = [-(-n // page) for n in lens]
    pool = sum(owned)
    order = torch.randperm(pool).to(torch.int32)
    table = torch.zeros((b, max(owned)), dtype=torch.int32)
    at = 0
    for i, n in enumerate(owned):
        table[i, :n] = order[at:at + n]
        at += n
    table = table.cuda()
    kv_lens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    k = torch.randn((pool, page, hkv, d), dtype=dt, device="cuda")
    v = torch.randn_like(k)
    q = torch.randn((b, hq, 1, d), dtype=dt, device="cuda")
    module = instrumented_module(args.manifest, args.lib, args.mark)
    plain = attn_runtime.Module(args.manifest, lib=args.lib)
    need = plain.decode_paged_workspace(
        q, k, v, table, kv_lens, num_splits=args.splits,
        kv_layout="bshd").numel()
    assert need <= RECORD_OFFSET
    splits = module.decode_paged_splits(q, k, v, table, kv_lens,
                                        args.splits, kv_layout="bshd")
    ws = torch.zeros(RECORD_OFFSET + (1 << 20), dtype=torch.uint8,
                     device="cuda")
    out = torch.empty_like(q)
    print("B = %d, lengths %s (sum %d), pages of %d, %d splits"
          % (b, args.lengths, sum(lens), page, splits))
    for _ in range(3):
        module.decode_paged(q, k, v, table, kv_lens, kv_layout="bshd",
                            out=out, workspace=ws, num_splits=args.splits)
    ws[RECORD_OFFSET:].zero_()
    torch.cuda.synchronize()
    module.decode_paged(q, k, v, table, kv_lens, kv_layout="bshd", out=out,
                        workspace=ws, num_splits=args.splits)
    torch.cuda.synchronize()
    rec = ws[RECORD_OFFSET:].view(torch.int64).view(-1, 4).cpu()
    summarize("%s partial" % args.label, rec)
    if args.contiguous:
        even = max(1, round(sum(lens) / b))
        ke = torch.randn((b, hkv, even, d), dtype=dt, device="cuda")
        ve = torch.randn_like(ke)
        for _ in range(3):
            module.decode(q, ke, ve, out=out, workspace=ws)
        ws[RECORD_OFFSET:].zero_()
        torch.cuda.synchronize()
        module.decode(q, ke, ve, out=out, workspace=ws)
        torch.cuda.synchronize()
        rec = ws[RECORD_OFFSET:].view(torch.int64).view(-1, 4).cpu()
        summarize("contiguous partial", rec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
