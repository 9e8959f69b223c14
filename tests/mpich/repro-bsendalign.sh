#!/usr/bin/env bash
# MPICH's pt2pt/bsendalign alone, N times (default 5), 120 s each, on a
# direct-built MPICH (its test program built): the intermittent hang of
# tests/mpich/README.md. Inside the Soft-RoCE VM:
#   tests/rxe/run -- tests/mpich/repro-bsendalign.sh MPICH_PREFIX [N]
# Session 8: 1 run of 5 hung (the others pass in 3-6 s).
set -uo pipefail
prefix=${1:?usage: repro-bsendalign.sh MPICH_PREFIX [N]}
n=${2:-5}
[ "$(hostname)" = "(none)" ] && hostname fdrxe-vm
export FI_PROVIDER="verbs;ofi_rxm"
[ -n "${FD_RXE_NETDEV0:-}" ] && export FI_VERBS_IFACE=$FD_RXE_NETDEV0
cd "$prefix.build/test/mpi/pt2pt" || exit 1
log=$(mktemp)
hung=0
for i in $(seq "$n"); do
  s=$(date +%s)
  timeout 120 "$prefix/bin/mpiexec" -n 2 ./bsendalign > "$log" 2>&1
  rc=$?
  echo "run $i: exit $rc in $(( $(date +%s) - s )) s: $(tail -n 1 "$log")"
  [ $rc = 124 ] && hung=$((hung + 1))
done
rm -f "$log"
echo "bsendalign: $hung of $n runs hung"
[ $hung -eq 0 ]
