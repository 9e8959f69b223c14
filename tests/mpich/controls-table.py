#!/usr/bin/env python3
"""tests/mpich/controls-table.py OUT VARIANT... - the per-test table of
tests/mpich/controls.sh from the TAP files runtests wrote
(OUT/<variant>/<dir>.tap): one row per test, per variant "ok" or "FAIL"
and the test's wall time in seconds; then the count per variant. --md
prints a Markdown table (for tests/mpich/README.md)."""
import glob, os, re, sys

args = sys.argv[1:]
md = "--md" in args
args = [a for a in args if a != "--md"]
out, variants = args[0], args[1:]
res, order = {}, []
# the directories in tests/mpich/ci-tests's order
first = ["init", "group", "pt2pt", "comm", "coll", "datatype", "rma"]
def dir_key(tap):
    d = os.path.basename(tap)[:-4]
    return (first.index(d) if d in first else len(first), d)
for v in variants:
    for tap in sorted(glob.glob(os.path.join(out, v, "*.tap")), key=dir_key):
        for line in open(tap, errors="replace"):
            m = re.match(r"^(not ok|ok)\s+-\s+(?:\./)?(\S+ \d+)(.*)$", line)
            if not m:
                continue
            t = m.group(2)
            tm = re.search(r"time=([\d.]+)", m.group(3))
            if t not in res:
                res[t] = {}
                order.append(t)
            res[t][v] = ("ok" if m.group(1) == "ok" else "FAIL",
                         float(tm.group(1)) if tm else None)

def cell(x):
    if x is None:
        return "-"
    return "%s %s" % (x[0], "%.0f s" % x[1] if x[1] is not None else "")

if md:
    print("| test (ranks) | " + " | ".join(variants) + " |")
    print("|---" * (len(variants) + 1) + "|")
    for t in order:
        print("| %s | %s |" % (t, " | ".join(cell(res[t].get(v)) for v in variants)))
else:
    print("%-36s %s" % ("test", " ".join("%-12s" % v for v in variants)))
    for t in order:
        print("%-36s %s" % (t, " ".join("%-12s" % cell(res[t].get(v)) for v in variants)))
for v in variants:
    n = sum(1 for t in order if res[t].get(v, ("",))[0] == "ok")
    run = sum(1 for t in order if v in res[t])
    secs = sum(res[t][v][1] or 0 for t in order if v in res[t])
    print("%s%s: %d of %d run passed (%d listed), %.0f s of test time" %
          ("- " if md else "", v, n, run, len(order), secs))
