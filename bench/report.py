#!/usr/bin/env python3
"""Turn the raw outputs of bench/vm-session.sh into the comparison tables,
CSV/JSON summaries and gnuplot PNGs.

    report.py OUT [--only latency|instructions] [--no-plots]

Parts it reads (whatever exists): latency/, bw/, rstream/, tools/,
callgrind/, setup/, ucx/, rscg/, rdm/, tagged/, more/.

OUT is the directory vm-session.sh wrote. Results go to OUT/summary/ and
the tables to stdout (and OUT/summary/report.txt).
"""
import argparse
import csv
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_more  # noqa: E402  (setup, UCX, rstream vs rsockets)
import report_fi_more  # noqa: E402  (FI_MORE message rate)
import report_tagged  # noqa: E402  (issue 23: tagged round trip beside UCX)

VARIANTS = ["rawverbs", "direct", "off", "upstream"]
TESTS = ["send", "inject", "write", "writedata", "read", "atomic"]
BW_TESTS = ["send_bw", "write_bw", "read_bw"]
RS_VARIANTS = ["direct", "off"]
MIB = 1048576 / 1e6   # perftest's MB/sec are MiB/s; ours are 10^6 B/s


def fnum(x):
    """A CSV field as float, or None when empty."""
    try:
        return float(x) if x not in (None, "") else None
    except ValueError:
        return None


# --------------------------------------------------------------------------
# latency
# --------------------------------------------------------------------------
def load_latency(out):
    rows = {}
    for v in VARIANTS:
        path = os.path.join(out, "latency", v + ".csv")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for r in csv.DictReader(f):
                key = (r["test"], int(r["bytes"]))
                rows.setdefault(key, {})[v] = {
                    k: fnum(r[k]) for k in r
                    if k.endswith("_us") or k in ("usec_per_xfer", "mb_per_s", "mmsg_per_s",
                                                  "cycles_per_op", "instr_per_op")
                }
    return rows


def load_csv_rows(out, sub, variants):
    """bw/<variant>.csv or rstream/<variant>.csv: (test, bytes) -> variant -> row."""
    rows = {}
    for v in variants:
        path = os.path.join(out, sub, v + ".csv")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for r in csv.DictReader(f):
                rows.setdefault((r["test"], int(r["bytes"])), {})[v] = {
                    k: fnum(r.get(k)) for k in (
                        "t_min_us", "t_typical_us", "t_avg_us", "t_p99_us",
                        "usec_per_xfer", "mb_per_s", "mmsg_per_s", "window",
                        "cycles_per_op", "instr_per_op")}
    return rows


def parse_perftest_bw(path):
    """perftest bandwidth: bytes iters peak avg msgrate; MB/sec are MiB/s,
    converted here to 10^6 B/s."""
    res = None
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 5 and p[0].isdigit() and p[1].isdigit():
                    try:
                        res = {"mb_per_s": float(p[3]) * MIB, "mmsg_per_s": float(p[4])}
                    except ValueError:
                        continue
    except OSError:
        return None
    return res


def parse_rsockets(path, size):
    """rsockets' rstream: a header line naming Gb/sec and usec/xfer, then
    one line per test. Its Gb/sec has two decimals (steps of 1.25 MB/s at
    these speeds); size / usec_per_xfer is the same rate (bytes of both
    directions over the loop time) with the precision of usec/xfer."""
    res = None
    try:
        with open(path) as f:
            hdr = None
            for line in f:
                p = line.split()
                if "usec/xfer" in p and "Gb/sec" in p:
                    hdr = p
                    continue
                if hdr and len(p) == len(hdr):
                    try:
                        u = float(p[hdr.index("usec/xfer")])
                        res = {"usec_per_xfer": u,
                               "mb_per_s": size / u if u > 0 else
                               float(p[hdr.index("Gb/sec")]) * 125.0}
                    except ValueError:
                        pass
    except OSError:
        return None
    return res


def parse_perftest(path):
    """Last result line of a perftest latency run: bytes iters t_min t_max
    t_typical t_avg t_stdev p99 p99.9 (already one-way for send/write)."""
    res = None
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 9 and p[0].isdigit() and p[1].isdigit():
                    try:
                        vals = [float(x) for x in p[2:9]]
                    except ValueError:
                        continue
                    # perftest prints "inf" in every column when its
                    # cycle-counter calibration came out as 0 MHz (seen under
                    # TCG): no measurement, not an infinite latency.
                    # vm-session.sh measures again; if all tries failed
                    # the size shows "-".
                    if not all(math.isfinite(x) for x in vals):
                        continue
                    res = dict(zip(["t_min_us", "t_max_us", "t_typical_us",
                                    "t_avg_us", "t_stdev_us", "t_p99_us",
                                    "t_p999_us"], vals))
    except OSError:
        return None
    return res


def parse_usec_per_xfer(path, col_name="usec/xfer"):
    """fi_pingpong and rstream print a header naming usec/xfer; take the
    value under it from the last data line."""
    res = None
    try:
        with open(path) as f:
            idx = None
            for line in f:
                p = line.split()
                if col_name in p:
                    idx = p.index(col_name)
                    continue
                if idx is not None and len(p) > idx:
                    try:
                        res = {"usec_per_xfer": float(p[idx])}
                    except ValueError:
                        pass
    except OSError:
        return None
    return res


def load_tools(out):
    tools = {}
    for path in (glob.glob(os.path.join(out, "tools", "*.txt")) +
                 glob.glob(os.path.join(out, "rstream", "rsockets_*.txt"))):
        m = re.match(r"(.+)-(\d+)\.txt$", os.path.basename(path))
        if not m:
            continue
        name, size = m.group(1), int(m.group(2))
        if name.startswith("rsockets"):
            r = parse_rsockets(path, size)
        elif name.endswith("_bw"):
            r = parse_perftest_bw(path)
        elif name.startswith("ib_"):
            r = parse_perftest(path)
        else:
            r = parse_usec_per_xfer(path)
        if r:
            tools.setdefault(name, {})[size] = r
    return tools


def fmt(x, w=9, prec=2):
    return ("%*.*f" % (w, prec, x)) if x is not None else "%*s" % (w, "-")


def ratio(x, base):
    if x is None or not base:
        return None
    return x / base


def latency_tables(lat, tools):
    lines = []
    lines.append("Latency, one-way t_typical (median of per-iteration round trips / 2;")
    lines.append("read and atomic: whole round trip), microseconds; (x) = ratio to raw verbs.")
    lines.append("ib_*_lat: perftest t_typical, same statistic. fi_pingpong, rstream: their")
    lines.append("usec/xfer (mean of the whole loop per transfer, fabtests style), next to our")
    lines.append("own usec/xfer column (u/x) for the same variant.")
    # which external tool pairs with which test
    ext = {"send": ["ib_send_lat", "fi_pingpong"], "write": ["ib_write_lat"]}
    for t in TESTS:
        sizes = sorted(s for (tt, s) in lat if tt == t)
        if not sizes:
            continue
        cols = [v for v in VARIANTS if any(v in lat[(t, s)] for s in sizes)]
        tcols = ext.get(t, [])
        lines.append("")
        hdr = "%-9s %8s" % (t, "bytes")
        for v in cols:
            hdr += " %9s %7s" % (v, "(x)")
        if t == "send":
            hdr += " %9s" % "u/x dir"
            hdr += " %9s" % "u/x up"
        for tc in tcols:
            hdr += " %12s" % tc
        lines.append(hdr)
        for s in sizes:
            row = lat[(t, s)]
            base = row.get("rawverbs", {}).get("t_typical_us")
            line = "%-9s %8d" % ("", s)
            for v in cols:
                x = row.get(v, {}).get("t_typical_us")
                r = ratio(x, base)
                line += " %s %7s" % (fmt(x), ("%.2fx" % r) if r else "-")
            if t == "send":
                line += " %s" % fmt(row.get("direct", {}).get("usec_per_xfer"))
                line += " %s" % fmt(row.get("upstream", {}).get("usec_per_xfer"))
            for tc in tcols:
                tr = tools.get(tc, {}).get(s)
                if tr is None:
                    line += " %12s" % "-"
                elif "t_typical_us" in tr:
                    line += " %12.2f" % tr["t_typical_us"]
                else:
                    line += " %12.2f" % tr["usec_per_xfer"]
            lines.append(line)
    # The best case resists a loaded host (a shared machine, a TCG VM) far
    # better than the median does.
    lines.append("")
    lines.append("Best case, one-way t_min (read, atomic: whole round trip), microseconds;")
    lines.append("ib_*_lat: perftest t_min.")
    for t in TESTS:
        sizes = sorted(s for (tt, s) in lat if tt == t)
        if not sizes:
            continue
        cols = [v for v in VARIANTS if any(v in lat[(t, s)] for s in sizes)]
        tcols = [tc for tc in ext.get(t, []) if tc.startswith("ib_")]
        lines.append("")
        lines.append("%-9s %8s" % (t, "bytes") + "".join(" %9s %7s" % (v, "(x)") for v in cols)
                     + "".join(" %12s" % tc for tc in tcols))
        for s in sizes:
            row = lat[(t, s)]
            base = row.get("rawverbs", {}).get("t_min_us")
            line = "%-9s %8d" % ("", s)
            for v in cols:
                x = row.get(v, {}).get("t_min_us")
                r = ratio(x, base)
                line += " %s %7s" % (fmt(x), ("%.2fx" % r) if r else "-")
            for tc in tcols:
                tr = tools.get(tc, {}).get(s)
                line += " %12s" % ("%.2f" % tr["t_min_us"] if tr and "t_min_us" in tr else "-")
            lines.append(line)
    return lines


def bw_tables(bw, tools):
    lines = ["Bandwidth and message rate: a window of operations in flight (see the",
             "window column), one-way stream; MB/s = 10^6 bytes/s; (x) = ratio to raw",
             "verbs. ib_*_bw: perftest's BW average converted from MiB/s, same window",
             "(tx depth), its default completion moderation."]
    ext = {"send_bw": "ib_send_bw", "write_bw": "ib_write_bw"}
    for t in BW_TESTS:
        sizes = sorted(s for (tt, s) in bw if tt == t)
        if not sizes:
            continue
        cols = [v for v in VARIANTS if any(v in bw[(t, s)] for s in sizes)]
        tc = ext.get(t)
        lines.append("")
        lines.append("%-9s %8s %6s" % (t, "bytes", "window") +
                     "".join(" %9s %7s" % (v, "(x)") for v in cols) +
                     (" %11s" % tc if tc else "") + "   Mmsg/s " + " ".join(cols))
        for s in sizes:
            row = bw[(t, s)]
            base = row.get("rawverbs", {}).get("mb_per_s")
            win = next((r.get("window") for r in row.values() if r.get("window")), None)
            line = "%-9s %8d %6s" % ("", s, "%d" % win if win else "-")
            for v in cols:
                x = row.get(v, {}).get("mb_per_s")
                r = ratio(x, base)
                line += " %s %7s" % (fmt(x, 9, 3), ("%.2fx" % r) if r else "-")
            if tc:
                tr = tools.get(tc, {}).get(s)
                line += " %11s" % ("%.2f" % tr["mb_per_s"] if tr else "-")
            line += "   " + " ".join(fmt(row.get(v, {}).get("mmsg_per_s"), 7, 4) for v in cols)
            lines.append(line)
    return lines


def rstream_tables(rs, tools):
    lines = ["rstream: FI_EP_SOCK_STREAM (fd_rstream) and rsockets' rstream tool on the",
             "same link, the same exchange: per iteration C transfers of S bytes each",
             "way. Latency (C = 1): usec/xfer = loop time / transfers (both tools'",
             "statistic; ours also gives the median one-way t_typical). Bandwidth:",
             "MB/s (10^6) over both directions (rsockets: S / its usec/xfer). (x) = ratio to",
             "rsockets (there is no raw-verbs stream)."]
    for test, tool, key, label in (("rstream", "rsockets_lat", "usec_per_xfer", "usec/xfer"),
                                   ("rstream_bw", "rsockets_bw", "mb_per_s", "MB/s")):
        sizes = sorted({s for (t, s) in rs if t == test} |
                       set(tools.get(tool, {}).keys()))
        if not sizes:
            continue
        lines.append("")
        hdr = "%-10s %8s %10s" % (test, "bytes", "rsockets")
        hdr += "".join(" %9s %7s" % (v, "(x)") for v in RS_VARIANTS)
        if test == "rstream":
            hdr += "   t_typical " + " ".join(RS_VARIANTS)
        lines.append(hdr + "   (" + label + ")")
        for s in sizes:
            base = tools.get(tool, {}).get(s, {}).get(key)
            line = "%-10s %8d %10s" % ("", s, fmt(base, 10))
            for v in RS_VARIANTS:
                x = rs.get((test, s), {}).get(v, {}).get(key)
                r = ratio(x, base)
                line += " %s %7s" % (fmt(x), ("%.2fx" % r) if r else "-")
            if test == "rstream":
                line += "   " + " ".join(fmt(rs.get((test, s), {}).get(v, {}).get("t_typical_us"))
                                         for v in RS_VARIANTS)
            lines.append(line)
    return lines


def perf_table(lat, bw):
    """Cycles and instructions per op from perf_event_open, when there were
    hardware counters."""
    rows = []
    for src in (lat, bw):
        for (t, s), by in sorted(src.items()):
            for v in VARIANTS:
                r = by.get(v, {})
                if r.get("cycles_per_op") is not None:
                    rows.append((t, s, v, r["cycles_per_op"], r["instr_per_op"]))
    lines = ["Hardware counters (perf_event_open around each measured loop, user space,",
             "per iteration or per bandwidth message):"]
    if not rows:
        return lines + ["  not available on this machine (no hardware counters: a VM without",
                        "  a virtual PMU, or perf_event_paranoid too high); callgrind's counts",
                        "  below are the instruction measure."]
    lines.append("%-10s %8s %-9s %10s %10s" % ("test", "bytes", "variant", "cycles/op", "instr/op"))
    for t, s, v, c, i in rows:
        lines.append("%-10s %8d %-9s %10.1f %10.1f" % (t, s, v, c, i))
    return lines


def pick_sizes(sizes, want=(1, 64, 4096, 65536)):
    got = [s for s in want if s in sizes]
    return got or sorted(sizes)[:4]


def comparison_table(lat, bw, rs, tools, ins):
    """The one table: every measurement against raw verbs (rstream against
    rsockets), the external tools in the same rows."""
    lines = ["Comparison: ratios against raw verbs (rstream rows: against rsockets'",
             "rstream). lat = one-way t_typical us (read: round trip), bw = MB/s,",
             "instr = callgrind user-space instructions per round trip (client).",
             "Lower is better for lat and instr, higher for bw.", ""]
    lines.append("%-24s %8s %10s %16s %16s %16s   %s" % (
        "metric", "bytes", "rawverbs", "direct", "off", "upstream", "external tools"))

    def cell(x, base):
        r = ratio(x, base)
        if x is None:
            return "%16s" % "-"
        return "%16s" % ("%.4g %s" % (x, "(%.2fx)" % r if r else ""))

    def exts(pairs, base):
        out = []
        for name, x in pairs:
            if x is None:
                continue
            r = ratio(x, base)
            out.append("%s %.4g%s" % (name, x, " (%.2fx)" % r if r else ""))
        return "  ".join(out)

    for t, tool_names in (("send", ["ib_send_lat"]), ("write", ["ib_write_lat"]), ("read", [])):
        sizes = sorted(s for (tt, s) in lat if tt == t)
        for s in pick_sizes(sizes):
            row = lat[(t, s)]
            base = row.get("rawverbs", {}).get("t_typical_us")
            pairs = [(n, tools.get(n, {}).get(s, {}).get("t_typical_us")) for n in tool_names]
            if t == "send":
                pairs.append(("fi_pingpong[usec/xfer]",
                              tools.get("fi_pingpong", {}).get(s, {}).get("usec_per_xfer")))
            lines.append("%-24s %8d %10s %s %s %s   %s" % (
                "lat " + t, s, fmt(base, 10),
                cell(row.get("direct", {}).get("t_typical_us"), base),
                cell(row.get("off", {}).get("t_typical_us"), base),
                cell(row.get("upstream", {}).get("t_typical_us"), base),
                exts(pairs, base)))
    for t in BW_TESTS:
        sizes = sorted(s for (tt, s) in bw if tt == t)
        tn = {"send_bw": "ib_send_bw", "write_bw": "ib_write_bw"}.get(t)
        for s in pick_sizes(sizes):
            row = bw[(t, s)]
            base = row.get("rawverbs", {}).get("mb_per_s")
            pairs = [(tn, tools.get(tn, {}).get(s, {}).get("mb_per_s"))] if tn else []
            lines.append("%-24s %8d %10s %s %s %s   %s" % (
                "bw " + t, s, fmt(base, 10),
                cell(row.get("direct", {}).get("mb_per_s"), base),
                cell(row.get("off", {}).get("mb_per_s"), base),
                cell(row.get("upstream", {}).get("mb_per_s"), base), exts(pairs, base)))
    for test, tool, key, label in (("rstream", "rsockets_lat", "usec_per_xfer", "rstream usec/xfer"),
                                   ("rstream_bw", "rsockets_bw", "mb_per_s", "rstream MB/s")):
        sizes = sorted({s for (t, s) in rs if t == test} | set(tools.get(tool, {})))
        for s in pick_sizes(sizes):
            base = tools.get(tool, {}).get(s, {}).get(key)
            lines.append("%-24s %8d %10s %s %s %16s   %s" % (
                label, s, "-",
                cell(rs.get((test, s), {}).get("direct", {}).get(key), base),
                cell(rs.get((test, s), {}).get("off", {}).get(key), base), "-",
                "rsockets %s" % fmt(base, 0) if base is not None else ""))
    byk = {}
    for r in ins:
        if r["side"] == "client":
            byk.setdefault((r["test"], r["bytes"]), {})[r["variant"]] = r["round_trip"]
    for (t, s) in sorted(byk, key=lambda k: (TESTS.index(k[0]) if k[0] in TESTS else 99, k[1])):
        row = byk[(t, s)]
        base = row.get("rawverbs")
        lines.append("%-24s %8d %10s %s %s %s" % (
            "instr " + t, s, fmt(base, 10, 0), cell(row.get("direct"), base),
            cell(row.get("off"), base), cell(row.get("upstream"), base)))
    return lines


# --------------------------------------------------------------------------
# instructions (callgrind)
# --------------------------------------------------------------------------
FUNCS = ("bk_post", "bk_post_recv", "bk_poll", "bk_poll_empty", "bk_nop")
LINE_RE = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+(\S*?)(fd_pingpong|rawverbs_pingpong)\.c:(bk_\w+)\s+\[")


def annotate(path):
    """Inclusive Ir of our bracketed bk_* functions in one dump."""
    tag = None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("desc: Trigger: Client Request: "):
                tag = line.split("Client Request: ", 1)[1].strip()
                break
            if line.startswith("events:"):
                break
    if not tag or not tag.startswith("fdpp:"):
        return None, None
    try:
        # From the dump's own directory: run where the sources are reachable
        # by relative path, callgrind_annotate splits a function's cost
        # between two names.
        txt = subprocess.run(["callgrind_annotate", "--auto=no", "--inclusive=yes",
                              "--threshold=100", os.path.abspath(path)],
                             capture_output=True, text=True, check=True,
                             cwd=os.path.dirname(os.path.abspath(path))).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print("report: callgrind_annotate %s failed: %s" % (path, e), file=sys.stderr)
        return tag, None
    ir = {fn: 0 for fn in FUNCS}
    for line in txt.splitlines():
        m = LINE_RE.match(line)
        if m and m.group(4) in ir:
            ir[m.group(4)] = max(ir[m.group(4)], int(m.group(1).replace(",", "")))
    return tag, ir


def load_counts(out):
    counts = {}
    for log in glob.glob(os.path.join(out, "callgrind", "*", "run.log")):
        with open(log) as f:
            for line in f:
                if not line.startswith("#CG "):
                    continue
                kv = dict(p.split("=", 1) for p in line.split()[1:])
                counts[kv["tag"]] = {k: int(v) for k, v in kv.items() if k != "tag"}
    return counts


def instructions(out):
    counts = load_counts(out)
    res = []
    for path in sorted(glob.glob(os.path.join(out, "callgrind", "*", "cg.*.*"))):
        tag, ir = annotate(path)
        if not tag or ir is None or tag not in counts:
            continue
        _, variant, side, test, size = tag.split(":")
        n = counts[tag]
        nop = ir["bk_nop"] / n["nops"] if n["nops"] else 0.0
        empty_raw = ir["bk_poll_empty"] / n["probes"] if n["probes"] else 0.0
        calls = n["posts"] + n["recv_posts"] + n["reaps"]
        post = ir["bk_post"] / n["posts"] - nop if n["posts"] else None
        recv = ir["bk_post_recv"] / n["recv_posts"] - nop if n["recv_posts"] else None
        reap_total = ir["bk_poll"] - n["empties"] * empty_raw
        reap = reap_total / n["reaps"] - nop if n["reaps"] else None
        rt = (ir["bk_post"] + ir["bk_post_recv"] + reap_total - nop * calls) / n["iters"]
        res.append({
            "variant": variant, "side": side, "test": test, "bytes": int(size),
            "iters": n["iters"], "posts": n["posts"], "recv_posts": n["recv_posts"],
            "reaps": n["reaps"], "empties": n["empties"],
            "post": post, "recv_post": recv, "reap": reap,
            "empty_poll": empty_raw - nop, "round_trip": rt,
            "bracket": nop, "dirty_probe": n.get("dirty", 0),
        })
    return res


def instruction_table(ins, side="client"):
    lines = []
    lines.append("User-space instructions per operation (callgrind, %s side; the call" % side)
    lines.append("and everything under it: libfabric, libibverbs, the rxe user driver, libc's")
    lines.append("write wrapper; bracket cost subtracted). round trip = posts + receive")
    lines.append("reposts + completions reaped in one iteration, empty polls excluded")
    lines.append("(their number depends on timing; 'empty' gives their unit cost).")
    by = {}
    for r in ins:
        # one-sided tests leave the target nothing to count
        if r["side"] == side and (r["posts"] or r["recv_posts"] or r["reaps"]):
            by[(r["test"], r["bytes"], r["variant"])] = r
    keys = sorted({(t, b) for (t, b, _) in by}, key=lambda k: (TESTS.index(k[0]) if k[0] in TESTS else 99, k[1]))
    if not keys:
        return []
    lines.append("")
    lines.append("%-10s %6s %-9s %8s %8s %8s %8s %10s %8s" % (
        "test", "bytes", "variant", "post", "recvpost", "reap", "empty", "roundtrip", "vs raw"))
    for (t, b) in keys:
        base = by.get((t, b, "rawverbs"), {}).get("round_trip")
        for v in VARIANTS:
            r = by.get((t, b, v))
            if not r:
                continue
            rr = ratio(r["round_trip"], base)
            lines.append("%-10s %6d %-9s %s %s %s %s %s %8s" % (
                t, b, v, fmt(r["post"], 8, 1), fmt(r["recv_post"], 8, 1),
                fmt(r["reap"], 8, 1), fmt(r["empty_poll"], 8, 1),
                fmt(r["round_trip"], 10, 1), ("%.2fx" % rr) if rr else "-"))
        lines.append("")
    return lines


# --------------------------------------------------------------------------
# output files and plots
# --------------------------------------------------------------------------
def write_latency_csv(path, lat, tools):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["source", "test", "bytes", "t_typical_us", "t_avg_us", "t_p99_us",
                    "t_p999_us", "t_min_us", "usec_per_xfer", "ratio_typical_vs_raw"])
        for (t, s) in sorted(lat, key=lambda k: (TESTS.index(k[0]) if k[0] in TESTS else 99, k[1])):
            base = lat[(t, s)].get("rawverbs", {}).get("t_typical_us")
            for v, r in sorted(lat[(t, s)].items()):
                rr = ratio(r.get("t_typical_us"), base)
                w.writerow([v, t, s, r.get("t_typical_us"), r.get("t_avg_us"),
                            r.get("t_p99_us"), r.get("t_p999_us"), r.get("t_min_us"),
                            r.get("usec_per_xfer"), "%.3f" % rr if rr else ""])
        for name, by in sorted(tools.items()):
            test = "write" if "write" in name else "send"
            for s, r in sorted(by.items()):
                w.writerow([name, test, s, r.get("t_typical_us", ""), r.get("t_avg_us", ""),
                            r.get("t_p99_us", ""), r.get("t_p999_us", ""),
                            r.get("t_min_us", ""), r.get("usec_per_xfer", ""), ""])


def write_rows_csv(path, rows, tools, tool_names):
    """bandwidth.csv / rstream.csv: our variants' rows, then the tools'."""
    keys = ["usec_per_xfer", "mb_per_s", "mmsg_per_s", "t_typical_us", "window",
            "cycles_per_op", "instr_per_op"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["source", "test", "bytes"] + keys)
        for (t, s) in sorted(rows):
            for v, r in sorted(rows[(t, s)].items()):
                w.writerow([v, t, s] + ["" if r.get(k) is None else r.get(k) for k in keys])
        for name in tool_names:
            for s, r in sorted(tools.get(name, {}).items()):
                w.writerow([name, name, s] + ["" if r.get(k) is None else r.get(k) for k in keys])


def write_instr_csv(path, ins):
    keys = ["variant", "side", "test", "bytes", "iters", "posts", "recv_posts", "reaps",
            "empties", "post", "recv_post", "reap", "empty_poll", "round_trip", "bracket",
            "dirty_probe"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in ins:
            w.writerow({k: (("%.1f" % r[k]) if isinstance(r[k], float) else r[k]) for k in keys})


def plots(summary, lat, tools, ins, bw=None, rs=None):
    gp = shutil.which("gnuplot")
    if not gp:
        print("report: gnuplot not installed, no PNGs (apt-get install gnuplot-nox)",
              file=sys.stderr)
        return []
    made = []
    script = ["set terminal pngcairo size 1000,650 noenhanced" if has_cairo(gp)
              else "set terminal png size 1000,650 noenhanced",
              "set logscale x 2", "set logscale y", "set grid",
              "set key top left", "set xlabel 'message size (bytes)'",
              "set datafile missing '-'"]
    for t in TESTS:
        sizes = sorted(s for (tt, s) in lat if tt == t)
        if not sizes:
            continue
        series = [v for v in VARIANTS if any(v in lat[(t, s)] for s in sizes)]
        extra = {"send": ["ib_send_lat"], "write": ["ib_write_lat"]}.get(t, [])
        dat = os.path.join(summary, "latency-%s.dat" % t)
        with open(dat, "w") as f:
            f.write("# bytes " + " ".join(series + extra) + "\n")
            for s in sizes:
                vals = [lat[(t, s)].get(v, {}).get("t_typical_us") for v in series]
                vals += [tools.get(e, {}).get(s, {}).get("t_typical_us") for e in extra]
                f.write("%d %s\n" % (s, " ".join("-" if x is None else "%.3f" % x for x in vals)))
        png = os.path.join(summary, "latency-%s.png" % t)
        script.append("set output '%s'" % png)
        script.append("set title 'Soft-RoCE (TCG VM) %s latency, t_typical%s'" %
                      (t, "" if t in ("read", "atomic") else " one-way"))
        script.append("set ylabel 'microseconds'")
        cols = ["'%s' using 1:%d with linespoints title '%s'" % (dat, i + 2, name)
                for i, name in enumerate(series + extra)]
        script.append("plot " + ", ".join(cols))
        made.append(png)
    # bandwidth vs size, one plot per test
    bw = bw or {}
    for t in BW_TESTS:
        sizes = sorted(s for (tt, s) in bw if tt == t)
        if not sizes:
            continue
        series = [v for v in VARIANTS if any(v in bw[(t, s)] for s in sizes)]
        extra = {"send_bw": ["ib_send_bw"], "write_bw": ["ib_write_bw"]}.get(t, [])
        dat = os.path.join(summary, "bw-%s.dat" % t)
        with open(dat, "w") as f:
            f.write("# bytes " + " ".join(series + extra) + "\n")
            for s in sizes:
                vals = [bw[(t, s)].get(v, {}).get("mb_per_s") for v in series]
                vals += [tools.get(e, {}).get(s, {}).get("mb_per_s") for e in extra]
                f.write("%d %s\n" % (s, " ".join("-" if x is None else "%.4f" % x for x in vals)))
        png = os.path.join(summary, "bw-%s.png" % t)
        script += ["set output '%s'" % png,
                   "set title 'Soft-RoCE (TCG VM) %s bandwidth, window of operations in flight'" % t,
                   "set ylabel 'MB/s (10^6 bytes)'",
                   "plot " + ", ".join("'%s' using 1:%d with linespoints title '%s'" % (dat, i + 2, n)
                                       for i, n in enumerate(series + extra))]
        made.append(png)
    # rstream: latency (usec/xfer) and bandwidth vs size, ours and rsockets'
    rs = rs or {}
    for test, tool, key, ylabel, name in (
            ("rstream", "rsockets_lat", "usec_per_xfer", "usec/xfer (C = 1)", "rstream-latency"),
            ("rstream_bw", "rsockets_bw", "mb_per_s", "MB/s, both directions", "rstream-bw")):
        sizes = sorted({s for (t, s) in rs if t == test} | set(tools.get(tool, {})))
        if not sizes:
            continue
        dat = os.path.join(summary, name + ".dat")
        with open(dat, "w") as f:
            f.write("# bytes " + " ".join(RS_VARIANTS) + " rsockets\n")
            for s in sizes:
                vals = [rs.get((test, s), {}).get(v, {}).get(key) for v in RS_VARIANTS]
                vals.append(tools.get(tool, {}).get(s, {}).get(key))
                f.write("%d %s\n" % (s, " ".join("-" if x is None else "%.4f" % x for x in vals)))
        png = os.path.join(summary, name + ".png")
        script += ["set output '%s'" % png,
                   "set title 'Soft-RoCE (TCG VM) %s: fd_rstream vs rsockets rstream'" % test,
                   "set ylabel '%s'" % ylabel,
                   "plot " + ", ".join("'%s' using 1:%d with linespoints title '%s'" % (dat, i + 2, n)
                                       for i, n in enumerate(RS_VARIANTS + ["rsockets"]))]
        made.append(png)
    # instructions per round trip, client side, grouped by test
    rows = {}
    for r in ins:
        if r["side"] == "client":
            rows.setdefault("%s-%d" % (r["test"], r["bytes"]), {})[r["variant"]] = r["round_trip"]
    if rows:
        dat = os.path.join(summary, "instructions.dat")
        labels = sorted(rows, key=lambda k: (TESTS.index(k.split("-")[0])
                                             if k.split("-")[0] in TESTS else 99,
                                             int(k.split("-")[1])))
        with open(dat, "w") as f:
            f.write("# case " + " ".join(VARIANTS) + "\n")
            for k in labels:
                f.write(k + " " + " ".join("-" if rows[k].get(v) is None else "%.1f" % rows[k][v]
                                           for v in VARIANTS) + "\n")
        png = os.path.join(summary, "instructions.png")
        script += ["unset logscale", "set yrange [0:*]", "set output '%s'" % png,
                   "set title 'user-space instructions per round trip (callgrind, client side)'",
                   "set ylabel 'instructions'", "set xlabel ''",
                   "set style data histogram", "set style histogram cluster gap 1",
                   "set style fill solid 0.8 border -1", "set boxwidth 0.9",
                   "set xtics rotate by -45", "set key top right",
                   "plot " + ", ".join("'%s' using %d:xtic(1) title '%s'" % (dat, i + 2, v)
                                       for i, v in enumerate(VARIANTS))]
        made.append(png)
        # per call kind for one case (send 64 B, else the first): where
        # the instructions go, variant by variant
        case = "send-64" if "send-64" in rows else labels[0]
        t0, b0 = case.rsplit("-", 1)
        by = {r["variant"]: r for r in ins if r["side"] == "client" and r["test"] == t0
              and r["bytes"] == int(b0)}
        dat = os.path.join(summary, "instructions-ops.dat")
        kinds = ["post", "recv_post", "reap", "empty_poll"]
        with open(dat, "w") as f:
            f.write("# variant " + " ".join(kinds) + "\n")
            for v in VARIANTS:
                if v in by:
                    f.write(v + " " + " ".join("-" if by[v][k] is None else "%.1f" % by[v][k]
                                               for k in kinds) + "\n")
        png = os.path.join(summary, "instructions-ops.png")
        script += ["set output '%s'" % png,
                   "set title 'user-space instructions per call, %s %s B (callgrind, client)'"
                   % (t0, b0), "set xtics norotate",
                   "plot " + ", ".join("'%s' using %d:xtic(1) title '%s'" % (dat, i + 2, k)
                                       for i, k in enumerate(kinds))]
        made.append(png)
    gpf = os.path.join(summary, "plots.gp")
    with open(gpf, "w") as f:
        f.write("\n".join(script) + "\n")
    r = subprocess.run([gp, gpf], capture_output=True, text=True)
    if r.returncode:
        print("report: gnuplot failed:\n" + r.stderr, file=sys.stderr)
        return []
    return made


def has_cairo(gp):
    r = subprocess.run([gp, "-e", "set terminal"], capture_output=True, text=True)
    return "pngcairo" in (r.stdout + r.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--only", choices=["latency", "instructions"])
    ap.add_argument("--no-plots", action="store_true")
    a = ap.parse_args()
    summary = os.path.join(a.out, "summary")
    os.makedirs(summary, exist_ok=True)
    report = []
    lat, tools, ins, bw, rs = {}, {}, [], {}, {}
    for name, label in (("build.txt", "Build"), ("session.txt", "Session")):
        path = os.path.join(a.out, name)
        if os.path.exists(path):
            report += ["%s: %s" % (label, l.rstrip()) for l in open(path)]
    report.append("")
    if a.only != "instructions":
        lat = load_latency(a.out)
        tools = load_tools(a.out)
        bw = load_csv_rows(a.out, "bw", VARIANTS)
        rs = load_csv_rows(a.out, "rstream", RS_VARIANTS)
        if lat or tools:
            report += latency_tables(lat, tools)
            report.append("")
            write_latency_csv(os.path.join(summary, "latency.csv"), lat, tools)
        if bw:
            report += bw_tables(bw, tools)
            report.append("")
            write_rows_csv(os.path.join(summary, "bandwidth.csv"), bw, tools,
                           ["ib_send_bw", "ib_write_bw"])
        if rs or any(k.startswith("rsockets") for k in tools):
            report += rstream_tables(rs, tools)
            report.append("")
            write_rows_csv(os.path.join(summary, "rstream.csv"), rs, tools,
                           ["rsockets_lat", "rsockets_bw"])
        if lat or bw:
            report += perf_table(lat, bw)
            report.append("")
    if a.only != "latency":
        ins = instructions(a.out)
        if ins:
            report += instruction_table(ins, "client")
            report += instruction_table(ins, "server")
            write_instr_csv(os.path.join(summary, "instructions.csv"), ins)
    su = report_more.load_setup(a.out)
    report += report_more.setup_tables(su)
    ucx = report_more.load_ucx(a.out)
    if ucx["lat"] or ucx["instr"] or ucx["note"]:
        def post(v):
            return next((r["post"] for r in ins if r["variant"] == v and
                         r["side"] == "client" and r["test"] == "send" and r["bytes"] == 64),
                        None)
        report += report_more.ucx_lines(ucx, post("rawverbs"), post("direct"))
    rc = report_more.load_rscg(a.out)
    report += report_more.rscg_lines(rc)
    rdm = report_more.load_rdm(a.out)
    report += report_more.rdm_lines(rdm)
    tagged = report_tagged.load(a.out)
    report += report_tagged.lines(tagged)
    more = report_fi_more.load_more(os.path.join(a.out, "more"))
    report += report_fi_more.more_lines(more)
    if lat or bw or rs or ins:
        report += comparison_table(lat, bw, rs, tools, ins)
        report.append("")
    report += report_more.targets_lines(rs, tools, ins, su,
                                        report_fi_more.target_lines(more) if more else None)
    report += report_more.rdm_targets_lines(rdm)
    if report_tagged.has_data(tagged) or ins:
        report += report_tagged.target_lines(tagged, ins)
    with open(os.path.join(summary, "results.json"), "w") as f:
        json.dump({
            "bandwidth": [dict(source=v, test=t, bytes=s, **r)
                          for (t, s), by in sorted(bw.items()) for v, r in by.items()],
            "rstream": [dict(source=v, test=t, bytes=s, **r)
                        for (t, s), by in sorted(rs.items()) for v, r in by.items()],
            "latency": [dict(source=v, test=t, bytes=s, **r)
                        for (t, s), by in sorted(lat.items()) for v, r in by.items()],
            "tools": [dict(source=n, bytes=s, **r) for n, by in sorted(tools.items())
                      for s, r in sorted(by.items())],
            "instructions": ins,
            "setup": report_more.setup_rows(su),
            "ucx": ucx,
            "rstream_vs_rsockets": {
                "instructions": [dict(source=k[0], bytes=k[1], **r)
                                 for k, r in sorted(rc["instr"].items())],
                "packets_per_transfer": [dict(source=k[0], bytes=k[1], **r)
                                         for k, r in sorted(rc["wire"].items())]},
            "rdm": rdm,
            "tagged": report_tagged.rows(tagged),
            "more": more,
        }, f, indent=1)
    report_more.write_csvs(summary, su, ucx, rc)
    report_more.write_rdm_csv(summary, rdm)
    report_tagged.write_csv(summary, tagged)
    report_fi_more.write_csv(summary, more)
    pngs = [] if a.no_plots else plots(summary, lat, tools, ins, bw, rs)
    gp = shutil.which("gnuplot")
    if gp and not a.no_plots:
        term = ("set terminal pngcairo size 1000,650 noenhanced" if has_cairo(gp)
                else "set terminal png size 1000,650 noenhanced")
        pngs += report_more.plots(summary, su, gp, term)
        pngs += report_fi_more.plot(summary, more, gp, term)
    text = "\n".join(report) + "\n"
    with open(os.path.join(summary, "report.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    written = [n for n in ("report.txt", "latency.csv", "bandwidth.csv", "rstream.csv",
                           "instructions.csv", "setup.csv", "rstream-rsockets.csv",
                           "rdm.csv", "rdm-memory.csv", "tagged.csv", "more.csv", "results.json")
               if os.path.exists(os.path.join(summary, n))] + [os.path.basename(p) for p in pngs]
    print("written to %s: %s" % (summary, ", ".join(written)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
