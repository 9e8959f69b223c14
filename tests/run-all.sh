#!/usr/bin/env bash
# The README's test command: installs what is missing, builds every variant
# CI checks, runs the host tests, then the device tests of every build in
# one Soft-RoCE VM session (tests/rxe/run), then the link-fault test on two
# VMs joined by a wire (tests/rxe/run2), then MPICH 4.0.2 built against
# the direct build and MPICH's own tests of tests/mpich/ci-tests on
# Soft-RoCE (tests/mpich/ci.sh), then upstream's fabtests from the same
# source package on the drop-in (tests/fabtests/ci.sh).
#
#   tests/run-all.sh                      everything
#   FD_SKIP_DEVICE=1 tests/run-all.sh     host tests only (device tests then
#                                          count as not run, and it says so)
#
# Builds (all -Werror):
#   build/direct             FABRIC_DIRECT=verbs, gcc: host tests, every
#                            device test
#   build/off                FABRIC_DIRECT=OFF, gcc: the host tests that
#                            depend on the build, every device test but
#                            those labelled one-build (the connection-
#                            setup faults: control path only; rstream's
#                            4 KiB-ring and iWARP-framing variants: the
#                            layer's own logic; the same code in every
#                            build, and build/direct runs them)
#   build/direct-safe-clang  FI_THREAD_SAFE, clang: the fuzzers (a clang
#                            build's targets), the multithreaded stress
#                            test and a subset (it shares every line but the
#                            lock)
# The subsets are ctest labels (asan, safe, tsan; see tests/CMakeLists.txt).
#   build/asan-gcc           ASan+UBSan+LSan, direct, gcc: the asan device
#                            subset (the OFF build's ops tables call the
#                            same provider functions; its clang ASan run was
#                            dropped to keep CI near 30 minutes)
#   build/tsan-clang         TSan, FI_THREAD_SAFE, clang: the threaded tests
# First of all, the README's other command, bench/run-all.sh, as a fresh
# clone runs it (tests/bench_fresh.sh: a copy of the tree without build/,
# one short part; its own two builds and one VM session).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)
t0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }

scripts/install-deps.sh

if [ "${FD_SKIP_DEVICE:-0}" != 1 ]; then
  stamp "bench/run-all.sh from a fresh tree (latency part, 1 B)"
  tests/bench_fresh.sh "$jobs"
fi

build() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -DFABRIC_DIRECT_WERROR=ON -DFABRIC_DIRECT_RSTREAM=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
}
# A variant that runs only labelled subsets builds only the programs those
# tests run (tests/label-targets.py; the library comes as their
# dependency): about 40 of the ~100 test programs for ASan, 7 for TSan.
build_for() { # dir, "label+label ..." selections, --, extra cmake args...
  local dir=$1 sel=(); shift
  while [ "$1" != -- ]; do sel+=("$1"); shift; done; shift
  cmake -S . -B "$dir" -DFABRIC_DIRECT_WERROR=ON -DFABRIC_DIRECT_RSTREAM=ON "$@" >/dev/null
  local targets
  targets=$(python3 tests/label-targets.py "$dir" "${sel[@]}")
  cmake --build "$dir" -j"$jobs" --target $targets
}
# Fuzzers run in build/direct-safe-clang only (the same control-path code
# everywhere, and libFuzzer needs clang); the sanitizer builds need neither
# benchmarks nor fuzzers, nor the drop-in
# libfabric.so.1 (clang links no sanitizer runtime into a shared library,
# and the drop-in test runs under valgrind, which cannot run one anyway).
one_of_many=(-DFABRIC_DIRECT_FUZZ=OFF)
sanitized=(-DFABRIC_DIRECT_FUZZ=OFF -DFABRIC_DIRECT_BENCH=OFF -DFABRIC_DIRECT_LIBFABRIC_SO=OFF)

stamp "build: FABRIC_DIRECT=verbs (gcc)"
build build/direct -DFABRIC_DIRECT=verbs "${one_of_many[@]}"
# MPICH's build (configure alone is ~4 minutes of one core, serial) needs
# only build/direct's install: it starts now, in the background, at the
# lowest CPU and I/O priority, so it takes only what the other builds, the
# serial host tests and the VM's idle vCPUs leave (a nice-19 task gets
# ~1.5 % of a core against a nice-0 one: the timed tests barely see it).
# The MPICH stage below waits for it, then runs the tests.
mpich_pid=
if [ "${FD_SKIP_DEVICE:-0}" != 1 ]; then
  mkdir -p build
  stamp "MPICH build started in the background (nice 19): build/mpich-build.log"
  set -m  # its own process group, so that an early exit can stop all of it
  # fabtests (upstream's, from the same source package) build after it
  { FD_MPICH_NO_VM=1 nice -n 19 ionice -c 3 tests/mpich/ci.sh "$root/build/direct" &&
    nice -n 19 ionice -c 3 tests/fabtests/build.sh build/mpich/src/mpich-4.0.2 build/fabtests
  } > build/mpich-build.log 2>&1 &
  mpich_pid=$!
  set +m
  trap '[ -z "$mpich_pid" ] || kill -- -"$mpich_pid" 2>/dev/null || true' EXIT
fi

stamp "build: FABRIC_DIRECT=OFF (gcc)"
build build/off -DFABRIC_DIRECT=OFF "${one_of_many[@]}"
stamp "build: FABRIC_DIRECT=verbs, FI_THREAD_SAFE (clang)"
build_for build/direct-safe-clang fuzz device+safe -- -DFABRIC_DIRECT=verbs \
  -DFABRIC_DIRECT_THREADING=safe -DCMAKE_C_COMPILER=clang -DFABRIC_DIRECT_FUZZ=ON \
  -DFABRIC_DIRECT_BENCH=OFF
stamp "build: ASan+UBSan, FABRIC_DIRECT=verbs (gcc)"
build_for build/asan-gcc device+asan -- -DFABRIC_DIRECT=verbs \
  -DFABRIC_DIRECT_SANITIZE=address,undefined -DCMAKE_C_COMPILER=gcc "${sanitized[@]}"
stamp "build: TSan, FI_THREAD_SAFE (clang)"
build_for build/tsan-clang device+tsan -- -DFABRIC_DIRECT=verbs \
  -DFABRIC_DIRECT_THREADING=safe -DFABRIC_DIRECT_SANITIZE=thread -DCMAKE_C_COMPILER=clang \
  "${sanitized[@]}"

stamp "host tests"
ctest --test-dir build/direct -L host --output-on-failure
ctest --test-dir build/off -L host -LE any-build --output-on-failure
# Each fuzzer runs for a fixed time on one core and shares nothing with
# the others (seeds are read-only inputs, findings go to its own prefix),
# so they run side by side: the same fuzzing per target, half the wall time.
ctest --test-dir build/direct-safe-clang -L fuzz -j"$jobs" --output-on-failure

if [ "${FD_SKIP_DEVICE:-0}" = 1 ]; then
  stamp "device tests NOT run (FD_SKIP_DEVICE=1)"
  exit 0
fi

stamp "device tests (Soft-RoCE, one VM)"
tests/rxe/run --timeout "${FD_DEVICE_TIMEOUT:-3600}" -- \
  "$root/tests/run_device_tests.sh" "$root/build/direct" "$root/build/off:!one-build" \
  "$root/build/direct-safe-clang:safe" \
  "$root/build/asan-gcc:asan" \
  "$root/build/tsan-clang:tsan"

# The cable between two VMs cut for 2 s (the connection survives) and for
# good (both sides fail in bounded time, then reconnect once it is back).
for b in direct off; do
  stamp "link fault, build/$b (two VMs on a wire)"
  tests/rxe/run2 --timeout 600 -- "$root/build/$b/tests/test_link_fault" ::: \
    "$root/build/$b/tests/test_link_fault"
done

# MPICH compiled against build/direct (its data path inline, checked),
# then the chosen MPICH tests; the build made in the background is kept
# (build/mpich) since build/direct's install has not changed, so this
# second call goes straight to the proof and the tests.
stamp "MPICH: waiting for its background build"
if ! wait "$mpich_pid"; then
  mpich_pid=
  echo "FAIL: MPICH's build (build/mpich-build.log):"; tail -n 40 build/mpich-build.log
  exit 1
fi
mpich_pid=
sed 's/^/  /' build/mpich-build.log
stamp "MPICH on the direct build (tests/mpich/ci.sh)"
FD_MPICH_TIMEOUT=${FD_MPICH_TIMEOUT:-2400} tests/mpich/ci.sh "$root/build/direct"

# Upstream fabtests, unmodified, on the OFF build's drop-in libfabric.so.1
# (the lines of tests/fabtests/ci-list; built in the background above)
stamp "fabtests on the drop-in (tests/fabtests/ci.sh)"
tests/fabtests/ci.sh "$root/build/off"

stamp "all tests passed"
