#!/usr/bin/env bash
# Smoke run of bench/compare-builds.sh: the same build as "before" and
# "after", one repeat at 1 and 2 processes of a tiny workload; the summary
# must hold a row for every protocol, phase and batch size measured, with
# both builds' numbers. Then bad options must be refused with a message.
# No timing checks.
#
# usage: test_compare_builds.sh SOURCE_DIR BUILD_DIR MPIEXEC
set -euo pipefail
src=$1 build=$2 mpiexec=$3
mpi=${mpiexec##*.}
dir=$(mktemp -d "${TMPDIR:-/tmp}/mpidht-compare.XXXXXX")
trap 'rm -rf "$dir"' EXIT
script=$src/bench/compare-builds.sh

bash "$script" --before "$build" --after "$build" --mpi "$mpi" --nprocs "1 2" \
  --repeats 1 --ops 100 --out "$dir/out" -- --phases write,read --batch 1,8 \
  --memory 1048576 --range 5000
cat "$dir/out/compare.md"
for np in 1 2; do
  for protocol in coarse fine lockfree; do
    for row in "write | 1" "read | 1" "read | 8"; do
      if ! grep -Eq "^\| [0-9.]+× \([0-9.]+×\) \| $np \| $protocol \| $row \| [0-9.]+ \(" \
           "$dir/out/compare.md"; then
        echo "FAIL: no row '$np | $protocol | $row'" >&2
        exit 1
      fi
    done
  done
done
grep -q "^18 rows; repeats per build: 1$" "$dir/out/compare.md" ||
  { echo "FAIL: row count" >&2; exit 1; }

refused() {  # the expected words, then the arguments
  local words=$1 msg
  shift
  if msg=$(bash "$script" "$@" 2>&1); then
    echo "FAIL: accepted $*" >&2
    exit 1
  fi
  grep -q -- "$words" <<< "$msg" || { echo "FAIL: '$msg' lacks '$words'" >&2; exit 1; }
}
refused "give --before and --after" --after "$build"
refused "give --before and --after" --before "$dir/none" --after "$build"
refused "openmpi or mpich" --before "$build" --after "$build" --mpi lam
refused "1 to 99" --before "$build" --after "$build" --repeats 0
refused "unknown option" --before "$build" --after "$build" --fast
refused "operations per rank" --before "$build" --after "$build" --ops 0
refused "process counts" --before "$build" --after "$build" --nprocs "1 two"
# The runs of the comparison above would be mixed into this one's rows.
refused "holds the runs of an earlier comparison" --before "$build" --after "$build" \
  --out "$dir/out"
refused "expected a folder" --before "$build" --after "$build" --out ""
echo "compare-builds smoke: 18 rows, 9 refusals"
