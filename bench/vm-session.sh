#!/bin/bash
# bench/vm-session.sh - the measuring half of bench/run-all.sh. Runs where a
# verbs device exists (inside tests/rxe/run, which sets FD_RXE_ADDR0), writes
# raw outputs only; bench/report.py turns them into tables and plots.
#
#   vm-session.sh OUT DIRECT_BUILD OFF_BUILD [--full] [--parts LIST]
#
# LIST: comma list of latency, bw, rstream, tools, callgrind, setup (time
# to first message, memory per endpoint), ucx (ucx_perftest anchor), rscg
# (rstream vs rsockets: instructions and packets per transfer), rdm (RDM
# round trips and receiver memory), tagged (64 B tagged latency on the
# wall clock: fd_rdm direct/OFF/upstream rxm, UCX tag_lat, ib_send_lat),
# more (FI_MORE message rate: bench/more-rate.sh into OUT/more); default all.
# BENCH_LAT_SIZES, BENCH_LAT_ITERS, BENCH_LAT_WARMUP, BENCH_BW_SIZES,
# BENCH_BW_ITERS, BENCH_BW_WINDOW, BENCH_RS_SIZES, BENCH_RS_ITERS,
# BENCH_RS_COUNT, BENCH_RS_BW_ITERS, BENCH_TOOL_SIZES, BENCH_TOOL_ITERS,
# BENCH_TOOL_BW_SIZES, BENCH_CG_ITERS, BENCH_MORE_N, BENCH_MORE_N2,
# BENCH_MORE_PERFTEST_CG (1: ib_send_bw under callgrind too) override
# the defaults (e.g. a loaded machine: BENCH_LAT_SIZES=1,16,256,4096,65536
# BENCH_LAT_ITERS=300).
# Every benchmark process runs at nice 19 and the two sides of a ping-pong
# are pinned to CPUs 0 and 1: on a 2-vCPU Soft-RoCE VM the rxe work runs in
# kernel threads (softirq, workqueues) that must preempt the spinning pollers
# at once, or round trips jump from ~50 us to a scheduler tick (4 ms).
set -u

OUT=${1:?usage: vm-session.sh OUT DIRECT_BUILD OFF_BUILD [--full] [--parts LIST]}
DIRECT=${2:?direct build dir}
OFF=${3:?off build dir}
shift 3
FULL=0
PARTS=latency,bw,rstream,tools,callgrind,setup,ucx,rscg,rdm,tagged,more
while [ $# -gt 0 ]; do
	case $1 in
	--full) FULL=1 ;;
	--parts) PARTS=$2; shift ;;
	*) echo "vm-session: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

ADDR=${FD_RXE_ADDR0:?no FD_RXE_ADDR0: run under tests/rxe/run}
# Upstream libfabric initializes every provider it has unless told
# otherwise; under valgrind that alone takes minutes.
export FI_PROVIDER=verbs
NICE=(nice -n 19)
CPU_S=0
CPU_C=1
[ "$(nproc)" -gt 1 ] || CPU_C=0

if [ "$FULL" = 1 ]; then
	LAT_SIZES=all		# 1 B .. 4 MiB
	LAT_ITERS=5000
	LAT_WARMUP=500
	TOOL_SIZES="1 4 16 64 256 1024 4096 16384 65536 262144 1048576 4194304"
	TOOL_ITERS=5000
	BW_SIZES=all
	BW_ITERS=5000
	RS_SIZES=1:4194304
	RS_ITERS=5000
	RS_COUNT=1000
	RS_BW_ITERS=10
	TOOL_BW_SIZES="64 4096 65536 1048576"
	CG_ITERS=200
	MORE_N=1600
	MORE_N2=3200
	MORE_PERFTEST_CG=1
else
	# Sized for a 2-core machine running a TCG VM (everything 10-100x
	# slower than native, 64 KiB messages at ~10-20 MB/s): six sizes, a
	# few hundred iterations; --full for the real sweep.
	LAT_SIZES=1,4,64,1024,4096,65536
	LAT_ITERS=300
	LAT_WARMUP=30
	TOOL_SIZES="1 4 64 1024 4096 65536"
	TOOL_ITERS=300
	BW_SIZES=1,64,1024,4096,65536
	BW_ITERS=300
	RS_SIZES=1,64,1024,4096,65536
	RS_ITERS=300
	RS_COUNT=50
	RS_BW_ITERS=4
	TOOL_BW_SIZES="64 4096 65536"
	CG_ITERS=50
	# FI_MORE: instruction counts do not depend on N; the time is
	# valgrind's start-up (8 runs, ~15-30 s each). ib_send_bw's loop
	# under callgrind (4 more runs) only with --full: its figure is
	# mostly empty polls, i.e. timing.
	MORE_N=400
	MORE_N2=800
	MORE_PERFTEST_CG=0
fi
BW_WINDOW=${BENCH_BW_WINDOW:-64}
CG_SIZES=64,4096	# one inline, one not
# Overrides for a shorter or longer run (run-all passes them through).
LAT_SIZES=${BENCH_LAT_SIZES:-$LAT_SIZES}
LAT_ITERS=${BENCH_LAT_ITERS:-$LAT_ITERS}
LAT_WARMUP=${BENCH_LAT_WARMUP:-$LAT_WARMUP}
TOOL_SIZES=${BENCH_TOOL_SIZES:-$TOOL_SIZES}
TOOL_ITERS=${BENCH_TOOL_ITERS:-$TOOL_ITERS}
BW_SIZES=${BENCH_BW_SIZES:-$BW_SIZES}
BW_ITERS=${BENCH_BW_ITERS:-$BW_ITERS}
RS_SIZES=${BENCH_RS_SIZES:-$RS_SIZES}
RS_ITERS=${BENCH_RS_ITERS:-$RS_ITERS}
RS_COUNT=${BENCH_RS_COUNT:-$RS_COUNT}
RS_BW_ITERS=${BENCH_RS_BW_ITERS:-$RS_BW_ITERS}
TOOL_BW_SIZES=${BENCH_TOOL_BW_SIZES:-$TOOL_BW_SIZES}
CG_ITERS=${BENCH_CG_ITERS:-$CG_ITERS}
MORE_N=${BENCH_MORE_N:-$MORE_N}
MORE_N2=${BENCH_MORE_N2:-$MORE_N2}
MORE_PERFTEST_CG=${BENCH_MORE_PERFTEST_CG:-$MORE_PERFTEST_CG}

declare -A BIN=(
	[direct]=$DIRECT/bench/fd_pingpong
	[off]=$OFF/bench/fd_pingpong
	[upstream]=$DIRECT/bench/fd_pingpong_upstream
	[rawverbs]=$DIRECT/bench/rawverbs_pingpong
)
declare -A SUBIN=(
	[direct]=$DIRECT/bench/fd_setup
	[off]=$OFF/bench/fd_setup
	[upstream]=$DIRECT/bench/fd_setup_upstream
)
SETUP_RUNS=${BENCH_SETUP_RUNS:-3}
SETUP_EPS=${BENCH_SETUP_EPS:-1 16 256}
UCX_ITERS=${BENCH_UCX_ITERS:-$LAT_ITERS}
# ucx_perftest's whole client under callgrind at two run lengths (tag_lat,
# am_lat): the difference per iteration is one round trip, empty polls
# included.
UCX_CG_N1=${BENCH_UCX_CG_N1:-100}
UCX_CG_N2=${BENCH_UCX_CG_N2:-300}
# UCP (tag_lat) over rc_verbs on rxe0: it needs a second transport for its
# wire-up messages (tcp and shared memory do not qualify in 1.13), and
# ud_verbs:aux keeps UD out of the data path. Its UD traffic gets through
# on this rxe only with GID index 0 (with the IPv4-mapped GID 1, or auto,
# wire-up times out and UCX aborts); rc_verbs alone answers "no auxiliary
# transport". The data lane stays rc_verbs/rxe0:1 (UCX_LOG_LEVEL=info
# prints ep_cfg[0]: tag(rc_verbs/rxe0:1)). UD_TIMEOUT: wire-up under
# callgrind is slow.
read -r -a UCP_ENV <<< "${BENCH_UCX_UCP_ENV:-UCX_TLS=rc_verbs,ud_verbs:aux UCX_NET_DEVICES=rxe0:1 UCX_IB_GID_INDEX=0 UCX_UD_TIMEOUT=300s}"
TAG_ITERS=${BENCH_TAG_ITERS:-$LAT_ITERS}
RSCG_SIZES=${BENCH_RSCG_SIZES:-64}
RSCG_VARIANTS=${BENCH_RSCG_VARIANTS:-direct}
RSCG_N1=${BENCH_RSCG_N1:-50}
RSCG_N2=${BENCH_RSCG_N2:-150}
declare -A RSBIN=(
	[direct]=$DIRECT/bench/fd_rstream
	[off]=$OFF/bench/fd_rstream
)
VARIANTS=(rawverbs direct off upstream)

# perf stat works here only if the kernel lets us count hardware events
# (never in a TCG VM); fd_pingpong checks again itself with perf_event_open.
perf_state() {
	# Debian's perf wrapper exits 0 even without a perf for this kernel:
	# look for a count in its CSV output instead.
	if command -v perf > /dev/null &&
		perf stat -x, -e instructions true 2>&1 > /dev/null | grep -q '^[0-9]'; then
		echo "hardware counters available"
	else
		echo "not available (no hardware counters for perf stat here)"
	fi
}
has_part() { case ",$PARTS," in *",$1,"*) return 0 ;; esac; return 1; }
say() { printf '[%s] %s\n' "$(date +%T)" "$*"; }

mkdir -p "$OUT"
{
	echo "kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
	echo "address $ADDR, devices: $(ls /sys/class/infiniband 2> /dev/null | tr '\n' ' ')"
	echo "mode $([ "$FULL" = 1 ] && echo full || echo default)"
	echo "lat sizes $LAT_SIZES iters $LAT_ITERS warmup $LAT_WARMUP"
	echo "bw sizes $BW_SIZES messages $BW_ITERS window $BW_WINDOW"
	echo "rstream sizes $RS_SIZES latency iters $RS_ITERS, bandwidth C $RS_COUNT x $RS_BW_ITERS iters"
	echo "tool sizes $TOOL_SIZES iters $TOOL_ITERS; bw tool sizes $TOOL_BW_SIZES"
	echo "perf: $(perf_state)"
	echo "callgrind sizes $CG_SIZES iters $CG_ITERS"
	echo "FI_MORE 64 B send_bw messages $MORE_N under callgrind," \
		"${BENCH_MORE_WALL_N:-$((MORE_N * 10))} on the wall clock; ib_send_bw under callgrind:" \
		"$([ "$MORE_PERFTEST_CG" = 1 ] && echo "$MORE_N and $MORE_N2" || echo no)"
	echo "setup runs $SETUP_RUNS, endpoints $SETUP_EPS; ucx iters $UCX_ITERS; rscg sizes $RSCG_SIZES iters $RSCG_N1/$RSCG_N2"
	echo "date $(date -u +%FT%TZ)"
} > "$OUT/session.txt"

# ---------------------------------------------------------------------------
if has_part latency; then
	mkdir -p "$OUT/latency"
	for v in "${VARIANTS[@]}"; do
		b=${BIN[$v]}
		if [ ! -x "$b" ]; then
			say "latency: $v: no binary $b, skipped"
			continue
		fi
		say "latency: $v"
		timeout 900 "${NICE[@]}" "$b" --local --cpus "$CPU_S,$CPU_C" -t all \
			-s "$LAT_SIZES" -n "$LAT_ITERS" -w "$LAT_WARMUP" --progress \
			--csv "$OUT/latency/$v.csv" --json "$OUT/latency/$v.json" \
			> "$OUT/latency/$v.txt" 2> "$OUT/latency/$v.err"
		rc=$?
		[ "$rc" = 0 ] || say "latency: $v exited $rc (see $OUT/latency/$v.err)"
	done
fi

# ---------------------------------------------------------------------------
# Bandwidth and message rate: a window of operations in flight.
if has_part bw; then
	mkdir -p "$OUT/bw"
	for v in "${VARIANTS[@]}"; do
		b=${BIN[$v]}
		[ -x "$b" ] || continue
		say "bandwidth: $v"
		timeout 900 "${NICE[@]}" "$b" --local --cpus "$CPU_S,$CPU_C" -t bw \
			-s "$BW_SIZES" -n "$BW_ITERS" -w $((BW_ITERS / 10 + 1)) -W "$BW_WINDOW" \
			--progress --csv "$OUT/bw/$v.csv" --json "$OUT/bw/$v.json" \
			> "$OUT/bw/$v.txt" 2> "$OUT/bw/$v.err"
		rc=$?
		[ "$rc" = 0 ] || say "bandwidth: $v exited $rc (see $OUT/bw/$v.err)"
	done
fi

# ---------------------------------------------------------------------------
# External tools on the same link: server on CPU 0, client on CPU 1. A
# client that starts before its server listens fails at once, so it is
# retried; the server is bounded by timeout.
rxe_counters() { # -> one line of name value pairs
	rdma statistic show link rxe0/1 2> /dev/null | tr -s ' ' | sed 's/^link [^ ]* //'
}
run_pair() { # name size server-cmd... -- client-cmd...
	local name=$1 size=$2
	shift 2
	local srv=() cli=()
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	local log=${PAIR_DIR:-$OUT/tools}/$name-$size
	timeout 300 "${NICE[@]}" taskset -c "$CPU_S" "${srv[@]}" > "$log.server" 2>&1 &
	local spid=$! try rc=1
	for try in $(seq 1 30); do
		sleep 1
		kill -0 "$spid" 2> /dev/null || break
		timeout 300 "${NICE[@]}" taskset -c "$CPU_C" "${cli[@]}" > "$log.txt" 2>&1
		rc=$?
		[ "$rc" = 0 ] && break
		grep -qiE "couldn.t connect|connection refused|rejected|ECONNREFUSED|not connected|unable to" \
			"$log.txt" || break
	done
	wait "$spid" 2> /dev/null
	[ "$rc" = 0 ] || say "tools: $name $size failed ($rc), see $log.txt"
}

# ---------------------------------------------------------------------------
# rstream: FI_EP_SOCK_STREAM (fd_rstream, direct and OFF builds) and
# rsockets' rstream tool, the same exchange: C transfers of S bytes each
# way per iteration; C = 1 for latency.
if has_part rstream; then
	mkdir -p "$OUT/rstream"
	for v in direct off; do
		b=${RSBIN[$v]}
		if [ ! -x "$b" ]; then
			say "rstream: $v: no $b (FABRIC_DIRECT_RSTREAM off?), skipped"
			continue
		fi
		say "rstream: $v"
		# --no-rtt: the loop timed as a whole, as rstream(1) times it
		# (per-iteration clock reads are system calls on this VM's
		# HPET clock source, work rsockets' side would not do).
		# -B 524288: rstream(1) sets SO_SNDBUF and SO_RCVBUF to 512 KiB
		# unless told otherwise; the same rings on our side.
		timeout 900 "${NICE[@]}" "$b" --local --cpus "$CPU_S,$CPU_C" -s "$RS_SIZES" \
			-n "$RS_ITERS" -w $((RS_ITERS / 10 + 1)) -C "$RS_COUNT" -I "$RS_BW_ITERS" --no-rtt \
			-B 524288 \
			--csv "$OUT/rstream/$v.csv" --json "$OUT/rstream/$v.json" \
			> "$OUT/rstream/$v.txt" 2> "$OUT/rstream/$v.err"
		rc=$?
		[ "$rc" = 0 ] || say "rstream: $v exited $rc (see $OUT/rstream/$v.err)"
	done
	if command -v rstream > /dev/null; then
		say "rstream: rsockets' rstream"
		PAIR_DIR=$OUT/rstream
		port=18500
		for s in ${RS_SIZES//,/ }; do
			port=$((port + 1))
			run_pair rsockets_lat "$s" rstream -b "$ADDR" -p "$port" -S "$s" -C 1 -I "$RS_ITERS" \
				-- rstream -s "$ADDR" -p "$port" -S "$s" -C 1 -I "$RS_ITERS"
			port=$((port + 1))
			run_pair rsockets_bw "$s" rstream -b "$ADDR" -p "$port" -S "$s" -C "$RS_COUNT" \
				-I "$RS_BW_ITERS" -- rstream -s "$ADDR" -p "$port" -S "$s" -C "$RS_COUNT" \
				-I "$RS_BW_ITERS"
		done
		unset PAIR_DIR
	else
		say "rstream: rsockets' rstream not installed (rdmacm-utils), skipped"
	fi
fi

if has_part tools; then
	mkdir -p "$OUT/tools"
	port=18600
	for s in $TOOL_SIZES; do
		say "tools: $s B"
		port=$((port + 1))
		# perftest sometimes prints "inf" for every latency column (its
		# cycle-counter calibration read 0 MHz under TCG): measure again.
		for try in 1 2 3; do
			command -v ib_send_lat > /dev/null || break
			port=$((port + 1))
			run_pair ib_send_lat "$s" ib_send_lat -F -d rxe0 -s "$s" -n "$TOOL_ITERS" -p "$port" \
				-- ib_send_lat -F -d rxe0 -s "$s" -n "$TOOL_ITERS" -p "$port" "$ADDR"
			grep -qw inf "$OUT/tools/ib_send_lat-$s.txt" || break
			say "tools: ib_send_lat $s printed inf, again ($try)"
		done
		port=$((port + 1))
		for try in 1 2 3; do
			command -v ib_write_lat > /dev/null || break
			port=$((port + 1))
			run_pair ib_write_lat "$s" ib_write_lat -F -d rxe0 -s "$s" -n "$TOOL_ITERS" -p "$port" \
				-- ib_write_lat -F -d rxe0 -s "$s" -n "$TOOL_ITERS" -p "$port" "$ADDR"
			grep -qw inf "$OUT/tools/ib_write_lat-$s.txt" || break
			say "tools: ib_write_lat $s printed inf, again ($try)"
		done
		port=$((port + 1))
		command -v fi_pingpong > /dev/null &&
			run_pair fi_pingpong "$s" fi_pingpong -p verbs -e msg -I "$TOOL_ITERS" -S "$s" -B "$port" \
				-- fi_pingpong -p verbs -e msg -I "$TOOL_ITERS" -S "$s" -P "$port" "$ADDR"
	done
	# perftest's bandwidth tools, the same window (tx depth) as ours. -F:
	# under TCG the cycle counter's calibration looks unstable to perftest
	# (r^2 < 0.9), which would make it refuse to report.
	for s in $TOOL_BW_SIZES; do
		say "tools: bandwidth $s B"
		for t in ib_send_bw ib_write_bw; do
			port=$((port + 1))
			command -v $t > /dev/null &&
				run_pair $t "$s" $t -F -d rxe0 -s "$s" -n "$BW_ITERS" -t "$BW_WINDOW" -p "$port" \
					-- $t -F -d rxe0 -s "$s" -n "$BW_ITERS" -t "$BW_WINDOW" -p "$port" "$ADDR"
		done
	done
fi

# ---------------------------------------------------------------------------
# Instructions per operation: each variant once under callgrind, both sides
# in one run (valgrind follows the fork; each process writes its own
# files, one per test and size thanks to the dumps the benchmark requests).
if has_part callgrind; then
	if ! command -v valgrind > /dev/null; then
		say "callgrind: valgrind not installed, skipped"
	else
		for v in "${VARIANTS[@]}"; do
			b=${BIN[$v]}
			[ -x "$b" ] || continue
			d=$OUT/callgrind/$v
			rm -rf "$d"
			mkdir -p "$d"
			say "callgrind: $v"
			timeout 900 "${NICE[@]}" valgrind --tool=callgrind --collect-atstart=no \
				--callgrind-out-file="$d/cg.%p" -q \
				"$b" --local --cpus "$CPU_S,$CPU_C" --callgrind -t all -s "$CG_SIZES" \
				-n "$CG_ITERS" -w 10 > "$d/run.log" 2> "$d/run.err"
			rc=$?
			[ "$rc" = 0 ] || say "callgrind: $v exited $rc (see $d/run.err)"
		done
	fi
fi
# ---------------------------------------------------------------------------
# Time to first message and memory per endpoint (fd_setup): the client is
# exec'd by the launcher, which reads the clock first. Wall time: plain
# runs; instructions: the client under callgrind from its first
# instruction, dumped at each phase; memory: -m with N endpoints.
if has_part setup; then
	mkdir -p "$OUT/setup"
	for v in direct off upstream; do
		b=${SUBIN[$v]}
		[ -x "$b" ] || { say "setup: $v: no $b, skipped"; continue; }
		say "setup: $v: time to first message x $SETUP_RUNS"
		for k in $(seq 1 "$SETUP_RUNS"); do
			timeout 300 "${NICE[@]}" "$b" --local -e 1 \
				> "$OUT/setup/$v-wall-$k.txt" 2> "$OUT/setup/$v-wall-$k.err" ||
				say "setup: $v wall run $k failed (see $OUT/setup/$v-wall-$k.err)"
		done
		if command -v valgrind > /dev/null; then
			say "setup: $v: under callgrind"
			d=$OUT/setup/cg-$v
			mkdir -p "$d"
			timeout 900 "${NICE[@]}" "$b" --local -e 1 -- valgrind \
				--tool=callgrind --callgrind-out-file="$d/cg.%p" -q \
				> "$d/run.log" 2> "$d/run.err" ||
				say "setup: $v callgrind failed (see $d/run.err)"
		fi
		for n in $SETUP_EPS; do
			say "setup: $v: memory with $n endpoints"
			timeout 600 "${NICE[@]}" "$b" --local -m -e "$n" \
				> "$OUT/setup/$v-mem-$n.txt" 2> "$OUT/setup/$v-mem-$n.err" ||
				say "setup: $v memory $n failed (see $OUT/setup/$v-mem-$n.err)"
		done
	done
fi

# ---------------------------------------------------------------------------
# UCX anchor: ucx_perftest over rc_verbs on the same device, latency (wall)
# and instructions per send call (the client under callgrind).
if has_part ucx; then
	mkdir -p "$OUT/ucx"
	if ! command -v ucx_perftest > /dev/null; then
		say "ucx: ucx_perftest not installed (ucx-utils), skipped"
		echo "ucx_perftest not installed" > "$OUT/ucx/missing.txt"
	else
		ucx_info -v > "$OUT/ucx/version.txt" 2>&1
		ucx_info -d > "$OUT/ucx/devices.txt" 2>&1
		PAIR_DIR=$OUT/ucx
		port=18700
		UCXO=(-d rxe0:1 -x rc_verbs -w 20)
		for t in am_lat put_lat; do
			say "ucx: $t 64 B"
			port=$((port + 1))
			before=$(rxe_counters)
			run_pair "ucx_$t" 64 ucx_perftest "${UCXO[@]}" -t "$t" -s 64 -n "$UCX_ITERS" -p "$port" \
				-- ucx_perftest "${UCXO[@]}" -t "$t" -s 64 -n "$UCX_ITERS" -p "$port" "$ADDR"
			# rxe's counters around the run: retries, RNR naks and
			# deferred ACKs show up here if the link is not idle
			{
				echo "before $before"
				echo "after $(rxe_counters)"
			} > "$OUT/ucx/counters-$t.txt"
		done
		# One run under callgrind: the inclusive cost per call of the send
		# (uct_rc_verbs_ep_am_short, an exported symbol). Its progress
		# callback is static in a stripped library, so polling cannot be
		# told apart from receiving (see README).
		if command -v valgrind > /dev/null; then
			say "ucx: am_lat 64 B under callgrind"
			port=$((port + 1))
			run_pair ucx_cg_am_lat 64 ucx_perftest "${UCXO[@]}" -t am_lat -s 64 -n "$RSCG_N1" \
				-p "$port" -- valgrind --tool=callgrind -q --compress-strings=no \
				--compress-pos=no --callgrind-out-file="$OUT/ucx/cg.am_lat" ucx_perftest \
				"${UCXO[@]}" -t am_lat -s 64 -n "$RSCG_N1" -p "$port" "$ADDR"
			# One round trip per iteration, counted like fd_rdm's loop
			# total: the client whole (ucx_perftest cannot be
			# bracketed) at two run lengths, the difference divided
			# by the extra iterations (start-up, wire-up and warm-up
			# cancel). Each thread gets its own file (cg.<test>.n<N>-01
			# is the main thread): UCX's async thread does timer work
			# that grows with the wall time, not the iterations, and
			# report_tagged.py takes the main thread's spin waits on
			# it out. tag_lat is UCP tag matching over rc_verbs (the
			# counterpart of fi_tsend/fi_trecv), am_lat UCT active
			# messages on the rc_verbs transport alone.
			for t in tag_lat am_lat; do
				for n in $UCX_CG_N1 $UCX_CG_N2; do
					say "ucx: $t 64 B under callgrind, $n iterations"
					port=$((port + 1))
					if [ "$t" = tag_lat ]; then
						cmd=(env "${UCP_ENV[@]}")
						args=(-t tag_lat -s 64 -n "$n" -w 20 -p "$port")
					else
						cmd=(env)
						args=("${UCXO[@]}" -t am_lat -s 64 -n "$n" -p "$port")
					fi
					run_pair "ucx_cg_${t}_n$n" 64 "${cmd[@]}" ucx_perftest "${args[@]}" \
						-- "${cmd[@]}" valgrind --tool=callgrind -q --compress-strings=no \
						--separate-threads=yes \
						--callgrind-out-file="$OUT/ucx/cg.$t.n$n" ucx_perftest \
						"${args[@]}" "$ADDR"
				done
			done
			echo "n1 $UCX_CG_N1 n2 $UCX_CG_N2 ucp_env ${UCP_ENV[*]}" > "$OUT/ucx/cg-lengths.txt"
		fi
		unset PAIR_DIR
	fi
fi

# ---------------------------------------------------------------------------
# rstream vs rsockets per transfer: instructions (fd_rstream's toggled
# loops with call counts and an empty-fi_recv probe; rsockets' rstream
# client under callgrind at two iteration counts, the difference being the
# loop), and rxe's counters around plain runs at two iteration counts.
if has_part rscg; then
	mkdir -p "$OUT/rscg"
	PAIR_DIR=$OUT/rscg
	port=18800
	for s in $RSCG_SIZES; do
		for v in $RSCG_VARIANTS; do
			b=${RSBIN[$v]}
			[ -x "$b" ] || continue
			if command -v valgrind > /dev/null; then
				say "rscg: fd_rstream $v $s B under callgrind"
				d=$OUT/rscg/cg-$v-$s
				mkdir -p "$d"
				timeout 900 "${NICE[@]}" valgrind --tool=callgrind --collect-atstart=no \
					--callgrind-out-file="$d/cg.%p" -q "$b" --local --cpus "$CPU_S,$CPU_C" \
					--callgrind -t lat -s "$s" -n "$RSCG_N1" -w 5 > "$d/run.log" 2> "$d/run.err" ||
					say "rscg: fd_rstream $v $s failed (see $d/run.err)"
			fi
			for n in $RSCG_N1 $RSCG_N2; do
				before=$(rxe_counters)
				timeout 600 "${NICE[@]}" "$b" --local --cpus "$CPU_S,$CPU_C" -t lat -s "$s" \
					-n "$n" -w 5 -q > /dev/null 2> "$OUT/rscg/wire-$v-$s-$n.err"
				echo "rc $? iters $n warmup 5" > "$OUT/rscg/wire-$v-$s-$n.txt"
				echo "before $before" >> "$OUT/rscg/wire-$v-$s-$n.txt"
				echo "after $(rxe_counters)" >> "$OUT/rscg/wire-$v-$s-$n.txt"
			done
		done
		command -v rstream > /dev/null || continue
		for n in $RSCG_N1 $RSCG_N2; do
			if command -v valgrind > /dev/null; then
				say "rscg: rsockets rstream $s B under callgrind, $n iterations"
				port=$((port + 1))
				run_pair "rsockets_cg_n$n" "$s" rstream -b "$ADDR" -p "$port" -S "$s" -C 1 -I "$n" \
					-- valgrind --tool=callgrind -q --compress-strings=no --compress-pos=no \
					--callgrind-out-file="$OUT/rscg/cg.rsockets.$s.$n" \
					rstream -s "$ADDR" -p "$port" -S "$s" -C 1 -I "$n"
			fi
			port=$((port + 1))
			before=$(rxe_counters)
			run_pair "rsockets_wire_n$n" "$s" rstream -b "$ADDR" -p "$port" -S "$s" -C 1 -I "$n" \
				-- rstream -s "$ADDR" -p "$port" -S "$s" -C 1 -I "$n"
			{
				echo "rc 0 iters $n warmup 0"
				echo "before $before"
				echo "after $(rxe_counters)"
			} > "$OUT/rscg/wire-rsockets-$s-$n.txt"
		done
	done
	unset PAIR_DIR
fi
# ---------------------------------------------------------------------------
# RDM endpoints (issue 14): user-space instructions per tagged 64 B round
# trip for direct, OFF and upstream verbs;ofi_rxm beside the MSG send round
# trip of both builds (bench/rdm-callgrind.sh: OUT/rdm/rdm-callgrind.csv),
# and an RDM receiver's memory with 8 and 256 connected peers
# (fd_rdm_mem: OUT/rdm/mem-<build>.txt).
if has_part rdm; then
	mkdir -p "$OUT/rdm"
	rdm_bins=()
	for b in "$DIRECT/bench/fd_rdm" "$OFF/bench/fd_rdm" "$DIRECT/bench/fd_rdm_upstream" \
		"$DIRECT/bench/fd_pingpong" "$OFF/bench/fd_pingpong"; do
		[ -x "$b" ] && rdm_bins+=("$b")
	done
	if command -v valgrind > /dev/null && [ ${#rdm_bins[@]} -gt 0 ]; then
		say "rdm: instructions per tagged round trip (${#rdm_bins[@]} binaries)"
		RDM_CG_ITERS=${RDM_CG_ITERS:-200} timeout 2400 "${NICE[@]}" \
			"$(dirname "${BASH_SOURCE[0]}")/rdm-callgrind.sh" "$OUT/rdm" "${rdm_bins[@]}" \
			> "$OUT/rdm/callgrind.txt" 2>&1 || say "rdm: rdm-callgrind.sh failed (see $OUT/rdm/callgrind.txt)"
	fi
	for v in direct off; do
		dir=$DIRECT
		[ "$v" = off ] && dir=$OFF
		b=$dir/bench/fd_rdm_mem
		[ -x "$b" ] || continue
		say "rdm: receiver memory, $v"
		timeout 600 "${NICE[@]}" "$b" -b "$ADDR" -p 8,256 > "$OUT/rdm/mem-$v.txt" \
			2> "$OUT/rdm/mem-$v.err" || say "rdm: fd_rdm_mem $v failed (see $OUT/rdm/mem-$v.err)"
	done
fi
# ---------------------------------------------------------------------------
# Tagged 64 B latency on the wall clock (issue 23), one after the other in
# this session: fd_rdm (this library's RDM endpoint, direct and OFF),
# fd_rdm_upstream (Debian's libfabric, verbs;ofi_rxm), ucx_perftest
# tag_lat (UCP over rc_verbs) and ib_send_lat (raw verbs, the floor). Each
# prints its mean one-way time (half the round trip); UCX and perftest
# their median too.
if has_part tagged; then
	mkdir -p "$OUT/tagged"
	PAIR_DIR=$OUT/tagged
	port=18900
	for v in direct off upstream; do
		case $v in
		direct) b=$DIRECT/bench/fd_rdm ;;
		off) b=$OFF/bench/fd_rdm ;;
		upstream) b=$DIRECT/bench/fd_rdm_upstream ;;
		esac
		[ -x "$b" ] || { say "tagged: no $b, skipped"; continue; }
		say "tagged: fd_rdm $v, 64 B x $TAG_ITERS"
		# upstream: FI_UNIVERSE_SIZE=16 or its rxm CQs fail on rxe;
		# the provider comes from the hints (see rdm-callgrind.sh)
		env -u FI_PROVIDER FI_UNIVERSE_SIZE=16 timeout 600 "${NICE[@]}" "$b" -t tlat -s 64 \
			-n "$TAG_ITERS" > "$OUT/tagged/fd_rdm-$v.txt" 2> "$OUT/tagged/fd_rdm-$v.err" ||
			say "tagged: fd_rdm $v failed (see $OUT/tagged/fd_rdm-$v.err)"
	done
	if command -v ucx_perftest > /dev/null; then
		say "tagged: ucx_perftest tag_lat 64 B x $TAG_ITERS"
		port=$((port + 1))
		run_pair ucx_tag_lat 64 env "${UCP_ENV[@]}" \
			ucx_perftest -t tag_lat -s 64 -n "$TAG_ITERS" -w 20 -p "$port" \
			-- env "${UCP_ENV[@]}" \
			ucx_perftest -t tag_lat -s 64 -n "$TAG_ITERS" -w 20 -p "$port" "$ADDR"
	else
		echo "ucx_perftest not installed (ucx-utils)" > "$OUT/tagged/ucx-missing.txt"
	fi
	for try in 1 2 3; do
		command -v ib_send_lat > /dev/null || break
		say "tagged: ib_send_lat 64 B x $TAG_ITERS"
		port=$((port + 1))
		run_pair ib_send_lat 64 ib_send_lat -F -d rxe0 -s 64 -n "$TAG_ITERS" -p "$port" \
			-- ib_send_lat -F -d rxe0 -s 64 -n "$TAG_ITERS" -p "$port" "$ADDR"
		grep -qw inf "$OUT/tagged/ib_send_lat-64.txt" || break
	done
	unset PAIR_DIR
fi
# ---------------------------------------------------------------------------
# FI_MORE message rate (issue 15): 64 B send_bw, one request per call
# against 16 per doorbell, for every variant under callgrind and on the
# wall clock, beside ib_send_bw with and without --post_list 16
# (bench/more-rate.sh; OUT/more).
if has_part more; then
	mkdir -p "$OUT/more"
	say "more: FI_MORE message rate, $MORE_N messages"
	BENCH_MORE_N=$MORE_N BENCH_MORE_N2=$MORE_N2 BENCH_MORE_PERFTEST_CG=$MORE_PERFTEST_CG \
		timeout 1800 "$(dirname "${BASH_SOURCE[0]}")/more-rate.sh" "$OUT/more" "$DIRECT" "$OFF" \
		> "$OUT/more/more-rate.log" 2>&1 || say "more: more-rate.sh failed (see $OUT/more/more-rate.log)"
fi
say "session done"
