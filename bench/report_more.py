"""The parts of the benchmark report beyond the data path: time to first
message and memory per endpoint (setup/), the UCX anchor (ucx/) and rstream
against rsockets per transfer (rscg/). Used by report.py."""
import glob
import os
import re
import statistics
import subprocess

SETUP_VARIANTS = ["direct", "off", "upstream"]
PHASES = ["start", "getinfo", "fabric_domain", "cq_mr", "endpoint", "connect", "first_send"]


def _kv(line):
    return dict(p.split("=", 1) for p in line.split()[1:] if "=" in p)


def _num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _dump_tag_total(path):
    """(client-request tag or None, total Ir) of one callgrind dump."""
    tag, total = None, None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("desc: Trigger: Client Request: "):
                tag = line.split("Client Request: ", 1)[1].strip()
            elif line.startswith("desc: Trigger:"):
                tag = line.split("Trigger:", 1)[1].strip()
            elif line.startswith("totals:") or line.startswith("summary:"):
                try:
                    total = int(line.split()[1])
                except (IndexError, ValueError):
                    pass
    return tag, total


# --------------------------------------------------------------------------
# time to first message and memory
# --------------------------------------------------------------------------
def load_setup(out):
    res = {"wall": {}, "instr": {}, "mem": {}}
    d = os.path.join(out, "setup")
    if not os.path.isdir(d):
        return res
    for v in SETUP_VARIANTS:
        runs = []
        for path in sorted(glob.glob(os.path.join(d, "%s-wall-*.txt" % v))):
            ph = {}
            for line in open(path, errors="replace"):
                if line.startswith("#PHASE "):
                    kv = _kv(line)
                    ph[kv["phase"]] = (int(kv["ns"]), int(kv["since_start_ns"]))
            if "first_send" in ph:
                runs.append(ph)
        if runs:
            res["wall"][v] = {
                "runs": len(runs),
                # the phases' sum: the gaps between them are the benchmark's
                # own bookkeeping (a clock read, a callgrind request)
                "total_ms": statistics.median(sum(r[p][0] for p in PHASES if p in r)
                                              for r in runs) / 1e6,
                "phases_ms": {p: statistics.median(r[p][0] for r in runs if p in r) / 1e6
                              for p in PHASES if all(p in r for r in runs)},
            }
        ins = {}
        for path in glob.glob(os.path.join(d, "cg-" + v, "cg.*.*")):
            tag, total = _dump_tag_total(path)
            if tag and tag.startswith("fdsu:") and total is not None:
                ins[tag.split(":")[2]] = total
        if "first_send" in ins:
            res["instr"][v] = {"total": sum(ins.get(p, 0) for p in PHASES),
                               "phases": {p: ins.get(p) for p in PHASES}}
        for path in glob.glob(os.path.join(d, "%s-mem-*.txt" % v)):
            st = {}
            for line in open(path, errors="replace"):
                if line.startswith("#MEM "):
                    kv = _kv(line)
                    st[kv["stage"]] = {k: int(x) for k, x in kv.items()
                                       if k not in ("variant", "stage")}
            if all(s in st for s in ("base", "cqs", "connected")):
                n = st["base"]["eps"]
                res["mem"].setdefault(v, {})[n] = st
    return res


def _per(st, a, b, key, n):
    x, y = st[a].get(key), st[b].get(key)
    if x is None or y is None or x < 0 or y < 0:
        return None
    return (y - x) / n


def setup_tables(su):
    lines = []
    if su["wall"] or su["instr"]:
        lines += ["Time to first message: the client from exec (the launcher reads the clock",
                  "just before execve) through fi_getinfo, fabric/EQ/domain, CQ + memory",
                  "registration, endpoint, connect, to the first completed 64 B send. Wall",
                  "time: median of the plain runs (ms); instructions: the client under",
                  "callgrind from its first instruction (the dynamic loader), one dump per",
                  "phase. The server is a forked child, not counted.", ""]
        lines.append("%-14s" % "phase" + "".join(" %14s %10s" % (v + " instr", "ms")
                                                 for v in SETUP_VARIANTS))
        for p in PHASES + ["total"]:
            row = "%-14s" % p
            for v in SETUP_VARIANTS:
                i = su["instr"].get(v, {})
                w = su["wall"].get(v, {})
                ii = i.get("total") if p == "total" else i.get("phases", {}).get(p)
                ww = w.get("total_ms") if p == "total" else w.get("phases_ms", {}).get(p)
                row += " %14s %10s" % ("-" if ii is None else "{:,}".format(ii),
                                        "-" if ww is None else "%.1f" % ww)
            lines.append(row)
        up = su["instr"].get("upstream", {}).get("total")
        for v in ("direct", "off"):
            mine = su["instr"].get(v, {}).get("total")
            if mine and up:
                lines.append("%s: %.4f of upstream's instructions (target <= 0.1: %s)"
                             % (v, mine / up, "met" if mine <= up / 10 else "missed"))
        lines.append("")
    if su["mem"]:
        lines += ["Memory per connected endpoint (client; each endpoint with its own CQ,",
                  "one 64 B message sent through it): (with N connected - before the first",
                  "CQ) / N, split into its CQ (after the N CQs - before) and the rest (QP,",
                  "cm_id, buffers). RSS and VmPin (pinned by registration) in KiB; kernel",
                  "objects per CQ = (after N CQs - before) / N, per endpoint = (connected -",
                  "after the CQs) / N: descriptors (all; completion channels), and the",
                  "process's lines in `rdma res` (qp, cq, cm_id).", ""]
        lines.append("%-9s %5s %8s %8s %8s %10s %8s %7s %7s %7s %7s %6s %6s %7s" % (
            "variant", "N", "RSS/ep", "of it CQ", "QP+rest", "RSS total", "pin/ep", "fds/ep",
            "chan/ep", "fds/cq", "chan/cq", "qp/ep", "cq/cq", "cmid/ep"))
        for v in SETUP_VARIANTS:
            for n in sorted(su["mem"].get(v, {})):
                st = su["mem"][v][n]

                def f(x, prec=1):
                    return "-" if x is None else "%.*f" % (prec, x)
                lines.append("%-9s %5d %8s %8s %8s %10d %8s %7s %7s %7s %7s %6s %6s %7s" % (
                    v, n, f(_per(st, "base", "connected", "rss_kb", n)),
                    f(_per(st, "base", "cqs", "rss_kb", n)),
                    f(_per(st, "cqs", "connected", "rss_kb", n)),
                    st["connected"]["rss_kb"],
                    f(_per(st, "base", "connected", "pin_kb", n), 2),
                    f(_per(st, "cqs", "connected", "fds", n), 2),
                    f(_per(st, "cqs", "connected", "fd_comp_channel", n), 2),
                    f(_per(st, "base", "cqs", "fds", n), 2),
                    f(_per(st, "base", "cqs", "fd_comp_channel", n), 2),
                    f(_per(st, "cqs", "connected", "qp", n), 2),
                    f(_per(st, "base", "cqs", "cq", n), 2),
                    f(_per(st, "cqs", "connected", "cm_id", n), 2)))
        for n in (256,):
            up = su["mem"].get("upstream", {}).get(n)
            for v in ("direct", "off"):
                mine = su["mem"].get(v, {}).get(n)
                if up and mine:
                    a = _per(mine, "base", "connected", "rss_kb", n)
                    b = _per(up, "base", "connected", "rss_kb", n)
                    lines.append("%s at %d endpoints: %.1f KiB RSS per endpoint vs upstream's "
                                 "%.1f (target <= upstream: %s)" % (
                                     v, n, a, b, "met" if a <= b else "missed"))
        lines.append("")
    return lines


def setup_rows(su):
    rows = []
    for v, w in su["wall"].items():
        rows.append({"source": v, "what": "ttfm_wall_ms", "value": w["total_ms"]})
    for v, i in su["instr"].items():
        rows.append({"source": v, "what": "ttfm_instructions", "value": i["total"]})
        for p, x in i["phases"].items():
            rows.append({"source": v, "what": "ttfm_instructions_" + p, "value": x})
    for v, by in su["mem"].items():
        for n, st in by.items():
            for key in ("rss_kb", "pin_kb", "fds", "fd_comp_channel", "qp", "cq", "cm_id"):
                rows.append({"source": v, "what": "per_ep_%s@%d" % (key, n),
                             "value": _per(st, "base" if key in ("rss_kb", "pin_kb") else "cqs",
                                           "connected", key, n)})
    return rows


# --------------------------------------------------------------------------
# UCX
# --------------------------------------------------------------------------
def load_ucx(out):
    d = os.path.join(out, "ucx")
    res = {"lat": {}, "instr": None, "note": None}
    if not os.path.isdir(d):
        return res
    if os.path.exists(os.path.join(d, "missing.txt")):
        res["note"] = open(os.path.join(d, "missing.txt")).read().strip()
    for path in glob.glob(os.path.join(d, "ucx_*_lat-*.txt")):
        m = re.match(r"ucx_(am_lat|put_lat)-(\d+)\.txt$", os.path.basename(path))
        if not m:
            continue
        text = open(path, errors="replace").read()
        fin = [l for l in text.splitlines() if l.startswith("Final:")]
        if fin:
            p = fin[-1].split()
            res["lat"][m.group(1)] = {"bytes": int(m.group(2)), "median_us": _num(p[2]),
                                      "avg_us": _num(p[4])}
        elif not res["note"]:
            err = [l for l in text.splitlines() if "rror" in l or "not" in l.lower()]
            res["note"] = "ucx_perftest %s: %s" % (m.group(1), (err or ["no result"])[-1][:160])
    cg = os.path.join(d, "cg.am_lat")
    if os.path.exists(cg):
        calls = _calls_to(cg, ["uct_rc_verbs_ep_am_short"])["uct_rc_verbs_ep_am_short"]
        if calls[0]:
            res["instr"] = {"send_calls": calls[0], "per_send": calls[1] / calls[0]}
    return res


def ucx_lines(ucx, raw_post=None, lib_post=None):
    lines = ["UCX anchor: ucx_perftest (Debian ucx-utils) over rc_verbs on the same rxe0,",
             "64 B, one-way latency (its 50th percentile), and user-space instructions",
             "per am_short send (uct_rc_verbs_ep_am_short, inclusive, the client under",
             "callgrind). A UCX round trip cannot be counted like ours: its progress",
             "callback is static in a stripped library, so its empty polls (their number",
             "depends on timing) cannot be told apart from the receives.", ""]
    if ucx["note"]:
        lines.append("  " + ucx["note"])
    for t, r in sorted(ucx["lat"].items()):
        lines.append("  %-8s %5d B: median %s us, average %s us" % (
            t, r["bytes"], r["median_us"], r["avg_us"]))
    if ucx["instr"]:
        lines.append("  am_short: %.0f instructions per send (%d calls); raw verbs post (send "
                     "64 B): %s; direct fi_send: %s" % (
                         ucx["instr"]["per_send"], ucx["instr"]["send_calls"],
                         "%.0f" % raw_post if raw_post else "-",
                         "%.0f" % lib_post if lib_post else "-"))
    lines.append("")
    return lines


# --------------------------------------------------------------------------
# rstream vs rsockets per transfer
# --------------------------------------------------------------------------
def _annotate_funcs(path, names):
    try:
        txt = subprocess.run(["callgrind_annotate", "--auto=no", "--inclusive=yes",
                              "--threshold=100", os.path.abspath(path)],
                             capture_output=True, text=True, check=True,
                             cwd=os.path.dirname(os.path.abspath(path))).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    got = {}
    for line in txt.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+\([^)]*\)\s+(\S+)", line)
        if not m:
            continue
        for n in names:
            if m.group(2).endswith(":" + n) or m.group(2) == n:
                got[n] = max(got.get(n, 0), int(m.group(1).replace(",", "")))
    return got


def _calls_to(path, names):
    """Calls and inclusive Ir of calls to the named functions in a callgrind
    file written with --compress-strings=no."""
    calls = {n: [0, 0] for n in names}
    cur = None
    pending = None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("cfn="):
                name = line[4:].strip()
                name = re.sub(r"^\(\d+\)\s*", "", name)
                cur = name if name in calls else None
            elif line.startswith("calls="):
                pending = cur
                if cur:
                    calls[cur][0] += int(line[6:].split()[0])
            elif pending:
                p = line.split()
                if len(p) >= 2:
                    calls[pending][1] += int(p[1])
                pending = None
            elif line.startswith("fn="):
                cur = None
    return calls


def _counters(line):
    p = line.split()[1:]
    return {p[i]: int(p[i + 1]) for i in range(0, len(p) - 1, 2) if p[i + 1].isdigit()}


def load_rscg(out):
    d = os.path.join(out, "rscg")
    res = {"instr": {}, "wire": {}}
    if not os.path.isdir(d):
        return res
    # fd_rstream: toggled loops and probes, client side
    for log in glob.glob(os.path.join(d, "cg-*", "run.log")):
        m = re.match(r"cg-(\w+)-(\d+)$", os.path.basename(os.path.dirname(log)))
        if not m:
            continue
        v, s = m.group(1), int(m.group(2))
        counts = {}
        for line in open(log, errors="replace"):
            if line.startswith("#CG "):
                kv = _kv(line)
                counts[kv["tag"]] = kv
        dumps = {}
        for path in glob.glob(os.path.join(os.path.dirname(log), "cg.*.*")):
            tag, total = _dump_tag_total(path)
            if tag:
                dumps[tag] = (path, total)
        loop = "fdrs:%s:client:rstream:%d" % (v, s)
        if loop not in dumps or loop not in counts:
            continue
        n = {k: int(x) for k, x in counts[loop].items() if k != "tag"}
        probe = dumps.get(loop + ":probe")
        c_empty = probe[1] / 100.0 if probe and probe[1] is not None else None
        fn = _annotate_funcs(dumps[loop][0], ["rs_send_call", "rs_recv_call"])
        it = n["iters"]
        total = dumps[loop][1]
        empties = n["recv_again"] + n["send_again"]
        r = {"total_rt": total / it,
             "net_rt": (total - empties * c_empty) / it if c_empty is not None else None,
             "send_calls_rt": (n["sends"] + n["send_again"]) / it,
             "recv_calls_rt": (n["recvs"] + n["recv_again"]) / it,
             "empty_recv_rt": n["recv_again"] / it,
             "per_send": fn.get("rs_send_call", 0) / max(1, n["sends"] + n["send_again"]),
             "per_recv_avg": fn.get("rs_recv_call", 0) / max(1, n["recvs"] + n["recv_again"]),
             "empty_recv": c_empty}
        if c_empty is not None and n["recvs"]:
            r["per_recv_productive"] = (fn.get("rs_recv_call", 0) -
                                        n["recv_again"] * c_empty) / n["recvs"]
        res["instr"][(v, s)] = r
    # rsockets' rstream: two iteration counts, the difference
    by = {}
    for path in glob.glob(os.path.join(d, "cg.rsockets.*.*")):
        m = re.match(r"cg\.rsockets\.(\d+)\.(\d+)$", os.path.basename(path))
        if m:
            by.setdefault(int(m.group(1)), {})[int(m.group(2))] = path
    for s, runs in by.items():
        if len(runs) < 2:
            continue
        n1, n2 = sorted(runs)[:2]
        a = (_dump_tag_total(runs[n1])[1], _calls_to(runs[n1], ["rsend", "rrecv"]))
        b = (_dump_tag_total(runs[n2])[1], _calls_to(runs[n2], ["rsend", "rrecv"]))
        if a[0] is None or b[0] is None:
            continue
        it = n2 - n1
        sc = b[1]["rsend"][0] - a[1]["rsend"][0]
        rc = b[1]["rrecv"][0] - a[1]["rrecv"][0]
        res["instr"][("rsockets", s)] = {
            "total_rt": (b[0] - a[0]) / it, "net_rt": None,
            "send_calls_rt": sc / it, "recv_calls_rt": rc / it,
            "empty_recv_rt": rc / it - 1,
            "per_send": (b[1]["rsend"][1] - a[1]["rsend"][1]) / sc if sc else None,
            "per_recv_avg": (b[1]["rrecv"][1] - a[1]["rrecv"][1]) / rc if rc else None,
            "empty_recv": None}
    # packets: rxe0's counters around plain runs at two iteration counts
    wires = {}
    for path in glob.glob(os.path.join(d, "wire-*-*-*.txt")):
        m = re.match(r"wire-(\w+)-(\d+)-(\d+)\.txt$", os.path.basename(path))
        if not m:
            continue
        before = after = None
        for line in open(path, errors="replace"):
            if line.startswith("before "):
                before = _counters(line)
            elif line.startswith("after "):
                after = _counters(line)
        if before and after:
            wires.setdefault((m.group(1), int(m.group(2))), {})[int(m.group(3))] = {
                k: after[k] - before.get(k, 0) for k in after}
    for key, runs in wires.items():
        if len(runs) < 2:
            continue
        n1, n2 = sorted(runs)[:2]
        xfers = 2.0 * (n2 - n1)
        res["wire"][key] = {k: (runs[n2][k] - runs[n1].get(k, 0)) / xfers for k in runs[n2]}
    return res


def rscg_lines(rc):
    if not rc["instr"] and not rc["wire"]:
        return []
    lines = ["rstream vs rsockets per transfer (latency exchange, C = 1; client side;",
             "a round trip = one transfer each way). Instructions (callgrind): total =",
             "everything the client's timed loop ran, spinning on EAGAIN included;",
             "net = total minus empty receives x the cost of one (fd_rstream only: a",
             "probe after the loop measures it); per call = inclusive cost of one",
             "fi_send / fi_recv (rsockets: rsend / rrecv; recv averaged over productive",
             "and empty calls). rsockets: the rstream client under callgrind at two",
             "iteration counts, the difference (its set-up cancels).", ""]
    lines.append("%-9s %6s %10s %10s %8s %8s %8s %9s %9s %9s %8s" % (
        "source", "bytes", "total/rt", "net/rt", "sends/rt", "recvs/rt", "empty/rt",
        "per send", "recv avg", "recv prod", "empty"))

    def f(x, p=0):
        return "-" if x is None else "%.*f" % (p, x)
    for (src, s) in sorted(rc["instr"], key=lambda k: (k[1], k[0])):
        r = rc["instr"][(src, s)]
        lines.append("%-9s %6d %10s %10s %8s %8s %8s %9s %9s %9s %8s" % (
            src, s, f(r["total_rt"]), f(r["net_rt"]), f(r["send_calls_rt"], 2),
            f(r["recv_calls_rt"], 2), f(r["empty_recv_rt"], 1), f(r["per_send"]),
            f(r["per_recv_avg"]), f(r.get("per_recv_productive")), f(r["empty_recv"])))
    if rc["wire"]:
        keys = ["sent_pkts", "rcvd_pkts", "rdma_sends", "rdma_recvs", "ack_deferred",
                "duplicate_request", "out_of_seq_request", "rcvd_rnr_err", "send_rnr_err"]
        lines += ["", "Per transfer on rxe0 (both ends live on rxe0, so both sides count):",
                  "`rdma statistic` around plain runs at two iteration counts, the",
                  "difference / (2 x iterations). sent_pkts: every packet rxe sent (requests",
                  "and ACKs); rdma_sends: SEND work requests completed (RDMA writes are not",
                  "counted); rdma_recvs: receive completions (SEND or WRITE with immediate",
                  "consuming a posted receive)."]
        lines.append("%-9s %6s " % ("source", "bytes") + " ".join("%11s" % k[:11] for k in keys))
        for (src, s) in sorted(rc["wire"], key=lambda k: (k[1], k[0])):
            w = rc["wire"][(src, s)]
            lines.append("%-9s %6d " % (src, s) + " ".join("%11s" % f(w.get(k), 2) for k in keys))
    lines.append("")
    return lines


def load_rdm(out):
    """OUT/rdm: rdm-callgrind.csv rows and fd_rdm_mem's #RDMMEM lines."""
    import csv
    d = os.path.join(out, "rdm")
    r = {"instr": [], "mem": []}
    try:
        with open(os.path.join(d, "rdm-callgrind.csv"), newline="") as f:
            for row in csv.DictReader(f):
                r["instr"].append({k: _num(v) if k != "variant" else v
                                   for k, v in row.items()})
    except OSError:
        pass
    for build in ("direct", "off"):
        try:
            lines = open(os.path.join(d, "mem-%s.txt" % build)).read().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith("#RDMMEM "):
                kv = _kv(line)
                r["mem"].append({"build": build, "peers": _num(kv.get("peers")),
                                 "rss_kb": _num(kv.get("rss_kb")),
                                 "pin_kb": _num(kv.get("pin_kb"))})
    return r


def rdm_lines(r):
    """The RDM section of report.txt (issue 14's figures)."""
    out = []
    if r["instr"]:
        out += ["RDM endpoints: user-space instructions per tagged 64 B round trip",
                "(bench/rdm-callgrind.sh; msg-* rows: the MSG send round trip)",
                "%-14s %10s %10s %10s" % ("variant", "instr/RT", "vs upstr", "vs MSG")]
        for row in r["instr"]:
            rt = row.get("instructions_per_round_trip")
            ru, rm = row.get("ratio_upstream"), row.get("ratio_msg_direct")
            out.append("%-14s %10s %10s %10s" % (
                row["variant"], "%.0f" % rt if isinstance(rt, (int, float)) else "-",
                "%.2fx" % ru if isinstance(ru, (int, float)) else "-",
                "%.2fx" % rm if isinstance(rm, (int, float)) else "-"))
        out.append("")
    if r["mem"]:
        out += ["RDM receiver memory as peers connect (fd_rdm_mem)",
                "%-8s %6s %10s %10s" % ("build", "peers", "VmPin KiB", "VmRSS KiB")]
        for m in r["mem"]:
            out.append("%-8s %6s %10s %10s" % (m["build"], *("%d" % v if v is not None else "-"
                                                            for v in (m["peers"], m["pin_kb"],
                                                                      m["rss_kb"]))))
        out.append("")
    return out


def write_rdm_csv(summary, r):
    import csv
    if r["instr"]:
        with open(os.path.join(summary, "rdm.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(r["instr"][0].keys()))
            w.writeheader()
            w.writerows(r["instr"])
    if r["mem"]:
        with open(os.path.join(summary, "rdm-memory.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["build", "peers", "pin_kb", "rss_kb"])
            w.writeheader()
            w.writerows(r["mem"])


def write_csvs(summary, su, ucx, rc):
    import csv
    rows = report_more_rows = setup_rows(su)
    for t, r in sorted(ucx["lat"].items()):
        rows.append({"source": "ucx_perftest", "what": t + "_median_us", "value": r["median_us"]})
    if ucx["instr"]:
        rows.append({"source": "ucx_perftest", "what": "am_short_instr_per_send",
                     "value": ucx["instr"]["per_send"]})
    if report_more_rows:
        with open(os.path.join(summary, "setup.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["source", "what", "value"])
            w.writeheader()
            w.writerows(rows)
    if rc["instr"] or rc["wire"]:
        keys = sorted({k for r in rc["instr"].values() for k in r} |
                      {k for r in rc["wire"].values() for k in r})
        with open(os.path.join(summary, "rstream-rsockets.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["source", "bytes"] + keys)
            for key in sorted(set(rc["instr"]) | set(rc["wire"]), key=lambda k: (k[1], k[0])):
                r = dict(rc["instr"].get(key, {}))
                r.update(rc["wire"].get(key, {}))
                w.writerow(list(key) + ["" if r.get(k) is None else r.get(k) for k in keys])


# --------------------------------------------------------------------------
# the issue-15 targets, met or missed, with the figures
# --------------------------------------------------------------------------
def targets_lines(rs, tools, ins, su, more=None):
    lines = ["Targets (issue 15), from this run:"]

    def verdict(ok):
        return "n/a" if ok is None else ("met" if ok else "MISSED")
    # rstream against rsockets
    for test, tool, key, better, what in (
            ("rstream", "rsockets_lat", "usec_per_xfer", lambda a, b: a <= b,
             "rstream latency <= rsockets' (usec/xfer)"),
            ("rstream_bw", "rsockets_bw", "mb_per_s", lambda a, b: a >= b,
             "rstream bandwidth >= rsockets' (MB/s)")):
        cells, oks = [], []
        for s in sorted({s for (t, s) in rs if t == test}):
            a = rs[(test, s)].get("direct", {}).get(key)
            b = tools.get(tool, {}).get(s, {}).get(key)
            if a is None or b is None:
                continue
            oks.append(better(a, b))
            cells.append("%d B %.3g/%.3g" % (s, a, b))
        lines.append("  %-52s %-7s %s" % (what, verdict(all(oks) if oks else None),
                                          "; ".join(cells) + (" (direct/rsockets)" if cells else "")))
    # instructions vs raw verbs
    by = {}
    for r in ins:
        if r["side"] == "client":
            by[(r["test"], r["bytes"], r["variant"])] = r["round_trip"]
    cells, oks = [], []
    for t, s in (("send", 64), ("inject", 64), ("write", 64), ("writedata", 64), ("read", 64),
                 ("atomic", 8)):
        a, b = by.get((t, s, "direct")), by.get((t, s, "rawverbs"))
        if a and b:
            oks.append(a <= 1.05 * b)
            cells.append("%s %.2fx" % (t, a / b))
    lines.append("  %-52s %-7s %s" % ("direct round trip <= 1.05x raw verbs instructions",
                                      verdict(all(oks) if oks else None), ", ".join(cells)))
    # FI_MORE: report_fi_more.target_lines from the `more` part's rows
    lines += more or ["  %-52s %-7s %s" % ("FI_MORE send rate > raw one-per-call, >= post_list",
                                           "n/a", "no `more` part in this run")]
    # time to first message
    up = su["instr"].get("upstream", {}).get("total")
    mine = su["instr"].get("direct", {}).get("total")
    lines.append("  %-52s %-7s %s" % (
        "time to first message <= 0.1x upstream instructions",
        verdict(mine <= up / 10 if mine and up else None),
        "direct {:,} vs upstream {:,} ({:.3f}x)".format(mine, up, mine / up) if mine and up else ""))
    # memory at 256 endpoints
    a = su["mem"].get("direct", {}).get(256)
    b = su["mem"].get("upstream", {}).get(256)
    if a and b:
        x = _per(a, "base", "connected", "rss_kb", 256)
        y = _per(b, "base", "connected", "rss_kb", 256)
        lines.append("  %-52s %-7s %s" % ("memory per endpoint at 256 <= upstream's (RSS KiB)",
                                          verdict(x <= y), "direct %.1f vs upstream %.1f" % (x, y)))
    else:
        lines.append("  %-52s %-7s" % ("memory per endpoint at 256 <= upstream's", "n/a"))
    lines.append("")
    return lines


def plots(summary, su, gp, terminal):
    """setup-ttfm.png (instructions to the first message, by phase) and
    setup-memory.png (RSS per endpoint against the endpoint count)."""
    made, script = [], [terminal, "set grid", "set datafile missing '-'"]
    if su["instr"]:
        dat = os.path.join(summary, "setup-ttfm.dat")
        vs = [v for v in SETUP_VARIANTS if v in su["instr"]]
        with open(dat, "w") as f:
            f.write("# phase " + " ".join(vs) + "\n")
            for p in PHASES:
                f.write(p + " " + " ".join(str(su["instr"][v]["phases"].get(p) or "-")
                                           for v in vs) + "\n")
        png = os.path.join(summary, "setup-ttfm.png")
        script += ["set output '%s'" % png, "set logscale y",
                   "set title 'time to first message: user-space instructions by phase (callgrind)'",
                   "set ylabel 'instructions'", "set style data histogram",
                   "set style histogram cluster gap 1", "set style fill solid 0.8 border -1",
                   "set xtics rotate by -30",
                   "plot " + ", ".join("'%s' using %d:xtic(1) title '%s'" % (dat, i + 2, v)
                                       for i, v in enumerate(vs))]
        made.append(png)
    if su["mem"]:
        dat = os.path.join(summary, "setup-memory.dat")
        vs = [v for v in SETUP_VARIANTS if v in su["mem"]]
        ns = sorted({n for v in vs for n in su["mem"][v]})
        with open(dat, "w") as f:
            f.write("# endpoints " + " ".join(vs) + "\n")
            for n in ns:
                vals = []
                for v in vs:
                    st = su["mem"][v].get(n)
                    x = _per(st, "base", "connected", "rss_kb", n) if st else None
                    vals.append("-" if x is None else "%.1f" % x)
                f.write("%d %s\n" % (n, " ".join(vals)))
        png = os.path.join(summary, "setup-memory.png")
        script += ["unset style", "set style data linespoints", "unset logscale",
                   "set logscale x 2", "set xtics norotate", "set yrange [0:*]",
                   "set output '%s'" % png,
                   "set title 'RSS per connected endpoint (own CQ each), client'",
                   "set xlabel 'connected endpoints'", "set ylabel 'KiB'",
                   "plot " + ", ".join("'%s' using 1:%d title '%s'" % (dat, i + 2, v)
                                       for i, v in enumerate(vs))]
        made.append(png)
    if not made:
        return []
    gpf = os.path.join(summary, "plots-setup.gp")
    with open(gpf, "w") as f:
        f.write("\n".join(script) + "\n")
    r = subprocess.run([gp, gpf], capture_output=True, text=True)
    if r.returncode:
        return []
    return made


def rdm_targets_lines(r):
    """Issue 14's targets from this run's RDM figures."""
    def verdict(ok):
        return "n/a" if ok is None else ("met" if ok else "MISSED")
    rt = {row["variant"]: row.get("instructions_per_round_trip") for row in r["instr"]}
    d, up, msg = rt.get("rdm-direct"), rt.get("rdm-upstream"), rt.get("msg-direct")
    lines = ["Targets (issue 14), from this run:"]
    lines.append("  %-52s %-7s %s" % (
        "tagged 64 B round trip <= 0.5x upstream instructions",
        verdict(d <= up / 2 if d and up else None),
        "direct %.0f vs upstream %.0f (%.2fx)" % (d, up, d / up) if d and up else ""))
    lines.append("  %-52s %-7s %s" % (
        "tagged 64 B round trip <= 1.3x MSG send round trip",
        verdict(d <= 1.3 * msg if d and msg else None),
        "direct %.0f vs MSG %.0f (%.2fx)" % (d, msg, d / msg) if d and msg else ""))
    pin = {m["peers"]: m["pin_kb"] for m in r["mem"] if m["build"] == "direct"}
    a, b = pin.get(8), pin.get(256)
    lines.append("  %-52s %-7s %s" % (
        "receive memory with 256 peers <= with 8 (VmPin KiB)",
        verdict(b <= a if a and b else None),
        "8: %d, 256: %d" % (a, b) if a and b else ""))
    lines.append("")
    return lines
