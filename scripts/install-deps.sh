#!/usr/bin/env bash
# Installs, from Debian's packages, what building, testing and running
# mpidht needs. Packages already present are left alone; nothing is
# installed by hand.
#
#   install-deps.sh [all]       everything the test command and the benchmark
#                               suite use: both MPI libraries, clang with
#                               libFuzzer, Redis and memcached with their clients
#   install-deps.sh main        what the main job uses: compilers, CMake,
#                               Open MPI, xxHash, Python's venv
#   install-deps.sh --list P    prints profile P's packages, installs nothing
#   install-deps.sh --help      this text
set -euo pipefail

main=(
  build-essential cmake ninja-build pkg-config
  openmpi-bin libopenmpi-dev
  libxxhash-dev python3-venv
)
all=(
  "${main[@]}"
  mpich libmpich-dev
  # the fuzz target of the dump loader: clang with libFuzzer
  clang libclang-rt-14-dev
  # the benchmark suite: servers to compare with, their clients
  redis-server memcached libhiredis-dev libmemcached-dev
  # emulated hosts (network namespaces, bridge, veth pairs), and the stacks
  # of a run across them that is stopped at its limit
  iproute2 gdb
)

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"  # the comment above
  exit 0
fi
list=false
if [[ ${1:-} == --list ]]; then list=true; shift; fi
case ${1:-all} in
  main) packages=("${main[@]}") ;;
  all) packages=("${all[@]}") ;;
  *) echo "install-deps.sh: unknown profile '${1}': expected main or all" >&2; exit 2 ;;
esac
if $list; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

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
