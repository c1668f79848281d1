#!/usr/bin/env bash
# Runs one test program across emulated hosts (scripts/emulated-hosts.sh),
# for CTest: exits 77 (CTest's skip) with the reason where this machine
# cannot make them (not root, no network namespaces), else the program's
# status. The hosts must be up (the hosts_up fixture); the settings of
# the MPI library across hosts are scripts/hosts-mpiexec.sh's, with Open
# MPI's one-sided component MPIDHT_HOSTS_OSC (default pt2pt: its osc ucx
# fails the fine and lock-free protocols' tests, docs/hosts.md).
#
# A run still going after MPIDHT_HOSTS_ATTEMPT_S seconds (default 120; the
# slowest of these tests takes 17 s, under the sanitizers) is stopped, every rank's stacks
# printed first, and run once more, saying so: Open MPI 4.1's osc pt2pt
# all but stops in plain MPI_Win_lock / flush / unlock calls while the
# machine is busy, unless the hosts have a CPU group of their own
# (emulated-hosts.sh; docs/hosts.md has a program of MPI calls alone that
# shows it). A second run that does not end fails the test.
#
# usage: on-hosts.sh MPIEXEC HOSTS PER_HOST PROGRAM [ARGS...]
#   MPIEXEC  the launcher the build was configured with (mpiexec.openmpi or
#            mpiexec.mpich): which MPI runs the program
set -euo pipefail
scripts=$(cd "$(dirname "$0")/../../scripts" && pwd)
source "$scripts/common.sh"
if (($# < 4)); then
  echo "usage: on-hosts.sh MPIEXEC HOSTS PER_HOST PROGRAM [ARGS...]" >&2
  exit 2
fi
mpiexec=$1 hosts=$2 per_host=$3
shift 3
case $(basename "$mpiexec") in
  *openmpi*) mpi=(--mpi openmpi --osc "${MPIDHT_HOSTS_OSC:-pt2pt}") ;;
  *mpich*) mpi=(--mpi mpich) ;;
  *) echo "on-hosts.sh: cannot tell the MPI library of '$mpiexec'" >&2; exit 2 ;;
esac
if ! reason=$("$scripts/emulated-hosts.sh" check 2>&1); then
  echo "SKIPPED: $reason"
  exit 77
fi
limit=${MPIDHT_HOSTS_ATTEMPT_S:-120}
[[ $limit =~ ^[1-9][0-9]{0,4}$ ]] ||
  { echo "on-hosts.sh: MPIDHT_HOSTS_ATTEMPT_S '$limit': expected 1 to 99999 seconds" >&2; exit 2; }
twice_if_stopped on-hosts.sh "$scripts/hosts-mpiexec.sh" "${mpi[@]}" --hosts "$hosts" \
  --per-host "$per_host" --limit "$limit" -- "$@"
