#!/usr/bin/env bash
# Configures (once) and builds attn against Debian's LLVM/MLIR 22:
#   scripts/build.sh                     ./build, Release
#   scripts/build.sh DIR [CMAKE_ARGS...]  another build directory, with extra
#                                         CMake arguments the first time
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
[ $# -gt 0 ] && shift
if [ ! -f "$dir/build.ninja" ]; then
  cmake -G Ninja -S . -B "$dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit "$@"
fi
ninja -C "$dir"
