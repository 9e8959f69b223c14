"""The FI_MORE message-rate part of the benchmark report (issue 15): what
bench/more-rate.sh wrote (run-all's OUT/more) as a table, more.csv, a plot
and the target verdicts. Used by report.py and bench/more-report.py.

Posting instructions per message: the client's inclusive cost of its
posting entry point (bk_post for one request per call, bk_post_batch for
16 per doorbell) in the measured send_bw loop, minus the callgrind
brackets (bk_nop, per bracket), divided by the messages. The reap of each
message's completion (one fi_cq_read / ibv_poll_cq that returns it, empty
polls taken out) is the same work with and without batching and is given
apart. ib_send_bw cannot be bracketed: (client total at N2 - at N) /
(N2 - N), its whole loop, empty polls included."""
import csv
import glob
import os
import re
import subprocess

from report_more import _annotate_funcs, _counters, _dump_tag_total, _kv

MORE_VARIANTS = ["rawverbs", "direct", "off", "upstream"]
BATCHES = (1, 16)
BK_FUNCS = ["bk_post", "bk_post_batch", "bk_poll", "bk_poll_empty", "bk_nop"]
CSV_KEYS = ["source", "batch", "messages", "doorbells", "post_instr", "reap_instr",
            "msg_instr", "loop_instr", "wall_messages", "wall_msg_per_s", "wall_side",
            "rnr_naks"]


def _client_counts(d):
    """The client's #CG line of run.log: (tag, counts) or (None, None)."""
    try:
        with open(os.path.join(d, "run.log"), errors="replace") as f:
            for line in f:
                if line.startswith("#CG ") and ":client:" in line:
                    kv = _kv(line)
                    return kv["tag"], {k: int(v) for k, v in kv.items() if k != "tag"}
    except OSError:
        pass
    return None, None


def _instr(d, v, batch):
    """Posting and reap instructions per message from one variant's dumps."""
    tag, n = _client_counts(d)
    if not tag:
        return None
    for path in sorted(glob.glob(os.path.join(d, "cg.*.*"))):
        if _dump_tag_total(path)[0] != tag:
            continue
        ir = _annotate_funcs(path, BK_FUNCS)
        msgs = n["reaps"]          # one send completion per message
        if not msgs or not n["nops"] or not n["probes"]:
            return None
        nop = ir.get("bk_nop", 0) / n["nops"]
        empty = ir.get("bk_poll_empty", 0) / n["probes"]
        if batch == 1:
            post_ir, brackets = ir.get("bk_post", 0), n["posts"]
        else:
            post_ir = ir.get("bk_post_batch", 0)
            # fi_sendmsg is bracketed per message, ibv_post_send per chain
            brackets = n["posts"] if v == "rawverbs" else msgs
        post = (post_ir - nop * brackets) / msgs
        reap = (ir.get("bk_poll", 0) - n["empties"] * empty) / msgs - nop
        return {"messages": msgs, "doorbells": n["posts"], "post_instr": post,
                "reap_instr": reap, "msg_instr": post + reap}
    return None


def _wall_rate(path):
    """(msg/s, messages) from fd_pingpong's send_bw row or ib_send_bw's
    MsgRate; msg/s None when there is none (perftest prints 0.000000 Mpps
    when its clock calibration failed under TCG: no measurement, not 0)."""
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None, None
    for line in lines:
        f = line.split()
        if f and f[0] == "send_bw" and len(f) > 12:
            u = float(f[10])                # usec/xfer: more digits than Mmsg/s
            return (1e6 / u if u > 0 else None), int(f[2])
        if len(f) >= 5 and f[0].isdigit() and f[1].isdigit() and re.match(r"^[\d.]+$", f[-1]):
            x = float(f[-1]) * 1e6          # bytes iters peak avg MsgRate[Mpps]
            return (x if x > 0 else None), int(f[1])
    return None, None


def _rnr(path):
    """RNR NAKs rxe0 received during a run (its counters before and after)."""
    before = after = None
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("before "):
                    before = _counters(line)
                elif line.startswith("after "):
                    after = _counters(line)
    except OSError:
        return None
    if not before or not after or "rcvd_rnr_err" not in after:
        return None
    return after["rcvd_rnr_err"] - before.get("rcvd_rnr_err", 0)


def load_more(d):
    """Rows from the directory more-rate.sh wrote: one per variant and
    batch, then ib_send_bw without and with --post_list 16 (batch 16)."""
    rows = []
    if not os.path.isdir(d):
        return rows
    for v in MORE_VARIANTS:
        for batch in BATCHES:
            base = os.path.join(d, "wall-%s-b%d" % (v, batch))
            ins = _instr(os.path.join(d, "cg", "%s-b%d" % (v, batch)), v, batch)
            wall, wn = _wall_rate(base + ".txt")
            if ins or wall:
                rows.append(dict(ins or {}, source=v, batch=batch, wall_msg_per_s=wall,
                                 wall_messages=wn, rnr_naks=_rnr(base + ".counters")))
    ns = sorted({int(m.group(1)) for p in glob.glob(os.path.join(d, "ib_send_bw-pl*-cg-*.cg"))
                 for m in [re.search(r"cg-(\d+)\.cg$", p)] if m})
    for pl in BATCHES:
        base = os.path.join(d, "ib_send_bw-pl%d-" % pl)
        wall, wn = _wall_rate(base + "wall.txt")
        side = "client"
        if wall is None:
            # with --post_list the client has printed 0.000000 Mpps in
            # every run here; the receiver's line times the same stream
            wall, wn = _wall_rate(base + "wall.server")
            side = "server" if wall else None
        r = {"source": "ib_send_bw", "batch": pl, "wall_msg_per_s": wall, "wall_messages": wn,
             "wall_side": side, "rnr_naks": _rnr(base + "wall.counters")}
        if len(ns) == 2:
            a = _dump_tag_total("%scg-%d.cg" % (base, ns[0]))[1]
            b = _dump_tag_total("%scg-%d.cg" % (base, ns[1]))[1]
            if a and b:
                r["loop_instr"] = (b - a) / (ns[1] - ns[0])
        if os.path.exists(base + "wall.txt") or "loop_instr" in r:
            rows.append(r)
    return rows


def _name(r):
    if r["source"] == "ib_send_bw":
        return "ib_send_bw" + (" --post_list 16" if r["batch"] == 16 else "")
    return "%s %s" % (r["source"], "one per call" if r["batch"] == 1 else "16 per doorbell")


def _f(x, prec=1):
    return "-" if x is None else "%.*f" % (prec, x)


def more_lines(rows):
    """The FI_MORE table of report.txt."""
    if not rows:
        return []
    n = next((r["messages"] for r in rows if r.get("messages")), "-")
    nw = next((r["wall_messages"] for r in rows if r.get("wall_messages")), "-")
    lines = ["FI_MORE message rate (issue 15): 64 B send_bw, window 64, one request per",
             "call (fi_send; raw verbs: one ibv_post_send each) against 16 per doorbell",
             "(fi_sendmsg with FI_MORE on 15 of 16; raw verbs: one chained ibv_post_send,",
             "what perftest's --post_list 16 does). post = user-space instructions per",
             "message in the posting calls, reap = in reading its completion (callgrind,",
             "client, %s messages; brackets and empty polls taken out); msg/s = wall" % n,
             "clock of a plain run of %s messages (TCG VM: noisy); RNR = RNR NAKs on" % nw,
             "rxe0 during that run.", ""]
    lines.append("%-30s %9s %9s %9s %9s %11s %5s" % (
        "variant", "post/msg", "reap/msg", "post+reap", "doorbells", "wall msg/s", "RNR"))
    for r in rows:
        if r["source"] == "ib_send_bw":
            continue
        lines.append("%-30s %9s %9s %9s %9s %11s %5s" % (
            _name(r), _f(r.get("post_instr")), _f(r.get("reap_instr")), _f(r.get("msg_instr")),
            r.get("doorbells", "-"), _f(r["wall_msg_per_s"], 0),
            "-" if r["rnr_naks"] is None else r["rnr_naks"]))
    for r in rows:
        if r["source"] == "ib_send_bw":
            lines.append("%-30s %9s %9s %9s %9s %11s %5s" % (
                _name(r), "", "", _f(r.get("loop_instr")) + ("*" if r.get("loop_instr") else ""),
                "", _f(r["wall_msg_per_s"], 0) + ("r" if r["wall_side"] == "server" else ""),
                "-" if r["rnr_naks"] is None else r["rnr_naks"]))
    if any(r.get("loop_instr") for r in rows):
        lines += ["* ib_send_bw: its whole client loop per message ((total at N2 - at N) /",
                  "  (N2 - N)): posting, polling and empty polls, whose number is timing."]
    else:
        lines += ["ib_send_bw's instructions: not measured (BENCH_MORE_PERFTEST_CG=1 or --full;",
                  "its loop cannot be bracketed and is mostly empty polls). Its --post_list 16",
                  "posts the same chained ibv_post_send as rawverbs 16 per doorbell."]
    if any(r.get("wall_side") == "server" for r in rows):
        lines.append("r: the receiver's rate (the client printed 0 Mpps, as perftest does here "
                     "with --post_list)")
    lines.append("")
    return lines


def _get(rows, src, batch, key):
    return next((r.get(key) for r in rows if r["source"] == src and r["batch"] == batch), None)


def target_lines(rows):
    """Issue 15's FI_MORE target, as lines for report_more.targets_lines:
    instructions per message (primary, deterministic) and wall-clock rate
    (secondary) of the direct build with FI_MORE against raw verbs one per
    call and against perftest's --post_list."""
    def verdict(ok):
        return "n/a" if ok is None else ("met" if ok else "MISSED")

    def row(what, ok, cells):
        return "  %-52s %-7s %s" % (what, verdict(ok), cells)
    d = _get(rows, "direct", 16, "post_instr")
    d_all = _get(rows, "direct", 16, "msg_instr")
    raw1 = _get(rows, "rawverbs", 1, "post_instr")
    raw1_all = _get(rows, "rawverbs", 1, "msg_instr")
    raw16 = _get(rows, "rawverbs", 16, "post_instr")
    out = []
    ok = d < raw1 if d and raw1 else None
    out.append(row("FI_MORE posting instr/msg < raw verbs one per call", ok,
                   "direct 16 per doorbell %.1f vs %.1f (%.3fx); with the reap %s vs %s" % (
                       d, raw1, d / raw1, _f(d_all), _f(raw1_all)) if ok is not None else ""))
    ok = d <= raw16 if d and raw16 else None
    out.append(row("FI_MORE posting instr/msg <= --post_list's chain", ok,
                   "direct %.1f vs raw verbs 16 per doorbell %.1f (%.2fx)" % (d, raw16, d / raw16)
                   if ok is not None else ""))
    w = _get(rows, "direct", 16, "wall_msg_per_s")
    w1 = _get(rows, "rawverbs", 1, "wall_msg_per_s")
    wpl = _get(rows, "ib_send_bw", 16, "wall_msg_per_s")
    ok = w > w1 if w and w1 else None
    out.append(row("FI_MORE msg/s > raw verbs one per call (wall)", ok,
                   "direct 16 per doorbell %.0f vs %.0f msg/s (%.2fx)" % (w, w1, w / w1)
                   if ok is not None else ""))
    ok = w >= wpl if w and wpl else None
    side = "; ib_send_bw's receiver" if _get(rows, "ib_send_bw", 16, "wall_side") == "server" else ""
    out.append(row("FI_MORE msg/s >= ib_send_bw --post_list 16 (wall)", ok,
                   "direct %.0f vs %.0f msg/s (%.2fx%s)" % (w, wpl, w / wpl, side) if ok is not None
                   else ("no ib_send_bw --post_list rate" if w else "")))
    return out


def write_csv(summary, rows):
    if not rows:
        return
    with open(os.path.join(summary, "more.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_KEYS)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("%.1f" % r[k]) if isinstance(r.get(k), float) else r.get(k, "")
                        for k in CSV_KEYS})


def plot(summary, rows, gp, terminal):
    """more.png: posting instructions per message by variant, one per call
    against 16 per doorbell."""
    have = [v for v in MORE_VARIANTS if any(r["source"] == v and r.get("post_instr")
                                            for r in rows)]
    if not have:
        return []
    dat = os.path.join(summary, "more.dat")
    with open(dat, "w") as f:
        f.write("# variant one_per_call 16_per_doorbell\n")
        for v in have:
            f.write(v + " " + " ".join(_f(_get(rows, v, b, "post_instr")) for b in BATCHES) + "\n")
    png = os.path.join(summary, "more.png")
    script = [terminal, "set grid", "set datafile missing '-'", "set output '%s'" % png,
              "set title '64 B send, user-space instructions per message in the posting "
              "calls (callgrind)'", "set ylabel 'instructions'", "set yrange [0:*]",
              "set style data histogram", "set style histogram cluster gap 1",
              "set style fill solid 0.8 border -1", "set key below",
              "plot '%s' using 2:xtic(1) title 'one per call', '' using 3 title "
              "'16 per doorbell (FI_MORE; raw verbs: chained, = --post_list)'" % dat]
    gpf = os.path.join(summary, "plots-more.gp")
    with open(gpf, "w") as f:
        f.write("\n".join(script) + "\n")
    r = subprocess.run([gp, gpf], capture_output=True, text=True)
    return [] if r.returncode else [png]
