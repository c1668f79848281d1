#!/usr/bin/env bash
# Runs pytest as one MPI process: usage (under mpiexec)
#   pytest-rank.sh PYTHON OUTDIR [pytest arguments...]
# Rank 0 prints to the terminal; every rank writes OUTDIR/rank<N>.log and a
# JUnit report OUTDIR/rank<N>.xml, so the ranks' output does not interleave.
set -uo pipefail
python=$1 outdir=$2
shift 2
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
mkdir -p "$outdir"
# Each rank its own temporary base: pytest prunes old ones at start, and
# ranks sharing one would race (tests that need a folder all ranks see
# take rank 0's and broadcast it).
args=(-m pytest -p no:cacheprovider --color=no -q --junitxml="$outdir/rank$rank.xml"
      --basetemp="$outdir/tmp-rank$rank" "$@")
if [[ $rank == 0 ]]; then
  "$python" "${args[@]}" 2>&1 | tee "$outdir/rank$rank.log"
  exit "${PIPESTATUS[0]}"
fi
exec "$python" "${args[@]}" > "$outdir/rank$rank.log" 2>&1
