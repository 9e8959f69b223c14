#!/usr/bin/env bash
# Build MPICH 4.0.2 from Debian 12's source package against an installed
# fabric-direct (cmake --install BUILD --prefix FD_PREFIX), with its ch4:ofi
# netmod fixed to the "verbs;ofi_rxm" capability set. With a direct
# install (FABRIC_DIRECT defined by rdma/fabric_direct_config.h), every
# fi_tsend / fi_trecv / fi_cq_read / fi_write in MPICH's headers compiles
# into this library's inline code.
#
#   scripts/build-mpich.sh [--lean] FD_PREFIX OUT_PREFIX [WORK_DIR]
#
# WORK_DIR (default OUT_PREFIX.src, where the Soft-RoCE VM sees it: the
# test suite reads its testlists from the source) keeps the unpacked
# source between runs; the build itself is done in OUT_PREFIX.build.
# Options chosen for a short build on 2 cores: no Fortran, no C++
# bindings, no ROMIO, the dataloop datatype engine (yaksa would compile
# thousands of generated files), no shared-memory module (every message
# between ranks, on one host too, goes through libfabric: the point of the
# exercise), no debug checks, shared library only (libtool would compile
# every file a second time, without -fPIC, for libmpi.a).
# --lean is CI's test-only build: -O0 -g0, no dependency tracking, no
# compiler-flag probing in configure. The data path is still compiled from
# this library's headers (inline functions; at -O0 gcc emits those it
# uses as local functions of libmpi, so tests/mpich/ci.sh's check of
# libmpi's undefined symbols applies to it too).
# A build whose inputs (this script's configure line, the FD_PREFIX
# tree, the source) have not changed since the last one is kept: the
# stamp is OUT_PREFIX/.fd-build-stamp.
# CPU time (user+sys, from /usr/bin/time) of configure, make and install
# goes to OUT_PREFIX.build/time.log. Needs root for apt-get when something
# is missing (deb-src entries for the suites the machine already uses; see
# scripts/install-deps.sh).
set -euo pipefail
lean=0
[ "${1:-}" = --lean ] && { lean=1; shift; }
fd=${1:?usage: build-mpich.sh [--lean] FD_PREFIX OUT_PREFIX [WORK_DIR]}
out=${2:?usage: build-mpich.sh [--lean] FD_PREFIX OUT_PREFIX [WORK_DIR]}
work=${3:-$2.src}
fd=$(cd "$fd" && pwd -P)
mkdir -p "$out" "$work"
out=$(cd "$out" && pwd -P)
work=$(cd "$work" && pwd -P)
t0=$(date +%s)

need=()
for p in dpkg-dev libhwloc-dev pkg-config make gcc time; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
src=$(ls -d "$work"/mpich-4.0.2 2>/dev/null || true)
if [ ${#need[@]} -gt 0 ] || [ -z "$src" ]; then
  export DEBIAN_FRONTEND=noninteractive
  SUDO=
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  if [ -z "$src" ] && ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
     ! grep -qs '^deb-src' /etc/apt/sources.list; then
    # the machine's own suites, as source too
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
        $SUDO tee /etc/apt/sources.list.d/fabric-direct-deb-src.sources >/dev/null
    else
      sed -n 's/^deb /deb-src /p' /etc/apt/sources.list |
        $SUDO tee /etc/apt/sources.list.d/fabric-direct-deb-src.list >/dev/null
    fi
  fi
  $SUDO apt-get update -qq
  [ ${#need[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  if [ -z "$src" ]; then
    (cd "$work" && apt-get source -qq mpich=4.0.2-3 >/dev/null 2>&1 || apt-get source -qq mpich >/dev/null)
    src=$(ls -d "$work"/mpich-4.0.2)
  fi
fi

cfg=(--prefix="$out"
  --with-device="ch4:ofi:verbs;ofi_rxm" --with-libfabric="$fd"
  --with-ch4-shmmods=none
  --disable-fortran --disable-cxx --enable-romio=no
  --with-hwloc=/usr --with-datatype-engine=dataloop
  --enable-g=none --disable-doc --disable-static)
if [ $lean = 1 ]; then
  cfg+=(--enable-fast=O0 --disable-dependency-tracking --disable-check-compiler-flags
    CFLAGS=-g0)
else
  cfg+=(--enable-fast=O2)
fi
cfg+=(LDFLAGS="-Wl,-rpath,$fd/lib")

stamp=$( { printf '%s\n' "${cfg[@]}" "$src"; sha256sum "$0";
  (cd "$fd" && find . -type f -print0 | sort -z | xargs -0 sha256sum); } | sha256sum | cut -c1-64)
if [ -f "$out/.fd-build-stamp" ] && [ "$(cat "$out/.fd-build-stamp")" = "$stamp" ] &&
   [ -x "$out/bin/mpicc" ]; then
  echo "build-mpich: $out is up to date (same configure line, same $fd)"
  exit 0
fi
rm -f "$out/.fd-build-stamp"

bld=$out.build
rm -rf "$bld"
mkdir -p "$bld"
cd "$bld"
tm() { # label, command...: CPU seconds of the command to time.log
  local l=$1; shift
  /usr/bin/time -a -o "$bld/time.log" -f "$l user %U sys %S wall %e" "$@"
}
echo "build-mpich: configuring $src against $fd$([ $lean = 1 ] && echo " (lean: -O0 -g0)")"
tm configure "$src"/configure "${cfg[@]}" > configure.log 2>&1 ||
  { tail -n 30 configure.log; exit 1; }
echo "build-mpich: configured in $(( $(date +%s) - t0 )) s; building"
tm make make -j"$(nproc)" > make.log 2>&1 || { grep -m 20 -E 'error' make.log; tail -n 20 make.log; exit 1; }
tm install make install > install.log 2>&1 || { tail -n 20 install.log; exit 1; }
echo "$stamp" > "$out/.fd-build-stamp"
awk '{u += $3; s += $5} END {printf "build-mpich: CPU %.0f s (user %.0f + sys %.0f)\n", u + s, u, s}' "$bld/time.log"
echo "build-mpich: built and installed in $out $(( $(date +%s) - t0 )) s"
