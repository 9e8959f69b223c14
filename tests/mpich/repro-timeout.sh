#!/usr/bin/env bash
# Is init/timeout's occasional "not ok" MPICH's process manager or this
# library? runtests passes init/timeout only when mpiexec exits non-zero
# after MPIEXEC_TIMEOUT kills the job. This runs, N times each (default
# 10), with MPIEXEC_TIMEOUT=10 as runtests sets it:
#   mpi:   the test program (MPI_Init on this library, then a busy loop)
#   plain: /bin/sleep 60, a program that loads no MPI and no libfabric
# and counts the runs where mpiexec exited 0. Inside the Soft-RoCE VM:
#   tests/rxe/run -- tests/mpich/repro-timeout.sh MPICH_PREFIX [N]
set -uo pipefail
prefix=${1:?usage: repro-timeout.sh MPICH_PREFIX [N]}
n=${2:-10}
[ "$(hostname)" = "(none)" ] && hostname fdrxe-vm
export FI_PROVIDER="verbs;ofi_rxm"
[ -n "${FD_RXE_NETDEV0:-}" ] && export FI_VERBS_IFACE=$FD_RXE_NETDEV0
cd "$prefix.build/test/mpi/init" || exit 1
[ -x ./timeout ] || make timeout > /dev/null || exit 1
log=$(mktemp)
for kind in mpi plain; do
  zero=0
  for i in $(seq "$n"); do
    if [ $kind = mpi ]; then prog=./timeout; else prog="sleep 60"; fi
    s=$(date +%s)
    MPIEXEC_TIMEOUT=10 timeout 60 "$prefix/bin/mpiexec" -n 2 $prog > "$log" 2>&1
    rc=$?
    echo "$kind run $i: mpiexec exit $rc in $(( $(date +%s) - s )) s$(grep -q 'assert (!closed)' "$log" && echo ', proxy: assert (!closed) failed')"
    [ $rc = 0 ] && zero=$((zero + 1))
  done
  echo "$kind: mpiexec exited 0 (runtests: not ok) in $zero of $n runs"
done
rm -f "$log"
