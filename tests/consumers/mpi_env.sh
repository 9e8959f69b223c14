# Sourced by the Open MPI consumer scripts (mpi_rdm.sh, mpi_defects.sh):
# checks for a device and mpirun, and sets
#   envs      mpirun -x arguments: the provider, the library (LIBDIR's
#             libfabric.so.1 or, for "system", Debian's with a small
#             FI_UNIVERSE_SIZE as its rxm needs on rxe), the netdev
#   want_lib  the libfabric.so the ranks must map
#   mpi_opts  pml cm + mtl ofi with verbs;ofi_rxm only, no other transport
# from $libdir (LIBDIR or "system"). Exit 77 only when there is no device.
[ -n "${FD_RXE_ADDR0:-}" ] && [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ] ||
  { echo "SKIP: no verbs device (run under tests/rxe/run)"; exit 77; }
command -v mpirun >/dev/null || { echo "FAIL: no mpirun (apt-get install openmpi-bin)"; exit 1; }

envs=(-x FI_PROVIDER="verbs;ofi_rxm")
if [ "$libdir" = system ]; then
  envs+=(-x FI_UNIVERSE_SIZE="${FI_UNIVERSE_SIZE:-16}")
  want_lib=/usr/lib/x86_64-linux-gnu/libfabric.so.1
else
  libdir=$(cd "$libdir" && pwd -P)
  [ -e "$libdir/libfabric.so.1" ] || { echo "FAIL: no $libdir/libfabric.so.1"; exit 1; }
  envs+=(-x LD_LIBRARY_PATH="$libdir")
  want_lib=$libdir/libfabric.so
fi
[ -n "${FD_RXE_DEV0:-}" ] && envs+=(-x FI_VERBS_IFACE="${FD_RXE_NETDEV0:-}")

# Open MPI needs a host name; the test VM has none ("(none)")
if [ "${FD_RXE_MODE:-}" = vm ] && [ "$(hostname)" = "(none)" ]; then
  hostname fdrxe-vm
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# no ssh, no shared memory or TCP BTLs for MPI traffic: pml cm carries
# every point-to-point message through the mtl, i.e. libfabric
mpi_opts=(--allow-run-as-root --oversubscribe
  --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "verbs;ofi_rxm"
  --mca btl self --mca plm_rsh_agent false --bind-to none)
