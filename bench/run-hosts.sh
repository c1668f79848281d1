#!/usr/bin/env bash
# The benchmark across emulated hosts (scripts/emulated-hosts.sh, which
# needs root): the paper's workloads (mpidht_bench: write, read and mixed
# phases of every protocol, uniform and zipf keys, and the raw MPI_Get +
# flush of a bucket from another host) on 2 and 4 hosts with one rank
# each, over TCP between the hosts; then what a read, a write and a locked
# update cost while the target computes in 5 ms slices
# (mpidht_progress_bench, 2 hosts), under each MPI setting tried for
# progress. Writes the raw JSON, plots and RESULTS.md into
# build/bench-hosts (--results DIR elsewhere; the committed results are
# refreshed with --results bench/results/hosts). The hosts are removed
# however the script ends.
#
# usage: bash bench/run-hosts.sh [--hosts "2 4"] [--ops N] [--ops-oversubscribed N]
#                                [--repeats N] [--progress-ops N] [--delay MS]
#                                [--results DIR]
#   --ops                 operations per rank and phase (default 5000)
#   --ops-oversubscribed  the same where hosts outnumber the cores (default 1000)
#   --repeats             runs of each workload setting (default 3)
#   --progress-ops        timed calls per operation in the progress runs (default 60)
#   --delay               one-way delay per host interface in ms (tc netem; this
#                         script stops if the kernel has no netem)
set -euo pipefail
source "$(dirname "$0")/../scripts/common.sh"

hosts_list="2 4" ops=5000 ops_over=1000 repeats=3 progress_ops=60 delay=
results=$build_root/bench-hosts
while (($#)); do
  case $1 in  # an option of these as the last word, without its value
    --hosts | --ops | --ops-oversubscribed | --repeats | --progress-ops | --delay | --results)
      (($# >= 2)) || { echo "$1 needs a value (--help lists the options)" >&2; exit 2; } ;;
  esac
  case $1 in
    --hosts) hosts_list=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --ops-oversubscribed) ops_over=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --progress-ops) progress_ops=$2; shift 2 ;;
    --delay) delay=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
[[ $hosts_list =~ ^[[:space:]]*[1-9][0-9]?([[:space:]]+[1-9][0-9]?)*[[:space:]]*$ ]] ||
  { echo "--hosts '$hosts_list': expected counts from 2 to 16, e.g. \"2 4\"" >&2; exit 2; }
for n in $hosts_list; do
  ((n >= 2 && n <= 16)) ||
    { echo "--hosts '$hosts_list': expected counts from 2 to 16, e.g. \"2 4\"" >&2; exit 2; }
done
if [[ -n $(tr -s '[:space:]' '\n' <<< "$hosts_list" | sed '/^$/d' | sort | uniq -d) ]]; then
  echo "--hosts '$hosts_list': a count given twice" >&2
  exit 2
fi
[[ $repeats =~ ^[1-9]$ ]] || { echo "--repeats '$repeats': expected 1 to 9" >&2; exit 2; }
for option in "--ops $ops" "--ops-oversubscribed $ops_over" "--progress-ops $progress_ops"; do
  [[ ${option#* } =~ ^[1-9][0-9]{0,8}$ ]] ||
    { echo "${option% *} '${option#* }': expected a whole number of operations from 1 to" \
        "999999999" >&2; exit 2; }
done
[[ -z $delay || $delay =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
  { echo "--delay '$delay': expected milliseconds" >&2; exit 2; }
[[ -n $results && $results != -* ]] || { echo "--results '$results': expected a folder" >&2; exit 2; }
# The raw results are rewritten whole: an existing raw folder is removed
# only if it holds nothing but what this script writes there.
if [[ -e $results/raw ]] &&
   { [[ ! -d $results/raw || -L $results/raw ]] ||
     [[ -n $(find "$results/raw" -mindepth 1 ! -name '*.json' \
             ! \( -type d -name progress \) -print -quit) ]]; }; then
  echo "--results $results: $results/raw holds what this script did not write there;" \
       "move it away or give another --results" >&2
  exit 2
fi

hosts=$repo/scripts/emulated-hosts.sh
run=$repo/scripts/hosts-mpiexec.sh
if ! reason=$("$hosts" check 2>&1); then
  echo "run-hosts.sh: $reason" >&2
  exit 1
fi
bash "$repo/scripts/install-deps.sh"
mkdir -p "$build_root"
configure_and_build "$build_root/bench" openmpi -DCMAKE_BUILD_TYPE=Release \
  -DMPIDHT_BUILD_TESTS=OFF > /dev/null
configure_and_build "$build_root/bench-mpich" mpich -DCMAKE_BUILD_TYPE=Release \
  -DMPIDHT_BUILD_TESTS=OFF > /dev/null
if [[ ! -x $build_root/venv/bin/python ]]; then
  python3 -m venv "$build_root/venv"
fi
"$build_root/venv/bin/pip" install --quiet matplotlib

mkdir -p "$results"
results=$(cd "$results" && pwd)
raw=$results/raw
rm -rf "$raw" && mkdir -p "$raw/progress"

export MPIDHT_HOSTS_PREFIX=${MPIDHT_HOSTS_PREFIX:-mpidht-h}
trap '"$hosts" down' EXIT
trap 'exit 130' INT TERM
# A rank waiting in MPI yields the core: with more hosts than cores the
# target of an operation is otherwise seldom running (4 hosts: about
# 50 times fewer operations/s without it).
export OMPI_MCA_mpi_yield_when_idle=1
cores=$(nproc)
up() { "$hosts" up "$1" ${delay:+--delay "$delay"}; }

# The paper's workloads, Open MPI (osc pt2pt between the hosts).
for n in $hosts_list; do
  up "$n"
  count=$ops
  ((n > cores)) && count=$ops_over
  for dist in uniform zipf; do
    for ((rep = 1; rep <= repeats; ++rep)); do
      echo "== $n hosts, $dist keys, run $rep of $repeats"
      "$run" --hosts "$n" -- "$build_root/bench/bench/mpidht_bench" --dist "$dist" \
        --ops "$count" --phases write,read,mixed,raw-get \
        --json "$raw/dht_${dist}_np${n}_r${rep}.json"
    done
  done
done

# Progress: the target computes in 5 ms slices without MPI calls; each
# MPI under its defaults and under the settings meant to progress
# one-sided operations without the target.
up 2
progress() {
  local label=$1 mpi=$2 bin=$3
  shift 3
  echo "== progress: $label"
  local json=$raw/progress/$label.json extra=()
  [[ $label == *async* ]] && extra+=(--thread multiple)
  # A label ending in -progress-<N>us: the library's fix, mpidht_progress
  # after every N µs of the target's computing.
  [[ $label =~ -progress-([0-9]+)us$ ]] && extra+=(--progress-us "${BASH_REMATCH[1]}")
  # MPICH across hosts now and then hangs in MPI_Finalize (docs/hosts.md):
  # a run that wrote its measurements before that is kept, and said so.
  if ! env "$@" timeout 300 "$run" --mpi "$mpi" --hosts 2 -- "$bin" --ops "$progress_ops" \
      --label "$label" --json "$json" "${extra[@]}"; then
    [[ -s $json ]] || return 1
    echo "== progress: $label: measured, but the run did not end cleanly (MPI_Finalize)"
  fi
}
progress openmpi-pt2pt openmpi "$build_root/bench/bench/mpidht_progress_bench"
progress openmpi-pt2pt-tcp-thread openmpi "$build_root/bench/bench/mpidht_progress_bench" \
  OMPI_MCA_btl_tcp_progress_thread=1
progress mpich mpich "$build_root/bench-mpich/bench/mpidht_progress_bench"
progress mpich-async mpich "$build_root/bench-mpich/bench/mpidht_progress_bench" \
  MPIR_CVAR_ASYNC_PROGRESS=1
progress openmpi-pt2pt-progress-20us openmpi "$build_root/bench/bench/mpidht_progress_bench"
progress mpich-progress-20us mpich "$build_root/bench-mpich/bench/mpidht_progress_bench"

"$build_root/venv/bin/python" "$repo/bench/plot_hosts.py" "$raw" "$results" --cores "$cores" \
  ${delay:+--delay "$delay"}
echo "results: $results/RESULTS.md and $results/*.png"
