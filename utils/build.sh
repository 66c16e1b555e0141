#!/usr/bin/env bash
# Installs what is missing, configures once and builds attn. Idempotent: a
# second run only rebuilds what changed.
#   BUILD_DIR (default: build)   JOBS (default: nproc)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
JOBS=${JOBS:-$(nproc)}

"$ROOT/utils/install-deps.sh"

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
fi
ninja -C "$BUILD_DIR" -j "$JOBS" "$@"
