#!/usr/bin/env bash
# Install what building and testing fabric-direct needs on Debian 12, when
# missing. Root (or sudo) is needed only if something has to be installed.
# The Soft-RoCE harness (tests/rxe/run) installs its own VM tooling.
set -euo pipefail

pkgs=(
  cmake make gcc g++ clang python3 pkg-config
  # clang's sanitizer and libFuzzer runtimes (gcc's come with gcc)
  libclang-rt-dev
  # the rdma tool: fault tests count QPs, MRs, CQs and cm_ids with it
  iproute2
  libibverbs-dev librdmacm-dev ibverbs-providers rdma-core
  ibverbs-utils rdmacm-utils
  # the reference for header conformance and wire-interop tests
  libfabric-dev libfabric-bin
  # real RDM consumer (tests/consumers): Open MPI's mtl ofi over the drop-in
  openmpi-bin libopenmpi-dev
  # benchmarks: reference tools and the instruction counter
  perftest valgrind gnuplot-nox
  # UCX beside us in the benchmarks (ucx_perftest; pulls in libucx0)
  ucx-utils
  # MPICH 4.0.2 from Debian's source package, built against this library
  # (scripts/build-mpich.sh, tests/mpich): apt-get source unpacks with
  # dpkg-source; of mpich's build dependencies only hwloc is needed by the
  # lean configure used here (no Fortran, no docs, no ROMIO)
  dpkg-dev libhwloc-dev time
  # upstream fabtests from the same source package (tests/fabtests): its
  # tarball there has no configure, autogen.sh makes one
  autoconf automake libtool
)
[ "${FD_DEPS_EXTRA:-}" ] && pkgs+=(${FD_DEPS_EXTRA})

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

# Source packages (apt-get source mpich) for the suites the machine already
# uses: a deb-src twin of each deb entry, once.
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
   ! grep -qs '^deb-src' /etc/apt/sources.list; then
  echo "install-deps: enabling Debian source packages (deb-src) for the configured suites"
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
      $SUDO tee /etc/apt/sources.list.d/fabric-direct-deb-src.sources >/dev/null
  else
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list |
      $SUDO tee /etc/apt/sources.list.d/fabric-direct-deb-src.list >/dev/null
  fi
  $SUDO apt-get update -qq
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
