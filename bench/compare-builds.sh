#!/usr/bin/env bash
# Two builds of mpidht_bench measured against each other in one session:
# runs alternate between them (before, after; then after, before; ...) at
# each process count, so that drift of the machine falls on both, and
# compare_builds.py writes a table of every row with the median and the
# range over the repeats, the ratio of the medians and the worst pair.
#
# usage: bash bench/compare-builds.sh --before DIR --after DIR [--mpi openmpi|mpich]
#          [--nprocs "1 2 4"] [--repeats 3] [--ops N] [--out DIR] [-- mpidht_bench options]
# DIR: a build folder holding bench/mpidht_bench (e.g. build/openmpi of two
# checkouts). Default bench options: --phases write,read,raw-get,memcpy
# --batch 1,8,64,512 --write-batch 1,8,64,512.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
before='' after='' mpi=openmpi nprocs="1 2 4" repeats=3 ops=100000 out=compare-builds
bench_args=(--phases write,read,raw-get,memcpy --batch 1,8,64,512 --write-batch 1,8,64,512)
while (($#)); do
  case $1 in  # an option of these as the last word, without its value
    --before | --after | --mpi | --nprocs | --repeats | --ops | --out)
      (($# >= 2)) || { echo "$1 needs a value (--help lists the options)" >&2; exit 2; } ;;
  esac
  case $1 in
    --before) before=$2; shift 2 ;;
    --after) after=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --nprocs) nprocs=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; bench_args=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
for dir in "$before" "$after"; do
  if [[ ! -x $dir/bench/mpidht_bench ]]; then
    echo "no build with bench/mpidht_bench in '$dir' (give --before and --after)" >&2
    exit 2
  fi
done
[[ $mpi == openmpi || $mpi == mpich ]] || { echo "--mpi: openmpi or mpich" >&2; exit 2; }
[[ $repeats =~ ^[1-9][0-9]?$ ]] || { echo "--repeats: 1 to 99" >&2; exit 2; }
[[ $ops =~ ^[1-9][0-9]{0,8}$ ]] || { echo "--ops: 1 to 999999999 operations per rank" >&2; exit 2; }
[[ $nprocs =~ ^[[:space:]]*[1-9][0-9]?([[:space:]]+[1-9][0-9]?)*[[:space:]]*$ ]] ||
  { echo "--nprocs: process counts from 1 to 99, e.g. \"1 2 4\"" >&2; exit 2; }
[[ -n $out && $out != -* ]] || { echo "--out '$out': expected a folder" >&2; exit 2; }
# compare_builds.py reads every run in raw/: those of an earlier comparison
# would be mixed into this one's rows.
if [[ -e $out/raw && -n $(ls -A "$out/raw" 2> /dev/null || echo unreadable) ]]; then
  echo "--out $out: $out/raw holds the runs of an earlier comparison; give another" \
       "--out or remove it" >&2
  exit 2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
mkdir -p "$out/raw"
for ((r = 1; r <= repeats; ++r)); do
  for np in $nprocs; do
    if ((r % 2)); then order="before after"; else order="after before"; fi
    for which in $order; do
      dir=$before; [[ $which == after ]] && dir=$after
      echo "repeat $r, $np processes: $which"
      "mpiexec.$mpi" -n "$np" "$dir/bench/mpidht_bench" "${bench_args[@]}" --ops "$ops" \
        --json "$out/raw/$which-np$np-r$r.json" > /dev/null
    done
  done
done
python3 "$here/compare_builds.py" "$out/raw" > "$out/compare.md"
echo "written: $out/compare.md"
