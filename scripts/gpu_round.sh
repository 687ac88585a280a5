#!/usr/bin/env bash
# The GPU round: what a GPU machine runs for attn in one call, with no LLVM
# and no network there (CUDA toolkit, cmake, ninja, python3 with torch).
#
#   scripts/gpu_round.sh KERNELS [MODE]
#
# KERNELS: the folder with the generated PTX and attn.manifest (or the
# manifest itself); generate them on a compiler machine and carry them in an
# ignored folder such as .gpu/. `reference` instead builds the plain CUDA
# kernels of test/GPU/ReferenceKernels.cu (same ABI) with nvcc and runs on
# them: it checks the runtime side without the compiler (default MODE there:
# tests; they are not fast, so benchmarking them only costs time).
# MODE: quick (default: tests + quick benchmark), full (tests + full
# benchmark, may need most of a 10-minute call), tests, bench (quick
# benchmark only), bench-full (full benchmark only), sanitize (the GPU
# tests' small cases under compute-sanitizer, below).
#
# Steps, each logged and none stopping the others: build the runtime alone
# (cmake -DATTN_BUILD_COMPILER=OFF into build-rt/), ptxas -v on the PTX of
# every section of the manifest (registers, spills), the runtime's no-GPU
# checks, attn_example once per kernel of the section this GPU runs,
# test/GPU/gpu_tests.py, test/GPU/torch_tests.py, bench/bench_attention.py
# and, when the manifest has backward kernels, bench/bench_backward.py.
# Writes to $OUT (default ./gpu-out): round.log, gpu_tests.log,
# gpu_tests.json, torch_tests.log, bench.log, bench.json, bench.png,
# bench_backward.log/json. Ends with a summary;
# exits non-zero when the build, an example or a GPU test failed.
#
# Time limits (seconds, environment): TESTS_TIMEOUT (300), TORCH_TIMEOUT
# (300), BENCH_TIMEOUT (200 quick, 420 full, each benchmark),
# EXAMPLE_TIMEOUT (120 each).
#
# sanitize: test/GPU/gpu_tests.py once per compute-sanitizer tool in
# SANITIZE_TOOLS (default "memcheck racecheck synccheck"), only attn's
# kernels instrumented (--kernel-name kns=attn_), on the cases with at most
# SANITIZE_SCORES scores (B * Hq * Sq * Sk; default 8000000 for memcheck,
# 300000 for the slower racecheck and synccheck): every kernel kind, mask
# kind and causal kind of the manifest, ragged, GQA, windows, split decode.
# SANITIZE_TIMEOUT (150) limits each tool. Writes sanitize_TOOL.log; a tool
# passes when compute-sanitizer reports 0 errors and the tests pass.
# PyTorch's caching allocator is off there, so that every tensor is an
# allocation of its own and memcheck sees an access past its end.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
PYTHON=${PYTHON:-python3}

if [ $# -lt 1 ]; then
  sed -n '2,27p' "$0"
  exit 2
fi
KERNELS=$1
MODE=${2:-quick}
[ "$KERNELS" = reference ] && MODE=${2:-tests}
case "$MODE" in
  quick|full|tests|bench|bench-full|sanitize) ;;
  *) echo "unknown mode '$MODE'"; exit 2 ;;
esac

OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
LOG=$OUT/round.log
: > "$LOG"
log() { echo "== $*" | tee -a "$LOG"; }
summary=()
status=0

if [ "$KERNELS" = reference ]; then
  MANIFEST=$PWD/build-rt/reference/attn.manifest # built below
elif [ -f "$KERNELS" ]; then
  MANIFEST=$KERNELS
elif [ -f "$KERNELS/attn.manifest" ]; then
  MANIFEST=$KERNELS/attn.manifest
else
  MANIFEST=$(ls "$KERNELS"/*.manifest 2>/dev/null | head -1)
fi
if [ -z "${MANIFEST:-}" ] || { [ ! -f "$MANIFEST" ] && [ "$KERNELS" != reference ]; }; then
  log "no manifest in '$KERNELS'"
  exit 2
fi
[ "$KERNELS" = reference ] ||
  MANIFEST=$(cd "$(dirname "$MANIFEST")" && pwd)/$(basename "$MANIFEST")
log "gpu round: mode=$MODE manifest=$MANIFEST out=$OUT"

log "machine"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
    --format=csv 2>&1 || echo "nvidia-smi failed"
  command -v nvcc >/dev/null && nvcc --version | tail -2
  cmake --version | head -1
  "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())' 2>&1
  "$PYTHON" -c 'import triton; print("triton", triton.__version__)' 2>&1 | tail -1
  "$PYTHON" -c 'import matplotlib; print("matplotlib", matplotlib.__version__)' 2>&1 | tail -1
} 2>&1 | tee -a "$LOG"

# --- build ------------------------------------------------------------------
log "build: cmake -DATTN_BUILD_COMPILER=OFF -B build-rt"
cuda_root=()
for dir in "${CUDA_HOME:-}" /usr/local/cuda; do
  if [ -n "$dir" ] && [ -x "$dir/bin/nvcc" ]; then
    cuda_root=(-DCUDAToolkit_ROOT="$dir")
    break
  fi
done
start=$SECONDS
if cmake -G Ninja -S . -B build-rt -DATTN_BUILD_COMPILER=OFF \
     -DCMAKE_BUILD_TYPE=Release "${cuda_root[@]}" 2>&1 | tee -a "$LOG" &&
   ninja -C build-rt 2>&1 | tee -a "$LOG" &&
   [ -f build-rt/lib/libattn_runtime.so ] &&
   { [ "$KERNELS" != reference ] ||
     ninja -C build-rt attn-reference-kernels 2>&1 | tee -a "$LOG"; }; then
  summary+=("build: ok ($((SECONDS - start))s)")
else
  summary+=("build: FAILED (see round.log)")
  log "build failed; nothing else can run"
  printf '%s\n' "${summary[@]}" | tee -a "$LOG"
  exit 1
fi
LIB=$PWD/build-rt/lib/libattn_runtime.so

# --- ptxas -v, every section of the manifest ---------------------------------
# A manifest has a section (target, ptx, kernels) per chip; the runtime
# loads the one this GPU runs best (docs/Runtime.md), which the examples
# below exercise.
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
     head -1 | tr -d '. ')
chosen=$(awk -v cc="${cc:-0}" '$1 == "target" {
    t = $2; n = t; sub(/^sm_/, "", n); arch = sub(/a$/, "", n)
    if (arch ? n == cc : n <= cc + 0) {
      score = n * 2 + arch
      if (score > best) { best = score; pick = t }
    } }
  END { print pick }' "$MANIFEST")
log "this GPU: sm_${cc:-?}; the manifest's section for it: ${chosen:-none}"
if command -v ptxas >/dev/null || [ -x /usr/local/cuda/bin/ptxas ]; then
  PTXAS=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
  while read -r target ptx; do
    case "$ptx" in /*) ;; *) ptx=$(dirname "$MANIFEST")/$ptx ;; esac
    log "ptxas -arch=$target -v $ptx"
    if "$PTXAS" -arch="$target" -v "$ptx" -o /dev/null > "$OUT/.ptxas" 2>&1; then
      spills=$(grep -c "[1-9][0-9]* bytes spill" "$OUT/.ptxas")
      summary+=("ptxas ($target): ok, $spills kernel(s) with spills")
    else
      summary+=("ptxas ($target): FAILED")
    fi
    cat "$OUT/.ptxas" >> "$LOG"
    grep -E "Compiling entry|Used|spill" "$OUT/.ptxas" | head -80
    rm -f "$OUT/.ptxas"
  done < <(awk '$1 == "target" { t = $2 } $1 == "ptx" { print t, $2 }' "$MANIFEST")
else
  summary+=("ptxas: not found")
fi

# --- the runtime's checks that need no GPU ----------------------------------
log "attn-runtime-test load (module load without a current context)"
tmp=$(mktemp -d)
build-rt/bin/attn-runtime-test load "$tmp" 2>&1 | tee -a "$LOG"
rm -rf "$tmp"

# --- attn_example, once per kernel of the manifest --------------------------
run_example() {
  local args=("$@")
  log "attn_example ${args[*]}"
  timeout -k 5 "${EXAMPLE_TIMEOUT:-120}" env ATTN_RUNTIME_VERBOSE=1 \
    build-rt/bin/attn_example "$MANIFEST" "${args[@]}" < /dev/null 2>&1 |
    tee -a "$LOG"
  local rc=${PIPESTATUS[0]}
  case $rc in
    0) examples_passed=$((examples_passed + 1)) ;;
    *) examples_failed=$((examples_failed + 1))
       failed_examples+=("${args[*]} (exit $rc)") ;;
  esac
}
examples_passed=0
examples_failed=0
failed_examples=()
if [ ! -x build-rt/bin/attn_example ]; then
  summary+=("examples: not built (CMake found no libcuda)")
elif [ "$MODE" = quick ] || [ "$MODE" = full ] || [ "$MODE" = tests ]; then
  layout=bhsd
  while read -r dtype d causal; do
    window=()
    [ "$causal" != none ] && window=(--window 200)
    run_example --dtype "$dtype" --causal "$causal" --layout "$layout" \
      --shape "2,4,2,150,333,$d"
    [ "$causal" != none ] && run_example --dtype "$dtype" --causal "$causal" \
      --layout "$layout" --shape "2,4,2,150,333,$d" "${window[@]}"
    layout=$([ $layout = bhsd ] && echo bshd || echo bhsd)
  done < <(awk -v chosen="$chosen" '$1 == "target" { t = $2 }
    $1 == "kernel" && t == chosen {
      delete f; for (i = 3; i <= NF; ++i) { split($i, kv, "="); f[kv[1]] = kv[2] }
      if (f["kind"] == "forward" && f["head_dim"] == f["value_dim"] && f["q"] == "")
        print f["dtype"], f["head_dim"], f["causal"] }' "$MANIFEST")
  while read -r dtype d causal; do
    run_example --decode --dtype "$dtype" --causal "$causal" \
      --shape "4,32,8,1,3000,$d"
    run_example --decode --dtype "$dtype" --causal "$causal" --splits 1000000 \
      --layout bshd --shape "1,32,32,1,2000,$d"
  done < <(awk -v chosen="$chosen" '$1 == "target" { t = $2 }
    $1 == "kernel" && t == chosen {
      delete f; for (i = 3; i <= NF; ++i) { split($i, kv, "="); f[kv[1]] = kv[2] }
      if (f["kind"] == "decode_partial" && f["head_dim"] == f["value_dim"])
        print f["dtype"], f["head_dim"], f["causal"] }' "$MANIFEST")
  summary+=("examples: $examples_passed passed, $examples_failed failed")
  for e in "${failed_examples[@]}"; do summary+=("  failed: $e"); done
  [ "$examples_failed" -eq 0 ] || status=1
fi

# --- GPU tests --------------------------------------------------------------
if [ "$MODE" = quick ] || [ "$MODE" = full ] || [ "$MODE" = tests ]; then
  log "test/GPU/gpu_tests.py"
  timeout -k 10 "${TESTS_TIMEOUT:-300}" "$PYTHON" test/GPU/gpu_tests.py \
    --manifest "$MANIFEST" --lib "$LIB" --out "$OUT/gpu_tests.json" 2>&1 |
    tee "$OUT/gpu_tests.log"
  rc=${PIPESTATUS[0]}
  last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$OUT/gpu_tests.log" | tail -1)
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    last="TIMED OUT after ${TESTS_TIMEOUT:-300}s (partial results in gpu_tests.json)"
  fi
  summary+=("gpu tests: ${last:-no summary line} (exit $rc)")
  [ "$rc" -eq 0 ] || status=1

  # The PyTorch front door on the same kernels (cases whose kernels the
  # manifest lacks are skipped).
  if [ "$KERNELS" != reference ]; then
    log "test/GPU/torch_tests.py"
    timeout -k 10 "${TORCH_TIMEOUT:-300}" "$PYTHON" test/GPU/torch_tests.py \
      --kernels "$(dirname "$MANIFEST")" --lib "$LIB" 2>&1 |
      tee "$OUT/torch_tests.log"
    rc=${PIPESTATUS[0]}
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$OUT/torch_tests.log" |
           tail -1)
    summary+=("torch tests: ${last:-no summary line} (exit $rc)")
    [ "$rc" -eq 0 ] || status=1
  fi
fi

# --- compute-sanitizer --------------------------------------------------------
if [ "$MODE" = sanitize ]; then
  SANITIZER=$(command -v compute-sanitizer ||
              ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  if [ -z "$SANITIZER" ]; then
    summary+=("sanitize: compute-sanitizer not found")
    status=1
  else
    # --kernel-name is --filter in older releases. (The help is read whole:
    # grep -q closing the pipe early would fail it under pipefail.)
    only=(--kernel-name kns=attn_)
    help=$("$SANITIZER" --help 2>&1)
    [[ $help == *--kernel-name* ]] || only=(--filter kns=attn_)
    for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
      # memcheck leaves API errors out: the runtime asks cuFuncGetParamInfo
      # for one parameter past each kernel's last (the driver has no count;
      # CUDA_ERROR_INVALID_VALUE there is the answer), which memcheck would
      # report once per kernel. The runtime checks every other driver result
      # and the tests fail on them.
      api=()
      [ "$tool" = memcheck ] && api=(--report-api-errors no)
      scores=${SANITIZE_SCORES:-$([ "$tool" = memcheck ] && echo 8000000 ||
                                  echo 300000)}
      log "compute-sanitizer --tool $tool, cases of at most $scores scores"
      start=$SECONDS
      PYTORCH_NO_CUDA_MEMORY_CACHING=1 \
        timeout -k 10 "${SANITIZE_TIMEOUT:-150}" "$SANITIZER" --tool "$tool" \
        "${only[@]}" "${api[@]}" --error-exitcode 99 --print-limit 20 \
        "$PYTHON" test/GPU/gpu_tests.py --manifest "$MANIFEST" --lib "$LIB" \
        --max-scores "$scores" > "$OUT/sanitize_$tool.log" 2>&1
      rc=$?
      tail -5 "$OUT/sanitize_$tool.log" | tee -a "$LOG"
      tests=$(grep -E '^[0-9]+ passed, [0-9]+ failed' \
              "$OUT/sanitize_$tool.log" | tail -1)
      report=$(grep -E '(ERROR|RACECHECK) SUMMARY' "$OUT/sanitize_$tool.log" |
               tail -1 | sed 's/^=* *//')
      case $rc in
        0) verdict=clean ;;
        99) verdict="ERRORS" ;;
        124|137) verdict="TIMED OUT" ;;
        *) verdict="exit $rc" ;;
      esac
      summary+=("sanitize $tool: $verdict; ${report:-no summary}; tests: ${tests:-none} ($((SECONDS - start))s)")
      [ "$rc" -eq 0 ] || status=1
    done
  fi
fi

# --- benchmark ---------------------------------------------------------------
if [ "$MODE" != tests ] && [ "$MODE" != sanitize ]; then
  quick=(--quick)
  limit=${BENCH_TIMEOUT:-200}
  if [ "$MODE" = full ] || [ "$MODE" = bench-full ]; then
    quick=()
    limit=${BENCH_TIMEOUT:-420}
  fi
  log "bench/bench_attention.py ${quick[*]}"
  timeout -k 10 "$limit" "$PYTHON" bench/bench_attention.py \
    --manifest "$MANIFEST" --lib "$LIB" "${quick[@]}" \
    --json "$OUT/bench.json" --png "$OUT/bench.png" 2>&1 |
    tee "$OUT/bench.log"
  rc=${PIPESTATUS[0]}
  line=$(grep -E 'shapes timed' "$OUT/bench.log" | tail -1)
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && line="TIMED OUT after ${limit}s"
  summary+=("bench: ${line:-no summary} (exit $rc)")
  mean=$(grep -E 'geometric mean' "$OUT/bench.log" | tail -1)
  [ -n "$mean" ] && summary+=("bench: $mean")

  # The backward, when the manifest has its kernels.
  if grep -q 'kind=backward_q' "$MANIFEST"; then
    shapes=()
    [ ${#quick[@]} -gt 0 ] && shapes=(--shapes 64:4096:0,128:4096:0,128:16384:0,128:16384:1)
    log "bench/bench_backward.py ${shapes[*]}"
    timeout -k 10 "$limit" "$PYTHON" bench/bench_backward.py \
      --manifest "$MANIFEST" --lib "$LIB" "${shapes[@]}" \
      --json "$OUT/bench_backward.json" 2>&1 | tee "$OUT/bench_backward.log"
    summary+=("bench backward: exit ${PIPESTATUS[0]} (bench_backward.log)")
  fi
fi

log "summary"
printf '%s\n' "${summary[@]}" | tee -a "$LOG"
exit $status
