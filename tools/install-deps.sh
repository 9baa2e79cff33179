#!/usr/bin/env bash
# Installs every Debian 12 package labkit needs to build and test (design.md section 8).
# Idempotent: packages already present are left alone. Run as root (or through sudo).
# The CUDA toolkit itself is not a Debian package here: it is expected under /usr/local/cuda
# (or wherever `nvcc` is on PATH); this script only checks that it is there.
set -euo pipefail

packages=(
  meson ninja-build pkg-config g++
  doctest-dev libbenchmark-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  python3 python3-numpy
  bubblewrap
  chromium  # tests only: the web suite opens the kit's pages in headless Chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null; then exec sudo "$0" "$@"; fi
    echo "install-deps: need root to install: ${missing[*]}" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#packages[@]} packages already installed"
fi

if ! command -v nvcc >/dev/null && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "install-deps: nvcc not found: install the CUDA toolkit (12.x or 13.x) and put its bin/ on PATH" >&2
  exit 1
fi
