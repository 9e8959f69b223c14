#!/bin/sh
# First stage of the Soft-RoCE test VM, run by busybox as PID 1 from the
# initramfs that tests/rxe/run builds.  Its only job is to get the kernel to
# the point where the host's own userland can take over: load the modules
# the Debian kernel keeps out of the image, mount the host's root (read only)
# and the shared work trees over 9p, then switch_root into the host root and
# hand over to the second stage (guest-stage2.sh, copied into the job dir).
#
# Everything the host wants to tell us arrives through the 9p share tagged
# "fdjob"; there is no kernel command line parsing so that paths with odd
# characters survive.

PATH=/bin
export PATH

# One 9p option set for every mount: the 9p2000.L dialect is needed for
# POSIX semantics (owners, modes, symlinks), and a large msize cuts the number
# of round trips per read, which matters a lot under TCG.
NINEP=trans=virtio,version=9p2000.L,msize=262144

say() {
	echo "fdrxe-init: $*" > /dev/console
}

# Report the failure where the host looks first (the job dir), then power
# off; the host turns a missing exit code into a non-zero exit of its own.
fail() {
	say "FATAL: $*"
	for j in /job /newroot/run/fdrxe-job; do
		if mountpoint -q "$j" 2> /dev/null; then
			echo "initramfs: $*" > "$j/setup-error"
			sync
			break
		fi
	done
	poweroff -f
	sleep 1000
}

mkdir -p /proc /sys /dev /job /newroot
mount -t proc proc /proc || fail "cannot mount /proc"
mount -t sysfs sysfs /sys || fail "cannot mount /sys"
mount -t devtmpfs devtmpfs /dev || fail "cannot mount devtmpfs"
# Without a /dev/console node in the archive (building it needs root) the
# kernel starts us with no open descriptors; take the console now.
exec < /dev/console > /dev/console 2>&1

# The order file was produced on the host by modprobe --show-depends, so
# every module comes after the modules it needs.
while read -r mod; do
	[ -n "$mod" ] || continue
	insmod "/modules/$mod" || fail "insmod $mod failed"
done < /modules/order

mount -t 9p -o "$NINEP" fdjob /job || fail "cannot mount the job share (9p)"
mount -t 9p -o "$NINEP,ro,cache=loose" hostroot /newroot \
	|| fail "cannot mount the host root (9p)"

# The host root is read only: give the usual scratch places fresh tmpfs
# instances before anything is mounted below them.
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp || fail "cannot mount /tmp"
mount -t tmpfs -o mode=0755 tmpfs /newroot/run || fail "cannot mount /run"
if [ -d /newroot/var/tmp ]; then
	mount -t tmpfs -o mode=1777 tmpfs /newroot/var/tmp \
		|| fail "cannot mount /var/tmp"
fi

# Shared trees, read-write, at the path they have on the host.  The host
# already dropped nested duplicates, so order does not matter.
i=0
while IFS= read -r path; do
	[ -n "$path" ] || continue
	mkdir -p "/newroot$path" || fail "cannot create mount point $path"
	mount -t 9p -o "$NINEP" "share$i" "/newroot$path" \
		|| fail "cannot mount shared directory $path"
	i=$((i + 1))
done < /job/shares

mkdir -p /newroot/run/fdrxe-job
mount --move /job /newroot/run/fdrxe-job || fail "cannot move the job share"
mount --move /dev /newroot/dev || fail "cannot move /dev"
mount --move /proc /newroot/proc || fail "cannot move /proc"
mount --move /sys /newroot/sys || fail "cannot move /sys"
# Done here with busybox rather than in stage 2: every program stage 2
# starts is loaded over 9p, which costs a good fraction of a second in TCG.
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /newroot/dev/pts \
	|| fail "cannot mount devpts"
mount -t tmpfs -o mode=1777 tmpfs /newroot/dev/shm || fail "cannot mount /dev/shm"
[ -e /newroot/dev/fd ] || ln -s /proc/self/fd /newroot/dev/fd
mkfifo /newroot/run/fdrxe-pause || fail "cannot create /run/fdrxe-pause"

exec switch_root /newroot /run/fdrxe-job/stage2
# Only reached if exec itself failed; /job has moved, so console only.
say "FATAL: switch_root failed"
poweroff -f
