#!/usr/bin/env bash
# Launch agent for MPI across emulated hosts (scripts/emulated-hosts.sh):
# takes ssh's arguments, `[-OPTIONS...] HOST COMMAND...`, and runs COMMAND
# (joined into one shell command, as ssh does) on HOST. For Open MPI's
# `--mca plm_rsh_agent` and MPICH's `-launcher ssh -launcher-exec`.
set -euo pipefail
if [[ ${1:-} == --help || ${1:-} == -h ]]; then sed -n '2,5p' "$0" | sed 's/^# //'; exit 0; fi
exec "$(dirname "$0")/emulated-hosts.sh" agent "$@"
