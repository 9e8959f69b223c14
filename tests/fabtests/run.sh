#!/usr/bin/env bash
# Run upstream fabtests programs (tests/fabtests/build.sh), unmodified, on
# a libfabric.so.1, server and client in this machine as runfabtests.sh
# runs them, one list line at a time.
#
#   run.sh [--compare] BIN_DIR LIBDIR|system LIST
#
# LIBDIR: a directory holding this build's drop-in libfabric.so.1;
# system: Debian's libfabric 1.17 (FI_UNIVERSE_SIZE small, as its rxm
# needs on rxe). LIST lines: "cs|unit PROVIDER PROGRAM ARGS..." ("#"
# starts a comment; ADDR is replaced by the device's address). A cs test
# runs "PROGRAM -p PROVIDER ARGS -s ADDR" as server and the same with
# "ADDR" appended as client; a unit test runs once. Every line must pass
# (exit 0 on both sides). --compare runs each line on Debian's libfabric
# too and fails only where upstream passes and LIBDIR does not, printing
# both results side by side. Exit 77 only when there is no device.
set -uo pipefail
compare=0
[ "${1:-}" = --compare ] && { compare=1; shift; }
bin=${1:?usage: run.sh [--compare] BIN_DIR LIBDIR|system LIST}
lib=${2:?usage: run.sh [--compare] BIN_DIR LIBDIR|system LIST}
list=${3:?usage: run.sh [--compare] BIN_DIR LIBDIR|system LIST}
[ -n "${FD_RXE_ADDR0:-}" ] && [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ] ||
  { echo "SKIP: no verbs device (run under tests/rxe/run)"; exit 77; }
bin=$(cd "$bin" && pwd -P)
[ -x "$bin/fi_rdm" ] || { echo "FAIL: no fabtests in $bin (tests/fabtests/build.sh)"; exit 1; }
addr=$FD_RXE_ADDR0
tmo=${FD_FABTESTS_TIMEOUT:-90}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The environment of one side: the loader's choice, checked once per lib.
declare -A checked=()
env_of() {
  if [ "$1" = system ]; then
    echo "env -u LD_LIBRARY_PATH FI_UNIVERSE_SIZE=${FI_UNIVERSE_SIZE:-16}"
  else
    echo "env LD_LIBRARY_PATH=$(cd "$1" && pwd -P)"
  fi
}
check_lib() {
  [ -n "${checked[$1]:-}" ] && return 0
  local want linked
  if [ "$1" = system ]; then want=/lib/x86_64-linux-gnu/libfabric.so.1
  else want=$(cd "$1" && pwd -P)/libfabric.so.1; fi
  # whole, then matched: "ldd | grep -q" races under pipefail
  linked=$($(env_of "$1") ldd "$bin/fi_rdm")
  [[ $linked == *"libfabric.so.1 => $want"* ]] ||
    { echo "FAIL: fabtests would not load $want"; echo "$linked"; exit 1; }
  checked[$1]=1
}

# Until the server (process group $1) listens: an RDMA CM id of one of
# its processes in state LISTEN (rdma res show), for at most 2 s; some
# servers (fi_unexpected_msg) open no listener before their client comes,
# and they get the 2 s. runfabtests.sh sleeps 1 s, too short at times in
# an emulated VM. Without the rdma tool: 2 s.
wait_listen() {
  local end=$(( $(date +%s%N) + 2000000000 )) p out
  if ! command -v rdma >/dev/null; then sleep 2; return; fi
  while [ "$(date +%s%N)" -lt $end ]; do
    kill -0 "$1" 2>/dev/null || return
    out=$(rdma res show cm_id 2>/dev/null | grep 'state LISTEN')
    for p in $(pgrep -g "$1"); do
      grep -qE "pid $p( |$)" <<< "$out" && { sleep 0.2; return; }
    done
    sleep 0.1
  done
}

# One line on one lib: prints PASS, FAIL or NOTRUN (both sides -FI_ENODATA
# or -FI_ENOSYS, as runfabtests.sh counts it); the output is kept in
# $work/last.{srv,cli}.
run_one() {
  local l=$1 kind=$2 prov=$3; shift 3
  local prog=$1; shift
  local args=("${@//ADDR/$addr}") e s=0 c=0 spid
  e=$(env_of "$l")
  : > "$work/last.srv"; : > "$work/last.cli"
  if [ "$kind" = unit ]; then
    $e timeout -k 5 "$tmo" "$bin/$prog" -p "$prov" "${args[@]}" > "$work/last.cli" 2>&1
    c=$?
  else
    # setsid: a timeout kills the server's whole group, never a later test's port
    setsid $e timeout -k 5 "$tmo" "$bin/$prog" -p "$prov" "${args[@]}" -s "$addr" \
      > "$work/last.srv" 2>&1 &
    spid=$!
    wait_listen "$spid"
    $e timeout -k 5 "$tmo" "$bin/$prog" -p "$prov" "${args[@]}" -s "$addr" "$addr" \
      > "$work/last.cli" 2>&1
    c=$?
    if [ $c -ne 0 ] && kill -0 "$spid" 2>/dev/null; then
      sleep 2
      kill -9 -- -"$spid" 2>/dev/null
    fi
    wait "$spid"
    s=$?
  fi
  if [ $s -eq 0 ] && [ $c -eq 0 ]; then echo PASS
  elif { [ $c -eq 61 ] || [ $c -eq 38 ]; } && { [ "$kind" = unit ] || [ $s -eq $c ]; }; then echo NOTRUN
  else echo "FAIL(server $s, client $c)"; fi
}

fails=0 n=0
printf '%-58s %-28s %s\n' "test" "$([ $compare = 1 ] && echo upstream)" "this library"
while read -r kind prov rest; do
  [ -z "$kind" ] || [ "${kind:0:1}" = "#" ] && continue
  read -r -a cmd <<< "$rest"
  name="${cmd[*]} -p $prov"
  n=$((n + 1))
  up=
  if [ $compare = 1 ]; then
    check_lib system
    t0=$(date +%s)
    up=$(run_one system "$kind" "$prov" "${cmd[@]}")
    up="$up ($(( $(date +%s) - t0 )) s)"
  fi
  check_lib "$lib"
  t0=$(date +%s)
  ours=$(run_one "$lib" "$kind" "$prov" "${cmd[@]}")
  printf '%-58s %-28s %s (%d s)\n' "$name" "$up" "$ours" $(( $(date +%s) - t0 ))
  if [ "$ours" != PASS ] && { [ $compare = 0 ] || [[ $up == PASS* ]]; }; then
    fails=$((fails + 1))
    sed 's/^/    server: /' "$work/last.srv" | tail -n 15
    sed 's/^/    client: /' "$work/last.cli" | tail -n 15
  fi
done < "$list"
[ $n -gt 0 ] || { echo "FAIL: no test in $list"; exit 1; }
if [ $fails -gt 0 ]; then
  echo "FAIL: $fails of $n fabtests lines $([ $compare = 1 ] && echo "pass on upstream but ")not on $lib"
  exit 1
fi
echo "PASS: $n fabtests lines on $lib"
