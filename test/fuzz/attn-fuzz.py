#!/usr/bin/env python3
"""attn's fuzzer: mutated lit inputs through every pass, random problems
against the float64 reference.

    attn-fuzz.py --bin build/bin [--seed N] [--cases N] [--time S]
                 [--inputs test] [--out DIR]

Two kinds of case, interleaved:

- mutation: a split chunk of a lit input (test/**/*.mlir) with a few edits
  that keep it parseable more often than not (numbers, tensor dims, element
  types, attn attributes, comparison predicates, reduction axes), run
  through one of attn's passes or pipelines with attn-opt. Outcomes:
    crash        attn-opt died (signal, LLVM ERROR, assertion) or exceeded
                 its time limit (hang);
    invalid-ir   the pass left IR that fails to verify: an error about an
                 op the input never had (attn's own diagnostics name attn
                 ops, passes or options, which are fine);
    mismatch     attn-raise fused a chain whose result differs from the
                 chain's (attn-cpu-runner --compare-pass=attn-raise).
- random: attn-cpu-runner --random with a fresh seed: attn's CPU pipeline
  against the float64 reference on random shapes, masks and dtypes
  (mismatch, crash).

Every finding is written to DIR (default: a temporary directory) with the
command that shows it; the last line is "N cases, N findings" and the exit
status is 1 when there is a finding. A finding becomes a lit regression
test next to the pass it concerns.
"""

import argparse
import glob
import os
import random
import re
import subprocess
import sys
import tempfile
import time

PASSES = [
    "--attn-raise=report-unfused",
    "--attn-raise=strict-softmax",
    "--attn-decompose",
    "--attn-tile",
    "--attn-tile=target=sm_90a",
    "--attn-to-llvm",
    "--attn-to-gpu=chip=sm_80",
    "--attn-to-gpu=chip=sm_90a",
    "--attn-to-ptx=chip=sm_80",
    "--attn-to-ptx=chip=sm_90a",
    "--attn-to-llvm=tile-target=sm_90a",
]

NUMBERS = ["0", "1", "-1", "2", "3", "7", "16", "63", "64", "65", "129",
           "2147483647", "-2147483648", "9223372036854775807", "1048576"]
FLOATS = ["0.0", "1.0", "-1.0", "0.5", "1.0e+30", "-3.40282347E+38",
          "0xFF800000", "0x7F800000", "0x7FC00000", "0xFFC00000", "1.0e-40"]
TYPES = ["f16", "bf16", "f32", "f64", "i1", "i8", "i32"]
CAUSAL = ["none", "top_left", "bottom_right"]
PREDICATES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ugt"]

NUMBER_RE = re.compile(r"(?<![\w.#%])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])")
HEX_RE = re.compile(r"\b0x[0-9A-Fa-f]{4,16}\b")
DIMS_RE = re.compile(r"tensor<((?:[0-9?]+x)+)")
OUTPUT_SHAPE_RE = re.compile(r"(output_shape \[)([^\]]*)\]")
TYPE_RE = re.compile(r"\b(f16|bf16|f32|f64)\b")
CAUSAL_RE = re.compile(r"#attn\.causal<(\w+)>")
PRED_RE = re.compile(r"\b(cmpi|cmpf) (\w+)")
AXIS_RE = re.compile(r"axis = (\d+)")


def chunks(root):
    """The split chunks of the lit inputs, without comment lines."""
    out = []
    root = os.path.realpath(root)
    for path in sorted(glob.glob(os.path.join(root, "**", "*.mlir"),
                                 recursive=True)):
        rel = os.path.relpath(path, root)
        if rel.startswith(("fuzz", "GPU")):
            continue
        text = open(path).read()
        for part in text.split("// -----"):
            lines = [l for l in part.split("\n")
                     if not l.lstrip().startswith("//")]
            body = "\n".join(lines).strip()
            if "func.func" in body or "attn." in body:
                out.append((os.path.relpath(path, root), body))
    return out


def mutate(text, rng):
    """A few edits of `text`."""
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(7)
        if kind == 0:
            # Not the sizes a reshape spells out: they follow its type
            # (upstream's tensor.expand_shape verifier does not compare
            # them, and bufferization then fails on the mismatch).
            shapes = [m.span() for m in OUTPUT_SHAPE_RE.finditer(text)]
            ms = [m for m in NUMBER_RE.finditer(text)
                  if not any(a <= m.start() < b for a, b in shapes)]
            if ms:
                m = rng.choice(ms)
                new = rng.choice(FLOATS if "." in m.group(0) else NUMBERS)
                text = text[:m.start()] + new + text[m.end():]
        elif kind == 1:
            ms = list(HEX_RE.finditer(text))
            if ms:
                m = rng.choice(ms)
                text = text[:m.start()] + rng.choice(FLOATS) + text[m.end():]
        elif kind == 2:
            # One dim size changed wherever it appears in a type: shapes
            # stay consistent with each other more often than not.
            sizes = set()
            for m in DIMS_RE.finditer(text):
                sizes.update(d for d in m.group(1).split("x") if d)
            if sizes:
                old = rng.choice(sorted(sizes))
                new = rng.choice(["1", "2", "3", "5", "8", "16", "17", "?",
                                  "0", "128", "1000"])

                def repl(m, old=old, new=new):
                    dims = [new if d == old else d
                            for d in m.group(1).split("x")[:-1]]
                    return "tensor<" + "".join(d + "x" for d in dims)
                text = DIMS_RE.sub(repl, text)
                # The static sizes reshapes spell out follow their types.
                if new != "?":
                    text = OUTPUT_SHAPE_RE.sub(
                        lambda m: m.group(1) + ", ".join(
                            new if d.strip() == old else d.strip()
                            for d in m.group(2).split(",")) + "]", text)
        elif kind == 3:
            ms = list(TYPE_RE.finditer(text))
            if ms:
                old = rng.choice(ms).group(1)
                text = re.sub(r"\b%s\b" % old, rng.choice(TYPES), text)
        elif kind == 4:
            text = CAUSAL_RE.sub(
                lambda m: "#attn.causal<%s>" % rng.choice(CAUSAL), text)
        elif kind == 5:
            text = PRED_RE.sub(
                lambda m: "%s %s" % (m.group(1), rng.choice(PREDICATES))
                if m.group(1) == "cmpi" else m.group(0), text)
        else:
            text = AXIS_RE.sub(lambda m: "axis = %d" % rng.randrange(4), text)
    return text


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def crashed(rc, err):
    return (rc == "timeout" or (isinstance(rc, int) and rc not in (0, 1))
            or "Stack dump" in err or "LLVM ERROR" in err
            or "Assertion" in err or "UNREACHABLE" in err)


FLOAT_RE = re.compile(r"(?<![\w.#%])-?\d+\.\d+(?:[eE][+-]?\d+)?(?![\w.])")


def in_range(text):
    """Whether every finite float constant is within attn's score range."""
    for m in FLOAT_RE.finditer(text):
        v = abs(float(m.group(0)))
        if 2.0 ** 30 < v < 3.4e38:
            return False
    return True


OP_ERROR_RE = re.compile(r"error: '([\w.]+)' op")


def invalid_ir(err, source):
    """An error about an op the input does not have: a pass built it."""
    for m in OP_ERROR_RE.finditer(err):
        name = m.group(1)
        if not name.startswith("attn.") and name not in source:
            return True
    return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--inputs", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--time", type=float, default=0,
                        help="stop after this many seconds (0: no limit)")
    parser.add_argument("--timeout", type=float, default=30,
                        help="a run longer than this is a hang")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    opt = os.path.join(args.bin, "attn-opt")
    runner = os.path.join(args.bin, "attn-cpu-runner")
    out = args.out or tempfile.mkdtemp(prefix="attn-fuzz-")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(args.seed)
    inputs = chunks(args.inputs)
    if not inputs:
        print("no inputs under", args.inputs)
        return 2
    start = time.time()
    findings = []
    counts = {}
    n = 0

    def report(kind, text, cmd, detail):
        path = os.path.join(out, "finding%d.mlir" % (len(findings) + 1))
        with open(path, "w") as f:
            f.write("// %s: %s\n// %s\n" % (kind, " ".join(cmd), detail))
            f.write(text + "\n")
        findings.append(path)
        print("FINDING %s: %s (%s)" % (kind, path, detail[:200]))

    while n < args.cases and (not args.time or time.time() - start < args.time):
        n += 1
        if rng.random() < 0.1:
            seed = rng.randrange(1 << 30)
            cmd = [runner, "--random=3", "--seed=%d" % seed]
            rc, so, se = run(cmd, args.timeout * 4)
            outcome = ("crash" if crashed(rc, se) else
                       "mismatch" if rc != 0 else "ok")
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome != "ok":
                report(outcome, "", cmd, (so + se)[-400:].replace("\n", " | "))
            continue
        name, source = rng.choice(inputs)
        text = mutate(source, rng)
        case = os.path.join(out, "case.mlir")
        with open(case, "w") as f:
            f.write(text)
        rc, _, se = run([opt, case], args.timeout)
        if rc != 0:
            counts["rejected"] = counts.get("rejected", 0) + 1
            if crashed(rc, se):
                report("crash", text, [opt], se[-400:].replace("\n", " | "))
            continue
        flag = rng.choice(PASSES)
        cmd = [opt, case, flag]
        rc, so, se = run(cmd, args.timeout)
        if crashed(rc, se):
            outcome = "crash"
        elif rc != 0 and invalid_ir(se, text):
            outcome = "invalid-ir"
        else:
            outcome = "ok"
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome != "ok":
            report(outcome, text, cmd[:1] + cmd[2:],
                   "from %s: %s" % (name, se[-400:].replace("\n", " | ")))
            continue
        # A fused chain must compute what the chain computes, for inputs in
        # attn's documented range (docs/Limits.md: scores and masks below
        # 2^30 in magnitude, beside -inf and the lowest finite value).
        if flag.startswith("--attn-raise") and "attn.attention" in so and \
                "attn.attention" not in text and in_range(text):
            entries = re.findall(r"func\.func @([\w$]+)\(", text)
            # The chain rounds to its narrowest type where the fused op
            # need not: the tolerance of that type (as raise.mlir uses).
            tol = ([] if not re.search(r"\b(b?f16)\b", text) else
                   ["--rtol=0.03125", "--atol=0.03125"] if "bf16" in text
                   else ["--rtol=0.0039", "--atol=0.0039"])
            for entry in entries[:2]:
                cmd = [runner, case, "--compare-pass=attn-raise",
                       "--entry=" + entry,
                       "--seed=%d" % rng.randrange(1000)] + tol
                rc, so2, se2 = run(cmd, args.timeout * 4)
                log = so2 + se2
                if crashed(rc, se2):
                    report("crash", text, cmd[:1] + cmd[2:], log[-400:])
                # The fused op gives 0 where a chain's row is all -inf and
                # the chain NaN (attn-raise's documented refinement).
                elif "FAIL" in log and "pipeline" not in log and \
                        "cannot run" not in log and \
                        "invocation failed" not in log and \
                        not re.search(r"expected -?nan", log):
                    report("mismatch", text, cmd[:1] + cmd[2:],
                           log[-400:].replace("\n", " | "))
    summary = ", ".join("%s %d" % kv for kv in sorted(counts.items()))
    print("seed %d, %s; findings in %s" % (args.seed, summary, out))
    print("%d cases, %d findings" % (n, len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
