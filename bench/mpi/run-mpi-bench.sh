#!/usr/bin/env bash
# bench/mpi/run-mpi-bench.sh - the MPI benchmark (issue 22): MPICH on the
# direct build, MPICH on the OFF build, the same MPICH on Debian's
# libfabric 1.17, Open MPI 4.1 over this library's drop-in (pml cm, mtl
# ofi) and over UCX (pml ucx, rc_v), side by side in one Soft-RoCE
# session. bench/run-all.sh --parts mpi runs it (not a default part: it
# builds MPICH twice).
#
#   bench/mpi/run-mpi-bench.sh OUT [MPICH_DIRECT MPICH_OFF DROPIN_LIBDIR]
#
# Without the prefixes it builds what it needs under build/mpich-bench:
# the installs of build/bench-direct and build/bench-off (bench/run-all.sh
# builds those) and MPICH 4.0.2 against each (scripts/build-mpich.sh,
# -O2, kept while nothing changes; about 20 minutes each on 2 cores).
# Writes OUT/mpi.csv, OUT/mpi.json, OUT/mpi-latency.png and prints the
# table with the targets met or missed (bench/mpi/report.py), then where
# each variant's instructions go (OUT/mpi-split.csv, bench/mpi/cg-split.py).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
out=${1:?usage: run-mpi-bench.sh OUT [MPICH_DIRECT MPICH_OFF DROPIN_LIBDIR]}
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
if [ $# -ge 4 ]; then
  md=$(cd "$2" && pwd -P) mo=$(cd "$3" && pwd -P) offb=$(cd "$4" && pwd -P)
else
  w=$repo/build/mpich-bench
  mkdir -p "$w"
  for v in direct off; do
    [ -d "$repo/build/bench-$v" ] || { echo "run-mpi-bench: no build/bench-$v (bench/run-all.sh builds it)"; exit 1; }
    # everything the install needs (bench/run-all.sh builds only its programs)
    cmake --build "$repo/build/bench-$v" -j"$(nproc)" > "$w/fd-$v.build.log" 2>&1 ||
      { tail -n 20 "$w/fd-$v.build.log"; exit 1; }
    rm -rf "$w/fd-$v"
    cmake --install "$repo/build/bench-$v" --prefix "$w/fd-$v" > /dev/null
    nice -n 10 "$repo/scripts/build-mpich.sh" "$w/fd-$v" "$w/mpich-$v" "$w/src"
  done
  md=$w/mpich-direct mo=$w/mpich-off offb=$w/fd-off/lib
fi
bindir=$out/bin
mkdir -p "$bindir"
"$md/bin/mpicc" -O2 -o "$bindir/mpi_pingpong.mpich-direct" "$here/mpi_pingpong.c"
"$mo/bin/mpicc" -O2 -o "$bindir/mpi_pingpong.mpich-off" "$here/mpi_pingpong.c"
if command -v mpicc.openmpi > /dev/null; then
  mpicc.openmpi -O2 -o "$bindir/mpi_pingpong.ompi" "$here/mpi_pingpong.c"
fi
case $out/ in
"$repo"/*) ;;
*) export FD_RXE_SHARE=${FD_RXE_SHARE:+$FD_RXE_SHARE:}$out ;;
esac
for p in "$md" "$mo"; do
  case $p/ in "$repo"/*) ;; *) export FD_RXE_SHARE=${FD_RXE_SHARE:+$FD_RXE_SHARE:}$p ;; esac
done
"$repo/tests/rxe/run" --timeout 3600 -- "$here/vm-mpi-bench.sh" "$out" "$bindir" "$md" "$mo" "$offb"
python3 "$here/report.py" "$out"
python3 "$here/cg-split.py" "$out"
