#!/usr/bin/env bash
# Debian's fi_pingpong (libfabric-bin), unmodified, over a libfabric: a
# few sizes with data checks (-c), server and client both on LIBDIR's
# libfabric.so.1 ("system": Debian's own, FI_UNIVERSE_SIZE small as its
# rxm needs on rxe). Exit 77 only when there is no device.
#   fi_pingpong.sh LIBDIR|system [rdm|dgram]
# rdm: "verbs;ofi_rxm" endpoints; dgram: verbs UD endpoints (the client
# passes the server's address as node, which only chooses the device;
# fi_pingpong exchanges the endpoint names over its control socket).
set -uo pipefail
libdir=${1:?usage: fi_pingpong.sh LIBDIR|system [rdm|dgram]}
ep=${2:-rdm}
case $ep in
rdm) prov="verbs;ofi_rxm" default_sizes="64 4096 1048576" ;;
dgram) prov=verbs default_sizes="64 1000" ;;   # payloads within the MTU
*) echo "usage: fi_pingpong.sh LIBDIR|system [rdm|dgram]"; exit 2 ;;
esac
[ -n "${FD_RXE_ADDR0:-}" ] && [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ] ||
  { echo "SKIP: no verbs device (run under tests/rxe/run)"; exit 77; }
[ -x /usr/bin/fi_pingpong ] || { echo "FAIL: no fi_pingpong (apt-get install libfabric-bin)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$libdir" = system ]; then
  run() { env -u LD_LIBRARY_PATH FI_UNIVERSE_SIZE="${FI_UNIVERSE_SIZE:-16}" "$@"; }
  want=/lib/x86_64-linux-gnu/libfabric.so.1
else
  libdir=$(cd "$libdir" && pwd -P)
  run() { env LD_LIBRARY_PATH="$libdir" "$@"; }
  want=$libdir/libfabric.so.1
fi
linked=$(run ldd /usr/bin/fi_pingpong)   # whole: "ldd | grep -q" races under pipefail
[[ $linked == *"libfabric.so.1 => $want"* ]] ||
  { echo "FAIL: fi_pingpong would not load $want"; echo "$linked"; exit 1; }
# A few sizes (eager, medium, rendezvous), each its own server/client pair:
# fi_pingpong -S all spends minutes on its multi-MiB sizes in an emulated VM.
iters=${FD_PINGPONG_ITERATIONS:-10}
sizes=${FD_PINGPONG_SIZES:-$default_sizes}
port=47710
pin_srv=() pin_cli=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin_srv=(taskset -c 0) pin_cli=(taskset -c 1)
fi
n=0
for size in $sizes; do
  port=$((port + 1))
  run timeout 120 "${pin_srv[@]}" fi_pingpong -p "$prov" -e "$ep" -c -S "$size" \
    -I "$iters" -B "$port" >"$work/srv" 2>&1 &
  spid=$!
  for _ in $(seq 1 300); do
    [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ] && break
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.1
  done
  run timeout 120 "${pin_cli[@]}" fi_pingpong -p "$prov" -e "$ep" -c -S "$size" \
    -I "$iters" -P "$port" "$FD_RXE_ADDR0" >"$work/cli" 2>&1
  rc_c=$?
  wait "$spid"
  rc_s=$?
  sed "s/^/client $size: /" "$work/cli"
  sed "s/^/server $size: /" "$work/srv"
  [ $rc_c -eq 0 ] && [ $rc_s -eq 0 ] || { echo "FAIL: size $size: server exit $rc_s, client exit $rc_c"; exit 1; }
  grep -q -E "^[0-9.]+[kmg]? +$iters +=$iters " "$work/cli" ||
    { echo "FAIL: size $size: no complete line"; exit 1; }
  grep -q -i -E 'error|mismatch|corrupt|fail' "$work/cli" "$work/srv" && { echo "FAIL: size $size: errors reported"; exit 1; }
  n=$((n + 1))
done
echo "PASS: fi_pingpong -e $ep over $want ($n sizes, $iters checked iterations each)"
