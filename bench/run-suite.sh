#!/usr/bin/env bash
# The benchmark suite: installs what is missing, builds, starts Redis and
# memcached on loopback (stopped again by PID on exit), runs mpidht_bench
# and mpidht_server_bench at 1, 2 and 4 ranks with uniform and zipf keys,
# and writes the raw JSON, plots and bench/results/RESULTS.md.
#
# usage: bash bench/run-suite.sh [--ops N] [--server-ops N] [--nprocs "1 2 4"]
set -euo pipefail
source "$(dirname "$0")/../scripts/common.sh"

ops=100000 server_ops=20000 nprocs="1 2 4"
while (($#)); do
  case $1 in
    --ops) ops=$2; shift 2 ;;
    --server-ops) server_ops=$2; shift 2 ;;
    --nprocs) nprocs=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
done

bash "$repo/scripts/install-deps.sh"
mkdir -p "$build_root"
configure_and_build "$build_root/bench" openmpi -DCMAKE_BUILD_TYPE=Release \
  -DMPIDHT_BUILD_TESTS=OFF > /dev/null
bin=$build_root/bench/bench
results=$repo/bench/results
raw=$results/raw
rm -rf "$raw" && mkdir -p "$raw"

if [[ ! -x $build_root/venv/bin/python ]]; then
  python3 -m venv "$build_root/venv"
fi
"$build_root/venv/bin/pip" install --quiet matplotlib

# Loopback servers on free ports, stopped by PID whatever happens.
source "$repo/bench/servers.sh"
start_servers "$build_root"  # server logs stay out of the results

for np in $nprocs; do
  for dist in uniform zipf; do
    echo "== $np ranks, $dist keys"
    mpiexec.openmpi -n "$np" "$bin/mpidht_bench" --dist "$dist" --ops "$ops" \
      --json "$raw/dht_${dist}_np${np}.json"
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

"$build_root/venv/bin/python" "$repo/bench/plot_results.py" "$raw" "$results"
echo "results: $results/RESULTS.md and $results/*.png"
