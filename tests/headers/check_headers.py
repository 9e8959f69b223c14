#!/usr/bin/env python3
"""Every public header must stand on its own, and must not lean on private ones.

1. Self-containment: for each installed header (include/rdma/**.h,
   include/fabric_direct/rdma/*.h, prov_verbs/include/fdv/*.h) compile a
   translation unit that includes only that header (twice, so a missing
   include guard shows up) with gcc and clang as C11 and g++ as C++17, with
   and without -DFABRIC_DIRECT, under -Wall -Wextra -Werror.
2. Dependencies: no header under include/ or prov_verbs/include/ may include
   a private header (src/*.h, prov_verbs/*/*.h) or a <rdma/...> file that is
   neither ours nor rdma-core's; anything else must be a system header.

Exit status 0 when everything passes, 1 on any failure, 2 on usage errors.
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

# rdma-core files that live next to libfabric's in /usr/include/rdma and that
# public headers may legitimately use.
RDMA_CORE_ALLOWED = {"rdma_cma.h"}

COMPILERS = (
    # label, executable, language flags
    ("gcc", "gcc", ["-x", "c", "-std=c11"]),
    ("clang", "clang", ["-x", "c", "-std=c11"]),
    ("g++", "g++", ["-x", "c++", "-std=c++17"]),
)


def find_headers(root):
    """(spelling, path, kind) for every public header, in a stable order."""
    out = []
    inc = os.path.join(root, "include", "rdma")
    for dirpath, _, files in sorted(os.walk(inc)):
        for f in sorted(files):
            if f.endswith(".h"):
                p = os.path.join(dirpath, f)
                out.append(("rdma/" + os.path.relpath(p, inc), p, "public"))
    direct = os.path.join(root, "include", "fabric_direct", "rdma")
    if os.path.isdir(direct):
        for f in sorted(os.listdir(direct)):
            if f.endswith(".h"):
                out.append(("rdma/" + f, os.path.join(direct, f), "direct"))
    fdv = os.path.join(root, "prov_verbs", "include", "fdv")
    if os.path.isdir(fdv):
        for f in sorted(os.listdir(fdv)):
            if f.endswith(".h"):
                out.append(("fdv/" + f, os.path.join(fdv, f), "fdv"))
    return out


def config_dirs(root, build_dir, work, knobs):
    """[(tag, dir)] of directories holding fdv/fdv_config.h, and a note.

    A configured build's file is used as is.  Without one, the template is
    instantiated once per value in `knobs`, every @KNOB@ set to that value,
    so both sides of each compile-time switch get compiled."""
    if build_dir:
        d = os.path.join(os.path.abspath(build_dir), "include")
        if os.path.isfile(os.path.join(d, "fdv", "fdv_config.h")):
            return [("", d)], None
    else:
        d = os.path.join(root, "build", "include")
        if os.path.isfile(os.path.join(d, "fdv", "fdv_config.h")):
            return [("", d)], "no --build-dir: using %s" % os.path.relpath(d, root)
    tmpl = os.path.join(root, "prov_verbs", "verbs", "fdv_config.h.in")
    if not os.path.isfile(tmpl):
        return [("", None)], "no fdv/fdv_config.h (no build dir, no template)"
    with open(tmpl) as fh:
        text = fh.read()
    out = []
    for v in knobs:
        d = os.path.join(work, "cfg%s" % v)
        os.makedirs(os.path.join(d, "fdv"), exist_ok=True)
        with open(os.path.join(d, "fdv", "fdv_config.h"), "w") as fh:
            fh.write(re.sub(r"@\w+@", v, text))
        out.append(("knobs=%s" % v if len(knobs) > 1 else "", d))
    why = "build dir has no include/fdv/fdv_config.h" if build_dir else \
        "no --build-dir and no build/include/fdv/fdv_config.h"
    return out, "%s: using %s with every knob = %s" % (
        why, os.path.relpath(tmpl, root), " and ".join(knobs))


def compile_one(job):
    label, exe, lang, spelling, direct, flags, src_dir, tag = job
    src = os.path.join(src_dir, "%s_%s_%s%s.c" % (
        label.replace("+", "x"), re.sub(r"\W", "_", spelling),
        "direct" if direct else "ops", re.sub(r"\W", "_", tag)))
    with open(src, "w") as fh:
        fh.write("#include <%s>\n#include <%s>\n" % (spelling, spelling))
    cmd = [exe] + lang + ["-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                          "-fno-diagnostics-color"] + flags + [src]
    env = dict(os.environ, LC_ALL="C", LANG="C")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return job, p.returncode, p.stderr, cmd


LOC_RE = re.compile(r"^(?:In file included from|\s+from) (.+?):(\d+)[:,]?(?:\d+[:,]?)?$")
ERR_RE = re.compile(r"^(.+?):(\d+):(?:\d+:)? (?:fatal )?error: (.*)$")


def first_error(err, root, work):
    """(key, text) naming where the first error really comes from.  An error
    inside a system header is charged to the project header including it."""
    chain = []
    for line in err.splitlines():
        m = LOC_RE.match(line)
        if m:
            chain.append((m.group(1), m.group(2)))
            continue
        m = ERR_RE.match(line)
        if m:
            path, lineno, msg = m.group(1), m.group(2), m.group(3)
            where = "%s:%s" % (_short(path, root, work), lineno)
            if not os.path.abspath(path).startswith(root + os.sep):
                for inc, n in chain:
                    if os.path.abspath(inc).startswith(root + os.sep):
                        where += " (included from %s:%s)" % (_short(inc, root, work), n)
                        break
            text = "%s: %s" % (where, msg)
            # C++: say where the enclosing extern "C" was opened.
            m2 = re.search(r"^(.+?):(\d+):\d+: note: .extern .C.. linkage started here",
                           err, re.M)
            if m2:
                text += ' (extern "C" opened at %s:%s)' % (_short(m2.group(1), root, work),
                                                           m2.group(2))
            return where, text
        if not line.startswith(" ") and not LOC_RE.match(line) and "In function" not in line:
            chain = []
    tail = err.strip().splitlines()[-1:] or ["?"]
    return tail[0], tail[0]


def _short(path, root, work):
    path = os.path.abspath(path)
    if path.startswith(work + os.sep):
        return "<test TU>"
    if path.startswith(root + os.sep):
        return os.path.relpath(path, root)
    return path


# --------------------------------------------------------------------------
# Dependency scan


INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]|^\s*#\s*include\s+(\S.*)$')


def strip_comments(text):
    # Keep line structure so reported line numbers stay right.
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def system_dirs(cc):
    p = subprocess.run([cc, "-E", "-Wp,-v", "-x", "c", "/dev/null"],
                       capture_output=True, text=True)
    dirs, on = [], False
    for line in p.stderr.splitlines():
        if line.startswith("#include <...> search starts here"):
            on = True
            continue
        if line.startswith("End of search list"):
            break
        if on:
            dirs.append(line.strip().split(" (")[0])
    return dirs


def private_headers(root):
    out = {}
    src = os.path.join(root, "src")
    pv = os.path.join(root, "prov_verbs")
    pv_incs = (os.path.join(pv, "include"), os.path.join(pv, "rdm", "include"))
    for base in (src, pv):
        if not os.path.isdir(base):
            continue
        for dirpath, _, files in os.walk(base):
            if any(dirpath == i or dirpath.startswith(i + os.sep) for i in pv_incs):
                continue
            for f in files:
                if f.endswith(".h"):
                    out.setdefault(f, os.path.relpath(os.path.join(dirpath, f), root))
    return out


def check_dependencies(root, sysdirs, allow_rdma):
    problems = []
    pub_roots = [os.path.join(root, "include"), os.path.join(root, "prov_verbs", "include"),
                 os.path.join(root, "prov_verbs", "rdm", "include")]
    ours_rdma = [os.path.join(root, "include", "rdma"),
                 os.path.join(root, "include", "fabric_direct", "rdma")]
    fdv_dir = os.path.join(root, "prov_verbs", "include", "fdv")
    private = private_headers(root)
    files = []
    for base in pub_roots:
        for dirpath, _, fs in os.walk(base):
            for f in fs:
                if f.endswith(".h"):
                    files.append(os.path.join(dirpath, f))
    for path in sorted(files):
        rel = os.path.relpath(path, root)
        with open(path, errors="replace") as fh:
            lines = strip_comments(fh.read()).split("\n")
        for n, line in enumerate(lines, 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            if m.group(3) is not None:
                problems.append("%s:%d: computed #include %s cannot be checked"
                                % (rel, n, m.group(3).strip()))
                continue
            quote, name = m.group(1), m.group(2).strip()
            why = classify_include(root, path, quote, name, pub_roots, ours_rdma,
                                   fdv_dir, private, sysdirs, allow_rdma)
            if why:
                problems.append("%s:%d: #include %s%s%s: %s" % (
                    rel, n, quote, name, ">" if quote == "<" else '"', why))
    return problems


def classify_include(root, path, quote, name, pub_roots, ours_rdma, fdv_dir,
                     private, sysdirs, allow_rdma):
    """None if the include is acceptable, otherwise the reason it is not."""
    if ".." in name.split("/"):
        return "climbs out of the include tree"
    base = os.path.basename(name)
    if quote == '"':
        target = os.path.normpath(os.path.join(os.path.dirname(path), name))
        inside = any(target.startswith(r + os.sep) for r in pub_roots)
        if os.path.isfile(target) and inside:
            return None
        if base == "fdv_config.h":
            return None
        if base in private:
            return "private header (%s)" % private[base]
        return "quoted include that does not resolve inside include/ or prov_verbs/include/"
    if name.startswith("rdma/"):
        sub = name[len("rdma/"):]
        if any(os.path.isfile(os.path.join(d, sub)) for d in ours_rdma):
            return None
        if re.match(r"fi_direct\w*\.h$", sub):
            return None           # generated into include/fabric_direct/rdma
        if sub == "fabric_direct_config.h":
            return None           # written by the direct build's install rules
        if sub in RDMA_CORE_ALLOWED or sub in allow_rdma:
            return None
        return ("neither one of our headers nor rdma-core's rdma_cma.h: it would "
                "resolve to another package's /usr/include/rdma/%s" % sub)
    if name.startswith("fdv/"):
        if os.path.isfile(os.path.join(fdv_dir, name[4:])) or name == "fdv/fdv_config.h":
            return None
        return "no such provider header in prov_verbs/include/fdv"
    if name.startswith("infiniband/"):
        return None
    if base in private and not any(os.path.isfile(os.path.join(d, name)) for d in sysdirs):
        return "private header (%s)" % private[base]
    if any(os.path.isfile(os.path.join(d, name)) for d in sysdirs):
        return None
    return "not a system header, and not ours"


# --------------------------------------------------------------------------


def compact_variants(variants):
    """'gcc -DFABRIC_DIRECT knobs=1', ... -> 'direct(knobs=1): gcc clang; ...'"""
    groups = {}
    for v in variants:
        parts = v.split()
        cc = parts[0]
        mode = "direct" if "-DFABRIC_DIRECT" in parts else "default"
        tag = " ".join(p for p in parts[1:] if p != "-DFABRIC_DIRECT")
        key = mode + ("(%s)" % tag if tag else "")
        groups.setdefault(key, []).append(cc)
    return "; ".join("%s: %s" % (k, " ".join(v)) for k, v in groups.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=DEFAULT_ROOT, help="source tree (default: this checkout)")
    ap.add_argument("--build-dir", help="CMake build dir (for include/fdv/fdv_config.h)")
    ap.add_argument("-I", dest="extra_inc", action="append", default=[],
                    help="extra include directory (repeatable)")
    ap.add_argument("--cflags", default="", help="extra flags for every compile")
    ap.add_argument("--compilers", default="gcc,clang,g++",
                    help="subset of gcc,clang,g++ (default all three)")
    ap.add_argument("--allow-rdma", action="append", default=[],
                    help="another rdma/ header public headers may include")
    ap.add_argument("--knobs", default="0,1",
                    help="values for the template's @KNOB@s when no build config "
                         "exists (default 0,1: both sides of every switch)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    root = os.path.abspath(args.root)
    if not os.path.isdir(os.path.join(root, "include", "rdma")):
        print("check_headers: %s has no include/rdma" % root, file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="fd-headers.")
    try:
        return run(args, root, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, root, work):
    cfgs, cfg_note = config_dirs(root, args.build_dir, work, args.knobs.split(","))
    if cfg_note:
        print("note: " + cfg_note)
    wanted = args.compilers.split(",")
    compilers = []
    for label, exe, lang in COMPILERS:
        if label not in wanted:
            continue
        if shutil.which(exe) is None:
            print("check_headers: %s not found" % exe, file=sys.stderr)
            return 2
        compilers.append((label, exe, lang))

    common = ["-I", os.path.join(root, "include"),
              "-I", os.path.join(root, "prov_verbs", "include"),
              "-I", os.path.join(root, "prov_verbs", "rdm", "include")]
    for d in args.extra_inc:
        common += ["-I", os.path.abspath(d)]
    extra = args.cflags.split()
    direct = ["-DFABRIC_DIRECT", "-I", os.path.join(root, "include", "fabric_direct")]

    headers = find_headers(root)
    jobs = []
    for spelling, _path, kind in headers:
        modes = (True,) if kind == "direct" else (False, True)
        for label, exe, lang in compilers:
            for d in modes:
                # Only the provider's headers read fdv_config.h; the default
                # (ops-table) public headers need one configuration.
                for tag, cfg in (cfgs if d or kind == "fdv" else cfgs[:1]):
                    # The direct tree goes first so its fi_direct_*.h are found.
                    flags = (direct if d else []) + common + \
                        (["-I", cfg] if cfg else []) + extra
                    jobs.append((label, exe, lang, spelling, d, flags, work,
                                 tag if (d or kind == "fdv") else ""))

    failures = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        for job, rc, err, cmd in ex.map(compile_one, jobs):
            label, _exe, _lang, spelling, d, _flags, _w, tag = job
            if rc != 0:
                failures.setdefault(spelling, []).append(
                    (label + (" -DFABRIC_DIRECT" if d else "") + (" " + tag if tag else ""),
                     err, cmd))

    # One line per failing header; the distinct first errors ("causes") are
    # listed once, since one broken shared header breaks every includer.
    causes = {}
    for spelling, _p, _k in headers:
        fl = failures.get(spelling)
        if not fl:
            continue
        refs = []
        for variant, err, cmd in fl:
            key, text = first_error(err, root, work)
            c = causes.setdefault(key, {"n": len(causes) + 1, "text": text,
                                        "variants": {}, "cmd": cmd, "err": err})
            label = variant.split()[0]
            c["variants"][label] = c["variants"].get(label, 0) + 1
            if c["n"] not in refs:
                refs.append(c["n"])
        print("FAIL <%s>: %s  (cause %s)" % (
            spelling, compact_variants([v for v, _e, _c in fl]),
            ", ".join("#%d" % r for r in refs)))
    if causes:
        print("causes:")
    for c in sorted(causes.values(), key=lambda c: c["n"]):
        print("  #%d %s  [%s]" % (c["n"], c["text"], ", ".join(
            "%s x%d" % kv for kv in sorted(c["variants"].items()))))
        if args.verbose:
            print("     " + " ".join(c["cmd"]))
            for l in c["err"].splitlines()[:25]:
                print("     " + l.replace(work + "/", ""))

    deps = check_dependencies(root, system_dirs(compilers[0][1] if compilers else "cc"),
                              set(args.allow_rdma))
    for p in deps:
        print("DEP  " + p)

    nfail = sum(len(v) for v in failures.values())
    print("check_headers: %d headers, %d compiles, %d failing (%d header(s)), "
          "%d dependency problem(s): %s"
          % (len(headers), len(jobs), nfail, len(failures), len(deps),
             "PASS" if not nfail and not deps else "FAIL"))
    return 0 if not nfail and not deps else 1


if __name__ == "__main__":
    sys.exit(main())
