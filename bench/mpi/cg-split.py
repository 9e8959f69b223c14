#!/usr/bin/env python3
"""bench/mpi/cg-split.py OUT - where each variant's instructions per 8 B MPI
round trip go: for every callgrind dump of rank 0 that
bench/mpi/vm-mpi-bench.sh kept (OUT/cg-<variant>/cg.<pid>, the "posted"
phase: the final dump), the exclusive instruction counts per shared
object (the MPI library, the libfabric in use, libibverbs + the rxe
driver, libc, ...) divided by the round trips counted, and the functions
of this library's RDM/verbs layers called per round trip (the CQ polls
among them: an fdm_cq_read call that found nothing is one empty poll).
Writes OUT/mpi-split.csv and prints the table."""
import collections, csv, glob, os, re, subprocess, sys

out = sys.argv[1]
rows = []
# "IR  file:function [object]"; the object is left out when it is the same
# as the line before's
line_re = re.compile(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S+?:\S.*?)(?:\s+\[(.*)\])?\s*$")

def group(obj):
    b = os.path.basename(obj)
    if b.startswith("libmpi"):
        return "MPI library"
    if b.startswith("mca_") or b.startswith("libopen-") or b.startswith("libmca"):
        return "MPI library"
    if b.startswith("libfabric-direct"):
        return "fabric-direct (libfabric-direct.so)"
    if b.startswith("libfabric"):
        return "libfabric.so.1 (%s)" % ("drop-in" if "/usr/lib" not in obj else "Debian 1.17")
    if b.startswith("libucp") or b.startswith("libuct") or b.startswith("libucs"):
        return "UCX"
    if b.startswith("libibverbs") or b.startswith("librxe") or b.startswith("libmlx"):
        return "libibverbs + rxe driver"
    if b.startswith("libc.") or b.startswith("libc-") or b.startswith("ld-linux") or b.startswith("libpthread"):
        return "libc, loader"
    return "other (%s)" % b

for d in sorted(glob.glob(os.path.join(out, "cg-*"))):
    v = os.path.basename(d)[3:]
    n = None
    for f in sorted(glob.glob(os.path.join(d, "cg.*"))):
        txt = open(f, errors="replace").read()
        if "desc: Trigger: Program termination" not in txt:
            continue   # the sendrecv phase's dump
        tot = re.findall(r"^(?:summary|totals):\s+(\d+)", txt, re.M)
        if not tot or int(tot[-1]) == 0:
            continue
        log = open(os.path.join(d, "run.log"), errors="replace").read() if os.path.exists(os.path.join(d, "run.log")) else ""
        m = re.search(r"callgrind_rounds,8,(\d+)", log)
        n = int(m.group(1)) if m else int(os.environ.get("MPI_CG_ITERS", "200"))
        ann = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no",
                              "--show-percs=no", "--auto=no", f],
                             capture_output=True, text=True).stdout
        by = collections.Counter()
        fn = {}
        obj = "???"
        total = int(tot[-1])
        for ln in ann.splitlines():
            mm = line_re.match(ln)
            if not mm or "PROGRAM TOTALS" in ln:
                continue
            ir = int(mm.group(1).replace(",", ""))
            obj = mm.group(3) or obj
            if ir >= total:
                # the frames that were on the stack when the counting was
                # switched on (main, libc's start, the loader) get the
                # whole count in callgrind_annotate's list: not their own
                continue
            name = mm.group(2).split(":", 1)[-1]
            by[group(obj)] += ir
            fn[name] = fn.get(name, 0) + ir
        calls = collections.Counter()
        # calls= lines follow cfn= lines: count calls of the poll entry points
        cur = None
        names = {}   # callgrind writes "(id) name" once, then "(id)" alone
        for ln in txt.splitlines():
            if ln.startswith("fn=") or ln.startswith("cfn="):
                ref = ln.split("=", 1)[1]
                mm = re.match(r"(\(\d+\))\s*(.*)", ref)
                if mm:
                    if mm.group(2):
                        names[mm.group(1)] = mm.group(2)
                    ref = names.get(mm.group(1), ref)
                cur = ref if ln.startswith("cfn=") else None
            elif ln.startswith("calls=") and cur:
                c = int(ln[6:].split()[0])
                for key in ("fdm_cq_read", "fdv_cq_read", "ofi_cq_read", "rxe_poll_cq", "poll_cq",
                            "ucp_worker_progress", "opal_progress", "MPIDI_OFI_progress"):
                    if key in cur:
                        calls[key] += c
                cur = None
        if total > sum(by.values()):
            by["(not attributed by callgrind_annotate)"] += total - sum(by.values())
        rows.append({"variant": v, "round_trips": n, "total_per_rt": total // n,
                     "split": {k: by[k] // n for k in sorted(by, key=lambda k: -by[k])},
                     "top": sorted(((ir // n, name) for name, ir in fn.items()), reverse=True)[:12],
                     "calls_names_raw": dict(calls)})

with open(os.path.join(out, "mpi-split.csv"), "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["variant", "part", "instructions_per_rt"])
    for r in rows:
        w.writerow([r["variant"], "total", r["total_per_rt"]])
        for k, x in r["split"].items():
            w.writerow([r["variant"], k, x])
for r in rows:
    print("%s: %d instructions per 8 B round trip (posted phase, %d round trips)" %
          (r["variant"], r["total_per_rt"], r["round_trips"]))
    for k, x in r["split"].items():
        if x:
            print("    %-42s %7d" % (k, x))
    if r["calls_names_raw"]:
        print("    calls per RT: " + ", ".join("%s %.1f" % (k, c / r["round_trips"])
                                          for k, c in sorted(r["calls_names_raw"].items())))
    print("    top functions (exclusive, per RT): " +
          ", ".join("%s %d" % (name, ir) for ir, name in r["top"][:8]))
