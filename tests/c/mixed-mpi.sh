#!/usr/bin/env bash
# Builds test_mixed_mpi.c with another MPI's compiler wrapper than mpidht
# was built with, links it to that mpidht, and runs it with that MPI's
# launcher on NP processes: the program checks that mpidht_create refuses
# the mix (MPIDHT_ERR_MPI_LIBRARY). Exits 77 where that MPI is missing.
#
# usage: mixed-mpi.sh SOURCE_DIR LIB_DIR MPICC MPIEXEC NP
set -euo pipefail
source=$1 libdir=$2 mpicc=$3 mpiexec=$4 np=$5
if ! command -v "$mpicc" > /dev/null || ! command -v "$mpiexec" > /dev/null; then
  echo "SKIPPED: no $mpicc or $mpiexec here"
  exit 77
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/mixed-mpi.XXXXXX")
trap 'rm -rf "$out"' EXIT
"$mpicc" -o "$out/test_mixed_mpi" "$source/tests/c/test_mixed_mpi.c" -I"$source/include" \
  -L"$libdir" -Wl,-rpath,"$libdir" -lmpidht
"$mpiexec" -n "$np" "$out/test_mixed_mpi"
