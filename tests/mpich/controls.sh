#!/usr/bin/env bash
# The controls for MPICH's tests, in ONE Soft-RoCE VM boot: the same test
# list on
#   direct    MPICH built against the direct install (MPICH_DIRECT)
#   off       MPICH built against the OFF install, on its drop-in
#             libfabric.so.1 (MPICH_OFF; libmpi's RUNPATH)
#   upstream  the same MPICH_OFF on Debian's libfabric.so.1 1.17
#             (LD_LIBRARY_PATH, FI_UNIVERSE_SIZE=16 for rxm on rxe)
#
#   tests/rxe/run --timeout 7200 -- tests/mpich/controls.sh OUT LIST MPICH_DIRECT MPICH_OFF
#
# (Both built by scripts/build-mpich.sh, their test programs by
# tests/mpich/build-tests.sh.) Results per variant in
# OUT/<variant>/ (TAP per directory) and a per-test table OUT/controls.txt
# (tests/mpich/controls-table.py; --md for README.md): test, then per
# variant ok/FAIL and the test's time. A variant whose prefix is "-" is
# left out. Relative paths are fine (run-mpich-tests.sh makes them
# absolute). Exit 0 when the table was written. At host load 11-16 the
# three variants took 35, ~28 and more than 25 minutes: give the harness
# --timeout 7200 or more on a loaded machine.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
out=${1:?usage: controls.sh OUT LIST MPICH_DIRECT MPICH_OFF}
list=$2 md=$3 mo=$4
mkdir -p "$out"
variants=()
if [ "$md" != - ]; then
  variants+=(direct)
  echo "=== direct: $md"
  FD_MPICH_OUT=$out/direct "$here/run-mpich-tests.sh" --list "$list" "$md"
fi
if [ "$mo" != - ]; then
  variants+=(off upstream)
  echo "=== off: $mo on the drop-in"
  FD_MPICH_OUT=$out/off "$here/run-mpich-tests.sh" --list "$list" "$mo"
  echo "=== upstream: $mo on Debian's libfabric"
  FD_MPICH_OUT=$out/upstream FD_MPICH_LIBFABRIC=system "$here/run-mpich-tests.sh" --list "$list" "$mo"
fi
python3 "$here/controls-table.py" "$out" "${variants[@]}" | tee "$out/controls.txt"
