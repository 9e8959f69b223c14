#!/usr/bin/env bash
# One MPICH job with ranks in both VMs of tests/rxe/run2 (issue 22): rank 0
# in VM0, rank 1 in VM1, every message over the emulated cable. The job
# (tests/mpich/two-vm/mpi_twovm.c) ping-pongs 8 B .. 1 MiB and runs
# MPI_Allreduce with every byte checked, then pulls the cable in the middle
# of an exchange; the job must end with an error in bounded time.
#
#   tests/mpich/two-vm.sh MPICH_PREFIX [OUT]
#
# MPICH_PREFIX: an MPICH built by scripts/build-mpich.sh (CI reuses the
# lean direct one of tests/mpich/ci.sh). OUT (default MPICH_PREFIX.twovm)
# gets the test program. Passes when phases 1-2 checked every byte, then
# after the cut rank 0 reported an MPI error and mpiexec ended the job
# with a non-zero status within FD_TWOVM_ERROR_S (60) s of the cut; a job
# still running FD_TWOVM_JOB_S (300) s after its start is a hang (fail).
#
# Launching: there is no ssh between the VMs. mpiexec (VM0) uses hydra's
# ssh launcher with -launcher-exec two-vm/launch.sh, which hands the proxy
# command line through the rendezvous directory to this script's agent in
# VM1 (--agent); the proxy then connects back to mpiexec over TCP on the
# same cable. The hostnames are set to fdvm0 / fdvm1 (both VMs start
# as "(none)", which MPICH would take for one node).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
root=$(cd "$here/../.." && pwd -P)

if [ "${1:-}" = --guest ]; then
  mp=$2 bin=$3
  hostname "fdvm$FD_RXE_VM"
  q=$FD_RXE_RDV/launch
  mkdir -p "$q"
  if [ "$FD_RXE_VM" = 1 ]; then
    # the agent: run what launch.sh hands over until VM0 says done
    declare -A started=()
    deadline=$(( $(date +%s) + ${FD_TWOVM_JOB_S:-300} + 180 ))
    touch "$FD_RXE_RDV/agent-ready"
    while [ ! -f "$FD_RXE_RDV/done" ] && [ "$(date +%s)" -lt "$deadline" ]; do
      for c in "$q"/*.cmd; do
        [ -f "$c" ] || continue
        n=${c%.cmd}
        [ -n "${started[$n]:-}" ] && continue
        started[$n]=1
        echo "agent: running proxy $(basename "$n")"
        ( sh -c "$(cat "$c")" > "$n.out" 2>&1; echo $? > "$n.rc.tmp"; mv "$n.rc.tmp" "$n.rc" ) &
      done
      sleep 0.2
    done
    # whatever is left of the job here once mpiexec is gone
    kill $(jobs -p) 2> /dev/null
    wait
    [ -f "$FD_RXE_RDV/done" ] || { echo "agent: VM0 never said done"; exit 1; }
    exit 0
  fi
  # VM0: mpiexec
  export FI_PROVIDER="verbs;ofi_rxm" FI_VERBS_IFACE=$FD_RXE_NETDEV0
  # VM1's agent must be up before the job starts (both VMs boot at once)
  for _ in $(seq 600); do [ -f "$FD_RXE_RDV/agent-ready" ] && break; sleep 0.2; done
  [ -f "$FD_RXE_RDV/agent-ready" ] || { echo "FAIL: VM1's agent did not start"; touch "$FD_RXE_RDV/done"; exit 1; }
  t0=$(date +%s)
  timeout -k 10 "${FD_TWOVM_JOB_S:-300}" "$mp/bin/mpiexec" -launcher ssh \
    -launcher-exec "$here/two-vm/launch.sh" \
    -hosts "$FD_RXE_ADDR0:1,$FD_RXE_PEER:1" -n 2 "$bin" "$FD_RXE_RDV" 2>&1 |
    tee "$FD_RXE_RDV/job.log"
  rc=${PIPESTATUS[0]}
  tend=$(date +%s.%N)
  # put the cable back if the job ended with it out
  if [ "$(cat "$FD_RXE_RDV/link-done" 2>/dev/null)" = off ]; then
    echo on > "$FD_RXE_RDV/link-request"
    for _ in $(seq 100); do [ "$(cat "$FD_RXE_RDV/link-done")" = on ] && break; sleep 0.1; done
  fi
  touch "$FD_RXE_RDV/done"
  echo "two-vm: mpiexec exit $rc after $(( $(date +%s) - t0 )) s"
  fail=0
  grep -q 'ping-pong .* checked' "$FD_RXE_RDV/job.log" &&
    grep -q 'allreduces .* checked' "$FD_RXE_RDV/job.log" ||
    { echo "FAIL: the checked phases before the cut did not complete"; fail=1; }
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "FAIL: the job did not end within ${FD_TWOVM_JOB_S:-300} s (hang)"; fail=1
  elif [ "$rc" = 0 ]; then
    echo "FAIL: the job ended without an error although the cable was cut"; fail=1
  fi
  if [ -f "$FD_RXE_RDV/cut" ]; then
    s=$(awk -v a="$(cat "$FD_RXE_RDV/cut")" -v b="$tend" 'BEGIN {printf "%.1f", b - a}')
    echo "two-vm: the job ended $s s after the cut"
    awk -v s="$s" -v m="${FD_TWOVM_ERROR_S:-60}" 'BEGIN {exit !(s <= m)}' ||
      { echo "FAIL: more than ${FD_TWOVM_ERROR_S:-60} s from the cut to the end of the job"; fail=1; }
  else
    echo "FAIL: the cable was never cut"; fail=1
  fi
  # the error itself: MPICH's abort message (its CQ errors are fatal) or,
  # with an MPI that returns errors, the program's own report
  err=$(grep -E 'rank 0: MPI error|rank 0 in comm.*Fatal error' "$FD_RXE_RDV/job.log" | head -n 1)
  [ -n "$err" ] || { echo "FAIL: no MPI error from rank 0 after the cut"; fail=1; }
  grep -E 'handle_cq_error|MPI error [0-9.]+ s after' "$FD_RXE_RDV/job.log" | sed 's/^/two-vm: error: /'
  [ $fail = 0 ] && echo "two-vm: PASS (data checked over the wire; the cut ended the job with an error $s s later)"
  exit $fail
fi

mp=$(cd "${1:?usage: tests/mpich/two-vm.sh MPICH_PREFIX [OUT]}" && pwd -P)
out=${2:-$mp.twovm}
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
"$mp/bin/mpicc" -O2 -Wall -Wextra -Werror -o "$out/mpi_twovm" "$here/two-vm/mpi_twovm.c" || exit 1
# (the VMs see the whole host read-only; only the rendezvous directory is
# written, and run2 shares that)
exec "$root/tests/rxe/run2" --timeout "${FD_TWOVM_TIMEOUT:-600}" -- \
  "$0" --guest "$mp" "$out/mpi_twovm" ::: "$0" --guest "$mp" "$out/mpi_twovm"
