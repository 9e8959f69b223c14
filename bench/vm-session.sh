#!/bin/bash
# bench/vm-session.sh - the measuring half of bench/run-all.sh. Runs where a
# verbs device exists (inside tests/rxe/run, which sets FD_RXE_ADDR0), writes
# raw outputs only; bench/report.py turns them into tables and plots.
#
#   vm-session.sh OUT DIRECT_BUILD OFF_BUILD [--full] [--parts LIST]
#
# LIST: comma list of latency, tools, callgrind (default: all three).
# BENCH_LAT_SIZES, BENCH_LAT_ITERS, BENCH_LAT_WARMUP, BENCH_TOOL_SIZES,
# BENCH_TOOL_ITERS, BENCH_CG_ITERS override the defaults (e.g. a loaded
# machine: BENCH_LAT_SIZES=1,16,256,4096,65536 BENCH_LAT_ITERS=300).
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
PARTS=latency,tools,callgrind
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
	CG_ITERS=200
else
	LAT_SIZES=1:65536
	LAT_ITERS=1000
	LAT_WARMUP=100
	TOOL_SIZES="1 4 16 64 256 1024 4096 16384 65536"
	TOOL_ITERS=1000
	CG_ITERS=50
fi
CG_SIZES=64,4096	# one inline, one not
# Overrides for a shorter or longer run (run-all passes them through).
LAT_SIZES=${BENCH_LAT_SIZES:-$LAT_SIZES}
LAT_ITERS=${BENCH_LAT_ITERS:-$LAT_ITERS}
LAT_WARMUP=${BENCH_LAT_WARMUP:-$LAT_WARMUP}
TOOL_SIZES=${BENCH_TOOL_SIZES:-$TOOL_SIZES}
TOOL_ITERS=${BENCH_TOOL_ITERS:-$TOOL_ITERS}
CG_ITERS=${BENCH_CG_ITERS:-$CG_ITERS}

declare -A BIN=(
	[direct]=$DIRECT/bench/fd_pingpong
	[off]=$OFF/bench/fd_pingpong
	[upstream]=$DIRECT/bench/fd_pingpong_upstream
	[rawverbs]=$DIRECT/bench/rawverbs_pingpong
)
VARIANTS=(rawverbs direct off upstream)

has_part() { case ",$PARTS," in *",$1,"*) return 0 ;; esac; return 1; }
say() { printf '[%s] %s\n' "$(date +%T)" "$*"; }

mkdir -p "$OUT"
{
	echo "kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
	echo "address $ADDR, devices: $(ls /sys/class/infiniband 2> /dev/null | tr '\n' ' ')"
	echo "mode $([ "$FULL" = 1 ] && echo full || echo default)"
	echo "lat sizes $LAT_SIZES iters $LAT_ITERS warmup $LAT_WARMUP"
	echo "tool sizes $TOOL_SIZES iters $TOOL_ITERS"
	echo "callgrind sizes $CG_SIZES iters $CG_ITERS"
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
	# The rstream variant of fd_pingpong is a hook for now: the rstream
	# provider does not exist yet. When it does, add '-t rstream' here.
fi

# ---------------------------------------------------------------------------
# External tools on the same link: server on CPU 0, client on CPU 1. A
# client that starts before its server listens fails at once, so it is
# retried; the server is bounded by timeout.
run_pair() { # name size server-cmd... -- client-cmd...
	local name=$1 size=$2
	shift 2
	local srv=() cli=()
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	local log=$OUT/tools/$name-$size
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

if has_part tools; then
	mkdir -p "$OUT/tools"
	port=18600
	for s in $TOOL_SIZES; do
		say "tools: $s B"
		port=$((port + 1))
		command -v ib_send_lat > /dev/null &&
			run_pair ib_send_lat "$s" ib_send_lat -d rxe0 -s "$s" -n "$TOOL_ITERS" -p "$port" \
				-- ib_send_lat -d rxe0 -s "$s" -n "$TOOL_ITERS" -p "$port" "$ADDR"
		port=$((port + 1))
		command -v ib_write_lat > /dev/null &&
			run_pair ib_write_lat "$s" ib_write_lat -d rxe0 -s "$s" -n "$TOOL_ITERS" -p "$port" \
				-- ib_write_lat -d rxe0 -s "$s" -n "$TOOL_ITERS" -p "$port" "$ADDR"
		port=$((port + 1))
		command -v fi_pingpong > /dev/null &&
			run_pair fi_pingpong "$s" fi_pingpong -p verbs -e msg -I "$TOOL_ITERS" -S "$s" -B "$port" \
				-- fi_pingpong -p verbs -e msg -I "$TOOL_ITERS" -S "$s" -P "$port" "$ADDR"
		port=$((port + 1))
		command -v rstream > /dev/null &&
			run_pair rstream "$s" rstream -b "$ADDR" -p "$port" -S "$s" -C 1 -I "$TOOL_ITERS" \
				-- rstream -s "$ADDR" -p "$port" -S "$s" -C 1 -I "$TOOL_ITERS"
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
say "session done"
