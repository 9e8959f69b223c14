#!/usr/bin/env bash
# Debian's Open MPI over an RDM libfabric: mpi_rdm on 4 ranks with the OFI
# transport (--mca pml cm --mca mtl ofi) and the provider "verbs;ofi_rxm".
#   mpi_rdm.sh LIBDIR MPI_RDM_BINARY
# LIBDIR holds the libfabric.so.1 to run over (this build's drop-in), or is
# "system" for Debian's own (to check the test itself on upstream; its rxm
# needs FI_UNIVERSE_SIZE small on rxe, issue 14). The log must show the
# provider Open MPI picked and that rank 0 mapped LIBDIR's library.
# Exit 77 only when there is no verbs device.
set -uo pipefail
libdir=${1:?usage: mpi_rdm.sh LIBDIR|system MPI_RDM_BINARY}
bin=${2:?usage: mpi_rdm.sh LIBDIR|system MPI_RDM_BINARY}
[ -x "$bin" ] || { echo "FAIL: no $bin"; exit 1; }
. "$(dirname "$0")/mpi_env.sh"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

timeout 300 mpirun "${mpi_opts[@]}" -np 4 --mca mtl_base_verbose 100 \
  "${envs[@]}" "$bin" >"$log" 2>&1
rc=$?
cat "$log"
[ $rc -eq 0 ] || { echo "FAIL: mpirun exit $rc"; exit 1; }
grep -q "mpi_rdm: all checks passed on 4 ranks" "$log" || { echo "FAIL: no success line"; exit 1; }
grep -q "rank 0 mapped: $want_lib" "$log" ||
  { echo "FAIL: rank 0 did not run over $want_lib"; exit 1; }
# mtl_ofi_provider_include admits only "verbs;ofi_rxm"; the verbose log
# shows the ofi mtl selected and the domain of that provider it opened
grep -E "component ofi selected|mtl:ofi:provider:" "$log" | sort | uniq -c | head -4
[ "$(grep -c "select: component ofi selected" "$log")" -ge 4 ] ||
  { echo "FAIL: the ofi mtl was not selected on every rank"; exit 1; }
grep -q "mtl:ofi:provider: ${FD_RXE_DEV0:-rxe}" "$log" ||
  { echo "FAIL: the log does not show the verbs;ofi_rxm domain opened"; exit 1; }
echo "PASS: Open MPI (pml cm, mtl ofi) over verbs;ofi_rxm from $want_lib"
