#!/usr/bin/env python3
"""fd_fi_info on real verbs devices, next to upstream's fi_info.

Run where verbs devices exist (tests/rxe/run; FD_RXE_* describe them):
  * `fd_fi_info -p verbs -t FI_EP_MSG` lists FD_RXE_DEV0 and FD_RXE_DEV1 as
    verbs MSG domains, RDMA CM RC protocol; with --rstream ON
    `-t FI_EP_SOCK_STREAM` lists both as well, and `-l` names every
    provider compiled in;
  * with --rdm ON `-p verbs` (no type) lists every device as a
    "verbs;ofi_rxm" FI_EP_RDM entry as well, after the MSG entries;
  * with --upstream FI_INFO (Debian's libfabric-bin), the summary and the
    verbose dump of every entry both tools list (same source address) must
    be the same line for line, except for the attributes where this
    provider differs from upstream's on purpose (ALLOWED below, documented
    in docs/fi_direct_verbs.7.md, TOOLS); the entries only upstream lists
    must be ones this provider does not offer (AF_IB addresses, other
    endpoint types).

Exit 77 without a device, 1 naming every mismatch, 0 otherwise.
"""
import argparse
import os
import re
import subprocess
import sys

# attribute path -> why it may differ from upstream verbs
ALLOWED = {
    "fi_domain_attr.threading":
        "FI_THREAD_DOMAIN unless built with FABRIC_DIRECT_THREADING=safe",
    "fi_domain_attr.max_ep_tx_ctx": "no scalable endpoints: 1",
    "fi_domain_attr.max_ep_rx_ctx": "no scalable endpoints: 1",
    "fi_domain_attr.max_ep_srx_ctx": "one shared receive context per endpoint where the device has SRQs",
    "nic.fi_link_attr.speed": "computed from the port's width and speed",
}


# attribute path -> flags this provider reports beyond upstream verbs (the
# rest of the value must still match upstream's exactly)
EXTRA_FLAGS = {
    "caps": {"FI_FENCE"},
    "fi_tx_attr.caps": {"FI_FENCE"},
}


def without_extra(path, value):
    extra = EXTRA_FLAGS.get(path)
    if not extra or not value.startswith("["):
        return value
    flags = [f.strip() for f in value.strip("[] ").split(",") if f.strip()]
    return "[ %s ]" % ", ".join(f for f in flags if f not in extra)


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def summaries(text):
    """[{provider, fabric, domain, version, type, protocol}, ...]"""
    out = []
    for line in text.splitlines():
        m = re.match(r'^provider: (.*)$', line)
        if m:
            out.append({"provider": m.group(1)})
            continue
        m = re.match(r'^    (\w+): (.*)$', line)
        if m and out:
            out[-1][m.group(1)] = m.group(2)
    return out


def verbose_entries(text):
    """Each '---' block as an ordered list of (path, value)."""
    entries = []
    for block in text.split("---\n")[1:]:
        stack, fields = [], []
        for line in block.splitlines():
            if not line.strip():
                continue
            indent = (len(line) - len(line.lstrip(" "))) // 4
            key, _, value = line.strip().partition(":")
            value = value.strip()
            if key == "fi_info" and indent == 0:
                continue
            # "fi_info:" is level 0, so a field at level n has n - 1
            # parents named before it
            del stack[max(indent - 1, 0):]
            if value == "":
                stack.append(key)
                continue
            fields.append((".".join(stack + [key]), value))
        entries.append(fields)
    return entries


def src_of(fields):
    for path, value in fields:
        if path == "src_addr":
            return value
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fi-info", required=True)
    ap.add_argument("--upstream", default="/usr/bin/fi_info",
                    help="upstream fi_info to compare with ('' for none)")
    ap.add_argument("--rstream", default="OFF")
    ap.add_argument("--rdm", default="OFF")
    args = ap.parse_args()
    rstream = args.rstream.upper() in ("ON", "1", "YES", "TRUE")
    rdm = args.rdm.upper() in ("ON", "1", "YES", "TRUE")

    addr = os.environ.get("FD_RXE_ADDR0")
    devs = [d for d in (os.environ.get("FD_RXE_DEV0"),
                        os.environ.get("FD_RXE_DEV1")) if d]
    if not addr or not os.path.isdir("/sys/class/infiniband") or \
            not os.listdir("/sys/class/infiniband"):
        print("SKIP: no verbs device (run under tests/rxe/run)")
        return 77

    errors = []
    ours = args.fi_info

    rc, out, err = run([ours, "-p", "verbs", "-t", "FI_EP_MSG"])
    if rc:
        errors.append("fd_fi_info -p verbs -t FI_EP_MSG: exit %d %s" %
                      (rc, err))
    listed = summaries(out)
    for d in devs:
        hits = [s for s in listed if s.get("domain") == d]
        if not hits:
            errors.append("fd_fi_info -p verbs -t FI_EP_MSG does not list %s"
                          % d)
        for s in hits:
            want = {"provider": "verbs", "type": "FI_EP_MSG",
                    "protocol": "FI_PROTO_RDMA_CM_IB_RC", "version": "117.0"}
            for k, v in want.items():
                if s.get(k) != v:
                    errors.append("%s: %s is %s, expected %s" %
                                  (d, k, s.get(k), v))
    print("fd_fi_info lists %d MSG entries on %s" %
          (len(listed), ", ".join(sorted({s.get("domain", "?")
                                          for s in listed}))))

    rc, out, err = run([ours, "-l"])
    provs = re.findall(r'^(\S+):$', out, re.M)
    want_provs = ["verbs"] + (["verbs;rstream"] if rstream else []) + \
        (["verbs;ofi_rxm"] if rdm else [])
    if rc or provs != want_provs:
        errors.append("fd_fi_info -l: exit %d, providers %s, expected %s" %
                      (rc, provs, want_provs))

    if rdm:
        # `fi_info -p verbs` with no type lists the RDM layer's entries
        # too, after the MSG ones, as upstream lists verbs;ofi_rxm
        rc, out, err = run([ours, "-p", "verbs"])
        every = summaries(out)
        types = [s.get("type") for s in every]
        if rc or "FI_EP_RDM" not in types or \
                types.index("FI_EP_RDM") < len(types) - types[::-1].index("FI_EP_MSG") - 1:
            errors.append("fd_fi_info -p verbs: exit %d, types in order %s: "
                          "expected MSG entries, then RDM ones" % (rc, types))
        for d in devs:
            hits = [s for s in every if s.get("domain") == d and
                    s.get("type") == "FI_EP_RDM"]
            if not hits:
                errors.append("fd_fi_info -p verbs does not list %s as RDM" % d)
            for s in hits:
                want = {"provider": "verbs;ofi_rxm", "protocol": "FI_PROTO_RXM"}
                for k, v in want.items():
                    if s.get(k) != v:
                        errors.append("%s RDM: %s is %s, expected %s" %
                                      (d, k, s.get(k), v))
        print("fd_fi_info -p verbs lists %d RDM entries after %d MSG ones" %
              (types.count("FI_EP_RDM"), types.count("FI_EP_MSG")))

    if rstream:
        rc, out, err = run([ours, "-t", "FI_EP_SOCK_STREAM"])
        streams = summaries(out)
        for d in devs:
            if not [s for s in streams if s.get("domain") == d and
                    s.get("type") == "FI_EP_SOCK_STREAM"]:
                errors.append("fd_fi_info -t FI_EP_SOCK_STREAM does not list "
                              "%s (exit %d %s)" % (d, rc, err.strip()))
        print("fd_fi_info lists %d SOCK_STREAM entries" % len(streams))
        # what fi_rstream(7) promises for every stream entry
        rc, out, err = run([ours, "-t", "FI_EP_SOCK_STREAM", "-v"])
        want = {"caps": lambda v: "FI_MSG" in v,
                "mode": lambda v: v.strip("[] ") == "",
                "fi_domain_attr.mr_mode": lambda v: v.strip("[] ") == "",
                "fi_domain_attr.threading": lambda v: v == "FI_THREAD_SAFE",
                "fi_domain_attr.control_progress":
                    lambda v: v == "FI_PROGRESS_AUTO",
                "fi_domain_attr.data_progress":
                    lambda v: v == "FI_PROGRESS_MANUAL",
                "fi_ep_attr.type": lambda v: v == "FI_EP_SOCK_STREAM",
                "fi_fabric_attr.prov_name": lambda v: v == "verbs;rstream"}
        entries = verbose_entries(out)
        if rc or len(entries) != len(streams):
            errors.append("fd_fi_info -t FI_EP_SOCK_STREAM -v: exit %d, "
                          "%d entries, %d in the summary" %
                          (rc, len(entries), len(streams)))
        for fields in entries:
            got = dict(fields)
            for path, ok in want.items():
                if path not in got or not ok(got[path]):
                    errors.append("SOCK_STREAM entry %s: %s is %r" %
                                  (src_of(fields), path, got.get(path)))
        print("checked %d SOCK_STREAM entries' attributes" % len(entries))

    if args.upstream and os.access(args.upstream, os.X_OK):
        env = dict(os.environ)
        env.pop("FI_PROVIDER", None)
        for label, extra in (("listing", []),
                             ("to %s" % addr, ["-n", addr, "-P", "7471"]),
                             ("listening on %s" % addr, ["-s", addr])):
            base = ["-p", "verbs", "-t", "FI_EP_MSG"] + extra
            _, up_out, _ = run([args.upstream] + base + ["-v"], env)
            _, fd_out, _ = run([ours] + base + ["-v"], env)
            up = {src_of(e): e for e in verbose_entries(up_out)}
            fd = {src_of(e): e for e in verbose_entries(fd_out)}
            if not fd:
                errors.append("%s: fd_fi_info lists nothing" % label)
            for src, fields in fd.items():
                if src not in up:
                    errors.append("%s: only fd_fi_info lists %s" %
                                  (label, src))
                    continue
                theirs = dict(up[src])
                paths = [p for p, _ in fields]
                if paths != [p for p, _ in up[src]]:
                    errors.append("%s %s: the two dumps have different "
                                  "fields" % (label, src))
                for path, value in fields:
                    if theirs.get(path) != without_extra(path, value) and \
                            path not in ALLOWED:
                        errors.append("%s %s: %s is '%s', upstream says "
                                      "'%s'" % (label, src, path, value,
                                                theirs.get(path)))
            for src in up:
                if src not in fd and not (src or "").startswith(
                        "fi_sockaddr_ib://"):
                    errors.append("%s: only upstream lists %s" % (label, src))
            print("compared with upstream fi_info (%s): %d common entries" %
                  (label, len(set(up) & set(fd))))
    elif args.upstream:
        print("note: no upstream fi_info at %s; comparison skipped" %
              args.upstream)

    for e in errors:
        print("FAIL:", e)
    if not errors:
        print("ok: fd_fi_info matches upstream fi_info but for: " +
              "; ".join("%s (%s)" % kv for kv in ALLOWED.items()) +
              "; beyond upstream: " +
              "; ".join("%s %s" % (p, "/".join(sorted(f)))
                        for p, f in EXTRA_FLAGS.items()))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
