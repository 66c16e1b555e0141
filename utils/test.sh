#!/usr/bin/env bash
# Installs, builds and runs every test (the lit suite, which also runs the
# unit tests, the runtime tests and, where a GPU is present, the GPU tests).
# Ends with one line: "N passed, N failed, N skipped".
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}

"$ROOT/utils/build.sh" || { echo "build failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
# Everything the suite runs (tools, unit-test binaries, runtime test
# programs) is built by attn-test-depends; lit itself runs once, below.
ninja -C "$BUILD_DIR" -j "${JOBS:-$(nproc)}" attn-test-depends ||
  { echo "0 passed, 1 failed, 0 skipped"; exit 1; }

LOG=$(mktemp)
/usr/lib/llvm-22/bin/lit -v --time-tests "$BUILD_DIR/test" 2>&1 | tee "$LOG"
rc=${PIPESTATUS[0]}
python3 "$ROOT/utils/lit-summary.py" "$LOG"
summary_rc=$?
rm -f "$LOG"
[ $rc -eq 0 ] && [ $summary_rc -eq 0 ]
