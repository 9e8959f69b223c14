#!/usr/bin/env bash
# `cmake --install` of this build into a fresh prefix must be usable as a
# libfabric by a program that knows nothing of fabric-direct:
#   1. cc -I PREFIX/include ... -L PREFIX/lib -lfabric   (autotools style)
#   2. cc $(pkg-config --cflags --libs libfabric)        (PKG_CONFIG_PATH)
# each built and run (tests/install/app.c checks the data path kind and
# that fi_getinfo comes from PREFIX/lib). Also: both .pc files name the
# prefix given at install time, not the configured one.
#   check_install.sh BUILD_DIR DIRECT(0|1) CC [SANITIZE]
# SANITIZE: the build's FABRIC_DIRECT_SANITIZE (e.g. address,undefined).
# A sanitized libfabric.so needs a program built with the same
# -fsanitize (gcc's ASan runtime must be loaded first, clang links none
# into a shared library), so the probe then gets it too.
set -uo pipefail
build=${1:?usage: check_install.sh BUILD_DIR DIRECT CC [SANITIZE]}
direct=${2:?}
cc=${3:-cc}
sanitize=${4:-}
san_flags=()
if [ -n "$sanitize" ]; then
  san_flags=(-fsanitize="$sanitize" -fno-omit-frame-pointer)
  echo "sanitized build: the probe is built with ${san_flags[*]}"
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config (apt-get install pkg-config)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
status=0
fail() { echo "FAIL: $*"; status=1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; echo "FAIL: cmake --install"; exit 1; }
libdir=$(dirname "$(find "$prefix" -name libfabric.pc | head -1)")/..
libdir=$(cd "$libdir" && pwd -P)
for f in include/rdma/fabric.h include/rdma/fi_endpoint.h; do
  [ -e "$prefix/$f" ] || fail "no $f in the prefix"
done
[ -e "$libdir/libfabric.so" ] || fail "no libfabric.so in $libdir"
if [ "$direct" = 1 ]; then
  [ -e "$prefix/include/rdma/fi_direct_endpoint.h" ] || fail "no fi_direct_endpoint.h"
else
  [ -e "$libdir/libfabric.so.1" ] || fail "no libfabric.so.1 in $libdir"
fi

export PKG_CONFIG_PATH=$libdir/pkgconfig
for pc in libfabric fabric-direct; do
  got=$(pkg-config --variable=includedir "$pc") || { fail "pkg-config $pc"; continue; }
  [ "$(cd "$got" && pwd -P)" = "$(cd "$prefix/include" && pwd -P)" ] ||
    fail "$pc.pc: includedir $got is not under the install prefix $prefix"
done

run() {  # NAME CC-ARGS...
  local name=$1; shift
  if ! "$cc" ${san_flags[@]+"${san_flags[@]}"} -o "$work/$name" "$here/app.c" "$@" \
       >"$work/$name.log" 2>&1; then
    cat "$work/$name.log"; fail "$name: does not build"; return
  fi
  if FI_EXPECT_LIBDIR=$libdir FI_DIRECT_EXPECT=$direct "$work/$name"; then
    echo "$name: passed"
  else
    fail "$name: wrong library or data path"
  fi
}
run plain -I"$prefix/include" -L"$libdir" -Wl,-rpath,"$libdir" -lfabric -ldl
# shellcheck disable=SC2046
run pkgconfig $(pkg-config --cflags libfabric) $(pkg-config --libs libfabric) \
  -Wl,-rpath,"$libdir" -ldl
exit $status
