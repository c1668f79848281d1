#!/usr/bin/env bash
# Runs COMMAND with a TMPDIR of its own, removed afterwards, and exits with
# its status. Open MPI 4.x makes its session directory in TMPDIR, and jobs
# that start at the same instant and make the same one can fail in mkdir
# ("File exists", orte_session_dir failed: open-mpi/ompi#8510), which a
# CTest run of many small jobs at once hit now and then.
#
# The folder is named after this script's process. A test that CTest kills
# at its timeout (SIGKILL, to the whole process tree) leaves its folder, so
# each start first removes the folders whose process is gone.
#
# usage: own-tmpdir.sh COMMAND [ARGS...]
set -uo pipefail
if (($# < 1)); then
  echo "usage: own-tmpdir.sh COMMAND [ARGS...]" >&2
  exit 2
fi
prefix=${TMPDIR:-/tmp}/mpidht-test
for old in "$prefix".*; do
  pid=${old#"$prefix".}
  pid=${pid%%.*}
  # kill -0 fails with "No such process" only where no process has that
  # number (a process of another user answers "Operation not permitted").
  if [[ -d $old && $pid =~ ^[0-9]+$ ]] && ! kill -0 "$pid" 2> /dev/null &&
     [[ ! -e /proc/$pid ]]; then
    rm -rf "$old"
  fi
done
dir=$(mktemp -d "$prefix.$$.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
TMPDIR=$dir "$@"
