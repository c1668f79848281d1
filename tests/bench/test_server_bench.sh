#!/usr/bin/env bash
# Smoke run of every mode of mpidht_server_bench: Redis and memcached,
# synchronous and pipelined, uniform and zipf keys, on servers this script
# starts on loopback and stops by PID. Then servers that fail: a Redis
# that refuses GET (ACL) and one that refuses SET (out of memory), and a
# memcached too small for the keys that refuses sets (-M): every mode
# ends with a non-zero status and the server's error or the lost writes
# named, and writes no result file.
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

# Runs the benchmark against a failing server: it must fail, say WHY, and
# leave no result file.
must_fail() {
  local why=$1 json=$dir/failed.json err rc
  shift
  set +e
  err=$("$mpiexec" "${mpi_flags[@]}" -n 1 "$bench" "$@" --json "$json" 2>&1 > /dev/null)
  rc=$?
  set -e
  if ((rc == 0)) || ! grep -qF -- "$why" <<< "$err" || [[ -s $json && $why == *lost* ]]; then
    echo "FAIL: $* exited $rc; expected a failure naming '$why'; stderr: $err" >&2
    exit 1
  fi
  echo "$* failed as it must: $why"
}
mpi_flags=("$@")
redis=(--store redis --port "$redis_port" --ops 2000)
redis-cli -p "$redis_port" ACL SETUSER default -get > /dev/null
for depth in 1 16; do must_fail "NOPERM" "${redis[@]}" --depth "$depth"; done
redis-cli -p "$redis_port" ACL SETUSER default +get > /dev/null
redis-cli -p "$redis_port" FLUSHALL > /dev/null
redis-cli -p "$redis_port" CONFIG SET maxmemory-policy noeviction > /dev/null
redis-cli -p "$redis_port" CONFIG SET maxmemory 1mb > /dev/null
for depth in 1 16; do must_fail "OOM" "${redis[@]}" --ops 20000 --depth "$depth"; done

small_port=$(free_port)
user=()
if [[ $(id -u) -eq 0 ]]; then user=(-u nobody); fi
memcached "${user[@]}" -l 127.0.0.1 -p "$small_port" -U 0 -m 2 -M -I 512k \
  > "$dir/small-memcached.log" 2>&1 &
server_pids+=($!)
for _ in $(seq 100); do
  (exec 3<> "/dev/tcp/127.0.0.1/$small_port") 2> /dev/null && break
  sleep 0.1
done
small=(--store memcached --port "$small_port" --ops 40000)
# synchronous: the set's refusal; pipelined: libmemcached reads and drops
# the replies of buffered sets, so the read phase finds the keys missing
must_fail "FAILED TO ALLOCATE" "${small[@]}" --depth 1
must_fail "lost writes" "${small[@]}" --depth 16
echo "server benchmark smoke: 8 modes ran, 6 failing servers refused"
