#!/usr/bin/env bash
# The README's benchmark command as a fresh clone runs it: bench/run-all.sh
# in a copy of the tree that has no build/ (nor .git), for one short part
# (latency: 1 B round trips, a few of them, every variant), without
# installing packages (--no-install: what tests/run-all.sh installed is
# enough; the tools only the benchmarks use are skipped when missing).
# It fails when the command does, e.g. when it writes into build/ before
# anything created it (issue 21: the configure log went to
# build/bench-direct.cmake.log first), or when the direct build's latency
# results are missing from what it wrote.
#   tests/bench_fresh.sh [JOBS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd -P)
jobs=${1:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/fd-bench-fresh.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The tree without what .gitignore leaves out (/build*/, /out/, caches).
tar -C "$root" --exclude='./build*' --exclude=./out --exclude=./.git \
  --exclude=__pycache__ -cf - . | tar -C "$work" -xf -
if [ -e "$work/build" ]; then
  echo "FAIL: the copy in $work is not fresh: it has build/"
  exit 1
fi
BENCH_LAT_SIZES=1 BENCH_LAT_ITERS=20 BENCH_LAT_WARMUP=5 \
  "$work/bench/run-all.sh" --no-install --parts latency --jobs "$jobs"
res=$work/build/bench-results/latency/direct.csv
if [ ! -s "$res" ]; then
  echo "FAIL: bench/run-all.sh left no latency results of the direct build ($res)"
  exit 1
fi
echo "bench/run-all.sh from a fresh tree: built, measured, reported"
