#!/usr/bin/env bash
# Runs COMMAND with a /dev/shm of SIZE bytes (tmpfs size syntax, e.g. 64m):
# a tmpfs of its own in a private mount namespace, so that the machine's
# /dev/shm is left alone. For the tests of a shared window larger than the
# room its memory has. Exits 77 (CTest's skip), saying why, where this
# machine cannot make one (not root, no unshare, no mount namespaces).
#
# usage: small-shm.sh SIZE COMMAND...
set -euo pipefail
if (($# < 2)); then
  echo "usage: small-shm.sh SIZE COMMAND..." >&2
  exit 2
fi
size=$1
shift
if [[ $(id -u) != 0 ]] || ! command -v unshare > /dev/null ||
   ! unshare --mount --propagation private true 2> /dev/null; then
  echo "SKIPPED: a /dev/shm of its own needs root and mount namespaces (unshare --mount)"
  exit 77
fi
# shellcheck disable=SC2016
exec unshare --mount --propagation private -- /bin/sh -c \
  'mount -t tmpfs -o size="$1" mpidht-small-shm /dev/shm && shift && exec "$@"' \
  sh "$size" "$@"
