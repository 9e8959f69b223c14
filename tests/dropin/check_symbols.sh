#!/usr/bin/env bash
# The drop-in libfabric.so.1 exports what Debian's libfabric 1.17 exports:
# the same functions with the same symbol versions (default and compat),
# the same version nodes, the same soname, and so every versioned symbol
# Debian's libfabric programs ask for.
#   check_symbols.sh OUR_LIBFABRIC_SO_1
set -uo pipefail
ours=$1
theirs=${FD_SYSTEM_LIBFABRIC:-/usr/lib/x86_64-linux-gnu/libfabric.so.1}
[ -e "$theirs" ] || { echo "SKIP: no $theirs (apt-get install libfabric1)"; exit 77; }
command -v objdump >/dev/null || { echo "SKIP: no objdump"; exit 77; }

# "name version" per defined function; compat versions keep their (...)
exports() {
  objdump -T "$1" | awk '$0 ~ / DF / && $0 !~ /\*UND\*/ { print $NF, $(NF-1) }' | sort
}
nodes() {
  readelf -V "$1" | sed -n '/Version definition/,/Version needs/p' |
    sed -n 's/.*Name: \(FABRIC_[0-9.]*\).*/\1/p' | sort -u
}
soname() { readelf -d "$1" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p'; }

status=0
if ! diff -u <(exports "$theirs") <(exports "$ours"); then
  echo "FAIL: exported functions/versions differ (- Debian, + ours)"; status=1
fi
if ! diff -u <(nodes "$theirs") <(nodes "$ours"); then
  echo "FAIL: version nodes differ"; status=1
fi
if [ "$(soname "$ours")" != "$(soname "$theirs")" ]; then
  echo "FAIL: soname $(soname "$ours"), Debian's is $(soname "$theirs")"; status=1
fi
# nothing but fi_* (and the node markers) is visible
extra=$(nm -D --defined-only "$ours" | awk '{print $3}' | grep -v -E '^(fi_|FABRIC_)' || true)
if [ -n "$extra" ]; then
  echo "FAIL: internal symbols exported:"; echo "$extra"; status=1
fi

# What Debian's libfabric programs reference, ours defines.
ours_exports=$(exports "$ours")   # once, and whole: no grep -q on a live pipe
for bin in /usr/bin/fi_info /usr/bin/fi_pingpong /usr/bin/fi_strerror; do
  [ -x "$bin" ] || continue
  while read -r name ver; do
    if ! grep -q -x -E "$name \(?$ver\)?" <<<"$ours_exports"; then
      echo "FAIL: $bin needs $name@$ver"; status=1
    fi
  done < <(objdump -T "$bin" | awk '/\*UND\*/ && /FABRIC_/ { v=$(NF-1); gsub(/[()]/, "", v); print $NF, v }')
done
[ $status -eq 0 ] && echo "ok: $(exports "$ours" | wc -l) versioned functions, as Debian's libfabric.so.1"
exit $status
