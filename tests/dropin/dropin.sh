#!/usr/bin/env bash
# Debian's own libfabric programs (package libfabric-bin) over the drop-in
# libfabric.so.1 of this build, unmodified and unrecompiled:
#   - fi_info lists every verbs device as an FI_EP_MSG verbs entry;
#   - fi_pingpong -p verbs -e msg -c -S all completes, for every size with
#     data checks, between two processes on this library and, for wire
#     interop, with Debian's libfabric on either side.
#   - optionally, test programs built against Debian's libfabric headers
#     (the *_upstream binaries of tests/device) run over this library.
#   dropin.sh DIR_HOLDING_OUR_LIBFABRIC_SO_1 [UPSTREAM_BUILT_TEST...]
# Needs a verbs device with an IP address (run under tests/rxe/run).
set -uo pipefail

libdir=$(cd "${1:?usage: dropin.sh DIR [UPSTREAM_BUILT_TEST...]}" && pwd -P)
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
[ -e "$libdir/libfabric.so.1" ] || { echo "FAIL: no $libdir/libfabric.so.1"; exit 1; }
[ -n "${FD_RXE_ADDR0:-}" ] || { echo "SKIP: no verbs device (run under tests/rxe/run)"; exit 77; }
for p in fi_info fi_pingpong; do
  [ -x /usr/bin/$p ] || { echo "SKIP: no /usr/bin/$p (apt-get install libfabric-bin)"; exit 77; }
done
addr=$FD_RXE_ADDR0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0 nfail=0
fail() { echo "FAIL: $*"; status=1; nfail=$((nfail + 1)); }
# section headers carry the elapsed time: the whole test is slow in a VM
section() { echo "=== [${SECONDS}s] $*"; }

# Run a program on our library or on Debian's (no LD_LIBRARY_PATH at all).
ours()   { env LD_LIBRARY_PATH="$libdir" "$@"; }
theirs() { env -u LD_LIBRARY_PATH "$@"; }

# The loader really picks the library we mean, for each side.
# (ldd's output is captured whole: under pipefail "ldd | grep -q" fails
# whenever grep exits at its match and ldd then dies writing to the pipe.)
linked=$(ours ldd /usr/bin/fi_pingpong)
[[ $linked == *"libfabric.so.1 => $libdir/libfabric.so.1"* ]] ||
  { echo "FAIL: LD_LIBRARY_PATH=$libdir does not select our libfabric.so.1:";
    echo "$linked"; exit 1; }
linked=$(theirs ldd /usr/bin/fi_pingpong)
[[ $linked == *"libfabric.so.1 => $libdir"* ]] &&
  { echo "FAIL: without LD_LIBRARY_PATH fi_pingpong still loads ours"; exit 1; }

# ---- fi_info ----------------------------------------------------------------
section "fi_info -p verbs -t FI_EP_MSG (this library)"
if ! ours fi_info -p verbs -t FI_EP_MSG >"$work/info" 2>&1; then
  cat "$work/info"; fail "fi_info exited non-zero"
fi
cat "$work/info"
devices=$(ls /sys/class/infiniband 2>/dev/null)
[ -n "$devices" ] || fail "no device under /sys/class/infiniband"
for dev in $devices; do
  grep -q "^    domain: $dev\$" "$work/info" || fail "fi_info does not list $dev"
done
grep -q '^provider: verbs$' "$work/info" || fail "fi_info lists no verbs provider"
if grep '^    type: ' "$work/info" | grep -v -q 'FI_EP_MSG$'; then
  fail "fi_info -t FI_EP_MSG listed another endpoint type"
fi
# Debian's fi_info over Debian's library, for the record: same devices.
theirs fi_info -p verbs -t FI_EP_MSG 2>/dev/null | sed -n 's/^    domain: //p' | sort -u >"$work/their-domains"
sed -n 's/^    domain: //p' "$work/info" | sort -u >"$work/our-domains"
diff -q "$work/their-domains" "$work/our-domains" >/dev/null ||
  fail "devices differ: Debian's libfabric lists $(tr '\n' ' ' <"$work/their-domains"), ours $(tr '\n' ' ' <"$work/our-domains")"
# the rest of fi_info's modes: verbose structures, provider list, environment
ours fi_info -p verbs -t FI_EP_MSG -v >"$work/info-v" 2>&1 &&
  grep -q 'api_version: 1.17' "$work/info-v" || fail "fi_info -v"
ours fi_info -l >"$work/info-l" 2>&1 && grep -q '^verbs:' "$work/info-l" || fail "fi_info -l"
ours fi_info -e >"$work/info-e" 2>&1 && grep -q 'FI_VERBS_TX_SIZE' "$work/info-e" || fail "fi_info -e"

# ---- fi_pingpong ------------------------------------------------------------
# -S all: every size fi_pingpong knows, 0 B to 6 MiB (its list stops below
# both providers' max_msg_size).  Sizes past a few MiB take seconds per
# round trip on Soft-RoCE in an emulated VM, so a few iterations per size:
# each one is still a checked (-c) send in both directions.
iters=${FD_DROPIN_ITERATIONS:-2}
sizes="0 1 2 3 4 6 8 12 16 24 32 48 64 96 128 192 256 384 512 768
       1k 1.5k 2k 3k 4k 6k 8k 12k 16k 24k 32k 48k 64k 96k 128k 192k 256k
       384k 512k 768k 1m 1.5m 2m 3m 4m 6m"
port=47610
pin_srv=() pin_cli=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  # two spinning processes on one vCPU take 100x longer
  pin_srv=(taskset -c 0) pin_cli=(taskset -c 1)
fi

listening() { # tcp port
  [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
}

pingpong() { # label server-side(ours|theirs) client-side(ours|theirs)
  local label=$1 srv=$2 cli=$3 spid rc_s rc_c s before=$nfail
  port=$((port + 1))
  section "fi_pingpong: $label"
  "$srv" timeout 300 "${pin_srv[@]}" fi_pingpong -p verbs -e msg -c -S all \
    -I "$iters" -B "$port" >"$work/srv" 2>&1 &
  spid=$!
  for _ in $(seq 1 300); do
    listening "$port" && break
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.1
  done
  if ! listening "$port"; then
    wait "$spid"
    sed 's/^/  server: /' "$work/srv"
    fail "$label: server never listened on control port $port"
    return
  fi
  "$cli" timeout 300 "${pin_cli[@]}" fi_pingpong -p verbs -e msg -c -S all \
    -I "$iters" -P "$port" "$addr" >"$work/cli" 2>&1
  rc_c=$?
  wait "$spid"
  rc_s=$?
  sed 's/^/  client: /' "$work/cli"
  sed 's/^/  server: /' "$work/srv"
  if [ $rc_c -ne 0 ] || [ $rc_s -ne 0 ]; then
    fail "$label: server exit $rc_s, client exit $rc_c"
    return
  fi
  for s in $sizes; do
    for side in cli srv; do
      # bytes #sent #ack ...: every iteration sent and acknowledged
      grep -q -E "^$s +$iters +=$iters " "$work/$side" ||
        fail "$label: no complete $s line from the $side"
    done
  done
  if grep -q -i -E 'error|mismatch|corrupt|fail' "$work/cli" "$work/srv"; then
    fail "$label: errors reported"
  fi
  [ "$nfail" -eq "$before" ] && echo "ok   $label"
}

pingpong "server: this library, client: this library" ours ours
pingpong "server: this library, client: Debian's libfabric" ours theirs
pingpong "server: Debian's libfabric, client: this library" theirs ours

# ---- our device tests, compiled against Debian's headers -------------------
# The same *_upstream binary on both sides, both on this library (through a
# wrapper setting LD_LIBRARY_PATH): a program built for Debian's libfabric,
# inline wrappers and all, running over our ops tables.  The wire against
# Debian's library is tests/device/interop.sh's job (interop_* ctests).
for bin in "$@"; do
  name=$(basename "$bin")
  wrap="$work/$name.on-ours"
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s; export LD_LIBRARY_PATH\nexec %s "$@"\n' \
    "$libdir" "$bin" >"$wrap"
  chmod +x "$wrap"
  section "$name (built against Debian's headers): both sides on this library"
  if "$here/../device/interop.sh" "$wrap" "$wrap" >"$work/self" 2>&1; then
    echo "ok   $name"
  else
    cat "$work/self"
    fail "$name: both sides on this library"
  fi
done

[ $status -eq 0 ] && section "drop-in libfabric.so.1: all passed"
exit $status
