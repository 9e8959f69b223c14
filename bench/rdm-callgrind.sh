#!/usr/bin/env bash
# bench/rdm-callgrind.sh - user-space instructions per tagged 64 B round
# trip on RDM endpoints, side by side in one run: each given fd_rdm binary
# (this library's direct and OFF builds, fd_rdm_upstream over Debian's
# libfabric 1.17 "verbs;ofi_rxm") once under callgrind, and each given
# fd_pingpong binary (MSG endpoints) once with `-t send -s 64`, the MSG
# send round trip the issue-14 target compares with.
#
# fd_rdm's client brackets every data-path call (tsend, trecv, cq_read);
# empty CQ reads and the brackets themselves are calibrated separately and
# taken out, as bench/report.py does for fd_pingpong:
#   per round trip = (loop - empties * empty_read - calls * bracket) / iterations
# (calls: the bracketed calls that posted or returned a completion). The
# fd_pingpong rows come from report.py's own computation (client side).
#
# Two more runs of each fd_rdm row with --peer-wait (RDM_CG_PEERWAIT=0 to
# skip): each side waits for the other's message on a shared counter,
# outside the brackets, so the counted CQ reads find their completions
# and the loop holds (almost) no empty reads to subtract. --peer-wait
# (OUTDIR/cg-<row>-pw) waits for the reply, so the first read finds the
# send and the receive completion together; --peer-wait=split
# (OUTDIR/cg-<row>-pws) reaps the send completion before the server
# posts its reply, one completion per read as in the default run's
# productive reads. Each:
#   peer-wait raw = (loop - (calls + empties) * bracket) / iterations
#                   (the empty reads' library code in)
#   peer-wait     = the default formula on this run: raw less the few
#                   empties at their calibrated cost (empty_read)
# with its empty reads per round trip beside it (0 when the counter was
# never ahead of the device) and its timed-out waits (late: polled
# instead; 0 expected).
#
# Run inside tests/rxe/run:
#   tests/rxe/run -- bench/rdm-callgrind.sh OUTDIR BINARY...
# Upstream runs with FI_UNIVERSE_SIZE=16: its rxm sizes its verbs CQs
# from the universe size, and with the default (256) rxe refuses them and
# fi_enable fails (issue 14). The provider is chosen through the hints
# (prov_name "verbs;ofi_rxm"), so FI_PROVIDER is left unset. Upstream's
# rxm answers -FI_EAGAIN to sends while it connects; fd_rdm retries them
# after a CQ read (an earlier version waited for a completion there and
# hung, which is why fd_rdm_upstream printed nothing). Prints a table and
# writes OUTDIR/rdm-callgrind.csv.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
out=${1:?usage: rdm-callgrind.sh OUTDIR BINARY...}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
iters=${RDM_CG_ITERS:-1000}
# A second, shorter run of each fd_rdm row: the difference of the two
# loops' totals per extra iteration is a round trip with its empty reads
# in, the figure a program that cannot be bracketed (ucx_perftest) gets
# from two run lengths; 0 to skip.
iters2=${RDM_CG_ITERS2:-$((iters / 2))}
peerwait=${RDM_CG_PEERWAIT:-1}
size=${RDM_CG_SIZE:-64}
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 1; }
ncpu=$(nproc)
cpus=0,$((ncpu > 1 ? 1 : 0))
names=()
for b in "$@"; do
  base=$(basename "$b")
  # the build (direct/off) from the path: build/bench-direct/bench/fd_rdm
  dir=$(basename "$(dirname "$(dirname "$b")")")
  case $base in
  fd_rdm_upstream) name=rdm-upstream ;;
  fd_rdm) name=rdm-${dir##*-} ;;
  fd_pingpong_upstream) name=msg-upstream ;;
  fd_pingpong) name=msg-${dir##*-} ;;
  *) echo "$b: not fd_rdm or fd_pingpong"; exit 2 ;;
  esac
  names+=("$name")
  case $base in
  fd_rdm*)
    d=$out/cg-$name
    rm -rf "$d"; mkdir -p "$d"
    echo "== $name: $b"
    env -u FI_PROVIDER FI_UNIVERSE_SIZE=16 timeout 1200 \
      valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$d/cg.%p" -q \
      "$b" --callgrind --variant "$name" -t tlat -s "$size" -n "$iters" \
      >"$d/run.log" 2>"$d/run.err" || echo "$name: exit $? (see $d/run.err)"
    cat "$d/run.log"
    if [ "$iters2" -gt 0 ] && [ "$iters2" != "$iters" ]; then
      d2=$out/cg-$name-n2
      rm -rf "$d2"; mkdir -p "$d2"
      env -u FI_PROVIDER FI_UNIVERSE_SIZE=16 timeout 1200 \
        valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$d2/cg.%p" -q \
        "$b" --callgrind --variant "$name" -t tlat -s "$size" -n "$iters2" \
        >"$d2/run.log" 2>"$d2/run.err" || echo "$name (n2): exit $? (see $d2/run.err)"
    fi
    if [ "$peerwait" != 0 ]; then
      for pwm in reply split; do
        d3=$out/cg-$name-pw
        [ $pwm = split ] && d3=$out/cg-$name-pws
        rm -rf "$d3"; mkdir -p "$d3"
        echo "== $name --peer-wait=$pwm"
        env -u FI_PROVIDER FI_UNIVERSE_SIZE=16 timeout 1200 \
          valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$d3/cg.%p" -q \
          "$b" --callgrind --variant "$name" -t tlat -s "$size" -n "$iters" --peer-wait=$pwm \
          >"$d3/run.log" 2>"$d3/run.err" || echo "$name (peer-wait=$pwm): exit $? (see $d3/run.err)"
        cat "$d3/run.log"
      done
    fi
    ;;
  fd_pingpong*)
    # report.py's layout: OUT/callgrind/VARIANT/{cg.*,run.log}
    d=$out/callgrind/$name
    rm -rf "$d"; mkdir -p "$d"
    echo "== $name: $b"
    timeout 1200 valgrind --tool=callgrind --collect-atstart=no \
      --callgrind-out-file="$d/cg.%p" -q \
      "$b" --local --cpus "$cpus" --callgrind --variant "$name" -t send -s "$size" \
      -n "$iters" -w 10 >"$d/run.log" 2>"$d/run.err" || echo "$name: exit $? (see $d/run.err)"
    ;;
  esac
done
python3 - "$out" "$iters" "$here" "${names[@]}" <<'PY'
import glob, os, re, sys
out, iters, here, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
sys.path.insert(0, here)
rows = []
msg = {}
loopdiff = {}
loopdiff_ne = {}
peerwait = {}
split = {}

def peer_wait_row(d):
    """(per round trip, raw, empties per round trip, timed-out waits) of
    a --peer-wait run, or None"""
    tot3, cnt3 = load(d)
    if not cnt3 or cnt3.get("peerwait", "0") == "0" or \
            not all(k in tot3 for k in ("loop", "empty", "nop")):
        return None
    n3 = int(cnt3["iters"])
    nop3 = tot3["nop"] / int(cnt3["nops"])
    empty3 = tot3["empty"] / int(cnt3["probes"])
    # every bracket out (the empty reads' too), the empties' reads in
    raw3 = (tot3["loop"] - (int(cnt3["calls"]) + int(cnt3["empties"])) * nop3) / n3
    return (raw3 - int(cnt3["empties"]) * (empty3 - nop3) / n3, raw3,
            int(cnt3["empties"]) / n3,
            int(cnt3.get("late", 0)) + int(cnt3.get("srvlate", 0)))

def load(d):
    tot = {}
    for f in glob.glob(os.path.join(d, "cg.*")):
        txt = open(f, errors="replace").read()
        m = re.search(r"^desc: Trigger: Client Request: (\S+)", txt, re.M)
        t = re.search(r"^(?:totals|summary): (\d+)", txt, re.M)
        if m and t:
            tot[m.group(1).rsplit(":", 1)[-1]] = int(t.group(1))
    cnt = None
    try:
        for line in open(os.path.join(d, "run.log")):
            if line.startswith("#CG "):
                cnt = {k: v for k, v in (p.split("=", 1) for p in line.split()[1:])}
    except OSError:
        pass
    return tot, cnt

if any(n.startswith("msg-") for n in names):
    import report
    for r in report.instructions(out):
        if r["side"] == "client" and r["test"] == "send":
            msg[r["variant"]] = r
for name in names:
    if name.startswith("msg-"):
        r = msg.get(name)
        rows.append((name, r and r["round_trip"], r and r["empty_poll"],
                     r and r["empties"] / r["iters"], r and r["bracket"]))
        continue
    tot, cnt = load(os.path.join(out, "cg-" + name))
    if cnt is None or not all(k in tot for k in ("loop", "empty", "nop")):
        rows.append((name, None, None, None, None)); continue
    n = int(cnt["iters"])
    nop = tot["nop"] / int(cnt["nops"])
    empty = tot["empty"] / int(cnt["probes"])
    rt = (tot["loop"] - int(cnt["empties"]) * empty - int(cnt["calls"]) * nop) / n
    rows.append((name, rt, empty - nop, int(cnt["empties"]) / n, nop))
    # the loop total difference of the two run lengths (empty reads in)
    tot2, cnt2 = load(os.path.join(out, "cg-" + name + "-n2"))
    if cnt2 and "loop" in tot2 and int(cnt2["iters"]) != n:
        n2 = int(cnt2["iters"])
        loopdiff[name] = (tot["loop"] - tot2["loop"]) / (n - n2)
        # the same difference with each run's empty reads taken out at its
        # own calibration: what is left is work per round trip, not how
        # long the emulated wire made the loop wait (the empties of the
        # two runs differ by thousands from one boot to the next)
        if all(k in tot2 for k in ("empty", "nop")):
            def worked(t, c):
                return (t["loop"] - int(c["empties"]) * t["empty"] / int(c["probes"])
                        - int(c["calls"]) * t["nop"] / int(c["nops"]))
            loopdiff_ne[name] = (worked(tot, cnt) - worked(tot2, cnt2)) / (n - n2)
    # --peer-wait: the same computation on its own calibration, and the
    # loop with only the brackets out (whatever empties it had, in)
    r = peer_wait_row(os.path.join(out, "cg-" + name + "-pw"))
    if r:
        peerwait[name] = r
    r = peer_wait_row(os.path.join(out, "cg-" + name + "-pws"))
    if r:
        split[name] = r
base = {k: v for k, v, *_ in rows}
print("%-14s %10s %11s %11s %8s %9s %9s %10s %10s %8s %8s %5s %9s %9s %5s" % (
    "variant", "instr/RT", "empty read", "empties/RT", "bracket", "vs upstr", "vs MSG",
    "loop diff", "peer-wait", "pw raw", "pw emp/RT", "late", "pw split", "emp/RT", "late"))
with open(os.path.join(out, "rdm-callgrind.csv"), "w") as csv:
    csv.write("variant,instructions_per_round_trip,empty_read,empties_per_round_trip,"
              "bracket,ratio_upstream,ratio_msg_direct,loop_diff_per_round_trip,"
              "peerwait_per_round_trip,peerwait_raw_per_round_trip,"
              "peerwait_empties_per_round_trip,peerwait_late,"
              "peerwait_split_per_round_trip,peerwait_split_raw_per_round_trip,"
              "peerwait_split_empties_per_round_trip,peerwait_split_late,"
              "loop_diff_no_empty_per_round_trip\n")
    for n, rt, e, epr, nop in rows:
        if rt is None:
            print("%-14s %10s" % (n, "no data")); continue
        up = base.get("rdm-upstream")
        ms = base.get("msg-direct")
        ru = rt / up if up and n.startswith("rdm-") else None
        rm = rt / ms if ms else None
        ld = loopdiff.get(n)
        pw = peerwait.get(n)
        ps = split.get(n)
        print("%-14s %10.0f %11.0f %11.1f %8.1f %9s %9s %10s %10s %8s %8s %5s %9s %9s %5s" % (
            n, rt, e, epr, nop, "%.2fx" % ru if ru else "-", "%.2fx" % rm if rm else "-",
            "%.0f" % ld if ld is not None else "-",
            *(("%.0f" % pw[0], "%.0f" % pw[1], "%.3f" % pw[2], "%d" % pw[3]) if pw else
              ("-",) * 4),
            *(("%.0f" % ps[0], "%.3f" % ps[2], "%d" % ps[3]) if ps else ("-",) * 3)))
        csv.write("%s,%.1f,%.1f,%.2f,%.1f,%s,%s,%s,%s,%s,%s\n" % (n, rt, e, epr, nop,
                  "%.3f" % ru if ru else "", "%.3f" % rm if rm else "",
                  "%.1f" % ld if ld is not None else "",
                  "%.1f,%.1f,%.4f,%d" % pw if pw else ",,,",
                  "%.1f,%.1f,%.4f,%d" % ps if ps else ",,,",
                  "%.1f" % loopdiff_ne[n] if n in loopdiff_ne else ""))
PY
