#!/usr/bin/env bash
# Builds attn and runs the whole lit suite; ends with "N passed, N failed"
# built from lit's own per-test results. Exits non-zero when any test fails.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh && ninja -C build attn-test-depends || { echo "0 passed, 1 failed"; exit 1; }
results=build/test/results.json
rm -f "$results"
/usr/lib/llvm-22/bin/lit -sv --output "$results" build/test "$@"
status=$?
python3 - "$results" "$status" <<'PY'
import json, sys
path, status = sys.argv[1], int(sys.argv[2])
try:
    tests = json.load(open(path))["tests"]
except (OSError, ValueError, KeyError):
    print("0 passed, 1 failed")
    sys.exit(1)
codes = [t["code"] for t in tests]
passed = sum(c in ("PASS", "XFAIL") for c in codes)
skipped = sum(c in ("UNSUPPORTED", "SKIPPED", "EXCLUDED") for c in codes)
failed = len(codes) - passed - skipped
if status != 0 and failed == 0:
    failed = 1  # lit failed for a reason of its own (config, timeout)
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
PY
