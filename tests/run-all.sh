#!/usr/bin/env bash
# The README's test command: installs what is missing, builds every variant
# CI checks, runs the host tests, then the device tests of every build in
# one Soft-RoCE VM session (tests/rxe/run), then the link-fault test on two
# VMs joined by a wire (tests/rxe/run2).
#
#   tests/run-all.sh                      everything
#   FD_SKIP_DEVICE=1 tests/run-all.sh     host tests only (device tests then
#                                          count as not run, and it says so)
#
# Builds (all -Werror):
#   build/direct             FABRIC_DIRECT=verbs, gcc: host tests, fuzzers,
#                            every device test
#   build/off                FABRIC_DIRECT=OFF, gcc: every device test
#   build/direct-safe-clang  FI_THREAD_SAFE, clang: the multithreaded stress
#                            test and a subset (it shares every line but the
#                            lock)
#   build/asan-gcc           ASan+UBSan+LSan, direct, gcc    } device subset
#   build/asan-clang-off     ASan+UBSan+LSan, OFF, clang     }
#   build/tsan-clang         TSan, FI_THREAD_SAFE, clang: the threaded tests
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)
t0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }

scripts/install-deps.sh

build() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -DFABRIC_DIRECT_WERROR=ON -DFABRIC_DIRECT_RSTREAM=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
}
# Fuzzers run in build/direct only (the same control-path code everywhere);
# the sanitizer builds need neither benchmarks nor fuzzers, nor the drop-in
# libfabric.so.1 (clang links no sanitizer runtime into a shared library,
# and the drop-in test runs under valgrind, which cannot run one anyway).
one_of_many=(-DFABRIC_DIRECT_FUZZ=OFF)
sanitized=(-DFABRIC_DIRECT_FUZZ=OFF -DFABRIC_DIRECT_BENCH=OFF -DFABRIC_DIRECT_LIBFABRIC_SO=OFF)

stamp "build: FABRIC_DIRECT=verbs (gcc)"
build build/direct -DFABRIC_DIRECT=verbs
stamp "build: FABRIC_DIRECT=OFF (gcc)"
build build/off -DFABRIC_DIRECT=OFF "${one_of_many[@]}"
stamp "build: FABRIC_DIRECT=verbs, FI_THREAD_SAFE (clang)"
build build/direct-safe-clang -DFABRIC_DIRECT=verbs -DFABRIC_DIRECT_THREADING=safe \
  -DCMAKE_C_COMPILER=clang "${one_of_many[@]}"
stamp "build: ASan+UBSan, FABRIC_DIRECT=verbs (gcc)"
build build/asan-gcc -DFABRIC_DIRECT=verbs -DFABRIC_DIRECT_SANITIZE=address,undefined \
  -DCMAKE_C_COMPILER=gcc "${sanitized[@]}"
stamp "build: ASan+UBSan, FABRIC_DIRECT=OFF (clang)"
build build/asan-clang-off -DFABRIC_DIRECT=OFF -DFABRIC_DIRECT_SANITIZE=address,undefined \
  -DCMAKE_C_COMPILER=clang "${sanitized[@]}"
stamp "build: TSan, FI_THREAD_SAFE (clang)"
build build/tsan-clang -DFABRIC_DIRECT=verbs -DFABRIC_DIRECT_THREADING=safe \
  -DFABRIC_DIRECT_SANITIZE=thread -DCMAKE_C_COMPILER=clang "${sanitized[@]}"

stamp "host tests"
ctest --test-dir build/direct -LE device --output-on-failure
ctest --test-dir build/off -L unit --output-on-failure

if [ "${FD_SKIP_DEVICE:-0}" = 1 ]; then
  stamp "device tests NOT run (FD_SKIP_DEVICE=1)"
  exit 0
fi

# Device subsets of the extra builds. The sanitizer subset covers MSG, RMA,
# atomics, CQ waits, CM, bad input, rstream (not its 256 MiB streams, slow
# under ASan), the examples, fi_info, the fault and 256-endpoint tests; not
# the soak, whose flat-memory check means nothing with ASan's quarantine
# holding freed blocks. The full suites run in direct and OFF.
safe_subset='test_msg_pingpong|test_msg_flow|test_cq_wait|test_atomic_fetchadd|test_rma_readwrite|test_mt_stress|test_rstream_threads|test_rstream_poll$'
asan_subset='^(test_getinfo|test_bad_input|test_msg_(pingpong|flow|errors)|test_rma_(readwrite|writedata|inject|access)|test_atomic_(fetchadd|ops|valid)|test_cq_wait|test_cm_reject|test_rstream_(poll|opts|shutdown|backpressure|threads|reset)(_iwarp|_send)?|example_(msg_pingpong|rma_write|rstream_echo)|fault_.*|test_load_256eps|fi_info_devices)$'
tsan_subset='^(test_mt_stress|test_rstream_threads)$'

stamp "device tests (Soft-RoCE, one VM)"
tests/rxe/run --timeout "${FD_DEVICE_TIMEOUT:-3600}" -- \
  "$root/tests/run_device_tests.sh" "$root/build/direct" "$root/build/off" \
  "$root/build/direct-safe-clang:$safe_subset" \
  "$root/build/asan-gcc:$asan_subset" \
  "$root/build/asan-clang-off:$asan_subset" \
  "$root/build/tsan-clang:$tsan_subset"

# The cable between two VMs cut for 2 s (the connection survives) and for
# good (both sides fail in bounded time, then reconnect once it is back).
for b in direct off; do
  stamp "link fault, build/$b (two VMs on a wire)"
  tests/rxe/run2 --timeout 600 -- "$root/build/$b/tests/test_link_fault" ::: \
    "$root/build/$b/tests/test_link_fault"
done

stamp "all tests passed"
