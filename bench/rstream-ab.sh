#!/bin/bash
# bench/rstream-ab.sh - fd_rstream before/after a change and rsockets'
# rstream in one VM session (run under tests/rxe/run): wall-clock latency
# at 1 B / 64 B / 1 KiB in interleaved rounds, system calls per round trip
# (strace -c at 50 and 150 iterations, both processes), rxe packet counters
# around the same runs, then vm-session.sh's rscg part (instructions and
# packets per transfer) for the "after" build. Raw output only.
#   tests/rxe/run -- bench/rstream-ab.sh OUT BEFORE_BUILD AFTER_BUILD
OUT=${1:?usage: rstream-ab.sh OUT BEFORE_BUILD AFTER_BUILD}
BEFORE=${2:?before build dir}
AFTER=${3:?after build dir}
mkdir -p $OUT
ADDR=$FD_RXE_ADDR0
export FI_PROVIDER=verbs
bin() { if [ "$1" = before ]; then echo "$BEFORE/bench/fd_rstream"; else echo "$AFTER/bench/fd_rstream"; fi; }
port=19700
echo "[$(date +%T)] start; clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
rs_pair() { # n size tag strace?
  local n=$1 s=$2 tag=$3 st=$4
  port=$((port+1))
  local pre_s=() pre_c=()
  if [ -n "$st" ]; then pre_s=(strace -f -c -o $OUT/strace-rsockets-$n-srv.txt); pre_c=(strace -f -c -o $OUT/strace-rsockets-$n-cli.txt); fi
  "${pre_s[@]}" nice -n 19 taskset -c 0 rstream -b $ADDR -p $port -S $s -C 1 -I $n > $OUT/rs-$tag.server 2>&1 &
  local sp=$! i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    sleep 2
    "${pre_c[@]}" nice -n 19 taskset -c 1 rstream -s $ADDR -p $port -S $s -C 1 -I $n > $OUT/rs-$tag.txt 2>&1 && break
  done
  wait $sp
  tail -1 $OUT/rs-$tag.txt
}
rxc() { rdma statistic show link rxe0/1 2>/dev/null | tr -s ' ' | sed 's/^link [^ ]* //'; }
# 1. syscalls and packets per round trip
for n in 50 150; do
  for v in before after; do
    b=$(rxc)
    strace -f -c -o $OUT/strace-$v-$n.txt nice -n 19 $(bin $v) --local --cpus 0,1 -t lat -s 64 -n $n -w 5 -q > /dev/null 2> $OUT/strace-$v-$n.err
    echo "WIRE $v $n before $b"; echo "WIRE $v $n after $(rxc)"
  done
  b=$(rxc)
  rs_pair $n 64 st$n 1 > /dev/null
  echo "WIRE rsockets $n before $b"; echo "WIRE rsockets $n after $(rxc)"
done
echo "[$(date +%T)] wall"
# 2. wall time, interleaved
for rep in 1 2; do
 for s in 1 64 1024; do
  for v in before after; do
    r=$(nice -n 19 $(bin $v) --local --cpus 0,1 -t lat -s $s -n 200 -w 20 2>&1 | grep "^rstream ")
    echo "LAT $v $s rep$rep $r"
  done
  r=$(nice -n 19 $AFTER/bench/fd_rstream --local --cpus 0,1 -t lat -s $s -n 200 -w 20 --no-rtt 2>&1 | grep "^rstream ")
  echo "LAT after-nortt $s rep$rep $r"
  echo "LAT rsockets $s rep$rep $(rs_pair 200 $s l$s-$rep)"
 done
done
echo "[$(date +%T)] rscg"
BENCH_RSCG_N1=20 BENCH_RSCG_N2=60 bench/vm-session.sh $OUT/vs "$AFTER" "$AFTER" --parts rscg
echo "[$(date +%T)] done"
