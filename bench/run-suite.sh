#!/usr/bin/env bash
# The benchmark suite: installs what is missing, builds, starts Redis and
# memcached on loopback (stopped again by PID on exit), runs mpidht_bench
# (--repeats times, 3 by default: the figures and tables give the median
# and the range) and mpidht_server_bench at 1, 2 and 4 ranks with uniform
# and zipf keys,
# then batched reads, writes and fills (mpidht_read_batch, mpidht_write_batch
# of 8, 64 and 512 keys against single calls; a fill writes the keys its
# reads missed) for every protocol, dump and
# restore throughput (mpidht_bench_persist), single reads and writes with
# MPICH against Open MPI (the same program built with each, the two runs
# alternating), and writes the raw JSON, plots and RESULTS.md into
# build/bench-results (--results DIR elsewhere; the committed results are
# refreshed with --results bench/results).
#
# usage: bash bench/run-suite.sh [--ops N] [--server-ops N] [--nprocs "1 2 4"]
#                                [--batches "1 8 64 512"] [--repeats N] [--results DIR]
set -euo pipefail
source "$(dirname "$0")/../scripts/common.sh"

ops=100000 server_ops=20000 nprocs="1 2 4" batches="1 8 64 512" repeats=3
results=$build_root/bench-results
while (($#)); do
  case $1 in  # an option of these as the last word, without its value
    --ops | --server-ops | --nprocs | --batches | --repeats | --results)
      (($# >= 2)) || { echo "$1 needs a value (--help lists the options)" >&2; exit 2; } ;;
  esac
  case $1 in
    --ops) ops=$2; shift 2 ;;
    --server-ops) server_ops=$2; shift 2 ;;
    --nprocs) nprocs=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
# The batch sizes as mpidht_bench's comma list, measured twice in mirrored
# order (1,8,64,512,512,64,8,1) so that a drift during the run cancels.
read -ra sizes <<< "$batches"
if ((${#sizes[@]} == 0 || ${#sizes[@]} > 8)) || [[ ! " $batches " =~ " 1 " ]] ||
   [[ ! $batches =~ ^[[:space:]]*[1-9][0-9]{0,4}([[:space:]]+[1-9][0-9]{0,4})*[[:space:]]*$ ]] ||
   (($(printf '%s\n' "${sizes[@]}" | sort -n | tail -n 1) > 65536)); then
  echo "--batches '$batches': expected 1 to 8 batch sizes from 1 to 65536 including 1" \
       "(the single-call reference), e.g. \"1 8 64 512\"" >&2
  exit 2
fi
if [[ ! $repeats =~ ^[1-9]$ ]]; then
  echo "--repeats '$repeats': expected 1 to 9 runs per setting" >&2
  exit 2
fi
for option in "--ops $ops" "--server-ops $server_ops"; do
  if [[ ! ${option#* } =~ ^[1-9][0-9]{0,8}$ ]]; then
    echo "${option% *} '${option#* }': expected a whole number of operations per rank" \
         "from 1 to 999999999" >&2
    exit 2
  fi
done
if [[ ! $nprocs =~ ^[[:space:]]*[1-9][0-9]?([[:space:]]+[1-9][0-9]?)*[[:space:]]*$ ]]; then
  echo "--nprocs '$nprocs': expected process counts from 1 to 99, e.g. \"1 2 4\"" >&2
  exit 2
fi
# A size or count given twice would be measured twice and drawn as one.
for option in "--batches:$batches" "--nprocs:$nprocs"; do
  if [[ -n $(tr -s '[:space:]' '\n' <<< "${option#*:}" | sed '/^$/d' | sort | uniq -d) ]]; then
    echo "${option%%:*} '${option#*:}': a value given twice" >&2
    exit 2
  fi
done
if [[ -z $results || $results == -* ]]; then
  echo "--results '$results': expected a folder" >&2
  exit 2
fi
# The raw results are rewritten whole: an existing raw folder is removed
# only if it holds nothing but what the suite writes there.
if [[ -e $results/raw ]] &&
   { [[ ! -d $results/raw || -L $results/raw ]] ||
     [[ -n $(find "$results/raw" -mindepth 1 ! -name '*.json' \
             ! \( -type d \( -name batch -o -name mpi -o -name persist \) \) -print -quit) ]]; }; then
  echo "--results $results: $results/raw holds what the suite did not write there;" \
       "move it away or give another --results" >&2
  exit 2
fi
mirrored=$(printf '%s\n' "${sizes[@]}" "$(printf '%s\n' "${sizes[@]}" | tac)" | paste -sd,)

bash "$repo/scripts/install-deps.sh"
mkdir -p "$build_root"
configure_and_build "$build_root/bench" openmpi -DCMAKE_BUILD_TYPE=Release \
  -DMPIDHT_BUILD_TESTS=OFF > /dev/null
configure_and_build "$build_root/bench-mpich" mpich -DCMAKE_BUILD_TYPE=Release \
  -DMPIDHT_BUILD_TESTS=OFF > /dev/null
bin=$build_root/bench/bench
mkdir -p "$results"
results=$(cd "$results" && pwd)
raw=$results/raw
rm -rf "$raw" && mkdir -p "$raw/batch" "$raw/mpi"

if [[ ! -x $build_root/venv/bin/python ]]; then
  python3 -m venv "$build_root/venv"
fi
"$build_root/venv/bin/pip" install --quiet matplotlib

# Loopback servers on free ports, stopped by PID whatever happens.
source "$repo/bench/servers.sh"
start_servers "$build_root"  # server logs stay out of the results

for np in $nprocs; do
  for dist in uniform zipf; do
    for ((rep = 1; rep <= repeats; ++rep)); do
      echo "== $np ranks, $dist keys, run $rep of $repeats"
      mpiexec.openmpi -n "$np" "$bin/mpidht_bench" --dist "$dist" --ops "$ops" \
        --json "$raw/dht_${dist}_np${np}_r${rep}.json"
    done
    for store in redis memcached; do
      port=redis_port
      [[ $store == memcached ]] && port=memcached_port
      for depth in 1 16; do
        mpiexec.openmpi -n "$np" "$bin/mpidht_server_bench" --store "$store" \
          --port "${!port}" --depth "$depth" --dist "$dist" --ops "$server_ops" \
          --json "$raw/${store}_d${depth}_${dist}_np${np}.json"
      done
    done
  done
done

# Batched operations, uniform keys. Reads: one run per rank count fills
# each protocol's table with single writes, then reads the same keys back
# at every batch size (1 = single mpidht_read calls). Writes: one run per
# rank count measures every size (1 = single mpidht_write calls) in one
# write phase, interleaved in blocks after a warm-up (mpidht_bench --help).
for np in $nprocs; do
  echo "== $np ranks, batched reads (batch sizes $batches)"
  mpiexec.openmpi -n "$np" "$bin/mpidht_bench" --phases write,read --batch "$mirrored" \
    --ops "$ops" --json "$raw/batch/read_np${np}.json" > /dev/null
  # The same on an MPI_Win_allocate window (osc rdma): the path across
  # nodes, where every flush is a round trip.
  mpiexec.openmpi -n "$np" "$bin/mpidht_bench" --phases write,read --batch "$mirrored" \
    --window allocate --ops "$ops" --json "$raw/batch/read_allocate_np${np}.json" > /dev/null
  mpiexec.openmpi -n "$np" "$bin/mpidht_bench" --phases write \
    --write-batch "$(printf '%s\n' "${sizes[@]}" | paste -sd,)" \
    --ops "$ops" --json "$raw/batch/write_np${np}.json" > /dev/null
  # A surrogate filling the table: reads of keys never written, then their
  # writes (timed), at every size in mirrored order (read-for-insert).
  mpiexec.openmpi -n "$np" "$bin/mpidht_bench" --phases fill --batch "$mirrored" \
    --ops "$ops" --json "$raw/batch/fill_np${np}.json" > /dev/null
done

# Dump and restore throughput: a table of 128 MiB per rank, half full,
# for every protocol.
mkdir -p "$raw/persist"
for np in $nprocs; do
  for protocol in coarse fine lockfree; do
    echo "== $np ranks, dump and restore ($protocol)"
    mpiexec.openmpi -n "$np" "$bin/mpidht_bench_persist" --memory $((128 << 20)) \
      --protocol "$protocol" --file "$build_root/bench-persist.dump" \
      --json "$raw/persist/${protocol}_np${np}.json"
  done
done

# MPICH against Open MPI: single writes and reads of every protocol, the
# two builds of the same program alternating, --repeats pairs per rank
# count (raw/mpi/<mpi>_np<N>_r<run>.json).
for np in $nprocs; do
  for ((rep = 1; rep <= repeats; ++rep)); do
    echo "== $np ranks, Open MPI and MPICH, run $rep of $repeats"
    mpiexec.openmpi -n "$np" "$bin/mpidht_bench" --phases write,read --ops "$ops" \
      --json "$raw/mpi/openmpi_np${np}_r${rep}.json" > /dev/null
    mpiexec.mpich -n "$np" "$build_root/bench-mpich/bench/mpidht_bench" --phases write,read \
      --ops "$ops" --json "$raw/mpi/mpich_np${np}_r${rep}.json" > /dev/null
  done
done

"$build_root/venv/bin/python" "$repo/bench/plot_results.py" "$raw" "$results"
echo "results: $results/RESULTS.md and $results/*.png"
