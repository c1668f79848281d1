#!/usr/bin/env bash
# CTest fixture of the tests across emulated hosts: `up N` makes N hosts
# (exits 77, CTest's skip, with the reason where this machine cannot),
# `down` removes them, whatever state they are in.
#
# usage: hosts-fixture.sh up N | down
set -euo pipefail
hosts=$(cd "$(dirname "$0")/../../scripts" && pwd)/emulated-hosts.sh
case ${1:-} in
  up)
    if ! reason=$("$hosts" check 2>&1); then
      echo "SKIPPED: $reason; the tests across hosts are skipped"
      exit 77
    fi
    "$hosts" up "${2:?usage: hosts-fixture.sh up N}"
    "$hosts" status
    ;;
  down)
    "$hosts" down
    ;;
  *) echo "usage: hosts-fixture.sh up N | down" >&2; exit 2 ;;
esac
