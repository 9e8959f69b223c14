#!/usr/bin/env bash
# The controls for MPICH's tests, in ONE Soft-RoCE VM boot: the same test
# list on
#   direct    MPICH built against the direct install (MPICH_DIRECT)
#   off       MPICH built against the OFF install, on its drop-in
#             libfabric.so.1 (MPICH_OFF; libmpi's RUNPATH)
#   upstream  the same MPICH_OFF on Debian's libfabric.so.1 1.17
#             (LD_LIBRARY_PATH, FI_UNIVERSE_SIZE=16 for rxm on rxe)
#
#   tests/rxe/run --timeout 7200 -- tests/mpich/controls.sh OUT LIST MPICH_DIRECT MPICH_OFF
#
# (Both built by scripts/build-mpich.sh, their test programs by
# tests/mpich/build-tests.sh.) Results per variant in
# OUT/<variant>/ (TAP per directory) and a per-test table OUT/controls.txt:
# test, then ok/FAIL per variant. A variant whose prefix is "-" is left
# out. Exit 0 when the table was written.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
out=${1:?usage: controls.sh OUT LIST MPICH_DIRECT MPICH_OFF}
list=$2 md=$3 mo=$4
mkdir -p "$out"
variants=()
if [ "$md" != - ]; then
  variants+=(direct)
  echo "=== direct: $md"
  FD_MPICH_OUT=$out/direct "$here/run-mpich-tests.sh" --list "$list" "$md"
fi
if [ "$mo" != - ]; then
  variants+=(off upstream)
  echo "=== off: $mo on the drop-in"
  FD_MPICH_OUT=$out/off "$here/run-mpich-tests.sh" --list "$list" "$mo"
  echo "=== upstream: $mo on Debian's libfabric"
  FD_MPICH_OUT=$out/upstream FD_MPICH_LIBFABRIC=system "$here/run-mpich-tests.sh" --list "$list" "$mo"
fi
python3 - "$out" "${variants[@]}" <<'PY' | tee "$out/controls.txt"
import glob, os, re, sys
out, variants = sys.argv[1], sys.argv[2:]
res = {}
order = []
for v in variants:
    for tap in sorted(glob.glob(os.path.join(out, v, "*.tap"))):
        for line in open(tap):
            m = re.match(r"^(not ok|ok)\s+-\s+(\S+ \d+)", line)
            if not m:
                continue
            t = m.group(2)
            if t not in res:
                res[t] = {}
                order.append(t)
            res[t][v] = "ok" if m.group(1) == "ok" else "FAIL"
print("%-40s %s" % ("test", " ".join("%-9s" % v for v in variants)))
for t in order:
    print("%-40s %s" % (t, " ".join("%-9s" % res[t].get(v, "-") for v in variants)))
for v in variants:
    n = sum(1 for t in order if res[t].get(v) == "ok")
    print("%s: %d of %d passed" % (v, n, len(order)))
PY
