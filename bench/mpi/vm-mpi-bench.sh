#!/usr/bin/env bash
# bench/mpi/vm-mpi-bench.sh - the MPI part of the benchmarks, inside ONE
# Soft-RoCE session (bench/mpi/run-mpi-bench.sh starts it):
#   vm-mpi-bench.sh OUT BINDIR MPICH_DIRECT MPICH_OFF DROPIN_LIBDIR
# Each variant runs BINDIR's mpi_pingpong build for its MPI on 2 ranks:
# ping-pong 8 B .. 4 MiB and MPI_Allreduce (bench/mpi/mpi_pingpong.c),
# then the same binary with rank 0 under callgrind (8 B round trips,
# counter on only inside MPI_Send and MPI_Recv). Variants (a missing
# prefix or binary skips its rows):
#   mpich-direct    MPICH built against the direct install (MPICH_DIRECT)
#   mpich-off       MPICH built against the OFF install (MPICH_OFF), on it
#   mpich-upstream  the same MPICH on Debian's libfabric.so.1 1.17
#                   (LD_LIBRARY_PATH; FI_UNIVERSE_SIZE=16 for rxm on rxe)
#   ompi-dropin     Debian's Open MPI 4.1, pml cm + mtl ofi, over the OFF
#                   build's drop-in libfabric.so.1 (OFF_BUILD)
#   ompi-upstream   Debian's Open MPI 4.1, pml cm + mtl ofi, over Debian's
#                   libfabric 1.17 (FI_UNIVERSE_SIZE=16)
#   ompi-ucx        Debian's Open MPI 4.1, pml ucx, UCX rc_verbs (ud_verbs aux)
# Writes OUT/<variant>.csv, OUT/<variant>.log, OUT/cg-<variant>/ and
# OUT/mpi.csv (all rows, plus "callgrind_sendrecv" and "callgrind_posted"
# rows: user-space instructions per 8 B round trip of rank 0, see
# mpi_pingpong.c).
set -uo pipefail
out=${1:?usage: vm-mpi-bench.sh OUT BINDIR MPICH_DIRECT MPICH_OFF OFF_BUILD}
bindir=$2 md=$3 mo=$4 offb=$5
mkdir -p "$out"
[ -n "$(ls /sys/class/infiniband 2>/dev/null)" ] ||
  { echo "SKIP: no verbs device (run under tests/rxe/run)"; exit 77; }
[ "$(hostname)" = "(none)" ] && hostname fdrxe-vm
cg_n=${MPI_CG_ITERS:-200}
args=(${MPI_BENCH_ARGS:-})
dev=${FD_RXE_DEV0:-rxe0}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fienv=(FI_PROVIDER="verbs;ofi_rxm")
[ -n "${FD_RXE_NETDEV0:-}" ] && fienv+=(FI_VERBS_IFACE="$FD_RXE_NETDEV0")
vg=(valgrind --tool=callgrind --collect-atstart=no -q)

ompi_common=(--allow-run-as-root --oversubscribe --mca btl self
  --mca plm_rsh_agent false --bind-to none)
ompi_dropin=("${ompi_common[@]}" --mca pml cm --mca mtl ofi
  --mca mtl_ofi_provider_include "verbs;ofi_rxm"
  -x FI_PROVIDER="verbs;ofi_rxm" -x LD_LIBRARY_PATH="$offb")
[ -n "${FD_RXE_NETDEV0:-}" ] && ompi_dropin+=(-x FI_VERBS_IFACE="$FD_RXE_NETDEV0")
ompi_upstream=("${ompi_common[@]}" --mca pml cm --mca mtl ofi
  --mca mtl_ofi_provider_include "verbs;ofi_rxm"
  -x FI_PROVIDER="verbs;ofi_rxm" -x FI_UNIVERSE_SIZE=16)
[ -n "${FD_RXE_NETDEV0:-}" ] && ompi_upstream+=(-x FI_VERBS_IFACE="$FD_RXE_NETDEV0")
# UCX on rxe: rc_verbs for the data, ud_verbs only as UCP's auxiliary
# (wire-up) transport, on GID 0 (with the IPv4-mapped GID its UD wire-up
# timed out: "ud_ep.c: unhandled timeout error"; bench/README.md, "UCX,
# how it is run")
ompi_ucx=("${ompi_common[@]}" --mca pml ucx --mca osc ^ucx
  -x UCX_TLS=self,rc_verbs,ud_verbs:aux -x UCX_NET_DEVICES="$dev:1" -x UCX_IB_GID_INDEX=0)

# why a component is or is not selected, in cg-<variant>/run.log
ompi_cgdiag=(OMPI_MCA_pml_base_verbose=10 OMPI_MCA_mtl_base_verbose=10)
# The callgrind runs are MPMD (rank 0 under valgrind : rank 1 bare), and
# mpirun's -x applies to its own application context only: rank 1 ran
# without the variables (on Debian's libfabric without FI_UNIVERSE_SIZE,
# or UCX on the wrong GID), so MPI_Init failed there (sessions 8 and 14:
# "PML cm cannot be selected", UCX's ibv_create_ah with sgid_index 1).
# They go into mpirun's own environment too, which every local rank
# inherits.
xenv() { # launcher words: the VAR=VALUE of each -x
  local prev=
  for w in "$@"; do
    [ "$prev" = -x ] && echo "$w"
    prev=$w
  done
}
mapfile -t ompi_dropin_env < <(xenv "${ompi_dropin[@]}")
mapfile -t ompi_upstream_env < <(xenv "${ompi_upstream[@]}")
mapfile -t ompi_ucx_env < <(xenv "${ompi_ucx[@]}")

binary() { # variant: the mpi_pingpong built with that MPI's mpicc
  case $1 in
  mpich-upstream) echo "$bindir/mpi_pingpong.mpich-off" ;;
  ompi-*) echo "$bindir/mpi_pingpong.ompi" ;;
  *) echo "$bindir/mpi_pingpong.$1" ;;
  esac
}

# MPI_BENCH_VARIANTS=a,b,...: only these variants (default: all);
# MPI_BENCH_ARGS: more mpi_pingpong options (e.g. --iters 200)
want() { case ,${MPI_BENCH_VARIANTS:-$1}, in *,$1,*) return 0 ;; esac; return 1; }

run() { # variant, launcher words...
  local v=$1; shift
  want "$v" || return 0
  # MPI_BENCH_CG_ONLY=1: only the callgrind counts (short sessions)
  [ "${MPI_BENCH_CG_ONLY:-0}" = 1 ] && return 0
  local bin
  bin=$(binary "$v")
  [ -x "$bin" ] || { echo "== $v: no $bin, skipped"; return; }
  echo "== $v: $bin"
  timeout 900 "$@" "$bin" --variant "$v" ${args[@]+"${args[@]}"} \
    > "$out/$v.log" 2>&1
  local rc=$?
  grep '^mpi,' "$out/$v.log" > "$out/$v.csv"
  cat "$out/$v.csv"
  [ $rc -eq 0 ] || { echo "$v: exit $rc"; tail -n 15 "$out/$v.log"; }
}

cg() { # variant, client-launcher..., ':', server-launcher...: rank 0 under callgrind
  local v=$1; shift
  want "$v" || return 0
  local bin
  bin=$(binary "$v")
  [ -x "$bin" ] || return
  local d=$out/cg-$v
  rm -rf "$d"; mkdir -p "$d"
  local cmd=() w
  for w in "$@"; do
    case $w in
    @VG) cmd+=("${vg[@]}" --callgrind-out-file="$d/cg.%p" "$bin" --callgrind "$cg_n" --variant "$v") ;;
    @BIN) cmd+=("$bin" --callgrind "$cg_n" --variant "$v") ;;
    *) cmd+=("$w") ;;
    esac
  done
  echo "== $v under callgrind ($cg_n round trips of 8 B, rank 0)"
  timeout 1200 "${cmd[@]}" > "$d/run.log" 2>&1 || { echo "$v: callgrind run exit $?"; tail -n 15 "$d/run.log"; }
  # rank 0's two phases (mpi_pingpong.c): the dump "sendrecv" (MPI_Send +
  # MPI_Recv with their waiting loops) and the final one ("posted": Irecv
  # + Isend + Waitall with the reply already arrived)
  local f tot kind
  for f in "$d"/cg.*; do
    [ -f "$f" ] || continue
    tot=$(awk '/^(summary|totals):/ {print $2}' "$f" | tail -n 1)
    [ -n "$tot" ] && [ "$tot" -gt 0 ] || continue   # a run that died dumps nothing counted
    if grep -q '^desc: Trigger: .*sendrecv' "$f"; then kind=callgrind_sendrecv
    elif grep -q '^desc: Trigger: Program termination' "$f"; then kind=callgrind_posted
    else continue
    fi
    echo "mpi,$v,$kind,8,$cg_n,$((tot / cg_n))" | tee -a "$out/$v.csv"
  done
}

if [ -x "$md/bin/mpiexec" ]; then
  run mpich-direct env "${fienv[@]}" "$md/bin/mpiexec" -n 2
  cg mpich-direct env "${fienv[@]}" "$md/bin/mpiexec" -n 1 @VG : -n 1 @BIN
fi
if [ -x "$mo/bin/mpiexec" ]; then
  run mpich-off env "${fienv[@]}" "$mo/bin/mpiexec" -n 2
  cg mpich-off env "${fienv[@]}" "$mo/bin/mpiexec" -n 1 @VG : -n 1 @BIN
  up=(env "${fienv[@]}" LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu FI_UNIVERSE_SIZE=16)
  run mpich-upstream "${up[@]}" "$mo/bin/mpiexec" -n 2
  cg mpich-upstream "${up[@]}" "$mo/bin/mpiexec" -n 1 @VG : -n 1 @BIN
fi
if command -v mpirun >/dev/null && [ -e "$offb/libfabric.so.1" ]; then
  run ompi-dropin mpirun "${ompi_dropin[@]}" -np 2
  cg ompi-dropin env "${ompi_cgdiag[@]}" "${ompi_dropin_env[@]}" mpirun "${ompi_dropin[@]}" -np 1 @VG : -np 1 @BIN
fi
if command -v mpirun >/dev/null; then
  run ompi-ucx mpirun "${ompi_ucx[@]}" -np 2
  cg ompi-ucx env "${ompi_cgdiag[@]}" "${ompi_ucx_env[@]}" mpirun "${ompi_ucx[@]}" -np 1 @VG : -np 1 @BIN
  run ompi-upstream mpirun "${ompi_upstream[@]}" -np 2
  cg ompi-upstream env "${ompi_cgdiag[@]}" "${ompi_upstream_env[@]}" mpirun "${ompi_upstream[@]}" -np 1 @VG : -np 1 @BIN
fi
rm -f "$out/mpi.csv"
cat "$out"/*.csv > "$out/all.tmp" 2>/dev/null
mv "$out/all.tmp" "$out/mpi.csv"
echo "vm-mpi-bench: rows in $out/mpi.csv"
