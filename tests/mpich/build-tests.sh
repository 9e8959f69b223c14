#!/usr/bin/env bash
# Build MPICH's test programs named in a test list (tests/mpich/ci-tests
# format: DIR/PROGRAM NP ...) in an MPICH build made by
# scripts/build-mpich.sh, and its test utility library:
#   tests/mpich/build-tests.sh MPICH_PREFIX LIST
set -euo pipefail
prefix=${1:?usage: build-tests.sh MPICH_PREFIX LIST}
list=${2:?usage: build-tests.sh MPICH_PREFIX LIST}
tdir=$prefix.build/test/mpi
[ -f "$tdir/Makefile" ] || { echo "build-tests: no $tdir/Makefile"; exit 1; }
make -s -C "$tdir/util"
clean() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list"; }
for d in $(clean | sed 's|/.*||' | awk '!seen[$0]++'); do
  progs=$(clean | sed -n "s|^$d/||p" | awk '{print $1}' | sort -u)
  make -s -C "$tdir/$d" -j"$(nproc)" $progs
done
