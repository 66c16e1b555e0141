#!/usr/bin/env bash
# The one command to run on the GPU machine: builds the runtime (standalone
# CMake, no MLIR) into /tmp, runs the GPU correctness tests and the benchmark
# against a bundle compiled elsewhere and carried along.
#
#   bench/device_run.sh [BUNDLE_DIR]     (default .carry/bundles/sm_90a)
#   bench/device_run.sh reference        (naive kernels built here with nvcc)
#
# QUICK=1 shortens them; SKIP_BENCH=1 / SKIP_TESTS=1 leave one out;
# SKIP_BWD=1 leaves out the backward tests (test/GPU/test_backward.py, run
# after the forward's); BENCH_BWD=1 also runs the backward benchmark
# (bench/bench_backward.py: forward+backward and backward alone against
# SDPA's flash, cuDNN and efficient backends). CHECK=1
# also checks every variant of the bundle with bench/gpu_check.py (CuPy);
# PROFILE=1 also takes an ncu profile of the D = 64 and D = 128 kernels the
# runtime dispatches (S = 4096, bf16) and runs compute-sanitizer's memcheck
# and racecheck on them (S = 300: tails included). Logs (and the .ncu-rep
# files) go to $OUT when it is set.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUNDLE=${1:-$ROOT/.carry/bundles/sm_90a}
BUILD=${ATTN_RUNTIME_BUILD:-/tmp/attn-runtime-build}
LOGS=${OUT:-/tmp/attn-logs}
mkdir -p "$LOGS"
export PYTHONUNBUFFERED=1
QUICK_FLAG=()
[ "${QUICK:-0}" = 1 ] && QUICK_FLAG=(--quick)

echo "$0 $*" | tee "$LOGS/command.txt"
nvidia-smi -L 2>&1 | tee -a "$LOGS/command.txt"

cmake -G Ninja -S "$ROOT/runtime" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
  >"$LOGS/build.log" 2>&1 && ninja -C "$BUILD" >>"$LOGS/build.log" 2>&1 ||
  { tail -30 "$LOGS/build.log"; echo "runtime build failed"; exit 1; }
export ATTN_RUNTIME_LIB=$BUILD/lib/libattn_runtime.so
echo "built $ATTN_RUNTIME_LIB"

if [ "$BUNDLE" = reference ]; then
  BUNDLE=/tmp/attn-reference-bundle
  python3 "$ROOT/test/GPU/reference_bundle.py" "$BUNDLE" || exit 1
fi

rc=0
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  python3 "$ROOT/test/GPU/test_attention.py" --bundle "$BUNDLE" \
    "${QUICK_FLAG[@]}" 2>&1 | tee "$LOGS/gpu-tests.log"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  if [ "${SKIP_BWD:-0}" != 1 ]; then
    python3 "$ROOT/test/GPU/test_backward.py" --bundle "$BUNDLE" \
      "${QUICK_FLAG[@]}" 2>&1 | tee "$LOGS/gpu-backward-tests.log"
    [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  fi
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  python3 "$ROOT/bench/bench.py" --bundle "$BUNDLE" "${QUICK_FLAG[@]}" 2>&1 |
    tee "$LOGS/bench.log"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
fi
if [ "${BENCH_BWD:-0}" = 1 ]; then
  python3 "$ROOT/bench/bench_backward.py" --bundle "$BUNDLE" \
    "${QUICK_FLAG[@]}" 2>&1 | tee "$LOGS/bench-backward.log"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
fi
if [ "${CHECK:-0}" = 1 ]; then
  python3 "$ROOT/bench/gpu_check.py" "$BUNDLE" --check 2>&1 |
    tee "$LOGS/gpu-check.log" | grep -E "^FAIL|^checks:"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
fi
if [ "${PROFILE:-0}" = 1 ]; then
  one="$ROOT/bench/profile_one.py"
  for d in 64 128; do
    ncu --clock-control none --set full -k regex:fwd_ -s 2 -c 1 \
      -o "$LOGS/ncu-d$d" -f python3 "$one" "$BUNDLE" --d "$d" \
      >"$LOGS/ncu-d$d.log" 2>&1 &&
      ncu --import "$LOGS/ncu-d$d.ncu-rep" --page details \
        >"$LOGS/ncu-d$d.txt" 2>&1 ||
      { echo "ncu failed for D = $d:"; tail -5 "$LOGS/ncu-d$d.log"; }
    for tool in memcheck racecheck; do
      compute-sanitizer --tool "$tool" --error-exitcode 3 python3 "$one" \
        "$BUNDLE" --d "$d" --mask causal --s 300 --b 1 --launches 1 \
        >"$LOGS/sanitizer-$tool-d$d.log" 2>&1
      echo "compute-sanitizer $tool D=$d: exit $? ($(tail -1 \
        "$LOGS/sanitizer-$tool-d$d.log"))"
    done
  done
fi
exit $rc
