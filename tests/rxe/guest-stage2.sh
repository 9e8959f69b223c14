#!/bin/bash
# Second stage of the Soft-RoCE test VM.  tests/rxe/run copies this file into
# the per-run job directory; the initramfs switch_roots into the host's root
# (shared read only over 9p) and executes it as PID 1, so from here on the
# guest runs the host's own bash, iproute2, rdma-core and the project's
# binaries.
#
# Job directory protocol (all files written by the host unless noted):
#   shares       one shared path per line (already mounted by stage 1)
#   cwd          working directory of the command, no trailing newline
#   argv         the command and its arguments, NUL separated
#   environ      the host environment, NUL separated NAME=value entries
#   addr0/addr1  the test addresses (with prefix length)
#   net          two-VM mode (tests/rxe/run2) only: "NETDEV ADDR/PREFIX";
#                this VM's one rxe device goes on that virtio-net card
#                instead of the veth pair
#   rc           written here: the command's exit status
#   setup-error  written here when the guest could not prepare the test bed
#   timing       written here: guest uptime at stage 2 start, command
#                start and command end
#
# Every program started here is read over 9p and emulated by TCG, which
# costs a large fraction of a second each, so this script sticks to bash
# builtins and batches the iproute2 calls.
#
# PID 1 must never exit (the kernel would panic), so every path ends in
# power_off, which uses sysrq because the host's poweroff is systemd's.

JOB=/run/fdrxe-job
PAUSE=/run/fdrxe-pause # a FIFO made by stage 1, read with a timeout to sleep
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

log() {
	echo "fdrxe-stage2: $*" > /dev/console
}

power_off() {
	sync
	echo o > /proc/sysrq-trigger
	while :; do pause 60; done
}

fail() {
	log "FATAL: $*"
	echo "guest: $*" > "$JOB/setup-error"
	power_off
}

# Sets UPTIME without forking.
now() {
	local rest
	read -r UPTIME rest < /proc/uptime
}

# Short pause without starting sleep(1): wait for input that never comes.
pause() {
	read -r -t "$1" _ <> "$PAUSE" 2> /dev/null || true
}

now
echo "boot $UPTIME" > "$JOB/timing"

# --- the test bed: two veth ends, one rxe device on each -----------------
read -r ADDR0 < "$JOB/addr0" || fail "no addr0 in job dir"
read -r ADDR1 < "$JOB/addr1" || fail "no addr1 in job dir"
SETUP=1
[ -e "$JOB/bare" ] && SETUP=0

NET=
[ -e "$JOB/net" ] && read -r NETDEV NET < "$JOB/net"
if [ -n "$NET" ]; then
	# Two VMs on one wire: rxe0 on the virtio-net card, nothing else.
	ip -batch - << EOF || fail "network setup of $NETDEV with ip failed"
link set lo up
addr add $NET dev $NETDEV
link set $NETDEV up
EOF
	rdma link add rxe0 type rxe netdev "$NETDEV" || fail "rdma link add rxe0 on $NETDEV failed"
	tries=0
	while :; do
		state=
		read -r state < /sys/class/infiniband/rxe0/ports/1/state 2> /dev/null
		case $state in *ACTIVE*) break ;; esac
		tries=$((tries + 1))
		[ "$tries" -le 200 ] || fail "rxe0 did not become ACTIVE (state: ${state:-none})"
		pause 0.05
	done
	SETUP=0
fi

if [ "$SETUP" = 1 ]; then

type -P ip > /dev/null || fail "ip (iproute2) not found in the host root"
type -P rdma > /dev/null || fail "rdma (iproute2) not found in the host root"

ip -batch - << EOF || fail "network setup with ip failed"
link set lo up
link add veth0 type veth peer name veth1
addr add $ADDR0 dev veth0
addr add $ADDR1 dev veth1
link set veth0 up
link set veth1 up
EOF
rdma -b - << EOF || fail "rdma link add failed"
link add rxe0 type rxe netdev veth0
link add rxe1 type rxe netdev veth1
EOF

# The port turns ACTIVE once the veth carrier is up, which is asynchronous;
# wait for it rather than let the first test trip over it.
for dev in rxe0 rxe1; do
	tries=0
	while :; do
		state=
		read -r state < "/sys/class/infiniband/$dev/ports/1/state" 2> /dev/null
		case $state in *ACTIVE*) break ;; esac
		tries=$((tries + 1))
		[ "$tries" -le 200 ] || fail "$dev did not become ACTIVE (state: ${state:-none})"
		pause 0.05
	done
done
[ -e /dev/infiniband/uverbs0 ] || fail "no /dev/infiniband/uverbs0 (ib_uverbs not loaded?)"
[ -e /dev/infiniband/rdma_cm ] || fail "no /dev/infiniband/rdma_cm (rdma_ucm not loaded?)"
elif [ -z "$NET" ]; then
	ip link set lo up || fail "cannot bring lo up"
fi

# --- the command's environment: the host's, minus shell internals ---------
# Start from an empty environment so that nothing of the kernel's init
# environment (TERM=linux, HOME=/) leaks in.
for name in $(compgen -e); do
	unset "$name"
done
while IFS= read -r -d '' entry; do
	name=${entry%%=*}
	case $name in
	'' | [0-9]* | *[!A-Za-z0-9_]*) continue ;;
	PWD | OLDPWD | SHLVL | _ | SHELLOPTS | BASHOPTS | BASH_*) continue ;;
	esac
	export "$entry"
done < "$JOB/environ"
: "${PATH:=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}"
export PATH
# A TMPDIR inside the host's /tmp points into what is now an empty tmpfs.
if [ -n "${TMPDIR:-}" ] && [ ! -d "$TMPDIR" ]; then
	mkdir -p "$TMPDIR" 2> /dev/null || true
fi

mapfile -d '' -t ARGV < "$JOB/argv"
[ "${#ARGV[@]}" -gt 0 ] || fail "empty command"
CWD=
IFS= read -r -d '' CWD < "$JOB/cwd"
[ -n "$CWD" ] || fail "no cwd in job dir"

# --- output channels: virtio-serial ports named by the host ---------------
OUT=/dev/console
ERR=/dev/console
for port in /sys/class/virtio-ports/*; do
	pname=
	read -r pname < "$port/name" 2> /dev/null || continue
	case $pname in
	fd.stdout) OUT=/dev/${port##*/} ;;
	fd.stderr) ERR=/dev/${port##*/} ;;
	esac
done

cd "$CWD" || fail "cannot cd to $CWD inside the guest (is it shared?)"

now
echo "start $UPTIME" >> "$JOB/timing"
"${ARGV[@]}" < /dev/null > "$OUT" 2> "$ERR"
rc=$?
now
echo "end $UPTIME" >> "$JOB/timing"
echo "$rc" > "$JOB/rc"
power_off
