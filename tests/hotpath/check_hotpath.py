#!/usr/bin/env python3
"""Check that the direct build's data path has no indirect call but the
driver's: disassemble the probes of hotpath_probe and compare every indirect
call's displacement with the driver entry points the probe binary reports.

  check_hotpath.py PROBE_BINARY [--expect-ops-table]

With a layer compiled in (FDV_EP_LAYERS 1), an endpoint call first tests the
endpoint's kind and sends a layer's endpoint through its own ops table, and a
CQ read tests the CQ's kind the same way (a layer's CQ, e.g. RDM's). The
check then walks the probe's control flow from its entry, taking only the
MSG side of that test: that path must have exactly the driver's indirect
call (and the kind test must be the only one), and the other side must reach
an ops table, so a layer's endpoint is not served by inline MSG code.
For fi_send, fi_inject and fi_recv the layer side must also hold the
second compare, against FDV_EP_KIND_DGRAM, whose datagram side reaches the
driver with no other indirect call (datagram endpoints are inline too).

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
EP_PROBES = {"probe_send", "probe_inject", "probe_write", "probe_recv"}
# endpoint calls a datagram endpoint has inline as well
DGRAM_PROBES = {"probe_send", "probe_inject", "probe_recv"}
# probes whose first argument is a CQ: their kind test reads the CQ's kind
CQ_PROBES = {"probe_cq_read"}


def parse(line):
    m = re.match(r"^([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
    if not m:
        return None
    return int(m.group(1), 16), m.group(2), m.group(3)


def indirect_of(mnem, ops):
    """Displacement of an indirect call/jump, -1 through a register, None
    for anything else."""
    if not mnem.startswith(("call", "jmp")):
        return None
    m = re.match(r"\*(0x[0-9a-f]+|)\(%(\w+)\)", ops)
    if m:
        return int(m.group(1), 16) if m.group(1) else 0
    if ops.startswith("*%"):
        return -1
    return None


def direct_target(ops):
    m = re.match(r"([0-9a-f]+)\b", ops)
    return int(m.group(1), 16) if m else None


def walk(insns, start, avoid_edge=None):
    """Addresses reachable from start; avoid_edge = (branch address, target
    address) is a CFG edge not taken."""
    index = {a: i for i, (a, _, _) in enumerate(insns)}
    seen, todo = set(), [start]
    while todo:
        a = todo.pop()
        if a in seen or a not in index:
            continue
        seen.add(a)
        i = index[a]
        _, mnem, ops = insns[i]
        nxt = insns[i + 1][0] if i + 1 < len(insns) else None
        succ = []
        if mnem.startswith("ret") or mnem == "ud2" or (
                mnem.startswith("jmp") and indirect_of(mnem, ops) is not None):
            succ = []
        elif mnem.startswith("jmp"):
            succ = [direct_target(ops)]
        elif mnem.startswith("j"):
            succ = [direct_target(ops), nxt]
        else:
            succ = [nxt]
        for s in succ:
            if s is None or (avoid_edge and (a, s) == avoid_edge):
                continue
            todo.append(s)
    return seen


def kind_test(insns, kind_off, layer_kind):
    """(edge to the layer path, instructions of the test) of the
    endpoint-kind test: the first conditional jump after a read of the kind
    field of the first argument (%rdi, or a register it was copied into
    before the read: the compiler may keep the endpoint in a callee-saved
    register), compared with FDV_EP_KIND_LAYER or tested against 0
    (FDV_EP_KIND_MSG)."""
    ep_regs = {"rdi"}
    copy = re.compile(r"^%(\w+),%(\w+)$")
    for i, (a, mnem, ops) in enumerate(insns):
        m = copy.match(ops)
        if mnem == "mov" and m:
            if m.group(1) in ep_regs:
                ep_regs.add(m.group(2))
            else:
                ep_regs.discard(m.group(2))
            continue
        base = re.search(r"\b0x%x\(%%(\w+)\)" % kind_off, ops)
        if not base or base.group(1) not in ep_regs:
            continue
        cmp_layer = mnem.startswith("cmp") and \
            re.match(r"\$0x%x," % layer_kind, ops) is not None
        for j, (b, bm, bops) in enumerate(insns[i + 1:i + 4]):
            if bm in ("jne", "jnz", "je", "jz"):
                tgt = direct_target(bops)
                nxt = insns[i + 2 + j][0]
                eq = bm in ("je", "jz")
                # cmp $LAYER: taken on equal is the layer; against 0 (MSG):
                # taken on not-equal is the layer
                taken_layer = eq if cmp_layer else not eq
                # the read, any compare/test between it and the branch (a
                # load then a test), the branch; the compiler may schedule
                # unrelated instructions in between
                between = [m for _, m, _ in insns[i + 1:i + 1 + j]
                           if m.startswith(("cmp", "test"))]
                return (b, tgt if taken_layer else nxt), 2 + len(between)
        return None
    return None


def dgram_side(insns, layer_path, dgram_kind):
    """Where the layer side's second compare, the endpoint's kind against
    FDV_EP_KIND_DGRAM (the verbs core's datagram endpoints, inline like
    MSG: gen/api.spec @inline-layer dgram), goes for a datagram endpoint:
    the start of that path, or None when the layer side has no such
    compare."""
    for i, (a, mnem, ops) in enumerate(insns):
        if a not in layer_path or not mnem.startswith("cmp") or \
                not re.match(r"\$0x%x," % dgram_kind, ops):
            continue
        for j, (b, bm, bops) in enumerate(insns[i + 1:i + 4]):
            if bm in ("jne", "jnz", "je", "jz"):
                tgt = direct_target(bops)
                nxt = insns[i + 2 + j][0]
                return tgt if bm in ("je", "jz") else nxt
    return None


def main():
    binary = sys.argv[1]
    expect_ops = "--expect-ops-table" in sys.argv
    offsets = {}
    for line in subprocess.run([binary], capture_output=True, text=True, check=True).stdout.splitlines():
        k, v = line.split()
        offsets[k] = int(v)
    layers = offsets.get("layers", 0) and not expect_ops
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
        insns = [p for p in (parse(l) for l in funcs[probe]) if p]
        notes = []
        path = {a for a, _, _ in insns}
        layer_other = None
        notes_ok = []
        kinded = probe in EP_PROBES or (probe in CQ_PROBES and "cq_kind" in offsets)
        if layers and kinded:
            if probe in CQ_PROBES:
                kt = kind_test(insns, offsets["cq_kind"], offsets["cq_layer_kind"])
            else:
                kt = kind_test(insns, offsets["kind"], offsets["layer_kind"])
            if kt is None:
                notes.append("no kind test found")
            else:
                to_layer, kt_len = kt
                # fi_cq_read's test reads the CQ's kind and state as one
                # 8-byte word that is 0 on the CONTEXT line: a compare of
                # it in memory, or a load and a test when the compiler
                # keeps the 0 for later (the loop index of a read of
                # several entries). Either replaces the separate kind
                # test and the state compare (2 + 2).
                allowed = (2, 3) if probe in CQ_PROBES and offsets.get("cq_kind_merged") \
                    else (2,)
                if kt_len not in allowed:
                    notes.append("the kind test is %d instructions, not %s" % (
                        kt_len, " or ".join(map(str, allowed))))
                path = walk(insns, insns[0][0], avoid_edge=to_layer)
                layer_path = walk(insns, to_layer[1])
                layer_other = [indirect_of(m, o) for a, m, o in insns
                               if a in layer_path and indirect_of(m, o) is not None
                               and indirect_of(m, o) != offsets[entry]]
                # A datagram endpoint's fi_send, fi_inject and fi_recv are
                # inline too: behind the second compare, only the
                # driver's indirect call.
                if probe in DGRAM_PROBES and "dgram_kind" in offsets:
                    start = dgram_side(insns, layer_path, offsets["dgram_kind"])
                    if start is None:
                        notes.append("no FDV_EP_KIND_DGRAM compare on the layer side")
                    else:
                        dpath = walk(insns, start)
                        dind = [indirect_of(m, o) for a, m, o in insns
                                if a in dpath and indirect_of(m, o) is not None]
                        if offsets[entry] not in dind or \
                                any(d != offsets[entry] for d in dind):
                            notes.append("datagram side: indirect calls %s" % dind)
                        else:
                            notes_ok.append("datagram side: driver only")
        indirect = []
        for a, mnem, ops in insns:
            if a not in path:
                continue
            # a direct hop to another fi_* wrapper means it was not inlined
            m = re.search(r"\b(call|jmp)q?\s+[0-9a-f]+ <(fi_\w+)>", mnem + " " + ops)
            if m and not expect_ops:
                notes.append("not inlined: %s" % m.group(2))
            d = indirect_of(mnem, ops)
            if d is not None:
                indirect.append(d)
        driver = [d for d in indirect if d == offsets[entry]]
        other = [d for d in indirect if d != offsets[entry]]
        desc = "%s: %d instructions (%d on the MSG path), indirect calls at displacements %s " \
               "(driver %s = %d)" % (probe, len(insns), len(path), indirect, entry, offsets[entry])
        if layer_other is not None:
            desc += "; layer side: ops table at %s" % layer_other
        if expect_ops:
            ok = bool(other) and not driver
        else:
            ok = len(driver) >= 1 and not other and not notes
            if layers and kinded:
                ok = ok and bool(layer_other)
        if notes or notes_ok:
            desc += "; " + ", ".join(notes + notes_ok)
        print(("ok   " if ok else "FAIL ") + desc)
        bad += not ok
    if bad:
        print("%d probe(s) failed" % bad)
        return 1
    print("all %d probes: %s" % (len(PROBES), "reach the provider through the ops table" if expect_ops
                                 else "no indirect call but the driver's" +
                                 (" on the MSG path; layer endpoints go to their ops table"
                                  if layers else "")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
