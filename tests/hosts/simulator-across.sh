#!/usr/bin/env bash
# The simulator's coupled runs (python/tests/test_sim_run.py: the front
# forms, a DHT run agrees with the reference and with a single-process run,
# a warm start from a saved DHT) on 4 processes spread over 2 emulated
# hosts: the master and a worker on the first host, two workers on the
# second, the DHT's windows reached over TCP between them. Brings the hosts
# up and removes them again however it ends; exits 77 with the reason where
# this machine cannot make them.
#
# usage: simulator-across.sh PYTHON OUT_DIR
#   PYTHON   the python of a venv with mpidht for Open MPI (scripts/common.sh
#            python_env)
#   OUT_DIR  pytest's logs and JUnit reports, one per rank
set -euo pipefail
if (($# != 2)); then
  echo "usage: simulator-across.sh PYTHON OUT_DIR" >&2
  exit 2
fi
python=$1 out=$2
source "$(dirname "$0")/../../scripts/common.sh"
hosts=$repo/scripts/emulated-hosts.sh
if ! reason=$("$hosts" check 2>&1); then
  echo "SKIPPED: $reason"
  exit 77
fi
trap '"$hosts" down' EXIT
trap 'exit 130' INT TERM
"$hosts" up 2
# Open MPI's osc pt2pt serves the windows between hosts and refuses
# MPI_THREAD_MULTIPLE, which mpi4py asks for unless told otherwise.
# The run takes 28-45 s here (39 s with both cores kept busy by other
# work, the hosts in their CPU group: emulated-hosts.sh). A test still
# running after 120 s has every rank write its Python stack to its log
# (faulthandler_timeout, pyproject.toml). A run still going after 200 s
# is stopped, every rank's native stacks printed first
# (hosts-mpiexec.sh --limit), and run once more, saying so, as on-hosts.sh
# does for the C tests: osc pt2pt crawls on a busy machine where the hosts
# have no CPU group (docs/hosts.md).
# On failure the other ranks' logs end this output (rank 0's is above it).
run() {
  rm -rf "$out"
  local rc=0
  MPI4PY_RC_THREAD_LEVEL=serialized "$repo/scripts/hosts-mpiexec.sh" \
    --mpi openmpi --osc pt2pt --per-host 2 --limit 200 -- \
    "$repo/python/tests/pytest-rank.sh" "$python" "$out" "$repo/python/tests/test_sim_run.py" \
    || rc=$?
  ((rc == 0)) || other_ranks_logs "$out"
  return "$rc"
}
twice_if_stopped simulator-across.sh run
