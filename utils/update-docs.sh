#!/usr/bin/env bash
# Regenerates the ODS reference docs (dialect, passes) and copies them into
# docs/Dialects and docs/Passes, where they are checked in so that they can
# be read without a build.
#
#   utils/update-docs.sh [BUILD_DIR]          regenerate and copy
#   utils/update-docs.sh --check BUILD_DIR    compare only (used by lit)
#
# BUILD_DIR defaults to build/ in the source tree.
set -euo pipefail

src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
check=0
if [[ "${1:-}" == "--check" ]]; then
  check=1
  shift
fi
build="${1:-$src/build}"
dirs=(Dialects Passes)

if [[ $check == 0 ]]; then
  cmake --build "$build" --target attn-doc
fi

status=0
for dir in "${dirs[@]}"; do
  gen="$build/docs/$dir"
  dst="$src/docs/$dir"
  if [[ ! -d "$gen" ]]; then
    echo "error: $gen does not exist; build the attn-doc target" >&2
    exit 1
  fi
  if [[ $check == 1 ]]; then
    # Both directions: a stale file, a missing one, and one that is no
    # longer generated all fail.
    if ! diff -r -u "$dst" "$gen" >&2; then
      echo "error: docs/$dir differs from the ODS-generated reference;" \
           "run utils/update-docs.sh and commit docs/$dir" >&2
      status=1
    fi
  else
    mkdir -p "$dst"
    rm -f "$dst"/*.md
    cp "$gen"/*.md "$dst"/
    echo "updated docs/$dir: $(cd "$dst" && ls *.md | tr '\n' ' ')"
  fi
done
exit $status
