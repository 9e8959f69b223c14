#!/usr/bin/env bash
# Run an example's server and client against each other on a verbs device,
# the way a user would (two processes, two commands):
#
#   run_example_pair.sh [--debug-log] [--against OTHER] BINARY [EXTRA-ARGS...]
#
# The server listens on $FD_RXE_ADDR0 with port 0 and prints the port it
# got; the client is started with that port once the server says it is
# listening. Both must exit 0 and print "<role>: ok".
#
# --against OTHER runs two pairs instead: BINARY's server with OTHER's
# client, then OTHER's server with BINARY's client (OTHER being the same
# example built against upstream libfabric: wire compatibility).
#
# --debug-log runs both with FI_LOG_LEVEL=debug and checks that their logs
# show the connection being made: the device, the QP number and the peer's
# address in the provider's connection messages.
#
# Exit 77 (skip) without a device: run it under tests/rxe/run.
set -uo pipefail

debug=0 other=
while :; do
	case ${1:-} in
	--debug-log) debug=1; shift ;;
	--against) other=${2:?--against needs a binary}; shift 2 ;;
	*) break ;;
	esac
done
bin=${1:?usage: run_example_pair.sh [--debug-log] [--against OTHER] BINARY [ARGS...]}
shift
name=$(basename "$bin")

if [ -n "$other" ]; then
	# the two directions, each a plain run of this script
	self=$(readlink -f "$0")
	status=0
	SERVER_BIN=$bin CLIENT_BIN=$other "$self" "$bin" "$@" || status=$?
	[ $status = 77 ] && exit 77
	SERVER_BIN=$other CLIENT_BIN=$bin "$self" "$bin" "$@" || status=1
	exit $status
fi
server_bin=${SERVER_BIN:-$bin}
client_bin=${CLIENT_BIN:-$bin}
if [ "$server_bin" != "$client_bin" ]; then
	name="$name (server $(basename "$server_bin"), client $(basename "$client_bin"))"
fi

addr=${FD_RXE_ADDR0:-}
if [ -z "$addr" ] || [ -z "$(ls /sys/class/infiniband/ 2>/dev/null)" ]; then
	echo "SKIP: no verbs device (run under tests/rxe/run)"
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ $debug = 1 ]; then
	export FI_LOG_LEVEL=debug
fi

# Two spinning processes on one CPU slow a ping-pong down a hundredfold:
# pin them apart when there are CPUs to spare.
pin_server=() pin_client=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	pin_server=(taskset -c 0)
	pin_client=(taskset -c 1)
fi

# Upstream's client lets RDMA CM choose its device for a local destination,
# and inside one VM it may choose rxe1, which cannot reach rxe0's address:
# when it talks to our server, ours listens on every address.
bind=(-b "$addr")
if [ "$server_bin" != "$client_bin" ] && [ "$server_bin" = "$bin" ]; then
	bind=()
fi
"${pin_server[@]}" timeout 120 "$server_bin" "${bind[@]}" -p 0 "$@" \
	>"$tmp/server.out" 2>"$tmp/server.err" &
spid=$!
port=
for _ in $(seq 1 300); do
	port=$(sed -n 's/^listening on .* port \([0-9][0-9]*\)$/\1/p' "$tmp/server.out")
	[ -n "$port" ] && break
	kill -0 $spid 2>/dev/null || break
	sleep 0.1
done
if [ -z "$port" ]; then
	echo "FAIL $name: the server never listened"
	cat "$tmp/server.out" "$tmp/server.err"
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
	exit 1
fi

"${pin_client[@]}" timeout 120 "$client_bin" -p "$port" "$@" "$addr" \
	>"$tmp/client.out" 2>"$tmp/client.err"
rc_c=$?
wait $spid
rc_s=$?

status=0
for role in server client; do
	sed "s/^/  $role: /" "$tmp/$role.out"
	grep -q "^$role: ok\$" "$tmp/$role.out" || status=1
done
if [ $rc_s -ne 0 ] || [ $rc_c -ne 0 ] || [ $status -ne 0 ]; then
	for role in server client; do
		tail -40 "$tmp/$role.err" | sed "s/^/  $role (stderr): /"
	done
	echo "FAIL $name: server exit $rc_s, client exit $rc_c"
	exit 1
fi

if [ $debug = 1 ]; then
	# What an operator needs to follow a connection: which device, which
	# QP, which peer. Each line is searched for in the provider's verbs
	# messages (prov "verbs") of the role that should print it.
	dev_re="${FD_RXE_DEV0:-rxe0}|${FD_RXE_DEV1:-rxe1}"
	check() { # role regex what
		if ! grep -E ':verbs:' "$tmp/$1.err" | grep -Eq "$2"; then
			echo "FAIL $name: the $1's debug log does not show $3"
			status=1
		fi
	}
	check server "($dev_re)" "the device"
	check client "($dev_re)" "the device"
	check server "[Qq][Pp][ #]*[0-9]+" "a QP number"
	check client "[Qq][Pp][ #]*[0-9]+" "a QP number"
	check server "${addr//./\\.}" "the peer's address"
	check client "${addr//./\\.}" "the peer's address"
	check client "[Cc]onnect" "the connection being made"
	check server "[Cc]onnect|[Aa]ccept" "the connection being accepted"
	if [ $status -ne 0 ]; then
		for role in server client; do
			echo "--- $role debug log (verbs lines)"
			grep -E ':verbs:' "$tmp/$role.err" | head -60
		done
		exit 1
	fi
	echo "ok   $name: debug log names device, QP and peer on both sides"
fi
echo "ok   $name: server and client agree"
exit 0
