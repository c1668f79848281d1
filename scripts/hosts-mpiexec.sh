#!/usr/bin/env bash
# Runs an MPI program across the emulated hosts that are up
# (scripts/emulated-hosts.sh up N): the launcher runs on the first host and
# starts the ranks on every host through scripts/hosts-agent.sh, so ranks
# on different hosts talk over TCP on the hosts' own addresses.
#
# usage: hosts-mpiexec.sh [--mpi openmpi|mpich] [--hosts N] [--per-host K]
#                         [--osc pt2pt|ucx|default] [--limit S] [--dry-run]
#                         -- PROGRAM [ARGS...]
#   --mpi       which MPI launches (default openmpi); the program must be
#               built with it
#   --hosts     use the first N hosts (default: all that are up)
#   --per-host  ranks per host (default 1); ranks fill host 0 first
#   --osc       Open MPI only: the one-sided component between hosts, beside
#               osc sm for windows within one host (default pt2pt, over
#               the TCP BTL; it refuses programs that ask for
#               MPI_THREAD_MULTIPLE. ucx: over UCX's TCP transport. default:
#               what /etc/openmpi/openmpi-mca-params.conf leaves, which on
#               Debian excludes both, so that no component serves a window
#               between hosts). docs/hosts.md says what each does here.
#   --limit     stop the job after S seconds: first print every program
#               running on the hosts with its threads' stacks
#               (emulated-hosts.sh stacks), then kill the job and what it
#               left on the hosts, and exit 124 (as timeout(1) does)
#   --dry-run   print the command instead of running it
#
# The environment is passed to every rank, as on hosts that share a login
# environment. Ranks are not bound to cores: the hosts share this machine's
# cores, and each host's launcher would bind its first rank to core 0.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
mpi=openmpi hosts= per_host=1 osc=pt2pt limit= dry=false
die() { echo "hosts-mpiexec.sh: $*" >&2; exit 2; }
while (($#)); do
  case $1 in
    --mpi) mpi=${2:-}; shift 2 ;;
    --hosts) hosts=${2:-}; shift 2 ;;
    --per-host) per_host=${2:-}; shift 2 ;;
    --osc) osc=${2:-}; shift 2 ;;
    --limit) limit=${2:-}; shift 2 ;;
    --dry-run) dry=true; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (the program goes after --)" ;;
  esac
done
(($#)) || die "no program given (usage: hosts-mpiexec.sh [options] -- PROGRAM [ARGS...])"
[[ $mpi == openmpi || $mpi == mpich ]] || die "--mpi '$mpi': expected openmpi or mpich"
[[ $osc == pt2pt || $osc == ucx || $osc == default ]] ||
  die "--osc '$osc': expected pt2pt, ucx or default"
[[ $per_host =~ ^[1-9][0-9]?$ ]] || die "--per-host '$per_host': expected 1 to 99"
[[ -z $limit || $limit =~ ^[1-9][0-9]{0,4}$ ]] || die "--limit '$limit': expected 1 to 99999 seconds"

mapfile -t names < <("$here/emulated-hosts.sh" names)
if [[ -n $hosts ]]; then
  [[ $hosts =~ ^[1-9][0-9]?$ ]] && ((hosts <= ${#names[@]})) ||
    die "--hosts '$hosts': expected 1 to ${#names[@]} (the hosts that are up)"
  names=("${names[@]:0:hosts}")
fi
np=$((${#names[@]} * per_host))
agent=$here/hosts-agent.sh

if [[ $mpi == openmpi ]]; then
  osc_args=()
  # osc sm stays for windows within one host (MPI_Win_allocate_shared).
  [[ $osc == default ]] || osc_args=(--mca osc "sm,$osc")
  list=$(printf "%s:$per_host," "${names[@]}")
  cmd=(mpiexec.openmpi --host "${list%,}" -n "$np" --bind-to none
       --mca plm_rsh_agent "$agent" --mca plm_rsh_no_tree_spawn 1
       --mca oob_tcp_if_include eth0 --mca btl_tcp_if_include eth0
       "${osc_args[@]}" "$@")
else
  list=$(printf "%s:$per_host," "${names[@]}")
  cmd=(mpiexec.mpich -launcher ssh -launcher-exec "$agent" -iface eth0
       -hosts "${list%,}" -n "$np" "$@")
fi
if $dry; then
  echo "emulated-hosts.sh exec ${names[0]} ${cmd[*]}"
  exit 0
fi
# Open MPI as root, more ranks than a host's cores (harmless for MPICH).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
[[ -n $limit ]] || exec "$here/emulated-hosts.sh" exec "${names[0]}" "${cmd[@]}"
"$here/emulated-hosts.sh" exec "${names[0]}" "${cmd[@]}" &
job=$!
# Five looks a second (most jobs take a second or less); the last look
# after the limit.
for ((look = 0; look <= 5 * limit; ++look)); do
  kill -0 "$job" 2> /dev/null || { wait "$job"; exit; }
  ((look == 5 * limit)) || sleep 0.2
done
echo "hosts-mpiexec.sh: the job still runs after $limit s; what runs on the hosts:"
"$here/emulated-hosts.sh" stacks
kill -TERM "$job" 2> /dev/null || true
for ((look = 0; look < 50; ++look)); do # 10 s for the launcher to end its job
  kill -0 "$job" 2> /dev/null || break
  sleep 0.2
done
"$here/emulated-hosts.sh" stop
wait "$job" 2> /dev/null || true
echo "hosts-mpiexec.sh: stopped after $limit s"
exit 124
