#!/usr/bin/env bash
# Smoke run of mpidht_bench's batched phases: one tiny run at 2 ranks with
# the write phase in batches of 8 and the read phase single, in batches of
# 8 and in one batch larger than a rank's keys, for every protocol; one
# with three write sizes interleaved in one write phase; one of the fill
# phase; then bad --batch, --write-batch, --window, --eviction and
# --gap-bytes values, each of which must be rejected with a non-zero exit
# and a message naming the option. No timing checks.
#
# usage: test_bench_batch.sh BENCH MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
bench=$1 mpiexec=$2
shift 2
flags=("$@")
dir=$(mktemp -d "${TMPDIR:-/tmp}/mpidht-batch.XXXXXX")
trap 'rm -rf "$dir"' EXIT

out=$("$mpiexec" "${flags[@]}" -n 2 "$bench" --phases write,read,mixed --batch 1,8,64 \
        --write-batch 8 --ops 50 --memory 1048576 --range 5000 --json "$dir/rows.json")
echo "$out"
# columns: protocol phase dist ranks batch ops ops/s p50 p99 mean misses ...
for protocol in coarse fine lockfree; do
  rows=$(awk -v p="$protocol" '$1 == p && $3 == "uniform" && $4 == 2 && $6 == 100 {
           print $2 "/" $5 }' <<< "$out" | paste -sd' ')
  if [[ $rows != "write/8 read/1 read/8 read/64 mixed/1" ]]; then
    echo "FAIL: $protocol rows were '$rows'" >&2
    exit 1
  fi
done
# Writes are exact under every protocol and the table has room, so every
# read finds its key whatever the batch size.
if awk '$2 == "read" && $11 != 0 { bad = 1 }
        END { exit !bad }' <<< "$out"; then
  echo "FAIL: batched reads missed keys that were written" >&2
  exit 1
fi
grep -q '"phase": "read", "distribution": "uniform", "ranks": 2, "window": "auto", "eviction": "recency", "batch": 64' \
  "$dir/rows.json"

# Several write sizes in one interleaved write phase: one row per size,
# every key counted, in the order given.
out=$("$mpiexec" "${flags[@]}" -n 2 "$bench" --phases write --write-batch 1,8,3 --ops 50 \
        --memory 1048576 --range 5000)
echo "$out"
for protocol in coarse fine lockfree; do
  rows=$(awk -v p="$protocol" '$1 == p && $4 == 2 && $6 == 100 { print $2 "/" $5 }' \
           <<< "$out" | paste -sd' ')
  if [[ $rows != "write/1 write/8 write/3" ]]; then
    echo "FAIL: interleaved $protocol rows were '$rows'" >&2
    exit 1
  fi
done

# The fill phase: one row per --batch size; every read was of a key never
# written (a miss), and each was written after it.
out=$("$mpiexec" "${flags[@]}" -n 2 "$bench" --phases fill --batch 1,8 --gap-bytes 4096 \
        --ops 50 --memory 1048576 --range 5000)
echo "$out"
for protocol in coarse fine lockfree; do
  rows=$(awk -v p="$protocol" '$1 == p && $4 == 2 && $6 == 100 && $11 == 100 {
           print $2 "/" $5 }' <<< "$out" | paste -sd' ')
  if [[ $rows != "fill/1 fill/8" ]]; then
    echo "FAIL: fill $protocol rows were '$rows'" >&2
    exit 1
  fi
done

reject() {
  local option=$1 value=$2 err
  if "$bench" "$option" "$value" > /dev/null 2> "$dir/err"; then
    echo "FAIL: $option '$value' was accepted" >&2
    exit 1
  fi
  err=$(cat "$dir/err")
  if ! grep -qF -- "mpidht_bench: $option '$value': expected" <<< "$err"; then
    echo "FAIL: $option '$value': no clear message in: $err" >&2
    exit 1
  fi
}
# One process started without mpiexec (Open MPI takes about 2 s to wind
# down a job that exits 1 under mpiexec).
for value in 0 abc 1,,8; do
  reject --batch "$value"
done
reject --write-batch 0
reject --write-batch 1,,8
reject --window remote
reject --eviction lru
reject --gap-bytes abc
for value in 1 9223372036854775809 100000000000000000000; do
  reject --range "$value"
  if ! grep -qF "from 2 to 2^63" "$dir/err"; then  # the bound, however far beyond
    echo "FAIL: --range '$value': the message does not name the bounds: $(cat "$dir/err")" >&2
    exit 1
  fi
done
echo "batch benchmark smoke: three runs, 11 bad values rejected"
