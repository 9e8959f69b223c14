#!/usr/bin/env bash
# CI's fabtests stage (tests/run-all.sh, after the MPICH stage): upstream
# fabtests, unmodified, built from Debian's mpich source package (the
# MPICH stage has fetched it; fetched here when not) against Debian's
# libfabric-dev, then the lines of tests/fabtests/ci-list run in one VM
# boot on this build's drop-in libfabric.so.1. A skipped run (no device)
# fails.
#
#   tests/fabtests/ci.sh BUILD_OFF [WORK]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
root=$(cd "$here/../.." && pwd -P)
bd=$(cd "${1:?usage: tests/fabtests/ci.sh BUILD_OFF [WORK]}" && pwd -P)
work=${2:-$root/build/fabtests}
src=${FD_MPICH_SRC:-$root/build/mpich/src/mpich-4.0.2}
[ -e "$bd/libfabric/libfabric.so.1" ] || { echo "FAIL: no drop-in in $bd/libfabric"; exit 1; }
if [ ! -d "$src/modules/libfabric/fabtests" ]; then
  mkdir -p "$(dirname "$src")"
  (cd "$(dirname "$src")" &&
   { apt-get source -qq mpich=4.0.2-3 >/dev/null 2>&1 || apt-get source -qq mpich >/dev/null; })
fi
"$here/build.sh" "$src" "$work"
rc=0
"$root/tests/rxe/run" --timeout "${FD_FABTESTS_VM_TIMEOUT:-1200}" -- \
  "$here/run.sh" "$work/inst/bin" "$bd/libfabric" "$here/ci-list" || rc=$?
if [ $rc -ne 0 ]; then
  [ $rc -eq 77 ] && echo "FAIL: the fabtests were skipped (no verbs device)"
  exit 1
fi
