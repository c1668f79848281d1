#!/usr/bin/env bash
# Smoke run of every mode of mpidht_server_bench: Redis and memcached,
# synchronous and pipelined, uniform and zipf keys, on servers this script
# starts on loopback and stops by PID.
#
# usage: test_server_bench.sh SERVER_BENCH MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
bench=$1 mpiexec=$2
shift 2
dir=$(mktemp -d "${TMPDIR:-/tmp}/mpidht-servers.XXXXXX")
source "$(dirname "$0")/../../bench/servers.sh"
start_servers "$dir"
trap 'stop_servers; rm -rf "$dir"' EXIT

for store in redis memcached; do
  port=redis_port
  [[ $store == memcached ]] && port=memcached_port
  for depth in 1 16; do
    for dist in uniform zipf; do
      out=$("$mpiexec" "$@" -n 2 "$bench" --store "$store" --port "${!port}" \
              --depth "$depth" --dist "$dist" --ops 200 --range 1000)
      echo "$out"
      # three phases, and the read phase finds every key the write phase set
      [[ $(grep -c "^$store-" <<< "$out") -eq 3 ]]
      grep -E "^$store-[a-z]+$depth +read +$dist +2 +400 .* 0\$" <<< "$out" > /dev/null
    done
  done
done
echo "server benchmark smoke: 8 modes ran"
