#!/usr/bin/env bash
# Run one program built against Debian's libfabric headers and library on
# this build's drop-in libfabric.so.1 instead, after checking that the
# loader really resolves libfabric.so.1 to ours.
#   run_on_dropin.sh DIR_HOLDING_OUR_LIBFABRIC_SO_1 PROGRAM [ARGS...]
set -uo pipefail
libdir=$(cd "${1:?usage: run_on_dropin.sh DIR PROGRAM [ARGS...]}" && pwd -P)
shift
prog=${1:?usage: run_on_dropin.sh DIR PROGRAM [ARGS...]}
[ -e "$libdir/libfabric.so.1" ] || { echo "FAIL: no $libdir/libfabric.so.1"; exit 1; }
# ldd's output is captured whole: under pipefail "ldd | grep -q" fails
# whenever grep exits at its match and ldd then dies writing to the pipe.
linked=$(LD_LIBRARY_PATH="$libdir" ldd "$prog")
[[ $linked == *"libfabric.so.1 => $libdir/libfabric.so.1"* ]] ||
  { echo "FAIL: LD_LIBRARY_PATH=$libdir does not select our libfabric.so.1 for $prog:";
    echo "$linked"; exit 1; }
LD_LIBRARY_PATH="$libdir" exec "$@"
