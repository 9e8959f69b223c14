#!/bin/bash
# bench/callgrind-ops.sh - instructions per operation only: builds the
# variants, runs each once under callgrind in one Soft-RoCE session and
# prints the side-by-side table (post, receive post, reap, empty poll,
# round trip; ratios against raw verbs). Options as for run-all.sh
# (--out DIR, default build/bench-callgrind; --no-install; --full).
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
exec "$HERE/run-all.sh" --out "$HERE/../build/bench-callgrind" --parts callgrind "$@"
