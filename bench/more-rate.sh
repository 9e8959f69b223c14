#!/bin/bash
# bench/more-rate.sh - FI_MORE message rate, inside a Soft-RoCE session:
#
#   tests/rxe/run -- bench/more-rate.sh OUT [DIRECT_BUILD [OFF_BUILD]]
#
# 64 B send_bw, window 64, one request per call against 16 per doorbell
# (fi_sendmsg with FI_MORE on 15 of 16; raw verbs: one chained
# ibv_post_send, perftest's --post_list), for direct, off, raw verbs and
# upstream, and perftest's ib_send_bw with and without --post_list 16:
#
#   * instructions per message (primary: deterministic): every variant
#     client under callgrind (its server runs natively) with collection
#     toggled around each posting call; OUT/cg/<variant>-b<batch>/ holds
#     the dumps, run.log the call counts. ib_send_bw cannot be bracketed:
#     with BENCH_MORE_PERFTEST_CG=1 (the default here; run-all only with
#     --full: four more valgrind runs, ~50 s under TCG) its client runs
#     under callgrind at two message counts and the difference of the
#     totals is divided by the difference of messages (its whole loop,
#     empty polls included: timing more than code).
#   * wall-clock rate (secondary: on Soft-RoCE every doorbell is a system
#     call and rxe's per-request kernel work dominates; see bench/README.md),
#     with rxe0's counters around each wall run (RNR NAKs stall a sender
#     for the receiver-not-ready timer and decide rates more than batching).
#
# BENCH_MORE_N / BENCH_MORE_N2: messages per callgrind run (ib_send_bw
# also at N2); BENCH_MORE_WALL_N: per wall-clock run (default 10 x N).
# bench/run-all.sh runs this as its `more` part
# (OUT/more); bench/more-report.py OUT prints the table alone.
set -u
OUT=${1:?usage: more-rate.sh OUT [DIRECT_BUILD [OFF_BUILD]]}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$HERE/.." && pwd -P)
DIRECT=${2:-$REPO/build/bench-direct}
OFF=${3:-$REPO/build/bench-off}
ADDR=${FD_RXE_ADDR0:?no FD_RXE_ADDR0: run under tests/rxe/run}
N=${BENCH_MORE_N:-1600}
N2=${BENCH_MORE_N2:-3200}
PERFTEST_CG=${BENCH_MORE_PERFTEST_CG:-1}
# The wall runs are cheap next to valgrind's start-up: ten times the
# messages, so a run's loop lasts long enough to be timed at all.
NW=${BENCH_MORE_WALL_N:-$((N * 10))}
NICE=(nice -n 19)
export FI_PROVIDER=verbs
mkdir -p "$OUT"
declare -A BIN=(
	[direct]=$DIRECT/bench/fd_pingpong
	[off]=$OFF/bench/fd_pingpong
	[upstream]=$DIRECT/bench/fd_pingpong_upstream
	[rawverbs]=$DIRECT/bench/rawverbs_pingpong
)
say() { echo "[$(date +%T)] more-rate: $*" >&2; }
rxe_counters() { # -> one line of name value pairs, as vm-session.sh's
	rdma statistic show link rxe0/1 2> /dev/null | tr -s ' ' | sed 's/^link [^ ]* //'
}

port=18950
for v in rawverbs direct off upstream; do
	b=${BIN[$v]}
	[ -x "$b" ] || { say "no $b"; continue; }
	for batch in 1 16; do
		d=$OUT/cg/$v-b$batch
		rm -rf "$d"
		mkdir -p "$d"
		say "callgrind $v batch $batch"
		# Only the client is counted, so only the client runs under
		# callgrind: the server runs natively on CPU 0 (the client's
		# valgrind start-up, ~10 s here, gives it time to listen).
		port=$((port + 1))
		timeout 600 "${NICE[@]}" "$b" --cpu 0 -b "$ADDR" -p "$port" > "$d/server.log" 2>&1 &
		spid=$!
		sleep 1
		timeout 900 "${NICE[@]}" valgrind --tool=callgrind --collect-atstart=no \
			--callgrind-out-file="$d/cg.%p" -q "$b" --cpu 1 --callgrind -p "$port" \
			-t send_bw -s 64 -n "$N" -w 64 -W 64 --batch "$batch" "$ADDR" \
			> "$d/run.log" 2> "$d/run.err" || { say "$v batch $batch exited $?"; kill "$spid"; }
		wait "$spid" 2> /dev/null
		say "wall $v batch $batch"
		before=$(rxe_counters)
		timeout 600 "${NICE[@]}" "$b" --local --cpus 0,1 -t send_bw -s 64 -n "$NW" -W 64 \
			--batch "$batch" > "$OUT/wall-$v-b$batch.txt" 2>&1 || say "wall $v $batch failed"
		printf 'before %s\nafter %s\n' "$before" "$(rxe_counters)" > "$OUT/wall-$v-b$batch.counters"
	done
done

# perftest: wall rate, and its client under callgrind at two counts.
if command -v ib_send_bw > /dev/null; then
	port=18900
	runs=(wall)
	[ "$PERFTEST_CG" = 1 ] && runs+=("cg-$N" "cg-$N2")
	for pl in 1 16; do
		args=(-F -d rxe0 -s 64 -t 64)
		[ "$pl" = 16 ] && args+=(--post_list 16)
		for run in "${runs[@]}"; do
			port=$((port + 1))
			n=$NW
			[ "$run" = "cg-$N" ] && n=$N
			[ "$run" = "cg-$N2" ] && n=$N2
			wrap=()
			case $run in
			cg-*) wrap=(valgrind --tool=callgrind -q --callgrind-out-file="$OUT/ib_send_bw-pl$pl-$run.cg") ;;
			esac
			say "ib_send_bw post_list $pl $run"
			before=$(rxe_counters)
			timeout 600 "${NICE[@]}" taskset -c 0 ib_send_bw "${args[@]}" -n "$n" -p "$port" \
				> "$OUT/ib_send_bw-pl$pl-$run.server" 2>&1 &
			spid=$!
			for _ in $(seq 1 20); do
				sleep 1
				kill -0 "$spid" 2> /dev/null || break
				timeout 600 "${NICE[@]}" taskset -c 1 ${wrap[@]+"${wrap[@]}"} ib_send_bw "${args[@]}" \
					-n "$n" -p "$port" "$ADDR" > "$OUT/ib_send_bw-pl$pl-$run.txt" 2>&1 && break
				grep -qiE "couldn.t connect|connection refused|unable to" \
					"$OUT/ib_send_bw-pl$pl-$run.txt" || break
			done
			wait "$spid" 2> /dev/null
			printf 'before %s\nafter %s\n' "$before" "$(rxe_counters)" \
				> "$OUT/ib_send_bw-pl$pl-$run.counters"
		done
	done
fi
say "done"
