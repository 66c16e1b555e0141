#!/usr/bin/env bash
# Installs the Debian packages attn builds and tests with. Idempotent: packages
# already present are skipped, so a second run costs one dpkg query.
set -euo pipefail

PKGS=(
  cmake ninja-build g++ python3 python3-pyflakes git
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22
  libgtest-dev
  rocm-device-libs libamdhip64-dev
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
