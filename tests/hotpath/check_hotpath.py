#!/usr/bin/env python3
"""Check that the direct build's data path has no indirect call but the
driver's: disassemble the probes of hotpath_probe and compare every indirect
call's displacement with the driver entry points the probe binary reports.

  check_hotpath.py PROBE_BINARY [--expect-ops-table]

--expect-ops-table inverts the check for the OFF build: there each probe
must reach the provider through an indirect call that is NOT the driver's
(the ops table), which shows the check can tell the two apart."""
import re
import subprocess
import sys

PROBES = {
    "probe_send": "post_send",
    "probe_inject": "post_send",
    "probe_write": "post_send",
    "probe_recv": "post_recv",
    "probe_cq_read": "poll_cq",
}


def main():
    binary = sys.argv[1]
    expect_ops = "--expect-ops-table" in sys.argv
    offsets = {}
    for line in subprocess.run([binary], capture_output=True, text=True, check=True).stdout.splitlines():
        k, v = line.split()
        offsets[k] = int(v)
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-M", "att", binary],
                         capture_output=True, text=True, check=True).stdout
    funcs, cur = {}, None
    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <(\w+)>:$", line)
        if m:
            cur = m.group(1)
            funcs[cur] = []
        elif cur and line.strip():
            funcs[cur].append(line.strip())
    bad = 0
    for probe, entry in PROBES.items():
        if probe not in funcs:
            print("FAIL %s: not found in %s" % (probe, binary))
            bad += 1
            continue
        indirect = []
        for insn in funcs[probe]:
            # a direct hop to another fi_* wrapper means it was not inlined
            m = re.search(r"\b(call|jmp)q?\s+[0-9a-f]+ <(fi_\w+)>", insn)
            if m and not expect_ops:
                indirect.append("not inlined: %s" % m.group(2))
            m = re.search(r"\b(call|jmp)q?\s+\*(0x[0-9a-f]+|)\(%(\w+)\)", insn)
            if m:
                indirect.append(int(m.group(2), 16) if m.group(2) else 0)
            elif re.search(r"\b(call|jmp)q?\s+\*%", insn):
                indirect.append(-1)  # through a register: not a known driver slot
        driver = [d for d in indirect if d == offsets[entry]]
        indirect = [d for d in indirect]
        other = [d for d in indirect if d != offsets[entry]]
        desc = "%s: %d instructions, indirect calls at displacements %s (driver %s = %d)" % (
            probe, len(funcs[probe]), indirect, entry, offsets[entry])
        if expect_ops:
            ok = bool(other) and not driver
        else:
            ok = bool(driver) and not other
        print(("ok   " if ok else "FAIL ") + desc)
        bad += not ok
    if bad:
        print("%d probe(s) failed" % bad)
        return 1
    print("all %d probes: %s" % (len(PROBES), "reach the provider through the ops table" if expect_ops
                                 else "no indirect call but the driver's"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
