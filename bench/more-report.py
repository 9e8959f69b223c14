#!/usr/bin/env python3
"""bench/more-report.py OUT - the FI_MORE table from bench/more-rate.sh.

Posting instructions per message: the client's inclusive cost of its
posting entry point (bk_post for one request per call, bk_post_batch for
16 per doorbell) in the measured send_bw loop, minus the callgrind
brackets (bk_nop, per bracket), divided by the messages. The reap of each
message's completion (one fi_cq_read / ibv_poll_cq that returns it) is
the same with and without batching and is given apart. ib_send_bw: (total
at N2 - total at N) / (N2 - N), its whole client loop."""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

report.FUNCS = report.FUNCS + ("bk_post_batch",)


def cg_counts(d):
    with open(os.path.join(d, "run.log")) as f:
        for line in f:
            if line.startswith("#CG ") and ":client:" in line:
                kv = dict(p.split("=", 1) for p in line.split()[1:])
                return kv["tag"], {k: int(v) for k, v in kv.items() if k != "tag"}
    return None, None


def variant_row(out, v, batch):
    d = os.path.join(out, "cg", "%s-b%d" % (v, batch))
    if not os.path.isdir(d):
        return None
    tag, n = cg_counts(d)
    if not tag:
        return None
    for path in sorted(glob.glob(os.path.join(d, "cg.*.*"))):
        t, ir = report.annotate(path)
        if t != tag or ir is None:
            continue
        msgs = n["reaps"]          # one send completion per message
        nop = ir["bk_nop"] / n["nops"]
        empty = ir["bk_poll_empty"] / n["probes"]
        if batch == 1:
            post_ir, brackets = ir["bk_post"], n["posts"]
        else:
            post_ir = ir["bk_post_batch"]
            # fi_sendmsg is bracketed per message, ibv_post_send per chain
            brackets = n["posts"] if v == "rawverbs" else msgs
        reap = (ir["bk_poll"] - n["empties"] * empty) / msgs - nop
        return {"msgs": msgs, "doorbells": n["posts"],
                "post": (post_ir - nop * brackets) / msgs, "reap": reap}
    return None


def cg_total(path):
    try:
        txt = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", path],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    m = re.search(r"^\s*([\d,]+)\s+\(100.0%\)\s+PROGRAM TOTALS", txt, re.M)
    return int(m.group(1).replace(",", "")) if m else None


def wall_rate(path):
    """Mmsg/s from fd_pingpong's send_bw row, or ib_send_bw's MsgRate."""
    try:
        txt = open(path, errors="replace").read()
    except OSError:
        return None
    for line in txt.splitlines():
        f = line.split()
        if f and f[0] == "send_bw" and len(f) > 12:
            return 1e6 / float(f[10])   # usec/xfer: more digits than Mmsg/s
        if len(f) >= 5 and f[0] == "64" and re.match(r"^[\d.]+$", f[-1]):
            return float(f[-1]) * 1e6   # ib_send_bw: bytes iters peak avg MsgRate[Mpps]
    return None


def main():
    out = sys.argv[1]
    print("64 B send_bw, window 64: posting instructions per message (callgrind), "
          "reap per message, wall rate (msg/s)")
    print("%-26s %12s %12s %10s %14s" % ("variant", "post/msg", "reap/msg", "doorbells", "wall msg/s"))
    for v in ("rawverbs", "direct", "off", "upstream"):
        for batch in (1, 16):
            r = variant_row(out, v, batch)
            w = wall_rate(os.path.join(out, "wall-%s-b%d.txt" % (v, batch)))
            name = "%s %s" % (v, "one per call" if batch == 1 else "16 per doorbell")
            if r:
                print("%-26s %12.1f %12.1f %10d %14s" % (name, r["post"], r["reap"], r["doorbells"],
                                                         "%.0f" % w if w else "-"))
            else:
                print("%-26s %12s %12s %10s %14s" % (name, "-", "-", "-", "%.0f" % w if w else "-"))
    ns = sorted({int(m.group(1)) for p in glob.glob(os.path.join(out, "ib_send_bw-pl*-cg-*.cg"))
                 for m in [re.search(r"cg-(\d+)\.cg$", p)] if m})
    for pl in (1, 16):
        w = wall_rate(os.path.join(out, "ib_send_bw-pl%d-wall.txt" % pl))
        per = "-"
        if len(ns) == 2:
            a = cg_total(os.path.join(out, "ib_send_bw-pl%d-cg-%d.cg" % (pl, ns[0])))
            b = cg_total(os.path.join(out, "ib_send_bw-pl%d-cg-%d.cg" % (pl, ns[1])))
            if a and b:
                per = "%.1f" % ((b - a) / (ns[1] - ns[0]))
        name = "ib_send_bw" + (" --post_list 16" if pl == 16 else "")
        print("%-26s %12s %12s %10s %14s" % (name, per + "*", "", "", "%.0f" % w if w else "-"))
    print("* ib_send_bw: whole client loop per message (posting, polling, empty polls)")


if __name__ == "__main__":
    main()
