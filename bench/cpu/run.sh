#!/usr/bin/env bash
# Times attn-to-cpu kernels against a naive float32 implementation.
# usage: bench/cpu/run.sh [BUILD_DIR] [extra attn-cpu-runner flags]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
shift || true
runner="$build/bin/attn-cpu-runner"
if [[ ! -x "$runner" ]]; then
  echo "error: $runner not found; build it with: ninja -C $build attn-cpu-runner" >&2
  exit 2
fi
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -m) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
"$runner" --bench --reps "${REPS:-5}" --problems "$here/problems.txt" "$@"
