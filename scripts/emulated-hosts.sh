#!/usr/bin/env bash
# Emulated hosts: N network namespaces on this machine, each with its own
# host name (a UTS namespace) and address on a private bridge, so that MPI
# sees N nodes and carries traffic between them over TCP.
#
# usage: emulated-hosts.sh check          exit 0 if hosts can be made here,
#                                         else say why on stderr, exit 1
#        emulated-hosts.sh up N [--delay MS]   make hosts 0..N-1 (2 <= N <= 16);
#                                         --delay: tc netem one-way delay per
#                                         host interface (needs sch_netem)
#        emulated-hosts.sh down           remove every emulated host
#        emulated-hosts.sh status         list the hosts that are up, and
#                                         their CPU group (below)
#        emulated-hosts.sh names          print the host names, one a line
#        emulated-hosts.sh exec HOST CMD...   run CMD on HOST
#        emulated-hosts.sh agent [-OPT...] HOST CMD...   launch agent for MPI
#                                         (as ssh: CMD is joined into one
#                                         shell command run on HOST)
#        emulated-hosts.sh stacks         every program running on the hosts
#                                         (launchers and shells left out) with
#                                         the native stacks of its threads
#                                         (gdb; without it, only the list)
#        emulated-hosts.sh stop           kill every process on the hosts
#
# Layout: namespace HOST (default names mpidht-h0, mpidht-h1, ...) holds
# lo and eth0 with address NET.(i+1)/24; a bridge namespace holds the
# bridge and the other end of every host's veth pair. Nothing is added to
# the namespace this script runs in: no address, route or interface, so
# the hosts reach only each other. Host names resolve through
# /etc/netns/HOST/hosts, which `ip netns exec` puts in place of /etc/hosts.
# Each host has its own boot id (/proc/sys/kernel/random/boot_id, bound
# over in the mount namespace of the commands run there): UCX takes
# processes with the same boot id for one machine and would move bytes
# between hosts through shared memory instead of TCP.
# CPU share: separate machines run their processes on processors of their
# own, these hosts on this machine's, beside whatever else runs on it. An
# MPI process waiting for a message yields the processor where ranks
# outnumber cores (Open MPI's default then), and under Linux's EEVDF
# scheduler a process that yields loses its turn to every busy one: with
# two busy processes beside a job of 4 ranks on 2 cores, Open MPI's
# one-sided calls across hosts (osc pt2pt, whose target must run to
# answer) went from 12-17 s to no end in 60 s (docs/hosts.md). So where
# this machine has a CPU cgroup controller (cgroup v1's cpu hierarchy, or
# cgroup v2 with cpu enabled for the root's children), `up` makes a group
# PREFIX there weighted ten times a process's default share, and every
# command run on a host (exec, agent) goes into it: the hosts' processes
# share their part of the processors among themselves, as on machines of
# their own, and get up to ten times a process's share against other work
# while ready to run. Where there is none, the hosts run without it
# (`status` says which).
# `up` with hosts already up of another count tears them down first; `up`
# and `down` are safe to repeat, and a failed `up` leaves nothing behind.
# Environment: MPIDHT_HOSTS_PREFIX (default mpidht-h, at most 10
# characters), MPIDHT_HOSTS_NET (first three octets, default 10.213.77).
set -euo pipefail

prefix=${MPIDHT_HOSTS_PREFIX:-mpidht-h}
net=${MPIDHT_HOSTS_NET:-10.213.77}
hub=${prefix}-bridge
state=/run/mpidht-hosts/$prefix   # persistent UTS namespaces, the count
max_hosts=16

die() { echo "emulated-hosts.sh: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

# Why hosts cannot be made here (nothing if they can).
why_not() {
  local tool
  for tool in ip unshare nsenter mount umount; do
    command -v "$tool" > /dev/null 2>&1 || { echo "'$tool' is not installed"; return; }
  done
  if [[ $(id -u) -ne 0 ]]; then
    echo "not root (network and UTS namespaces need CAP_NET_ADMIN and CAP_SYS_ADMIN)"
    return
  fi
  local probe=${prefix}probe$$
  if ! ip netns add "$probe" > /dev/null 2>&1; then
    echo "'ip netns add' failed (no CAP_NET_ADMIN or no network namespaces in this kernel)"
    return
  fi
  local ok=true
  ip -n "$probe" link add "${prefix}pb0" type veth peer name "${prefix}pb1" > /dev/null 2>&1 &&
    ip -n "$probe" link add "${prefix}pbr" type bridge > /dev/null 2>&1 || ok=false
  ip netns del "$probe" > /dev/null 2>&1 || true
  $ok || { echo "no veth or bridge interfaces in this kernel"; return; }
  unshare --uts true > /dev/null 2>&1 || echo "'unshare --uts' failed (no CAP_SYS_ADMIN)"
}

validate_settings() {
  [[ $prefix =~ ^[a-z][a-z0-9-]{0,9}$ ]] ||
    die "MPIDHT_HOSTS_PREFIX '$prefix': expected 1 to 10 of a-z, 0-9, '-', starting with a letter"
  [[ $net =~ ^(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){2}$ ]] ||
    die "MPIDHT_HOSTS_NET '$net': expected three octets, e.g. 10.213.77"
}

host_name() { echo "$prefix$1"; }
count_up() { cat "$state/count" 2> /dev/null || echo 0; }

# The CPU controller's root group: cgroup v1's cpu hierarchy, else cgroup
# v2's root where it gives cpu to its children; nothing if neither.
cpu_root() {
  if [[ -f /sys/fs/cgroup/cpu/cpu.shares ]]; then
    echo /sys/fs/cgroup/cpu
  elif [[ -f /sys/fs/cgroup/cgroup.subtree_control ]] &&
    grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control; then
    echo /sys/fs/cgroup
  fi
}

# The hosts' CPU group (above), its path kept in the state folder; nothing
# where it cannot be made.
cpu_group_up() {
  local root dir
  root=$(cpu_root)
  [[ -n $root ]] || return 0
  dir=$root/$prefix
  mkdir "$dir" 2> /dev/null || [[ -f $dir/cgroup.procs ]] || return 0
  if { [[ -f $dir/cpu.shares ]] && echo 10240 > "$dir/cpu.shares"; } 2> /dev/null ||
    { [[ -f $dir/cpu.weight ]] && echo 1000 > "$dir/cpu.weight"; } 2> /dev/null; then
    echo "$dir" > "$state/cpu_group"
  else
    rmdir "$dir" 2> /dev/null || true
  fi
}

# Removes the hosts' CPU group; a process still in it (one `stop` did not
# end) goes back to the root group first. Waits up to 5 s for processes
# being killed to leave it.
cpu_group_down() {
  local root dir pid try
  root=$(cpu_root)
  [[ -n $root ]] || return 0
  dir=$root/$prefix
  [[ -f $dir/cgroup.procs ]] || return 0
  for ((try = 0; try < 50; ++try)); do
    while read -r pid; do
      echo "$pid" > "$root/cgroup.procs" 2> /dev/null || true
    done < "$dir/cgroup.procs"
    rmdir "$dir" 2> /dev/null && return 0
    sleep 0.1
  done
  echo "emulated-hosts.sh: could not remove the CPU group $dir" >&2
}

# Every namespace and file this script may have made, whatever the count.
down() {
  local ns
  for ns in $(ip netns list 2> /dev/null | awk '{ print $1 }'); do
    if [[ $ns == "$hub" || $ns =~ ^${prefix}[0-9]+$ ]]; then
      ip netns del "$ns"
    fi
  done
  if [[ -d $state ]]; then
    local f
    for f in "$state"/*.uts; do
      [[ -e $f ]] || continue
      umount "$f" 2> /dev/null || true
      rm -f "$f"
    done
    rm -f "$state"/*.boot_id
    rm -f "$state/count" "$state/cpu_group"
    rmdir "$state" 2> /dev/null || true
    rmdir "$(dirname "$state")" 2> /dev/null || true
  fi
  for f in /etc/netns/"$prefix"*; do
    [[ -e $f && $(basename "$f") =~ ^${prefix}[0-9]+$ ]] && rm -rf "$f"
  done
  rmdir /etc/netns 2> /dev/null || true
  cpu_group_down
}

up() {
  local n=$1 delay=$2 i name
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 2 && n <= max_hosts)) ||
    die "up '$n': expected a number of hosts from 2 to $max_hosts"
  local reason
  reason=$(why_not)
  [[ -z $reason ]] || die "cannot make emulated hosts here: $reason"
  if (($(count_up) == n)) && ip netns list | grep -qx "$hub\( .*\)\?" && [[ -z $delay ]]; then
    cpu_group_up   # already up with this count (made before there was a group)
    return 0
  fi
  down
  # Whatever stops the build midway (a failed command, die, a signal)
  # leaves nothing behind.
  trap 'down' EXIT
  trap 'exit 130' INT TERM
  ip netns add "$hub"
  ip -n "$hub" link add br0 type bridge
  ip -n "$hub" link set br0 up
  ip -n "$hub" link set lo up
  mkdir -p "$state"
  for ((i = 0; i < n; ++i)); do
    name=$(host_name "$i")
    ip netns add "$name"
    ip link add "p$i" netns "$hub" type veth peer name eth0 netns "$name"
    ip -n "$hub" link set "p$i" master br0 up
    ip -n "$name" link set lo up
    ip -n "$name" addr add "$net.$((i + 1))/24" dev eth0
    ip -n "$name" link set eth0 up
    if [[ -n $delay ]]; then
      ip netns exec "$name" tc qdisc add dev eth0 root netem delay "${delay}ms" 2> /dev/null ||
        die "tc netem is not available in this kernel (CONFIG_NET_SCH_NETEM): no --delay here"
    fi
    cat /proc/sys/kernel/random/uuid > "$state/$name.boot_id"
    touch "$state/$name.uts"
    unshare --uts="$state/$name.uts" hostname "$name"
    mkdir -p "/etc/netns/$name"
  done
  for ((i = 0; i < n; ++i)); do
    name=$(host_name "$i")
    {
      printf '127.0.0.1\tlocalhost\n'
      local j
      for ((j = 0; j < n; ++j)); do printf '%s\t%s\n' "$net.$((j + 1))" "$(host_name "$j")"; done
    } > "/etc/netns/$name/hosts"
  done
  cpu_group_up
  echo "$n" > "$state/count"
  trap - EXIT INT TERM
}

# run_on HOST CMD...: CMD in HOST's network and UTS namespaces, with its
# /etc/hosts and its boot id (in the mount namespace of `ip netns exec`,
# which this command's processes alone see).
run_on() {
  local host=$1
  shift
  [[ $host =~ ^${prefix}[0-9]+$ && -e $state/$host.uts ]] ||
    die "no emulated host '$host' (up: $(count_up) hosts named $prefix<i>)"
  # Into the hosts' CPU group, with everything this starts. A launcher on
  # a host, starting ranks on another (agent), is in it already, and does
  # not see it: `ip netns exec` mounted a sysfs of the host's own over /sys.
  if [[ -s $state/cpu_group ]]; then
    { echo $$ > "$(< "$state/cpu_group")/cgroup.procs"; } 2> /dev/null || true
  fi
  # shellcheck disable=SC2016
  exec ip netns exec "$host" nsenter --uts="$state/$host.uts" -- /bin/sh -c \
    'mount --bind "$1" /proc/sys/kernel/random/boot_id && shift && exec "$@"' \
    sh "$state/$host.boot_id" "$@"
}

# The processes in the hosts' network namespaces: all of them were started
# there by this script (exec, agent).
host_pids() {
  local n i
  n=$(count_up)
  for ((i = 0; i < n; ++i)); do ip netns pids "$(host_name "$i")" 2>/dev/null || true; done
}

# Programs, not the launchers, daemons and shells that start them.
is_launcher() {
  case $1 in
    mpiexec* | mpirun* | orted | prted | hydra_pmi_proxy | sh | bash | ip | nsenter | timeout | sleep) return 0 ;;
  esac
  return 1
}

stacks() {
  local pid comm have_gdb=true
  command -v gdb > /dev/null || have_gdb=false
  $have_gdb || echo "(gdb is not installed: the processes without their stacks)"
  for pid in $(host_pids); do
    comm=$(cat "/proc/$pid/comm" 2> /dev/null) || continue
    is_launcher "$comm" && continue
    echo "=== process $pid ($comm): $(tr '\0' ' ' < "/proc/$pid/cmdline" 2> /dev/null | cut -c1-200)"
    if $have_gdb; then
      timeout 60 gdb -p "$pid" -batch -nx -ex 'thread apply all bt' 2> /dev/null |
        grep -E '^(Thread|#)' || echo "(no stack: gdb could not attach)"
    fi
  done
}

validate_settings
case ${1:-} in
  check)
    reason=$(why_not)
    [[ -z $reason ]] || { echo "emulated hosts unavailable: $reason" >&2; exit 1; }
    ;;
  up)
    (($# >= 2)) || die "usage: up N [--delay MS]"
    delay=
    if (($# == 4)) && [[ $3 == --delay ]]; then
      [[ $4 =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--delay '$4': expected milliseconds"
      delay=$4
    elif (($# != 2)); then
      die "usage: up N [--delay MS]"
    fi
    up "$2" "$delay"
    ;;
  down) down ;;
  status)
    n=$(count_up)
    if ((n == 0)); then echo "no emulated hosts"; exit 0; fi
    for ((i = 0; i < n; ++i)); do echo "$(host_name "$i") $net.$((i + 1))"; done
    if [[ -s $state/cpu_group ]]; then
      echo "CPU group: $(< "$state/cpu_group") (ten times the default weight)"
    else
      echo "CPU group: none (no CPU cgroup controller here)"
    fi
    ;;
  names)
    n=$(count_up)
    ((n > 0)) || die "no emulated hosts are up (emulated-hosts.sh up N)"
    for ((i = 0; i < n; ++i)); do host_name "$i"; done
    ;;
  exec)
    (($# >= 3)) || die "usage: exec HOST CMD..."
    shift
    run_on "$@"
    ;;
  agent)
    shift
    while (($#)) && [[ $1 == -* ]]; do shift; done   # ssh options, e.g. -x
    (($# >= 2)) || die "usage: agent [-OPT...] HOST CMD..."
    host=$1
    shift
    run_on "$host" /bin/sh -c "$*"
    ;;
  stacks) stacks ;;
  stop)
    mapfile -t pids < <(host_pids)
    ((${#pids[@]} == 0)) || kill -KILL "${pids[@]}" 2> /dev/null || true
    ;;
  -h|--help) usage ;;
  *) usage >&2; exit 2 ;;
esac
