#!/usr/bin/env bash
# Build upstream fabtests, unmodified, from the copy Debian's mpich source
# package carries (mpich-4.0.2/modules/libfabric/fabtests: fabtests
# 1.13.1), against Debian's libfabric-dev headers and libfabric.so.1. The
# programs are what an upstream user runs; tests/fabtests/run.sh points
# their libfabric.so.1 at this library's drop-in.
#
#   tests/fabtests/build.sh MPICH_SRC_DIR OUT
#
# MPICH_SRC_DIR: an unpacked mpich-4.0.2 (scripts/build-mpich.sh fetches
# it with apt-get source); OUT gets src/ (a copy), obj/ and inst/bin. A
# finished build is kept while the source copy's stamp matches.
set -euo pipefail
src=$(cd "${1:?usage: build.sh MPICH_SRC_DIR OUT}" && pwd -P)/modules/libfabric/fabtests
out=${2:?usage: build.sh MPICH_SRC_DIR OUT}
[ -f "$src/configure.ac" ] || { echo "FAIL: no fabtests in $src"; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
stamp=$(cd "$src" && find . -type f -printf '%P %s\n' | sort | sha256sum | cut -c1-16)
if [ -x "$out/inst/bin/fi_rdm" ] && [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "fabtests: up to date in $out/inst"
  exit 0
fi
need=()
for p in autoconf automake libtool make gcc libfabric-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
t0=$(date +%s)
rm -rf "$out/src" "$out/obj" "$out/inst" "$out/stamp"
cp -r "$src" "$out/src"
# the tarball inside the source package has no generated configure
(cd "$out/src" && ./autogen.sh) > "$out/autogen.log" 2>&1 ||
  { tail -n 20 "$out/autogen.log"; exit 1; }
mkdir -p "$out/obj"
(cd "$out/obj" && ../src/configure --prefix="$out/inst" --with-libfabric=/usr \
  --disable-dependency-tracking CFLAGS="-O1 -g0") > "$out/configure.log" 2>&1 ||
  { tail -n 20 "$out/configure.log"; exit 1; }
make -C "$out/obj" -j"$(nproc)" install > "$out/make.log" 2>&1 ||
  { tail -n 30 "$out/make.log"; exit 1; }
echo "$stamp" > "$out/stamp"
echo "fabtests: $(grep -o 'fabtests\], \[[0-9.]*' "$out/src/configure.ac" | sed 's/.*\[//') built in $(( $(date +%s) - t0 )) s into $out/inst"
