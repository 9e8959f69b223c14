#!/usr/bin/env bash
# The README's test command: installs what is missing, builds both variants
# (FABRIC_DIRECT=verbs and OFF), runs the host tests, then the device tests
# of both builds in one Soft-RoCE session (tests/rxe/run).
#
#   tests/run-all.sh            everything
#   FD_SKIP_DEVICE=1 tests/run-all.sh   host tests only (device tests then
#                                        count as not run, and it says so)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

scripts/install-deps.sh

build() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -DFABRIC_DIRECT_WERROR=ON -DFABRIC_DIRECT_RSTREAM=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
}

echo "=== build: FABRIC_DIRECT=verbs (gcc)"
build build/direct -DFABRIC_DIRECT=verbs
echo "=== build: FABRIC_DIRECT=OFF (gcc)"
build build/off -DFABRIC_DIRECT=OFF
echo "=== build: FABRIC_DIRECT=verbs, FI_THREAD_SAFE (clang)"
build build/direct-safe-clang -DFABRIC_DIRECT=verbs -DFABRIC_DIRECT_THREADING=safe \
  -DCMAKE_C_COMPILER=clang

echo "=== host tests"
ctest --test-dir build/direct -LE device --output-on-failure
ctest --test-dir build/off -L unit --output-on-failure

if [ "${FD_SKIP_DEVICE:-0}" = 1 ]; then
  echo "=== device tests NOT run (FD_SKIP_DEVICE=1)"
  exit 0
fi
echo "=== device tests (Soft-RoCE)"
# The FI_THREAD_SAFE build shares every line but the lock: a subset of its
# device tests keeps the whole run under 30 minutes.
tests/rxe/run --timeout "${FD_DEVICE_TIMEOUT:-3600}" -- \
  "$root/tests/run_device_tests.sh" "$root/build/direct" "$root/build/off" \
  "$root/build/direct-safe-clang:test_msg_pingpong|test_msg_flow|test_cq_wait|test_atomic_fetchadd|test_rma_readwrite|test_rstream_threads|test_rstream_poll$"
