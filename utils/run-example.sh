#!/usr/bin/env bash
# The main job: installs, builds, and compiles examples/attention.mlir through
# attn's pipelines, printing what comes out of each stage.
#   OUT_DIR (default: build/example-out) receives the PTX, AMDGPU assembly
#   and the sm_90a kernel bundle.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
OUT_DIR=${OUT_DIR:-$BUILD_DIR/example-out}
EXAMPLE=${1:-$ROOT/examples/attention.mlir}

"$ROOT/utils/build.sh"
OPT="$BUILD_DIR/bin/attn-opt"
mkdir -p "$OUT_DIR"

step() { printf '\n== %s\n' "$*"; }

step "parse and verify $EXAMPLE"
"$OPT" "$EXAMPLE"

step "attn-select-config{target=sm_90a}: the tile configuration chosen for the H100"
"$OPT" "$EXAMPLE" --attn-select-config="target=sm_90a" | grep -o '#attn.config<[^>]*>' || true

step "attn-to-nvvm{chip=sm_90a format=isa}: tensor-core and copy instructions in the PTX -> $OUT_DIR/attention.sm_90a.mlir"
"$OPT" "$EXAMPLE" --attn-to-nvvm="chip=sm_90a format=isa" -o "$OUT_DIR/attention.sm_90a.mlir"
grep -oE '(wgmma\.(mma_async|fence|commit_group|wait_group)|fence\.proxy\.async|mma\.sync\.aligned|ldmatrix\.sync\.aligned|cp\.async)[.a-z0-9]*' \
  "$OUT_DIR/attention.sm_90a.mlir" | sort | uniq -c

step "attn-to-nvvm{chip=sm_90a format=bin} + attn-write-bundle: cubin bundle in $OUT_DIR/bundle-sm_90a"
"$OPT" "$EXAMPLE" --attn-to-nvvm="chip=sm_90a format=bin" \
  --attn-write-bundle="dir=$OUT_DIR/bundle-sm_90a" -o /dev/null
ls -l "$OUT_DIR/bundle-sm_90a"
cat "$OUT_DIR/bundle-sm_90a/bundle.json"

GRAD=${GRAD_EXAMPLE:-$ROOT/examples/attention_grad.mlir}
step "attn-to-nvvm{chip=sm_90a format=isa} on $GRAD: the backward plan's instructions (pre, main, convert_dq)"
"$OPT" "$GRAD" --attn-to-nvvm="chip=sm_90a format=isa" -o "$OUT_DIR/attention_grad.sm_90a.mlir"
grep -oE '(mma\.sync\.aligned|ldmatrix\.sync\.aligned|cp\.async\.cg|atom\.global\.add\.f32|shfl\.sync\.bfly)' \
  "$OUT_DIR/attention_grad.sm_90a.mlir" | sort | uniq -c

step "attn-to-nvvm{chip=sm_90a format=bin} + attn-write-bundle: the backward plan as a bundle in $OUT_DIR/bundle-grad-sm_90a"
"$OPT" "$GRAD" --attn-to-nvvm="chip=sm_90a format=bin" \
  --attn-write-bundle="dir=$OUT_DIR/bundle-grad-sm_90a" -o /dev/null
ls -l "$OUT_DIR/bundle-grad-sm_90a"

step "attn-to-rocdl{chip=gfx942 format=isa}: AMDGPU assembly -> $OUT_DIR/attention.gfx942.mlir"
"$OPT" "$EXAMPLE" --attn-to-rocdl="chip=gfx942 format=isa" -o "$OUT_DIR/attention.gfx942.mlir"
grep -o 'v_mfma[a-z0-9_]*' "$OUT_DIR/attention.gfx942.mlir" | sort | uniq -c | head

step "attn-to-cpu: the same op run on the host against a float64 reference (small shape)"
"$BUILD_DIR/bin/attn-cpu-runner" --batch 1 --hq 16 --hkv 4 --sq 257 --sk 257 \
  --d 128 --dv 128 --dtype bf16 --mask causal --lse --seed 1

step "attn-to-cpu: the backward of the same op on the host against float64 gradients (small shape)"
"$BUILD_DIR/bin/attn-cpu-runner" --backward --batch 1 --hq 8 --hkv 2 --sq 129 \
  --sk 200 --d 64 --dtype bf16 --mask causal --seed 1

step "attn-to-cpu: serving forms on the host against float64 (a packed batch; a paged KV cache with its keys split in 3)"
"$BUILD_DIR/bin/attn-cpu-runner" --layout varlen --hq 8 --hkv 2 --d 64 \
  --dtype bf16 --seqlens-q 1,0,100,257 --seqlens-k 7,5,100,300 \
  --mask causal_bottom_right --lse --seed 1
"$BUILD_DIR/bin/attn-cpu-runner" --layout paged --batch 3 --hq 8 --hkv 2 --sq 1 \
  --sk 512 --page-size 16 --seqlens-k 0,17,512 --d 64 --dtype bf16 --lse \
  --kv-splits 3 --seed 1
