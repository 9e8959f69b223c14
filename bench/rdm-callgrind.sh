#!/usr/bin/env bash
# bench/rdm-callgrind.sh - user-space instructions per tagged 64 B round
# trip on RDM endpoints, side by side in one run: each given fd_rdm binary
# (this library's direct and OFF builds, fd_rdm_upstream over Debian's
# libfabric 1.17 "verbs;ofi_rxm") once under callgrind. The client brackets
# every data-path call (tsend, trecv, cq_read); empty CQ reads are
# calibrated separately and taken out, as bench/callgrind-ops.sh does for
# MSG endpoints:
#   per round trip = (loop - empties * empty_read) / iterations
# Run inside tests/rxe/run:
#   tests/rxe/run -- bench/rdm-callgrind.sh OUTDIR BINARY...
# Upstream runs with FI_UNIVERSE_SIZE=16 (its rxm's CQs fail on rxe
# otherwise, issue 14). Prints a table and writes OUTDIR/rdm-callgrind.csv.
set -uo pipefail
out=${1:?usage: rdm-callgrind.sh OUTDIR BINARY...}
shift
mkdir -p "$out"
iters=${RDM_CG_ITERS:-1000}
size=${RDM_CG_SIZE:-64}
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 1; }
for b in "$@"; do
  name=$(basename "$b")
  d=$out/cg-$name
  rm -rf "$d"; mkdir -p "$d"
  env FI_PROVIDER="verbs;ofi_rxm" FI_UNIVERSE_SIZE=16 timeout 900 \
    valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$d/cg.%p" -q \
    "$b" --callgrind -t tlat -s "$size" -n "$iters" >"$d/run.log" 2>"$d/run.err" ||
    echo "$name: exit $? (see $d/run.err)"
done
python3 - "$out" "$iters" "$@" <<'PY'
import glob, os, re, sys
out, iters, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = []
for b in bins:
    name = os.path.basename(b)
    d = os.path.join(out, "cg-" + name)
    tot = {}
    for f in glob.glob(os.path.join(d, "cg.*")):
        txt = open(f, errors="replace").read()
        m = re.search(r"^desc: Trigger: Client Request: (\S+)", txt, re.M)
        t = re.search(r"^(?:totals|summary): (\d+)", txt, re.M)
        if m and t:
            tot[m.group(1).rsplit(":", 1)[-1]] = int(t.group(1))
    empties = None
    try:
        for line in open(os.path.join(d, "run.log")):
            m = re.match(r"#CG .*empties=(\d+) probes=(\d+)", line)
            if m:
                empties, probes = int(m.group(1)), int(m.group(2))
    except OSError:
        pass
    if "loop" not in tot or "empty" not in tot or empties is None:
        rows.append((name, None, None, None)); continue
    empty_cost = tot["empty"] / probes
    rt = (tot["loop"] - empties * empty_cost) / iters
    rows.append((name, rt, empty_cost, empties / iters))
print("%-18s %14s %12s %14s" % ("binary", "instr/RT", "empty read", "empties/RT"))
with open(os.path.join(out, "rdm-callgrind.csv"), "w") as csv:
    csv.write("binary,instructions_per_round_trip,empty_read,empties_per_round_trip\n")
    for n, rt, e, epr in rows:
        if rt is None:
            print("%-18s %14s" % (n, "no data")); continue
        print("%-18s %14.0f %12.0f %14.1f" % (n, rt, e, epr))
        csv.write("%s,%.1f,%.1f,%.2f\n" % (n, rt, e, epr))
PY
