#!/usr/bin/env bash
# MPICH's own test suite (test/mpi of the source, its runtests driver and
# the mpiexec of the same build) on an MPICH built by
# scripts/build-mpich.sh, inside the Soft-RoCE harness:
#   tests/rxe/run -- tests/mpich/run-mpich-tests.sh [--list FILE] MPICH_PREFIX [DIR...]
# (The VM must see the MPICH source the build came from, for the
# testlists: scripts/build-mpich.sh keeps it beside the prefix; elsewhere
# give it to the harness with FD_RXE_SHARE=DIR.)
# DIRs: test/mpi subdirectories whose programs were built
# (make -C MPICH_PREFIX.build/test/mpi/DIR); default: the list in
# tests/mpich/dirs. At most 4 ranks per test (-maxnp=4: tests asking for
# more run with 4). --list FILE runs only the tests FILE names, one a line
# as "DIR/PROGRAM NP [key=value...]" (a directory's testlist line with the
# directory in front; tests/mpich/ci-tests is CI's list), in the order
# given; DIRs are then the directories FILE mentions. Prints runtests'
# summary per directory and writes its TAP output to $FD_MPICH_OUT
# (default /tmp/mpich-tests).
set -uo pipefail
list=
[ "${1:-}" = --list ] && { list=$(cd "$(dirname "$2")" && pwd -P)/$(basename "$2"); shift 2; }
prefix=${1:?usage: run-mpich-tests.sh [--list FILE] MPICH_PREFIX [DIR...]}
prefix=$(cd "$prefix" && pwd)   # absolute: runtests runs in the test directory
shift
here=$(cd "$(dirname "$0")" && pwd -P)
if [ -n "$list" ]; then
  [ $# -gt 0 ] || set -- $(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's|/.*||' "$list" | awk '!seen[$0]++')
else
  [ $# -gt 0 ] || set -- $(grep -v '^#' "$here/dirs")
fi
tdir=$prefix.build/test/mpi
[ -x "$tdir/runtests" ] || { echo "FAIL: no $tdir/runtests"; exit 1; }
src=$(sed -n 's/^abs_srcdir = //p' "$tdir/Makefile")   # the testlists are there
[ -n "$(ls /sys/class/infiniband 2>/dev/null)" ] ||
  { echo "SKIP: no verbs device (run under tests/rxe/run)"; exit 77; }
out=${FD_MPICH_OUT:-/tmp/mpich-tests}
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
tests=testlist
if [ -n "$list" ]; then
  # one testlist per directory, outside the (possibly read-only) build
  # tree: runtests takes an existing path as it is
  mkdir -p "$out/lists"
  for d in "$@"; do
    sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list" | sed -n "s|^$d/||p" > "$out/lists/$d"
  done
fi
[ "$(hostname)" = "(none)" ] && hostname fdrxe-vm
export FI_PROVIDER="verbs;ofi_rxm"
# FD_MPICH_LIBFABRIC=system: the upstream control, an MPICH built against
# the OFF install run on Debian's libfabric.so.1 (LD_LIBRARY_PATH comes
# before libmpi's RUNPATH); its rxm needs a small universe on rxe (issue 14)
if [ "${FD_MPICH_LIBFABRIC:-}" = system ]; then
  export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu FI_UNIVERSE_SIZE=${FI_UNIVERSE_SIZE:-16}
  echo "run-mpich-tests: on Debian's libfabric ($(readlink -f /usr/lib/x86_64-linux-gnu/libfabric.so.1))"
fi
[ -n "${FD_RXE_NETDEV0:-}" ] && export FI_VERBS_IFACE=$FD_RXE_NETDEV0
export MPITEST_TIMEOUT_MULTIPLIER=${MPITEST_TIMEOUT_MULTIPLIER:-1.0}
status=0
for d in "$@"; do
  [ -n "$list" ] && tests=$out/lists/$d
  (cd "$tdir" && ./runtests -srcdir="$src" -tests="$tests" -testdirs="$d" -maxnp=4 \
     -mpiexec="$prefix/bin/mpiexec" -tapfile="$out/$d.tap" > "$out/$d.log" 2>&1)
  rc=$?
  pass=$(grep -c '^ok ' "$out/$d.tap" 2>/dev/null)
  fail=$(grep -c '^not ok ' "$out/$d.tap" 2>/dev/null)
  skip=$(grep -c '^ok .*# SKIP' "$out/$d.tap" 2>/dev/null)
  echo "$d: $((pass - skip)) passed, $fail failed, $skip skipped (runtests exit $rc)"
  grep '^not ok ' "$out/$d.tap" | sed "s|^|  $d: |"
  if [ -n "$list" ] && [ $((pass - skip)) -ne "$(wc -l < "$out/lists/$d")" ]; then
    echo "  $d: $(wc -l < "$out/lists/$d") tests listed, $((pass - skip)) passed"
    status=1
  fi
  if [ "$fail" -ne 0 ] || [ "$pass" -eq 0 ]; then
    status=1
    [ "$pass" -eq 0 ] && tail -n 20 "$out/$d.log"
  fi
done
exit $status
