#!/usr/bin/env bash
# MPICH's own test suite (test/mpi of the source, its runtests driver and
# the mpiexec of the same build) on an MPICH built by
# scripts/build-mpich.sh, inside the Soft-RoCE harness:
#   tests/rxe/run -- tests/mpich/run-mpich-tests.sh MPICH_PREFIX [DIR...]
# (The VM must see the MPICH source the build came from, for the
# testlists: scripts/build-mpich.sh keeps it beside the prefix; elsewhere
# give it to the harness with FD_RXE_SHARE=DIR.)
# DIRs: test/mpi subdirectories whose programs were built
# (make -C MPICH_PREFIX.build/test/mpi/DIR); default: the list in
# tests/mpich/dirs. At most 4 ranks per test (-maxnp=4: tests asking for
# more are not run). Prints runtests' summary per directory and writes
# its TAP output to $FD_MPICH_OUT (default /tmp/mpich-tests).
set -uo pipefail
prefix=${1:?usage: run-mpich-tests.sh MPICH_PREFIX [DIR...]}
shift
here=$(cd "$(dirname "$0")" && pwd -P)
[ $# -gt 0 ] || set -- $(grep -v '^#' "$here/dirs")
tdir=$prefix.build/test/mpi
[ -x "$tdir/runtests" ] || { echo "FAIL: no $tdir/runtests"; exit 1; }
src=$(sed -n 's/^abs_srcdir = //p' "$tdir/Makefile")   # the testlists are there
[ -n "$(ls /sys/class/infiniband 2>/dev/null)" ] ||
  { echo "SKIP: no verbs device (run under tests/rxe/run)"; exit 77; }
out=${FD_MPICH_OUT:-/tmp/mpich-tests}
mkdir -p "$out"
[ "$(hostname)" = "(none)" ] && hostname fdrxe-vm
export FI_PROVIDER="verbs;ofi_rxm"
[ -n "${FD_RXE_NETDEV0:-}" ] && export FI_VERBS_IFACE=$FD_RXE_NETDEV0
export MPITEST_TIMEOUT_MULTIPLIER=${MPITEST_TIMEOUT_MULTIPLIER:-1.0}
status=0
for d in "$@"; do
  (cd "$tdir" && ./runtests -srcdir="$src" -tests=testlist -testdirs="$d" -maxnp=4 \
     -mpiexec="$prefix/bin/mpiexec" -tapfile="$out/$d.tap" > "$out/$d.log" 2>&1)
  rc=$?
  pass=$(grep -c '^ok ' "$out/$d.tap" 2>/dev/null)
  fail=$(grep -c '^not ok ' "$out/$d.tap" 2>/dev/null)
  skip=$(grep -c '^ok .*# SKIP' "$out/$d.tap" 2>/dev/null)
  echo "$d: $((pass - skip)) passed, $fail failed, $skip skipped (runtests exit $rc)"
  grep '^not ok ' "$out/$d.tap" | sed "s|^|  $d: |"
  if [ "$fail" -ne 0 ] || [ "$pass" -eq 0 ]; then
    status=1
    [ "$pass" -eq 0 ] && tail -n 20 "$out/$d.log"
  fi
done
exit $status
