#!/usr/bin/env python3
"""bench/mpi/report.py OUT - the MPI table from OUT/mpi.csv (written by
bench/mpi/vm-mpi-bench.sh): per variant the 8 B half round trip, the
4 MiB bandwidth, MPI_Allreduce (8 B) latency and user-space instructions
per 8 B MPI round trip of rank 0 (Irecv + Isend + Waitall with the reply
arrived: the targets' figure; and MPI_Send + MPI_Recv with their waiting
loops, which depends on timing), then the
issue-22 targets met or missed. Writes OUT/mpi.json and, with gnuplot,
OUT/mpi-latency.png."""
import csv, json, os, shutil, subprocess, sys

out = sys.argv[1]
rows = list(csv.reader(open(os.path.join(out, "mpi.csv"))))
order = ["mpich-direct", "mpich-off", "mpich-upstream", "ompi-dropin", "ompi-upstream", "ompi-ucx"]
data = {}
for r in rows:
    if len(r) < 5 or r[0] != "mpi":
        continue
    v, kind = r[1], r[2]
    d = data.setdefault(v, {"pingpong": {}, "allreduce_us": None, "insn_per_rt": None,
                            "insn_sendrecv": None})
    if kind == "pingpong":
        d["pingpong"][int(r[3])] = {"iters": int(r[4]), "half_rt_us": float(r[5]),
                                    "MB_per_s": float(r[6])}
    elif kind == "allreduce":
        d["allreduce_us"] = float(r[5])
        d["allreduce_ranks"] = int(r[6])
    elif kind == "callgrind_posted" and len(r) >= 6 and int(r[5]) > 0:
        d["insn_per_rt"] = int(r[5])
    elif kind == "callgrind_sendrecv" and len(r) >= 6 and int(r[5]) > 0:
        d["insn_sendrecv"] = int(r[5])

variants = [v for v in order if v in data] + sorted(v for v in data if v not in order)
print("%-15s %12s %14s %14s %16s %18s" % ("variant", "8 B us", "4 MiB MB/s", "allreduce us",
                                           "insn/8 B RT", "with waiting loop"))
for v in variants:
    d = data[v]
    pp = d["pingpong"]
    small = pp.get(8, {}).get("half_rt_us")
    big = pp[max(pp)]["MB_per_s"] if pp else None
    f = lambda x, fmt: (fmt % x) if x is not None else "-"
    print("%-15s %12s %14s %14s %16s %18s" % (v, f(small, "%.1f"), f(big, "%.0f"),
                                               f(d["allreduce_us"], "%.1f"), f(d["insn_per_rt"], "%d"),
                                               f(d["insn_sendrecv"], "%d")))

def insn(v):
    return data.get(v, {}).get("insn_per_rt")

targets = []
def target(name, a, b, ok):
    if a is None or b is None:
        targets.append({"target": name, "result": "not measured"})
    else:
        targets.append({"target": name, "result": "met" if ok(a, b) else "missed",
                        "values": [a, b]})

target("MPICH direct <= 1/2 of MPICH on upstream libfabric (insn/RT)",
       insn("mpich-direct"), insn("mpich-upstream"), lambda a, b: 2 * a <= b)
target("MPICH direct below Open MPI over UCX (insn/RT)",
       insn("mpich-direct"), insn("ompi-ucx"), lambda a, b: a < b)
target("MPICH direct below Open MPI over upstream libfabric (insn/RT; not an issue target, the reference point the issue quotes)",
       insn("mpich-direct"), insn("ompi-upstream"), lambda a, b: a < b)
target("MPICH direct below MPICH on the OFF build (insn/RT)",
       insn("mpich-direct"), insn("mpich-off"), lambda a, b: a < b)
print()
for t in targets:
    print("target: %s: %s%s" % (t["target"], t["result"],
                                " (%d vs %d)" % tuple(t["values"]) if "values" in t else ""))
json.dump({"variants": data, "targets": targets}, open(os.path.join(out, "mpi.json"), "w"),
          indent=1)

if shutil.which("gnuplot") and variants:
    dat = os.path.join(out, "mpi-latency.dat")
    with open(dat, "w") as fh:
        for v in variants:
            fh.write("# %s\n" % v)
            for size in sorted(data[v]["pingpong"]):
                fh.write("%d %f\n" % (size, data[v]["pingpong"][size]["half_rt_us"]))
            fh.write("\n\n")
    plots = ", ".join("'%s' index %d with linespoints title '%s'" % (dat, i, v)
                      for i, v in enumerate(variants) if data[v]["pingpong"])
    if plots:
        script = ("set terminal png size 900,600; set output '%s';"
                  "set logscale xy; set xlabel 'message size (B)';"
                  "set ylabel 'half round trip (us)'; set key left top;"
                  "set title 'MPI ping-pong, Soft-RoCE in the test VM'; plot %s"
                  % (os.path.join(out, "mpi-latency.png"), plots))
        subprocess.run(["gnuplot", "-e", script], check=False)
