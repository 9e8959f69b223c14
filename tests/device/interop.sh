#!/usr/bin/env bash
# Wire interop: one test source built against this library (OURS) and
# against upstream libfabric (THEIRS); run server from one and client from
# the other, both ways. Each side asserts what it received.
#   interop.sh OURS_BINARY THEIRS_BINARY
set -uo pipefail
ours=$1 theirs=$2
[ -n "${FD_RXE_ADDR0:-}" ] || { echo "SKIP: no verbs device (run under tests/rxe/run)"; exit 77; }

run_pair() { # server-binary client-binary label [server env...]
  local srv=$1 cli=$2 label=$3 out port rc_s rc_c
  shift 3
  out=$(mktemp)
  env FDT_ROLE=server "$@" timeout 120 "$srv" >"$out" 2>&1 &
  local spid=$!
  # generous: a loaded emulated guest can take many seconds to start a binary
  for _ in $(seq 1 600); do
    port=$(sed -n 's/^FDT_PORT \([0-9]*\)$/\1/p' "$out")
    [ -n "$port" ] && break
    kill -0 $spid 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "FAIL $label: server did not listen"; cat "$out"; kill $spid 2>/dev/null; return 1
  fi
  FDT_ROLE=client FDT_PORT=$port timeout 120 "$cli"
  rc_c=$?
  wait $spid
  rc_s=$?
  sed 's/^/  server: /' "$out"
  rm -f "$out"
  if [ $rc_c -ne 0 ] || [ $rc_s -ne 0 ]; then
    echo "FAIL $label: server exit $rc_s, client exit $rc_c"
    return 1
  fi
  echo "ok   $label"
}

status=0
# Upstream's client lets RDMA CM choose its device for a local destination,
# and inside one VM it may choose rxe1, which cannot reach rxe0's address:
# our server listens on every address for it.
run_pair "$ours" "$theirs" "server: this library, client: upstream libfabric" FDT_LISTEN_ANY=1 || status=1
run_pair "$theirs" "$ours" "server: upstream libfabric, client: this library" || status=1
exit $status
