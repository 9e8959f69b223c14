#!/usr/bin/env bash
# Debian's Open MPI over an RDM libfabric, the programs that hung over this
# library (issue 21; mpi_defects.c says what each checks), on 4 ranks with
# pml cm, mtl ofi and "verbs;ofi_rxm", in the mtl's tag layouts:
#   auto (ofi_tag_full here: source rank in remote CQ data): MPI_Ssend /
#     MPI_Issend at every tag, MPI_Intercomm_create + messages and
#     MPI_Allreduce over it + MPI_Intercomm_merge;
#   ofi_tag_1 (source rank in the match bits): the intercommunicator part.
# Synchronous sends in ofi_tag_1/ofi_tag_2 are left out: Open MPI 4.1
# posts the acknowledgement's receive with src_addr 0 in those layouts (it
# reads the source from the tag there, yet asks for FI_DIRECTED_RECV), so
# any provider that honours FI_DIRECTED_RECV waits for an acknowledgement
# from the process at fi_addr_t 0: rank 0's MPI_Ssend to rank 1 hangs on
# Debian's libfabric 1.17 exactly as here (docs/dropin.md, "Open MPI").
#   mpi_defects.sh LIBDIR|system MPI_DEFECTS_BINARY
# Exit 77 only when there is no verbs device.
set -uo pipefail
libdir=${1:?usage: mpi_defects.sh LIBDIR|system MPI_DEFECTS_BINARY}
bin=${2:?usage: mpi_defects.sh LIBDIR|system MPI_DEFECTS_BINARY}
[ -x "$bin" ] || { echo "FAIL: no $bin"; exit 1; }
. "$(dirname "$0")/mpi_env.sh"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

status=0
for run in "auto all" "ofi_tag_1 intercomm"; do
  set -- $run
  timeout 240 mpirun "${mpi_opts[@]}" -np 4 --mca mtl_ofi_tag_mode "$1" \
    "${envs[@]}" "$bin" "$2" >"$log" 2>&1
  rc=$?
  sed "s/^/[$1 $2] /" "$log"
  if [ $rc -ne 0 ]; then
    echo "FAIL: tag mode $1, $2: mpirun exit $rc$([ $rc -eq 124 ] && echo ' (timeout: hung)')"
    status=1
  elif ! grep -q "mpi_defects: all checks passed on 4 ranks" "$log"; then
    echo "FAIL: tag mode $1, $2: no success line"
    status=1
  elif ! grep -q "rank 0 mapped: $want_lib" "$log"; then
    echo "FAIL: tag mode $1, $2: rank 0 did not run over $want_lib"
    status=1
  else
    echo "ok: tag mode $1, $2"
  fi
done
[ $status -eq 0 ] && echo "PASS: Open MPI intercommunicators and synchronous sends over $want_lib"
exit $status
