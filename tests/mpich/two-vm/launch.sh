#!/usr/bin/env bash
# Hydra's "ssh" for the two-VM job (tests/mpich/two-vm.sh): mpiexec runs
#   launch.sh -x HOST COMMAND...
# for each proxy on another host; there is no ssh between the VMs of
# tests/rxe/run2, so the command goes through their shared rendezvous
# directory to the agent in the other VM (two-vm.sh --agent), which runs
# it with sh -c (as sshd would) and writes its exit status back. The
# proxy's own output reaches mpiexec over its control connection.
set -u
[ "${1:-}" = -x ] && shift
host=${1:?usage: launch.sh [-x] HOST COMMAND...}
shift
q=${FD_RXE_RDV:?no FD_RXE_RDV}/launch
mkdir -p "$q"
n=$(date +%s%N)-$$
printf '%s\n' "$*" > "$q/$n.tmp" && mv "$q/$n.tmp" "$q/$n.cmd"
echo "launch.sh: proxy for $host handed to the other VM's agent ($n)" >&2
while [ ! -f "$q/$n.rc" ]; do sleep 0.2; done
[ -s "$q/$n.out" ] && sed "s/^/launch.sh[$host]: /" "$q/$n.out" >&2
exit "$(cat "$q/$n.rc")"
