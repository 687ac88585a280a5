#!/usr/bin/env bash
# Builds attn and runs the whole lit suite; ends with "N passed, N failed"
# built from lit's own per-test results. Exits non-zero when any test fails.
#   scripts/test.sh [LIT_ARGS...]             ./build (Release)
#   scripts/test.sh --sanitize [LIT_ARGS...]  ./build-sanitize: the compiler,
#       the runtime and the CPU runner built with AddressSanitizer and
#       UndefinedBehaviorSanitizer (any report fails its test)
set -uo pipefail
cd "$(dirname "$0")/.."
dir=build
cmake_args=()
lit_env=()
if [ "${1:-}" = --sanitize ]; then
  shift
  dir=build-sanitize
  san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
  cmake_args=("-DCMAKE_C_FLAGS=$san" "-DCMAKE_CXX_FLAGS=$san"
              "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"
              "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined")
  # Processes that are not built with the sanitizers (python, mlir-opt-22
  # loading attn's plugin) load attn's libraries: the runtime goes first.
  # Their own leaks (python's) are not attn's: leak checking is off. LLVM's
  # allocators poison their slabs in attn's instrumented copies of their
  # inline code but not in Debian's libMLIR.so: user poisoning is off.
  lit_env=("LD_PRELOAD=$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
           ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allow_user_poisoning=0
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
fi
scripts/build.sh "$dir" "${cmake_args[@]}" && ninja -C "$dir" attn-test-depends ||
  { echo "0 passed, 1 failed"; exit 1; }
results=$dir/test/results.json
rm -f "$results"
env "${lit_env[@]}" /usr/lib/llvm-22/bin/lit -sv --output "$results" "$dir/test" "$@"
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
