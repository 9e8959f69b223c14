#!/usr/bin/env bash
# Run the device tests (ctest label "device") of each build directory given
# (DIR, or DIR:LABEL to run only those that also carry LABEL, e.g. asan,
# or DIR:!LABEL to leave out those that carry LABEL, e.g. one-build),
# where a verbs device exists (normally inside tests/rxe/run). Fails when a
# device test failed, was skipped or when none ran: a green run that skipped
# them would prove nothing.
set -uo pipefail

status=0
for arg in "$@"; do
  dir=${arg%%:*}
  sel=()
  if [ "$arg" != "$dir" ]; then
    label=${arg#*:}
    case $label in
    !*) sel=(-LE "${label#!}") ;;
    *) sel=(-L "$label") ;;
    esac
  fi
  log=$(mktemp)
  echo "=== device tests in $arg"
  ctest --test-dir "$dir" -L device "${sel[@]}" --output-on-failure 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  ran=$(sed -n 's/.*tests passed, [0-9]* tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: device tests failed in $dir"
    status=1
  elif grep -q -E '\*\*\*Skipped|Not Run|Disabled' "$log"; then
    echo "FAIL: device tests were skipped in $dir (no verbs device?)"
    status=1
  elif [ -z "$ran" ] || [ "$ran" -eq 0 ]; then
    echo "FAIL: no device test ran in $dir"
    status=1
  else
    echo "=== $ran device tests passed in $dir"
  fi
  rm -f "$log"
done
exit $status
