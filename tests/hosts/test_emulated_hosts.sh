#!/usr/bin/env bash
# scripts/emulated-hosts.sh as the tests and benchmarks use it, under its
# own host names: `up` twice and `down` twice are safe; each host has its
# own host name, address and boot id and reaches the others by name; the
# launch agent runs an ssh-style command line there; `stacks` lists a
# program running on a host (not its shell) and `stop` ends it;
# hosts-mpiexec.sh --limit stops a job that outlives its limit, printing
# what runs first, and exits 124; on-hosts.sh runs a stopped program once
# more, saying so, and one that fails only once; where this machine has a
# CPU cgroup controller, what runs on a host is in the hosts' CPU group,
# weighted ten times the default; `down` leaves no namespace, file, mount
# or group behind. Exits 77 (CTest's skip) where this
# machine cannot make hosts.
set -euo pipefail
export MPIDHT_HOSTS_PREFIX=mpidht-s MPIDHT_HOSTS_NET=10.213.77
here=$(cd "$(dirname "$0")" && pwd)
scripts=$(cd "$here/../../scripts" && pwd)
hosts=$scripts/emulated-hosts.sh
if ! reason=$("$hosts" check 2>&1); then
  echo "SKIPPED: $reason"
  exit 77
fi
trap '"$hosts" down' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$hosts" up 3
"$hosts" up 3   # again: nothing changes
[[ $("$hosts" names | paste -sd' ') == "mpidht-s0 mpidht-s1 mpidht-s2" ]] || fail "names"
seen=
for h in mpidht-s0 mpidht-s1 mpidht-s2; do
  [[ $("$hosts" exec "$h" hostname) == "$h" ]] || fail "$h: host name"
  id=$("$hosts" exec "$h" cat /proc/sys/kernel/random/boot_id)
  [[ $id != "$(cat /proc/sys/kernel/random/boot_id)" && " $seen " != *" $id "* ]] ||
    fail "$h: boot id not its own"
  seen="$seen $id"
done
# The hosts' CPU group, where this machine has a CPU controller: what runs
# on a host is in it, at ten times the default weight.
group=$("$hosts" status | sed -n 's/^CPU group: \(\/[^ ]*\) .*/\1/p')
if [[ -n $group ]]; then
  [[ $(basename "$group") == mpidht-s ]] || fail "CPU group named $group"
  weight=$(cat "$group/cpu.shares" 2> /dev/null || cat "$group/cpu.weight")
  [[ $weight == 10240 || $weight == 1000 ]] || fail "CPU group weight $weight"
  "$hosts" exec mpidht-s1 cat /proc/self/cgroup | grep -q ':/mpidht-s$' ||
    fail "a host's command is not in the CPU group: $("$hosts" exec mpidht-s1 cat /proc/self/cgroup)"
  "$scripts/hosts-agent.sh" mpidht-s0 cat /proc/self/cgroup | grep -q ':/mpidht-s$' ||
    fail "the agent's command is not in the CPU group"
elif [[ -f /sys/fs/cgroup/cpu/cpu.shares ]]; then
  fail "no CPU group although cgroup v1's cpu controller is here"
fi
# By name, over the bridge: host 2 resolves host 0's address.
[[ $("$hosts" exec mpidht-s2 getent hosts mpidht-s0 | awk '{ print $1 }') == 10.213.77.1 ]] ||
  fail "host names do not resolve"
# The agent, as ssh is called: options, host, then words of one command.
[[ $("$scripts/hosts-agent.sh" -x mpidht-s1 echo '$(hostname)' ok) == "mpidht-s1 ok" ]] ||
  fail "agent"
# A program left running on a host: listed by `stacks`, its shell not;
# `stop` ends it.
"$hosts" exec mpidht-s1 /bin/sh -c 'exec tail -f /dev/null' &
for ((i = 0; i < 50; ++i)); do
  [[ -n $(ip netns pids mpidht-s1) ]] && break
  sleep 0.1
done
listed=$("$hosts" stacks)
grep -q '^=== process [0-9]* (tail): tail -f /dev/null' <<< "$listed" || fail "stacks: $listed"
! grep -q '(sh)' <<< "$listed" || fail "stacks lists a shell: $listed"
"$hosts" stop
wait || true
[[ -z $(ip netns pids mpidht-s1) ]] || fail "stop left processes"
# A job past its limit: what runs printed, the job and its ranks gone,
# exit 124, long before the job's own end.
rc=0
out=$("$scripts/hosts-mpiexec.sh" --mpi openmpi --hosts 2 --limit 2 -- sleep 600 2>&1) || rc=$?
((rc == 124)) || fail "--limit: exit $rc, expected 124: $out"
grep -q 'still runs after 2 s' <<< "$out" && grep -q 'stopped after 2 s' <<< "$out" ||
  fail "--limit: $out"
for h in mpidht-s0 mpidht-s1; do
  [[ -z $(ip netns pids "$h") ]] || fail "--limit left processes on $h"
done
# on-hosts.sh: a program stopped at its limit runs once more, saying so,
# and a second stop fails (124); a program that fails runs once.
rc=0
out=$(MPIDHT_HOSTS_ATTEMPT_S=1 "$here/on-hosts.sh" mpiexec.openmpi 2 1 sleep 600 2>&1) || rc=$?
((rc == 124)) && [[ $(grep -c 'RETRIED' <<< "$out") == 1 &&
  $(grep -c 'stopped after 1 s' <<< "$out") == 2 ]] || fail "on-hosts.sh, two stops: $rc: $out"
rc=0
out=$("$here/on-hosts.sh" mpiexec.openmpi 2 1 false 2>&1) || rc=$?
((rc != 0 && rc != 124)) && ! grep -q 'RETRIED' <<< "$out" ||
  fail "on-hosts.sh, a failing program: $rc: $out"

# Only the hosts have the addresses: none was added here.
! ip -o addr | grep -q ' 10\.213\.77\.' || fail "an address leaked into this namespace"

"$hosts" up 2   # another count: rebuilt
[[ $("$hosts" names | wc -l) == 2 ]] || fail "up 2 after up 3"
"$hosts" down
"$hosts" down   # again: nothing to do, no error
trap - EXIT
! ip netns list | grep -q '^mpidht-s' || fail "namespaces left"
! compgen -G "/etc/netns/mpidht-s*" > /dev/null || fail "/etc/netns entries left"
[[ ! -e /run/mpidht-hosts/mpidht-s ]] || fail "state left"
[[ -z $group || ! -e $group ]] || fail "CPU group $group left"
! grep -q 'mpidht-hosts/mpidht-s' /proc/mounts || fail "mounts left"
echo "emulated hosts: up, up again, names, addresses, boot ids, agent, CPU group${group:+ $group}, stacks, stop, --limit, down twice: ok"
