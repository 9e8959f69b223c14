#!/bin/bash
# Run rdmacm_pingpong's server and client against each other on this
# machine and check both.  Meant to run where verbs devices exist, usually
# under tests/rxe/run:
#
#   tests/rxe/run -- tests/device/rdmacm_run_pair.sh BUILD/rdmacm_pingpong
#
#   rdmacm_run_pair.sh [-t SECONDS] [-p PORT] [-a SERVER_ADDR]
#                      [-c CONNECT_ADDR] [-b CLIENT_SRC_ADDR]
#                      BINARY [PINGPONG_OPTIONS...]
#
# SERVER_ADDR defaults to FD_RXE_ADDR0 and CONNECT_ADDR to SERVER_ADDR (see
# tests/rxe/README.md for which pairs work inside one Soft-RoCE VM).
# PINGPONG_OPTIONS (-s SIZE, -n ITERS) go to both sides.  The client starts
# only once the server is listening: a LISTEN cm_id on the port in
# `rdma res show cm_id`, or the server's own "listening" line.
#
# Exit status: 0 both sides passed, 77 no verbs device (skip), 1 otherwise.
# Nothing outlives the script: both sides run under timeout(1), and on
# failure the script signals timeout (not the child, so the child's port is
# released the normal way).

set -u

PROG=rdmacm_run_pair
TIMEOUT=120
PORT=
SERVER_ADDR=${FD_RXE_ADDR0:-}
CONNECT_ADDR=
SRC_ADDR=

msg() { printf '%s: %s\n' "$PROG" "$*" >&2; }

usage() {
	sed -n '8,10p' "$0" | sed 's/^# *//' >&2
	exit 1
}

while getopts 't:p:a:c:b:h' opt; do
	case $opt in
	t) TIMEOUT=$OPTARG ;;
	p) PORT=$OPTARG ;;
	a) SERVER_ADDR=$OPTARG ;;
	c) CONNECT_ADDR=$OPTARG ;;
	b) SRC_ADDR=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
BIN=$1
shift
PP_OPTS=("$@")

case $TIMEOUT in '' | *[!0-9]*) msg "bad timeout '$TIMEOUT'"; exit 1 ;; esac
[ -x "$BIN" ] || { msg "$BIN is not an executable"; exit 1; }

if [ -z "$(ls /sys/class/infiniband 2> /dev/null)" ]; then
	msg "no verbs device (run under tests/rxe/run): skipping"
	exit 77
fi
if [ -z "$SERVER_ADDR" ]; then
	msg "no server address: set FD_RXE_ADDR0 (tests/rxe/run does) or pass -a"
	exit 1
fi
CONNECT_ADDR=${CONNECT_ADDR:-$SERVER_ADDR}
# rdma_cm ports are not TCP ports, but concurrent runs still must not share
# one; derive it from our pid unless told.
PORT=${PORT:-$((20000 + $$ % 20000))}

# Two vCPUs at least: put the sides on different ones.  With both on one
# (emulated) CPU a ping-pong round trip costs milliseconds instead of tens
# of microseconds.
ncpu=${FD_RXE_NCPUS:-$(nproc 2> /dev/null || echo 1)}
PIN_S=()
PIN_C=()
if [ "${RDMACM_PIN:-1}" != 0 ] && [ "$ncpu" -ge 2 ] && command -v taskset > /dev/null; then
	PIN_S=(taskset -c 0)
	PIN_C=(taskset -c 1)
fi

LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/rdmacm_pair.XXXXXX") || exit 1
SPID=
cleanup() {
	if [ -n "$SPID" ] && kill -0 "$SPID" 2> /dev/null; then
		kill -TERM "$SPID" 2> /dev/null
		wait "$SPID" 2> /dev/null
	fi
	rm -rf "$LOGDIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

show_logs() {
	[ -s "$LOGDIR/server" ] && sed 's/^/[server] /' "$LOGDIR/server"
	[ -s "$LOGDIR/client" ] && sed 's/^/[client] /' "$LOGDIR/client"
	return 0
}

# The programs' own deadline (-t) is slightly shorter than timeout's, so
# they normally fail with a message before being killed.
PT=$((TIMEOUT > 10 ? TIMEOUT - 5 : TIMEOUT))

timeout -k 5 "$TIMEOUT" "${PIN_S[@]}" "$BIN" "${PP_OPTS[@]}" -t "$PT" \
	server "$SERVER_ADDR" "$PORT" > "$LOGDIR/server" 2>&1 &
SPID=$!

# Wait for the listener.  Polling is bounded by the same timeout.
have_rdma=0
rdma res show cm_id > /dev/null 2>&1 && have_rdma=1
start=$SECONDS
while :; do
	if ! kill -0 "$SPID" 2> /dev/null; then
		wait "$SPID"
		src=$?
		SPID=
		show_logs
		if [ "$src" = 77 ]; then
			msg "server found no verbs device: skipping"
			exit 77
		fi
		msg "server exited with $src before listening"
		exit 1
	fi
	if [ "$have_rdma" = 1 ] &&
		rdma res show cm_id 2> /dev/null | grep 'LISTEN' | grep -q ":$PORT "; then
		break
	fi
	grep -q '^listening on' "$LOGDIR/server" 2> /dev/null && break
	if [ $((SECONDS - start)) -ge "$TIMEOUT" ]; then
		show_logs
		msg "server not listening after ${TIMEOUT}s"
		exit 1
	fi
	sleep 0.1
done

timeout -k 5 "$TIMEOUT" "${PIN_C[@]}" "$BIN" "${PP_OPTS[@]}" -t "$PT" \
	client "$CONNECT_ADDR" "$PORT" ${SRC_ADDR:+"$SRC_ADDR"} > "$LOGDIR/client" 2>&1
crc=$?

# A failed client leaves the server waiting for a peer that is gone; stop
# it now rather than at its deadline.
if [ "$crc" != 0 ] && kill -0 "$SPID" 2> /dev/null; then
	kill -TERM "$SPID" 2> /dev/null
fi
wait "$SPID"
src=$?
SPID=
show_logs

if [ "$crc" = 0 ] && [ "$src" = 0 ]; then
	msg "PASS (server $SERVER_ADDR, client -> $CONNECT_ADDR${SRC_ADDR:+ from $SRC_ADDR}, port $PORT)"
	exit 0
fi
if [ "$crc" = 77 ]; then
	msg "client found no verbs device: skipping"
	exit 77
fi
[ "$crc" = 124 ] && msg "client timed out"
[ "$src" = 124 ] && msg "server timed out"
msg "FAIL: client exit $crc, server exit $src"
exit 1
