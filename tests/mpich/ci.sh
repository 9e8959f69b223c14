#!/usr/bin/env bash
# CI's MPICH stage (called from tests/run-all.sh after the
# link-fault tests): MPICH 4.0.2 built against this
# library's direct install, the proof that its data path is this
# library's inline code, and MPICH's own tests of tests/mpich/ci-tests on
# Soft-RoCE.
#
#   tests/mpich/ci.sh BUILD_DIRECT [WORK]
#
# BUILD_DIRECT: a FABRIC_DIRECT=verbs cmake build (installed into
# WORK/fd-direct); WORK (default build/mpich) holds the installs, the
# MPICH source (apt-get source, fetched once) and the MPICH build, which
# is kept while the install and the configure line do not change
# (scripts/build-mpich.sh --lean: CI's test-only build, -O0 -g0).
# Test programs are built only for the listed tests. Set
# FD_MPICH_NO_VM=1 to build and check without running the tests.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
root=$(cd "$here/../.." && pwd -P)
bd=$(cd "${1:?usage: tests/mpich/ci.sh BUILD_DIRECT [WORK]}" && pwd -P)
work=${2:-$root/build/mpich}
mkdir -p "$work"
work=$(cd "$work" && pwd -P)
list=$here/ci-tests
t0=$(date +%s)
stamp() { echo "--- mpich [$(( $(date +%s) - t0 )) s] $*"; }

stamp "install $bd into $work/fd-direct"
rm -rf "$work/fd-direct"
cmake --install "$bd" --prefix "$work/fd-direct" >/dev/null
grep -q '^#define FABRIC_DIRECT' "$work/fd-direct/include/rdma/fabric_direct_config.h" ||
  { echo "FAIL: $bd is not a FABRIC_DIRECT build"; exit 1; }

stamp "build MPICH against it (lean)"
mp=$work/direct
"$root/scripts/build-mpich.sh" --lean "$work/fd-direct" "$mp" "$work/src"
[ -f "$mp.build/time.log" ] && sed 's/^/    /' "$mp.build/time.log"

stamp "proof: the data path is compiled from this library's headers"
# 1. one ch4:ofi source compiled again with MPICH's own compile line,
#    preprocessor only: FABRIC_DIRECT is defined and the fi_direct headers
#    are the ones read
obj=src/mpid/ch4/netmod/ofi/lib_libmpi_la-ofi_progress.lo
srcf=$(sed -n 's/^abs_top_srcdir = //p' "$mp.build/Makefile")/src/mpid/ch4/netmod/ofi/ofi_progress.c
line=$(make -s -C "$mp.build" -n -W "$srcf" "$obj" | grep -- '--mode=compile' | head -n 1)
[ -n "$line" ] || { echo "FAIL: no compile line for $obj"; exit 1; }
cc_args=$(python3 - "$line" "$srcf" <<'PY'
import shlex, sys
# libtool's compile line, without output, dependency and source arguments
# (automake names the source with a `test -f ...` expression); the source
# goes back in as an absolute path
cmd = sys.argv[1].split("--mode=compile", 1)[1].split(";")[0].split("`")[0]
out, skip = [], False
for x in shlex.split(cmd):
    if skip:
        skip = False
    elif x in ("-o", "-MT", "-MF"):
        skip = True
    elif x not in ("-c", "-MD", "-MP") and not x.endswith(".c"):
        out.append(x)
print(shlex.join(out + [sys.argv[2]]))
PY
)
(cd "$mp.build" && eval "$cc_args -E -dM -H -o $work/ofi_progress.macros") 2> "$work/ofi_progress.headers"
grep -E '^#define FABRIC_DIRECT( |$)' "$work/ofi_progress.macros" ||
  { echo "FAIL: FABRIC_DIRECT not defined in MPICH's compile of ofi_progress.c"; exit 1; }
grep -E "^\.+ $work/fd-direct/include/rdma/fi_direct[a-z_]*\.h" "$work/ofi_progress.headers" |
  sed 's/^\.* /    read: /' | sort -u
grep -qE "^\.+ $work/fd-direct/include/rdma/fi_direct[a-z_]*\.h" "$work/ofi_progress.headers" ||
  { echo "FAIL: no fi_direct*.h of $work/fd-direct read"; exit 1; }
# 2. libmpi.so imports no data-path call from the library
und=$(nm -D --undefined-only "$mp/lib/libmpi.so" | awk '$2 ~ /^fi_/ {sub(/@.*/, "", $2); print $2}' | sort)
echo "    libmpi.so imports: $(echo $und)"
bad=$(echo "$und" | grep -E '^fi_(t?send|t?senddata|t?recv|t?inject|t?injectdata|cq_read|cq_readfrom|cq_readerr|write|writedata|read|atomic|fetch_atomic|compare_atomic|inject_write|inject_writedata|tsendmsg|trecvmsg|sendmsg|recvmsg)$' || true)
[ -z "$bad" ] || { echo "FAIL: libmpi.so calls data-path functions: $bad"; exit 1; }
objdump -p "$mp/lib/libmpi.so" | grep -E 'NEEDED.*fabric|RUNPATH' | sed 's/^ */    /'

stamp "build the listed test programs"
"$here/build-tests.sh" "$mp" "$list" > "$work/tests-build.log" 2>&1 ||
  { tail -n 20 "$work/tests-build.log"; exit 1; }
stamp "built $(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list" | wc -l) tests' programs"

[ "${FD_MPICH_NO_VM:-0}" = 1 ] && { stamp "tests not run (FD_MPICH_NO_VM=1)"; exit 0; }
stamp "MPICH's tests of $list on Soft-RoCE"
rm -rf "$work/results"
"$root/tests/rxe/run" --timeout "${FD_MPICH_TIMEOUT:-1800}" -- \
  env FD_MPICH_OUT="$work/results" "$here/run-mpich-tests.sh" --list "$list" "$mp"
stamp "MPICH stage passed"
