#!/usr/bin/env bash
# Sets attn up on a fresh Debian 12 machine and runs the main job:
#   1. installs the packages it needs with apt (as root, or through sudo),
#   2. configures and builds attn in ./build,
#   3. runs attn-opt on the shipped example: parse, verify, decompose, print.
# Usage: scripts/setup.sh [--no-example]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools cmake ninja-build g++ python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "attn: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi

scripts/build.sh

if [ "${1:-}" != "--no-example" ]; then
  echo "attn: examples/attention.mlir, verified and decomposed by attn-opt --attn-decompose:"
  build/bin/attn-opt examples/attention.mlir --attn-decompose
fi
