"""Issue 23's tables for bench/report.py: the tagged 64 B round trip
beside UCX, in instructions and on the wall clock, and the issue's
targets met or missed.

Inputs (all optional; a missing part shows "-"):
  OUT/rdm/rdm-callgrind.csv  fd_rdm rows: instructions per round trip with
                             the empty CQ reads taken out, and the loop
                             total difference of two run lengths
                             (loop_diff_per_round_trip, empty reads in),
                             and the --peer-wait runs' figures
                             (peerwait_per_round_trip: the CQ reads
                             counted only once the reply was posted;
                             peerwait_split_...: one completion per read;
                             their empties and timed-out waits beside)
  OUT/ucx/cg.<test>.n<N>     ucx_perftest's client under callgrind, whole,
                             at two run lengths (cg-lengths.txt): the
                             difference per iteration
  OUT/tagged/                wall clock: fd_rdm-<build>.txt,
                             ucx_tag_lat-64.txt, ib_send_lat-64.txt
"""
import csv
import glob
import math
import os
import re

import report_more

UCX_TESTS = (("tag_lat", "UCX tag_lat (UCP tag matching, rc_verbs)"),
             ("am_lat", "UCX am_lat (UCT active messages, rc_verbs)"))
RDM_ROWS = (("rdm-direct", "this library, direct build"),
            ("rdm-off", "this library, OFF build (ops tables)"),
            ("rdm-upstream", "upstream verbs;ofi_rxm (libfabric 1.17)"))
WALL_ROWS = (("fd_rdm-direct", "this library, direct (fd_rdm)"),
             ("fd_rdm-off", "this library, OFF (fd_rdm)"),
             ("fd_rdm-upstream", "upstream rxm (fd_rdm_upstream)"),
             ("ucx_tag_lat", "UCX tag_lat (ucx_perftest)"),
             ("ucx_am_lat", "UCX am_lat (UCT; the ucx part)"),
             ("ib_send_lat", "ib_send_lat (raw verbs send)"))
# UCX's tagged round trip as issue 23 states it (ucx_perftest tag_lat, its
# client under callgrind, two run lengths, on a run with few empty polls):
# the target for the figure without empty polls, which this bench cannot
# compute for UCX (its progress function's empty calls are not separable)
ISSUE_UCX_TAG = 1243
# MSG rows issue 23 holds to 1.05x raw verbs (writedata is reported too)
MSG_TESTS = ("send", "inject", "write", "writedata", "read", "atomic")


def _f(x, prec=0):
    return "-" if x is None else "%.*f" % (prec, x)


def _calls(path, name):
    """(calls, inclusive Ir) of the calls to one function in a callgrind
    file, whether its strings are compressed or not."""
    ids, calls, incl = {}, 0, 0
    cur, pending = None, False
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith(("cfn=", "fn=")):
                key, val = line.split("=", 1)
                m = re.match(r"\((\d+)\)(?:\s+(.*))?$", val.strip())
                if m:
                    if m.group(2):
                        ids[m.group(1)] = m.group(2)
                    fname = ids.get(m.group(1))
                else:
                    fname = val.strip()
                cur = fname if key == "cfn" else None
            elif line.startswith("calls="):
                pending = cur == name
                if pending:
                    calls += int(line[6:].split()[0])
            elif pending:
                p = line.split()
                if len(p) >= 2:
                    incl += int(p[1])
                pending = False
    return calls, incl


def _calls_prefix(path, prefix):
    """(calls, inclusive Ir) of every function whose name starts with prefix"""
    names = set()
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith(("cfn=", "fn=")):
                v = line.split("=", 1)[1].strip()
                m = re.match(r"\((\d+)\)\s+(.*)$", v)
                v = m.group(2) if m else v
                if v.startswith(prefix):
                    names.add(v)
    calls = incl = 0
    for n in names:
        c, i = _calls(path, n)
        calls, incl = calls + c, incl + i
    return calls, incl


# An uncontended pthread_spin_lock is a handful of instructions (4 on
# Debian 12's glibc: 929 calls, 3,716 Ir). Under valgrind the threads run
# one at a time, so a lock held by UCX's async thread makes the main
# thread spin until valgrind switches threads: millions of instructions
# that count the scheduler, not UCX (session 14: 3.8 M of one run's 3.8 M
# difference). Each run's spin beyond the cheapest per-call cost seen is
# taken out.
SPIN_FN = "pthread_spin_lock"


def _ucx_cg(out):
    """test -> {n1, n2, total1, total2, per_iter, and with --separate-threads
    runs: main1, main2, spin1, spin2, per_iter_main}"""
    d = os.path.join(out, "ucx")
    res = {}
    for t, _ in UCX_TESTS:
        runs, main, files = {}, {}, {}
        for path in glob.glob(os.path.join(d, "cg.%s.n*" % t)):
            # cg.<test>.n<N> (threads together) or cg.<test>.n<N>-<thread>
            m = re.search(r"\.n(\d+)(?:-(\d+))?$", path)
            if not m:
                continue
            _, total = report_more._dump_tag_total(path)
            if not total:
                continue
            n = int(m.group(1))
            runs[n] = runs.get(n, 0) + total
            if m.group(2) is None or int(m.group(2)) == 1:
                main[n], files[n] = total, path
        if len(runs) >= 2:
            n1, n2 = sorted(runs)[:2]
            res[t] = {"n1": n1, "n2": n2, "total1": runs[n1], "total2": runs[n2],
                      "per_iter": (runs[n2] - runs[n1]) / (n2 - n1)}
            # the main thread alone (runs with --separate-threads=yes: the
            # async thread's timer work goes to its own file), its spin
            # waits taken out
            if all(os.path.basename(files.get(n, "")).count("-") for n in (n1, n2)):
                spin = {n: _calls_prefix(files[n], SPIN_FN) for n in (n1, n2)}
                floor = min((i / c for c, i in spin.values() if c), default=0)
                ex = {n: spin[n][1] - floor * spin[n][0] for n in (n1, n2)}
                res[t].update({"main1": main[n1], "main2": main[n2],
                               "spin1": ex[n1], "spin2": ex[n2],
                               "per_iter_main": ((main[n2] - ex[n2]) - (main[n1] - ex[n1]))
                               / (n2 - n1)})
            # how often it polled per round trip (empty polls in): calls
            # of its progress function, the difference of the two runs
            fn = "ucp_worker_progress" if t == "tag_lat" else "uct_worker_progress"
            c = [_calls(files[n], fn) for n in (n1, n2)]
            if c[1][0] > c[0][0]:
                res[t]["progress_calls_per_iter"] = (c[1][0] - c[0][0]) / (n2 - n1)
                res[t]["progress_fn"] = fn
    return res


def _rdm_rows(out):
    rows = {}
    try:
        with open(os.path.join(out, "rdm", "rdm-callgrind.csv"), newline="") as f:
            for r in csv.DictReader(f):
                rows[r["variant"]] = {k: report_more._num(v) for k, v in r.items()
                                      if k != "variant"}
    except OSError:
        pass
    return rows


def _fd_rdm_wall(path):
    """fd_rdm: 'tlat 64 300 12.34 usec (half round trip)' -> mean one-way"""
    try:
        for line in open(path, errors="replace"):
            p = line.split()
            if len(p) >= 5 and p[0] == "tlat" and p[4] == "usec":
                return {"avg_us": float(p[3]), "median_us": None}
    except (OSError, ValueError):
        pass
    return None


def _ucx_wall(path):
    try:
        fin = [l for l in open(path, errors="replace") if l.startswith("Final:")]
    except OSError:
        return None
    if not fin:
        return None
    # Final: iterations, 50th percentile, average of the last report
    # interval, overall average, ...: the overall one is the loop's mean
    p = fin[-1].split()
    return {"median_us": report_more._num(p[2]), "avg_us": report_more._num(p[4])}


def load(out):
    import report
    wall = {}
    d = os.path.join(out, "tagged")
    for b in ("direct", "off", "upstream"):
        r = _fd_rdm_wall(os.path.join(d, "fd_rdm-%s.txt" % b))
        if r:
            wall["fd_rdm-" + b] = r
    r = _ucx_wall(os.path.join(d, "ucx_tag_lat-64.txt"))
    if r:
        wall["ucx_tag_lat"] = r
    r = _ucx_wall(os.path.join(out, "ucx", "ucx_am_lat-64.txt"))
    if r:
        wall["ucx_am_lat"] = r
    r = report.parse_perftest(os.path.join(d, "ib_send_lat-64.txt"))
    if r:
        wall["ib_send_lat"] = {"avg_us": r["t_avg_us"], "median_us": r["t_typical_us"]}
    notes = []
    if os.path.exists(os.path.join(d, "ucx-missing.txt")):
        notes.append(open(os.path.join(d, "ucx-missing.txt")).read().strip())
    # a UCX run that printed no result: its first error line says why
    for path in sorted(glob.glob(os.path.join(out, "ucx", "ucx_cg_*.txt")) +
                       glob.glob(os.path.join(d, "ucx_tag_lat-64.txt"))):
        try:
            text = open(path, errors="replace").read()
        except OSError:
            continue
        if "Final:" not in text:
            err = [l for l in text.splitlines() if "ERROR" in l or "Fatal" in l]
            notes.append("%s: %s" % (os.path.basename(path),
                                     (err or ["no result"])[0].strip()[-160:]))
    return {"rdm": _rdm_rows(out), "ucx": _ucx_cg(out), "wall": wall,
            "note": "; ".join(notes) or None}


def has_data(t):
    return bool(t["rdm"] or t["ucx"] or t["wall"])


def lines(t):
    out = []
    if t["rdm"] or t["ucx"]:
        ucx = t["ucx"].get("tag_lat", {})
        ucx_tag = ucx.get("per_iter_main", ucx.get("per_iter"))
        out += ["Tagged 64 B round trip beside UCX (issue 23): user-space instructions per",
                "round trip, client side. 'no empty polls': fd_rdm's bracketed calls with the",
                "empty CQ reads taken out (bench/rdm-callgrind.sh). 'loop total diff': the",
                "loop's total at two run lengths, difference per iteration, empty reads in;",
                "UCX the same way (ucx_perftest's whole client at two run lengths: it cannot",
                "be bracketed). Both are mostly waiting in an emulated VM, so 'waits out' is",
                "the like-for-like column: fd_rdm's two loop totals with each run's empty",
                "reads taken out at its own calibration; UCX's main thread alone",
                "(--separate-threads) with its spin-lock waits for the async thread taken",
                "out (bench/README, 'UCX, how it is run'). 'polls/RT': fd_rdm's CQ reads per",
                "round trip (2 productive), UCX's worker progress calls. 'vs UCX tag': the",
                "'waits out' column when both have it.",
                "'peer-wait': fd_rdm --peer-wait, each side waiting for the other's message",
                "on a shared counter outside the brackets, so that its CQ reads find the",
                "completions: both at once ('both'), or one per read ('split', the send's",
                "reaped before the reply is posted); empty reads left per round trip and",
                "timed-out waits (polled instead) in 'pw empty/RT' and 'late' (both runs).",
                "%-44s %14s %15s %10s %9s %12s %9s %9s %11s %4s" % (
                    "variant", "no empty polls", "loop total diff", "waits out", "polls/RT",
                    "vs UCX tag", "pw both", "pw split", "pw empty/RT", "late")]
        for key, label in RDM_ROWS:
            r = t["rdm"].get(key)
            if not r:
                continue
            ld = r.get("loop_diff_per_round_trip")
            lw = r.get("loop_diff_no_empty_per_round_trip")
            ep = r.get("empties_per_round_trip")
            pe = [r.get(k) for k in ("peerwait_empties_per_round_trip",
                                     "peerwait_split_empties_per_round_trip")]
            pl = [r.get(k) for k in ("peerwait_late", "peerwait_split_late")]
            cmp = lw if lw is not None and "per_iter_main" in ucx else ld
            out.append("%-44s %14s %15s %10s %9s %12s %9s %9s %11s %4s" % (
                label, _f(r.get("instructions_per_round_trip")), _f(ld), _f(lw),
                _f(ep + 2, 1) if ep is not None else "-",
                "%.2fx" % (cmp / ucx_tag) if cmp and ucx_tag else "-",
                _f(r.get("peerwait_per_round_trip")),
                _f(r.get("peerwait_split_per_round_trip")),
                "/".join(_f(x, 3) for x in pe) if any(x is not None for x in pe) else "-",
                "/".join(_f(x) for x in pl) if any(x is not None for x in pl) else "-"))
        for key, label in UCX_TESTS:
            r = t["ucx"].get(key)
            if r:
                pc = r.get("progress_calls_per_iter")
                v = r.get("per_iter_main", r["per_iter"])
                out.append("%-44s %14s %15s %10s %9s %12s" % (
                    label, "-", _f(r["per_iter"]), _f(r.get("per_iter_main")), _f(pc, 1),
                    "%.2fx" % (v / ucx_tag) if ucx_tag else "-"))
        m = t["rdm"].get("msg-direct")
        if m:
            out.append("%-44s %14s %15s %9s %12s" % ("MSG send round trip, direct (fd_pingpong)",
                                                 _f(m.get("instructions_per_round_trip")),
                                                 "-", "", "-"))
        if t["ucx"]:
            r = next(iter(t["ucx"].values()))
            out.append("(UCX runs: %d and %d iterations)" % (r["n1"], r["n2"]))
        out.append("")
    if t["wall"] or t["note"]:
        base = t["wall"].get("ib_send_lat", {}).get("avg_us")
        out += ["Tagged 64 B latency on the wall clock, this run (one-way: half the round",
                "trip; average over the loop, median where the tool prints one)",
                "%-36s %10s %10s %14s" % ("", "avg us", "median us", "avg vs ib_send")]
        for key, label in WALL_ROWS:
            r = t["wall"].get(key)
            if not r:
                continue
            out.append("%-36s %10s %10s %14s" % (
                label, _f(r["avg_us"], 2), _f(r["median_us"], 2),
                "%.2fx" % (r["avg_us"] / base) if base and r["avg_us"] else "-"))
        if t["note"]:
            out.append("  " + t["note"])
        out.append("")
    return out


def target_lines(t, ins):
    """Issue 23's targets, met or missed, from this run's figures."""
    out = ["Targets (issue 23), from this run:"]
    rdm = t["rdm"]
    ucx_tag = t["ucx"].get("tag_lat", {}).get("per_iter")
    d = rdm.get("rdm-direct", {})
    o = rdm.get("rdm-off", {})
    m = rdm.get("msg-direct", {})
    dn, dl = d.get("instructions_per_round_trip"), d.get("loop_diff_per_round_trip")
    on = o.get("instructions_per_round_trip")
    dp, op = d.get("peerwait_split_per_round_trip"), o.get("peerwait_split_per_round_trip")
    mn = m.get("instructions_per_round_trip")
    if dn is not None and ucx_tag:
        up = t["ucx"]["tag_lat"].get("progress_calls_per_iter")
        ep = d.get("empties_per_round_trip")
        dw = d.get("loop_diff_no_empty_per_round_trip")
        um = t["ucx"]["tag_lat"].get("per_iter_main")
        if um is not None and dw is not None:
            out.append("- tagged 64 B round trip, direct, <= UCX tag_lat's, like with like (two "
                       "run lengths, waits out: fd_rdm's empty reads, UCX's spin-lock waits and "
                       "async thread): %.0f vs %.0f (%s; UCX's %s progress calls per round trip "
                       "in); empty polls in (loop total diff): %s vs %.0f" % (
                           dw, um, "met" if dw <= um else "missed", _f(up, 1), _f(dl),
                           t["ucx"]["tag_lat"]["per_iter"]))
        else:
            out.append("- tagged 64 B round trip, direct, <= UCX tag_lat's, like with like (loop "
                       "total diff, empty polls in): %s vs %.0f (%s; %s vs %s polls per round "
                       "trip, so timing decides most of both)" % (
                           _f(dl), ucx_tag,
                           "-" if dl is None else ("met" if dl <= ucx_tag else "missed"),
                           _f(ep + 2 if ep is not None else None, 1), _f(up, 1)))
        out.append("- the same without empty polls: direct %.0f against the issue's UCX "
                   "figure of %d (%s)" % (
                       dn, ISSUE_UCX_TAG, "met" if dn <= ISSUE_UCX_TAG else "missed"))
    else:
        out.append("- tagged 64 B round trip <= UCX tag_lat: not measured (%s)" % (
            "no UCX figure" if dn is not None else "no fd_rdm figure"))
    if dp is not None:
        out.append("- without empty polls, --peer-wait=split (one completion per counted "
                   "read; %s empty reads per round trip left): direct %.0f against %d "
                   "(%s)%s" % (
                       _f(d.get("peerwait_split_empties_per_round_trip"), 3), dp, ISSUE_UCX_TAG,
                       "met" if dp <= ISSUE_UCX_TAG else "missed",
                       ("; OFF %.0f = %.2fx direct" % (op, op / dp) if op is not None and dp
                        else "") + ("; both completions at one read (--peer-wait): direct %s, "
                                    "OFF %s" % (_f(d.get("peerwait_per_round_trip")),
                                                _f(o.get("peerwait_per_round_trip"))))))
    if dn is not None and mn:
        out.append("- stretch, <= 1.5x the MSG send round trip (%.0f): %.0f = %.2fx (%s)" % (
            mn, dn, dn / mn, "met" if dn <= 1.5 * mn else "missed"))
    if dn and on is not None:
        out.append("- OFF within 10%% of direct: %.0f vs %.0f = %.2fx (%s)" % (
            on, dn, on / dn, "met" if on <= 1.1 * dn else "missed"))
    cells = []
    worst = None
    for test in MSG_TESTS:
        size = 8 if test == "atomic" else 64
        raw = next((r["round_trip"] for r in ins if r["variant"] == "rawverbs" and
                    r["side"] == "client" and r["test"] == test and r["bytes"] == size), None)
        dr = next((r["round_trip"] for r in ins if r["variant"] == "direct" and
                   r["side"] == "client" and r["test"] == test and r["bytes"] == size), None)
        if raw and dr:
            q = dr / raw
            cells.append("%s %.0f vs %.0f (%.2fx)" % (test, dr, raw, q))
            if test != "writedata":
                worst = q if worst is None else max(worst, q)
    if cells:
        out.append("- MSG round trips, direct <= 1.05x raw verbs (send, inject, write, read, "
                   "atomic): %s: %s" % ("; ".join(cells),
                                        "met" if worst is not None and worst <= 1.05 else
                                        "missed"))
    else:
        out.append("- MSG round trips <= 1.05x raw verbs: no callgrind part in this run")
    w = t["wall"]
    if w:
        out.append("- tagged 64 B latency on the wall clock (avg one-way us): " + ", ".join(
            "%s %s" % (k, _f(w[k]["avg_us"], 2)) for k, _ in WALL_ROWS if k in w) +
            " (reported; no target)")
    out.append("")
    return out


def rows(t):
    """One row per source for tagged.csv and results.json."""
    res = []
    for key, label in RDM_ROWS:
        r = t["rdm"].get(key)
        if r:
            ep = r.get("empties_per_round_trip")
            res.append({"source": key, "label": label,
                        "instr_no_empty_polls": r.get("instructions_per_round_trip"),
                        "instr_loop_total_diff": r.get("loop_diff_per_round_trip"),
                        "instr_loop_diff_waits_out": r.get("loop_diff_no_empty_per_round_trip"),
                        "polls_per_round_trip": None if ep is None else ep + 2,
                        "instr_peer_wait_both": r.get("peerwait_per_round_trip"),
                        "peer_wait_both_empties_per_round_trip":
                            r.get("peerwait_empties_per_round_trip"),
                        "peer_wait_both_late": r.get("peerwait_late"),
                        "instr_peer_wait_split": r.get("peerwait_split_per_round_trip"),
                        "peer_wait_split_empties_per_round_trip":
                            r.get("peerwait_split_empties_per_round_trip"),
                        "peer_wait_split_late": r.get("peerwait_split_late")})
    for key, label in UCX_TESTS:
        r = t["ucx"].get(key)
        if r:
            res.append({"source": "ucx_" + key, "label": label, "instr_no_empty_polls": None,
                        "instr_loop_total_diff": r["per_iter"],
                        "instr_loop_diff_waits_out": r.get("per_iter_main"),
                        "polls_per_round_trip": r.get("progress_calls_per_iter")})
    for key, label in WALL_ROWS:
        r = t["wall"].get(key)
        if not r:
            continue
        row = next((x for x in res if x["source"] == key.replace("fd_rdm-", "rdm-")), None)
        if row is None:
            row = {"source": key.replace("fd_rdm-", "rdm-"), "label": label,
                   "instr_no_empty_polls": None, "instr_loop_total_diff": None}
            res.append(row)
        row["wall_avg_us"] = r["avg_us"]
        row["wall_median_us"] = r["median_us"]
    return res


def write_csv(summary, t):
    rs = rows(t)
    if not rs:
        return
    keys = ["source", "label", "instr_no_empty_polls", "instr_loop_total_diff",
            "instr_loop_diff_waits_out",
            "polls_per_round_trip", "instr_peer_wait_both",
            "peer_wait_both_empties_per_round_trip", "peer_wait_both_late",
            "instr_peer_wait_split", "peer_wait_split_empties_per_round_trip",
            "peer_wait_split_late", "wall_avg_us", "wall_median_us"]
    with open(os.path.join(summary, "tagged.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rs:
            w.writerow({k: "" if r.get(k) is None or (isinstance(r.get(k), float) and
                                                     math.isnan(r.get(k))) else r.get(k)
                        for k in keys})
