#!/usr/bin/env bash
# Runs COMMAND with a TMPDIR of its own, removed afterwards, and exits with
# its status. Open MPI 4.x makes its session directory in TMPDIR, and jobs
# that start at the same instant and make the same one can fail in mkdir
# ("File exists", orte_session_dir failed: open-mpi/ompi#8510), which a
# CTest run of many small jobs at once hit now and then.
#
# usage: own-tmpdir.sh COMMAND [ARGS...]
set -uo pipefail
if (($# < 1)); then
  echo "usage: own-tmpdir.sh COMMAND [ARGS...]" >&2
  exit 2
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/mpidht-test.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
TMPDIR=$dir "$@"
