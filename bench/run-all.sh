#!/bin/bash
# bench/run-all.sh - run the benchmarks: one command from a fresh Debian 12
# machine to the comparison table.
#
#   bench/run-all.sh [--full] [--out DIR]
#                    [--parts latency,bw,rstream,tools,callgrind,setup,ucx,rscg,rdm,tagged,more[,mpi]]
#                    [--no-install] [--jobs N]
#
# 1. installs what is missing (scripts/install-deps.sh, then what only the
#    benchmarks use: perftest, valgrind, gnuplot-nox, libfabric-bin/-dev,
#    rdmacm-utils, ucx-utils for ucx_perftest);
# 2. builds its own trees: build/bench-direct (FABRIC_DIRECT=verbs, also
#    holds fd_pingpong_upstream and rawverbs_pingpong) and build/bench-off;
# 3. runs everything in ONE Soft-RoCE session (tests/rxe/run: real devices,
#    host rdma_rxe, or a qemu VM): fd_pingpong (latency and bandwidth) in
#    the direct, OFF and upstream builds, rawverbs_pingpong, fd_rstream
#    (direct, OFF) next to rsockets' rstream, perftest's ib_send_lat,
#    ib_write_lat, ib_send_bw, ib_write_bw, Debian's fi_pingpong, then
#    each variant once under callgrind; time to first message and memory
#    per endpoint (fd_setup: direct, OFF, upstream); ucx_perftest over
#    rc_verbs; rstream vs rsockets per transfer (instructions, packets);
#    RDM tagged 64 B round trips under callgrind (direct, OFF, upstream
#    verbs;ofi_rxm, beside the MSG send) and an RDM receiver's memory with
#    8 and 256 peers (fd_rdm_mem); UCX's tag_lat and am_lat round trips
#    under callgrind and the tagged 64 B latency on the wall clock (this
#    library, upstream rxm, UCX tag_lat, ib_send_lat); the FI_MORE
#    message rate: 64 B sends
#    one per call against 16 per doorbell, instructions per message and
#    msg/s, beside ib_send_bw with and without --post_list 16
#    (more-rate.sh);
#    optional part mpi (not run by default, it builds MPICH 4.0.2 twice,
#    about 20 minutes each on 2 cores): bench/mpi/run-mpi-bench.sh, MPI
#    ping-pong, MPI_Allreduce and instructions per 8 B MPI round trip for
#    MPICH on the direct build, on the OFF build and on Debian's
#    libfabric, Open MPI over the drop-in, over Debian's libfabric and
#    over UCX, in a second VM session (results in OUT/mpi);
# 4. prints the comparison table (ratios against raw verbs) and writes CSV,
#    JSON and PNG plots to the output directory (default
#    build/bench-results).
#
# Default run: six sizes 1 B..64 KiB x 300 iterations for latency, five
# sizes x 300 messages for bandwidth and rstream, 1/16/256 endpoints;
# about 25 minutes (build included; estimated from the parts' times) on a
# quiet 2-core machine through the TCG VM. --full: 1 B..4 MiB, 5000
# iterations (hours under TCG).
# BENCH_* variables in the environment override sizes and counts (see
# vm-session.sh); the VM inherits the environment.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$HERE/.." && pwd -P)
OUT=$REPO/build/bench-results
FULL=()
PARTS=latency,bw,rstream,tools,callgrind,setup,ucx,rscg,rdm,tagged,more
INSTALL=1
JOBS=2

while [ $# -gt 0 ]; do
	case $1 in
	--full) FULL=(--full) ;;
	--out) OUT=$2; shift ;;
	--out=*) OUT=${1#--out=} ;;
	--parts) PARTS=$2; shift ;;
	--no-install) INSTALL=0 ;;
	--jobs) JOBS=$2; shift ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) echo "run-all: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

say() { printf '\n=== %s\n' "$*"; }
t0=$(date +%s)

if [ "$INSTALL" = 1 ]; then
	say "dependencies"
	bash "$REPO/scripts/install-deps.sh"
	# Not in the project's list (yet): what only the benchmarks use.
	missing=()
	for p in perftest valgrind gnuplot-nox libfabric-bin libfabric-dev rdmacm-utils \
		ibverbs-providers python3 cmake ucx-utils; do
		dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "run-all: installing ${missing[*]}"
		SUDO=
		[ "$(id -u)" = 0 ] || SUDO=sudo
		$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
		$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends "${missing[@]}" > /dev/null
	fi
fi

say "building build/bench-direct and build/bench-off"
for v in direct off; do
	mode=verbs
	[ "$v" = off ] && mode=OFF
	dir=$REPO/build/bench-$v
	# The configure log sits beside the tree, in build/: on a fresh clone
	# nothing has created that yet.
	mkdir -p "$dir"
	cmake -S "$REPO" -B "$dir" -DFABRIC_DIRECT=$mode -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DFABRIC_DIRECT_TESTS=OFF -DFABRIC_DIRECT_BENCH=ON -DFABRIC_DIRECT_RSTREAM=ON > "$dir.cmake.log" 2>&1 ||
		{ cat "$dir.cmake.log"; exit 1; }
	targets=(fd_pingpong fd_rstream fd_setup fd_rdm fd_rdm_mem)
	[ "$v" = direct ] && targets+=(rawverbs_pingpong fd_pingpong_upstream fd_setup_upstream fd_rdm_upstream)
	cmake --build "$dir" -j "$JOBS" --target "${targets[@]}" > "$dir.build.log" 2>&1 ||
		{ tail -40 "$dir.build.log"; exit 1; }
done
[ -x "$REPO/build/bench-direct/bench/fd_pingpong_upstream" ] ||
	echo "run-all: warning: no fd_pingpong_upstream (libfabric-dev missing?)"

say "measuring in one Soft-RoCE session (parts: $PARTS)"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)
# The output directory must be visible inside the VM: it is shared when it
# lies outside the work tree.
case $OUT/ in
"$REPO"/*) ;;
*) export FD_RXE_SHARE=${FD_RXE_SHARE:+$FD_RXE_SHARE:}$OUT ;;
esac
# The MPI part has its own VM session, after the others.
MPI_PART=0
case ,$PARTS, in *,mpi,*) MPI_PART=1 ;; esac
PARTS=$(echo ",$PARTS," | sed 's/,mpi,/,/g; s/^,//; s/,$//')
for p in ${PARTS//,/ }; do
	rm -rf "${OUT:?}/$p"
done
rm -rf "$OUT/summary"
# What was measured: the tree the variants were built from.
{
	echo "source $(git -C "$REPO" describe --always --dirty 2> /dev/null || echo unknown)"
	echo "compiler $(cc --version | head -n 1)"
	echo "host $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
} > "$OUT/build.txt"
# One Soft-RoCE session at a time on a shared machine: VM runs queue on
# the same lock file as the test suites' (FD_VM_LOCK to change, "none"
# for no lock).
# Someone who already holds the lock (flock /tmp/fd-vm.lock bench/run-all.sh,
# as the test suites' VM runs are wrapped) must not wait for it again: a
# second flock on the file from a child would wait for its own parent.
lock_held_above() { # file: 0 if a process among our ancestors holds its flock
	local ino holders p q
	ino=$(stat -c %i "$1" 2> /dev/null) || return 1
	# /proc/locks: "N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE ..."; waiters
	# have "->" in the second field and are left out.
	holders=$(awk -v ino="$ino" '$2 == "FLOCK" { n = split($6, f, ":"); if (f[n] == ino) print $5 }' /proc/locks 2> /dev/null)
	[ -n "$holders" ] || return 1
	p=$$
	while [ -n "$p" ] && [ "$p" -gt 1 ]; do
		for q in $holders; do
			[ "$q" = "$p" ] && return 0
		done
		p=$(awk '{ print $4 }' "/proc/$p/stat" 2> /dev/null)
	done
	return 1
}
LOCK=()
LOCKFILE=${FD_VM_LOCK:-/tmp/fd-vm.lock}
if [ "$LOCKFILE" != none ] && command -v flock > /dev/null && ! lock_held_above "$LOCKFILE"; then
	LOCK=(flock "$LOCKFILE")
fi
if [ -n "$PARTS" ]; then
	${LOCK[@]+"${LOCK[@]}"} "$REPO/tests/rxe/run" --timeout 4800 -- "$HERE/vm-session.sh" "$OUT" \
		"$REPO/build/bench-direct" "$REPO/build/bench-off" ${FULL[@]+"${FULL[@]}"} \
		--parts "$PARTS"
fi
if [ "$MPI_PART" = 1 ]; then
	say "MPI: MPICH (direct, OFF, upstream libfabric), Open MPI (drop-in, upstream, UCX)"
	"$HERE/mpi/run-mpi-bench.sh" "$OUT/mpi"
fi

if [ -n "$PARTS" ]; then
	say "report"
	python3 "$HERE/report.py" "$OUT"
fi
echo "run-all: done in $(( $(date +%s) - t0 )) s; results in $OUT"
