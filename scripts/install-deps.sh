#!/usr/bin/env bash
# Installs, from Debian's packages, everything that building, testing and
# running mpidht needs: compilers, CMake, both MPI libraries and xxHash.
# Packages already present are left alone; nothing is installed by hand.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  openmpi-bin libopenmpi-dev
  mpich libmpich-dev
  libxxhash-dev
  # the fuzz target of the dump loader: clang with libFuzzer
  clang libclang-rt-14-dev
  # the benchmark suite: servers to compare with, their clients, plotting
  redis-server memcached libhiredis-dev libmemcached-dev python3-venv
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
  echo "installing: ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" > /dev/null
fi
