#!/usr/bin/env python3
"""Check our include/rdma headers against an installed libfabric 1.17.

Nothing here is a hand-kept list of names: the entities to verify are read
from the reference headers themselves (macros from the preprocessor's
-dD output, everything else from clang's JSON AST).  One probe program is
generated from that list and built twice, once on each header tree; the
two outputs must agree line for line.  Things that can only be checked at
compile time (type compatibility, constant-ness) are _Static_asserts inside
the probe, so against the reference they always pass and against ours a
failure shows up as a compile error that we pin to the offending check.

Exit status: 0 all checks pass, 1 some check failed, 2 the tool itself
could not run (bad arguments, clang missing), 77 the reference headers are
not installed (the ctest convention for "skipped").
"""

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77

# Headers the project promises to reproduce.  fi_ext_psm2.h belongs to a
# provider we do not implement; providers/*.h are pulled in by fi_ext.h but
# are provider-author interfaces rather than application API.
EXCLUDED_HEADERS = {"fi_ext_psm2.h"}

VERBOSE = False


def note(msg):
    if VERBOSE:
        print("  [conformance] " + msg, file=sys.stderr)


# --------------------------------------------------------------------------
# Locating and staging the two header trees


def rdma_dir(path):
    """Accept either a directory holding fabric.h or one holding rdma/."""
    path = os.path.abspath(path)
    if os.path.isfile(os.path.join(path, "rdma", "fabric.h")) or \
            os.path.isdir(os.path.join(path, "rdma")):
        return os.path.join(path, "rdma")
    return path


def libfabric_files(refdir):
    """Every file libfabric-dev installs under rdma/, relative names."""
    names = []
    for name in sorted(os.listdir(refdir)):
        if name == "fabric.h" or (name.startswith("fi_") and name.endswith(".h")):
            names.append(name)
    prov = os.path.join(refdir, "providers")
    if os.path.isdir(prov):
        for name in sorted(os.listdir(prov)):
            if name.endswith(".h"):
                names.append("providers/" + name)
    return names


def scope_headers(refdir, with_providers):
    """The reference headers whose entities we check, fabric.h first.
    providers/*.h only count when ours ships them: they are provider-author
    interfaces, but once shipped they must match too."""
    hs = [n for n in libfabric_files(refdir)
          if ("/" not in n or with_providers) and n not in EXCLUDED_HEADERS]
    hs.sort(key=lambda n: ("/" in n, n != "fabric.h", n))
    return hs


def stage_trees(refdir, oursdir, work):
    """Copy both trees into work/{ref,ours}/rdma.

    The copies exist so that ours can never fall through to Debian's files:
    /usr/include stays on the default search path (rdma-core lives there), so
    for every libfabric file that ours lacks we plant a stub that stops the
    compile instead of silently picking up the reference version.
    """
    lf = libfabric_files(refdir)
    ref_root = os.path.join(work, "ref")
    ours_root = os.path.join(work, "ours")
    for root in (ref_root, ours_root):
        if os.path.isdir(root):
            shutil.rmtree(root)
        os.makedirs(os.path.join(root, "rdma", "providers"))
    for name in lf:
        shutil.copy(os.path.join(refdir, name), os.path.join(ref_root, "rdma", name))
    present = set()
    if os.path.isdir(oursdir):
        for dirpath, _, files in os.walk(oursdir):
            for f in files:
                if not f.endswith(".h"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), oursdir)
                dst = os.path.join(ours_root, "rdma", rel)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy(os.path.join(dirpath, f), dst)
                present.add(rel)
    stubs = []
    for name in lf:
        if name not in present:
            with open(os.path.join(ours_root, "rdma", name), "w") as fh:
                fh.write('#error "conformance: <rdma/%s> is not provided by '
                         'the headers under test"\n' % name)
            stubs.append(name)
    return ref_root, ours_root, present, stubs


# --------------------------------------------------------------------------
# Compiler plumbing


class Compiler:
    def __init__(self, cc):
        self.cc = cc
        try:
            out = subprocess.run([cc, "--version"], capture_output=True,
                                 text=True, timeout=30).stdout
        except OSError as exc:
            raise SystemExit("conformance: cannot run compiler %r: %s" % (cc, exc))
        self.is_clang = "clang" in out
        self.base = [cc, "-std=gnu11", "-w", "-fno-diagnostics-color"]
        if self.is_clang:
            self.base += ["-ferror-limit=0", "-fno-caret-diagnostics"]
        else:
            self.base += ["-fmax-errors=0", "-fno-diagnostics-show-caret"]
        self.compiles = 0
        # root -> (flags before -I root, flags after it)
        self.flags_for = {}

    def run(self, src, root, syntax_only=True, exe=None):
        self.compiles += 1
        pre, post = self.flags_for.get(root, ([], []))
        cmd = list(self.base) + pre + ["-I", root] + post
        if syntax_only:
            cmd += ["-fsyntax-only", src]
        else:
            # Nothing the probe calls is defined out of line; should a header
            # still reference a library symbol, do not let that fail the link.
            cmd += ["-o", exe, src, "-Wl,--unresolved-symbols=ignore-all"]
        env = dict(os.environ, LC_ALL="C", LANG="C")
        p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=300)
        return p.returncode, p.stderr


DIAG_RE = re.compile(r"^(.*?):(\d+):(?:\d+:)? (fatal error|error|warning|note): (.*)$")
FUNC_RE = re.compile(r"In function .fdc_(\d+).")


def parse_errors(stderr, src):
    """Group diagnostics: one group per error, with its trailing notes.

    Returns a list of (message, [(file, line), ...], gcc_function_id).
    """
    groups = []
    cur_fn = None
    srcbase = os.path.basename(src)
    for line in stderr.splitlines():
        m = FUNC_RE.search(line)
        if m and "In function" in line and not DIAG_RE.match(line):
            cur_fn = int(m.group(1))
            continue
        m = DIAG_RE.match(line)
        if not m:
            continue
        path, lineno, sev, msg = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        loc = (os.path.basename(path) == srcbase, lineno, path)
        if sev in ("error", "fatal error"):
            groups.append([msg, [loc], cur_fn, sev])
        elif sev == "note" and groups:
            groups[-1][1].append(loc)
    return groups


class Probe:
    """A generated C file: prelude, includes, then one function per check."""

    PRELUDE = r"""
#include <stdio.h>
#include <stddef.h>
#define FDC_TN(e) _Generic((e), _Bool: "_Bool", char: "char", \
	signed char: "schar", unsigned char: "uchar", short: "short", \
	unsigned short: "ushort", int: "int", unsigned int: "uint", \
	long: "long", unsigned long: "ulong", long long: "llong", \
	unsigned long long: "ullong", default: "non-integer")
#define FDC_IS_INT(e) _Static_assert(_Generic((e), _Bool: 1, char: 1, \
	signed char: 1, unsigned char: 1, short: 1, unsigned short: 1, \
	int: 1, unsigned int: 1, long: 1, unsigned long: 1, long long: 1, \
	unsigned long long: 1, default: 0), "not of integer type")
#define FDC_IS_ICE(e) _Static_assert((e) == (e) || 1, "not an integer constant expression")
#define FDC_IS_STR(e) _Static_assert(_Generic((e), char *: 1, \
	const char *: 1, default: 0), "not a string")
#define FDC_COMPAT(a, b) _Static_assert(__builtin_types_compatible_p(a, b), \
	"types are not compatible")
static void fdc_int(int id, const char *tn, int neg, long long s,
		    unsigned long long u)
{
	if (neg)
		printf("%d\t%s %lld\n", id, tn, s);
	else
		printf("%d\t%s %llu\n", id, tn, u);
}
#define FDC_INT(id, e) fdc_int(id, FDC_TN(e), (e) < 0, \
	(long long)(e), (unsigned long long)(e))
#define FDC_OUT(id, ...) printf("%d\t", id), printf(__VA_ARGS__), printf("\n")
#define FDC_MISSING(id) printf("%d\tMISSING\n", id)
"""

    def __init__(self, path, includes, sys_includes=()):
        self.path = path
        self.includes = includes
        self.sys_includes = sys_includes

    def render(self, checks):
        lines = [l for l in self.PRELUDE.strip("\n").split("\n")]
        for h in self.sys_includes:
            lines.append("#include <%s>" % h)
        for h in self.includes:
            lines.append("#include <rdma/%s>" % h)
        spans = []
        for c in checks:
            start = len(lines) + 1
            lines.append("static void fdc_%d(void)" % c.id)
            lines.append("{")
            lines.extend("\t" + b if not b.startswith("#") else b for b in c.body)
            lines.append("}")
            spans.append((start, len(lines), c.id))
        lines.append("int main(void)")
        lines.append("{")
        for c in checks:
            lines.append("\tfdc_%d();" % c.id)
        lines.append("\treturn 0;")
        lines.append("}")
        with open(self.path, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        return spans


def locate(groups, spans):
    """Map each error group to the check whose function it points into."""
    import bisect as _b
    starts = [s[0] for s in spans]
    hits = {}
    unmapped = []
    for msg, locs, fn, _sev in groups:
        cid = None
        for in_src, line, _path in locs:
            if not in_src:
                continue
            i = _b.bisect_right(starts, line) - 1
            if i >= 0 and spans[i][0] <= line <= spans[i][1]:
                cid = spans[i][2]
                break
        if cid is None and fn is not None:
            cid = fn
        if cid is None:
            unmapped.append(msg)
        else:
            hits.setdefault(cid, msg)
    return hits, unmapped


def find_failures(comp, probe, root, checks, deadline):
    """Return {check id: first error message} for the checks that do not
    compile on this tree.  Errors are pinned by line; what cannot be pinned
    is found by bisection."""
    failed = {}
    live = list(checks)
    for _round in range(40):
        if not live:
            break
        spans = probe.render(live)
        rc, err = comp.run(probe.path, root)
        if rc == 0:
            break
        hits, unmapped = locate(parse_errors(err, probe.path), spans)
        hits = {k: v for k, v in hits.items() if any(c.id == k for c in live)}
        if not hits:
            if time.time() > deadline:
                raise RuntimeError("time budget exhausted; unplaced errors:\n"
                                   + "\n".join(unmapped[:10]))
            spans = probe.render([])
            rc0, err0 = comp.run(probe.path, root)
            if rc0 != 0:
                raise RuntimeError("the headers alone do not compile:\n" + err0)
            note("bisecting %d checks (%s)" % (len(live), unmapped[:1]))
            failed.update(_bisect(comp, probe, root, live, deadline))
            break
        failed.update(hits)
        live = [c for c in live if c.id not in hits]
    # A cascading error can blame an innocent neighbour.  Retry the accused
    # on their own (one batch) and acquit those that then compile.
    if failed:
        accused = [c for c in checks if c.id in failed]
        spans = probe.render(accused)
        rc, err = comp.run(probe.path, root)
        if rc == 0:
            failed = {}
        else:
            hits, unmapped = locate(parse_errors(err, probe.path), spans)
            if not unmapped:
                for cid in list(failed):
                    if cid not in hits:
                        note("acquitted check %d" % cid)
                        del failed[cid]
    return failed


def _bisect(comp, probe, root, live, deadline=None):
    if deadline is not None and time.time() > deadline:
        raise RuntimeError("time budget exhausted while bisecting")
    probe.render(live)
    rc, err = comp.run(probe.path, root)
    if rc == 0:
        return {}
    if len(live) == 1:
        groups = parse_errors(err, probe.path)
        msg = groups[0][0] if groups else err.strip().splitlines()[-1:] or ["?"]
        return {live[0].id: msg if isinstance(msg, str) else msg[0]}
    mid = len(live) // 2
    out = _bisect(comp, probe, root, live[:mid], deadline)
    out.update(_bisect(comp, probe, root, live[mid:], deadline))
    return out


def build_and_run(comp, probe, root, checks):
    probe.render(checks)
    exe = probe.path[:-2]
    rc, err = comp.run(probe.path, root, syntax_only=False, exe=exe)
    if rc != 0:
        raise RuntimeError("probe %s failed to link:\n%s" % (probe.path, err))
    p = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError("probe %s exited with %d" % (exe, p.returncode))
    out = {}
    for line in p.stdout.splitlines():
        cid, _, val = line.partition("\t")
        out[int(cid)] = val
    return out


# --------------------------------------------------------------------------
# Reading the reference


def scan_macros(cc, root, headers, scope_files):
    """Macros defined by the in-scope headers, in definition order."""
    src = os.path.join(root, "..", "macros.c")
    with open(src, "w") as fh:
        for h in headers:
            fh.write("#include <rdma/%s>\n" % h)
    p = subprocess.run([cc, "-E", "-dD", "-I", root, src], capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError("preprocessing the reference failed:\n" + p.stderr)
    macros = {}
    cur = None
    for line in p.stdout.splitlines():
        m = re.match(r'# \d+ "([^"]*)"', line)
        if m:
            cur = os.path.normpath(m.group(1))
            continue
        m = re.match(r"#define (\w+)(\([^)]*\))?(?:\s+(.*))?$", line)
        if m and cur in scope_files and m.group(1) not in macros:
            params = None
            if m.group(2) is not None:
                params = [x.strip() for x in m.group(2)[1:-1].split(",") if x.strip()]
            macros[m.group(1)] = (scope_files[cur], params, (m.group(3) or "").strip())
    return macros


def include_closure(cc, root, header, scope_files):
    """In-scope headers that become visible by including <rdma/header>."""
    p = subprocess.run([cc, "-E", "-I", root, "-x", "c", "-"],
                       input="#include <rdma/%s>\n" % header,
                       capture_output=True, text=True)
    seen = set()
    for m in re.finditer(r'^# \d+ "([^"]*)"', p.stdout, re.M):
        f = os.path.normpath(m.group(1))
        if f in scope_files:
            seen.add(scope_files[f])
    return seen


def system_includes(refroot, headers):
    """System headers the reference pulls in, so probes can name their types
    (pthread_mutex_t, struct iovec, ...) regardless of what ours includes."""
    out = []
    for h in headers:
        in_win = False
        with open(os.path.join(refroot, "rdma", h)) as fh:
            for line in fh:
                if re.match(r"\s*#\s*if.*_WIN32", line):
                    in_win = True
                elif re.match(r"\s*#\s*(endif|else|elif)", line):
                    in_win = False
                m = re.match(r"\s*#\s*include\s*<([^>]+)>", line)
                if m and not in_win and not m.group(1).startswith("rdma/") \
                        and m.group(1) not in out:
                    out.append(m.group(1))
    return out


def load_ast(clang, root, headers, work, flags=()):
    src = os.path.join(work, "ast.c")
    with open(src, "w") as fh:
        for h in headers:
            fh.write("#include <rdma/%s>\n" % h)
    p = subprocess.run([clang, "-Xclang", "-ast-dump=json", "-fsyntax-only",
                        "-std=gnu11", "-w"] + list(flags) + ["-I", root, src],
                       capture_output=True, text=True)
    if not p.stdout.strip():
        return None, p.stderr
    ast = json.loads(p.stdout)
    annotate_files(ast)
    return ast, (p.stderr if p.returncode else "")


def annotate_files(ast):
    """clang's JSON prints a location's file only when it changes from the
    previously printed location, in document order.  Replay that order and
    stamp every declaration with the file of its (expansion) location."""
    cur = [None]

    def bare(loc):
        if not isinstance(loc, dict):
            return
        if "spellingLoc" in loc or "expansionLoc" in loc:
            bare(loc.get("spellingLoc"))
            bare(loc.get("expansionLoc"))
            return
        if "file" in loc:
            cur[0] = loc["file"]

    stack = [ast]
    # Iterative pre-order walk; children pushed in reverse keep the order.
    while stack:
        x = stack.pop()
        if isinstance(x, list):
            stack.extend(reversed(x))
            continue
        if not isinstance(x, dict):
            continue
        if "__loc" in x:          # deferred location marker
            bare(x["__loc"])
            continue
        if "__stamp" in x:
            x["__stamp"]["_file"] = cur[0]
            continue
        todo = []
        for k, v in x.items():
            if k == "loc":
                todo.append({"__loc": v})
                if "kind" in x:
                    todo.append({"__stamp": x})
            elif k == "range" and isinstance(v, dict):
                todo.append({"__loc": v.get("begin")})
                todo.append({"__loc": v.get("end")})
            elif k == "includedFrom":
                continue
            elif isinstance(v, dict) and ("offset" in v or "spellingLoc" in v):
                todo.append({"__loc": v})
            elif isinstance(v, (dict, list)):
                todo.append(v)
        stack.extend(reversed(todo))


def usable_type(t):
    return t and "(unnamed" not in t and "(anonymous" not in t


class Entity:
    def __init__(self, name, header, kind):
        self.name = name
        self.header = header
        self.kind = kind


class Check:
    __slots__ = ("id", "entity", "aspect", "body", "runtime", "expect", "alts")

    def __init__(self, entity, aspect, body, runtime=True):
        self.id = 0
        self.entity = entity
        self.aspect = aspect
        self.body = body
        self.runtime = runtime
        self.expect = None
        self.alts = []


def collect_decls(ast, scope_files):
    """Walk the top level (and record bodies, where C also declares tags) of
    the reference AST and return the in-scope declarations."""
    out = {"records": {}, "enums": [], "typedefs": {}, "functions": {}, "vars": {}}

    def home(n):
        f = n.get("_file")
        return scope_files.get(os.path.normpath(f)) if f else None

    def visit(n):
        kind = n.get("kind")
        h = home(n)
        if kind == "RecordDecl":
            if h and n.get("name") and n.get("completeDefinition"):
                key = "%s %s" % (n.get("tagUsed", "struct"), n["name"])
                out["records"].setdefault(key, (h, n))
            for c in n.get("inner", []):
                if c.get("kind") in ("RecordDecl", "EnumDecl"):
                    visit(c)
        elif kind == "EnumDecl":
            if h and n.get("inner"):
                out["enums"].append((h, n))
        elif kind == "TypedefDecl":
            if h and n.get("name"):
                out["typedefs"].setdefault(n["name"], (h, n))
        elif kind == "FunctionDecl":
            if h and n.get("name"):
                prev = out["functions"].get(n["name"])
                if prev is None:
                    out["functions"][n["name"]] = (h, n)
        elif kind == "VarDecl":
            if h and n.get("name"):
                out["vars"].setdefault(n["name"], (h, n))

    for n in ast.get("inner", []):
        visit(n)
    return out


def record_fields(rec, prefix=""):
    """Yield (path, type text or None, is_bitfield) for every field reachable
    by name, descending into anonymous members and unnamed inline types."""
    inner = rec.get("inner", [])
    pending = None
    for c in inner:
        k = c.get("kind")
        if k == "RecordDecl":
            pending = c if not c.get("name") else None
            continue
        if k != "FieldDecl":
            continue
        name = c.get("name")
        qt = c.get("type", {}).get("qualType", "")
        anon_type = "(anonymous" in qt or "(unnamed" in qt
        if anon_type and pending is not None:
            sub = pending
            pending = None
            if name:
                yield prefix + name, None, False, {}
                for f in record_fields(sub, prefix + name + "."):
                    yield f
            else:
                for f in record_fields(sub, prefix):
                    yield f
            continue
        pending = None
        if name:
            yield (prefix + name, qt if usable_type(qt) else None,
                   bool(c.get("isBitfield")), c.get("type", {}))


def type_map(decls):
    """Entity name -> clang type dict, for functions, typedefs and fields."""
    out = {}
    for name, (_h, n) in decls["functions"].items():
        out[name + "()"] = n.get("type", {})
    for name, (_h, n) in decls["typedefs"].items():
        out[name] = n.get("type", {})
    for key, (_h, n) in decls["records"].items():
        for path, _qt, _bf, t in record_fields(n):
            out["%s.%s" % (key, path)] = t
    return out


def enum_tags(t):
    text = " ".join(t.get(k, "") for k in ("qualType", "desugaredQualType"))
    return sorted(set(re.findall(r"\benum\s+(\w+)", text)))


def build_checks(macros, decls):
    """Turn the reference's declarations into probe checks."""
    entities = []
    checks = []

    def add(ent, aspect, body, runtime=True):
        c = Check(ent, aspect, body, runtime)
        checks.append(c)
        return c

    # Macros.  The classification (integer / string / bare) is settled later
    # by compiling against the reference; start with the most specific kind.
    for name, (h, params, body) in macros.items():
        ent = Entity(name, h, "macro")
        entities.append(ent)
        if params is None:
            if body == "":
                c = add(ent, "defined", _macro_defined(name))
            else:
                c = add(ent, "value", _macro_int(name))
                c.alts = [_macro_str(name), _macro_defined(name)]
        else:
            c = add(ent, "defined", _macro_defined(name))
            if params and all(re.match(r"^\w+$", p) for p in params):
                args = ["0x10011", "0x20003", "7", "9", "11", "13"][:len(params)]
                for tag, a in (("value(%s)" % ",".join(args), args),
                               ("value(%s)" % ",".join(reversed(args)), list(reversed(args)))):
                    if a == args and tag != "value(%s)" % ",".join(args):
                        break         # one parameter: the reversed call is the same
                    c2 = add(ent, tag, _macro_call(name, a))
                    c2.alts = [None]      # dropped if the reference rejects it

    # Enumerations.
    for h, n in decls["enums"]:
        if n.get("name"):
            ent = Entity("enum " + n["name"], h, "enum")
            entities.append(ent)
            add(ent, "size", ['FDC_OUT(@ID@, "%%zu", sizeof(enum %s));' % n["name"]])
        for c in n.get("inner", []):
            if c.get("kind") != "EnumConstantDecl":
                continue
            ent = Entity(c["name"], h, "enumerator")
            ent.enum = n.get("name")
            entities.append(ent)
            add(ent, "value", ["FDC_INT(@ID@, %s);" % c["name"],
                               "FDC_IS_ICE(%s);" % c["name"]])

    # Structures and unions.
    for key, (h, n) in decls["records"].items():
        ent = Entity(key, h, "record")
        entities.append(ent)
        add(ent, "size", ['FDC_OUT(@ID@, "size=%%zu align=%%zu", sizeof(%s), _Alignof(%s));'
                          % (key, key)])
        for path, qt, bitfield, _t in record_fields(n):
            fent = Entity("%s.%s" % (key, path), h, "field")
            entities.append(fent)
            member = "((%s *)0)->%s" % (key, path)
            if bitfield:
                add(fent, "present", ["(void)sizeof(%s + 0);" % member,
                                      'FDC_OUT(@ID@, "bitfield");'])
                continue
            if qt is not None and qt.endswith("[]"):
                add(fent, "offset", ['FDC_OUT(@ID@, "off=%%zu", offsetof(%s, %s));'
                                     % (key, path)])
            else:
                add(fent, "offset", ['FDC_OUT(@ID@, "off=%%zu size=%%zu", offsetof(%s, %s), sizeof(%s));'
                                     % (key, path, member)])
            if qt is not None:
                c = add(fent, "type", ["FDC_COMPAT(__typeof__(%s), %s);" % (member, qt)],
                        runtime=False)
                c.expect = qt
                c.alts = [None]

    # Typedefs.
    for name, (h, n) in decls["typedefs"].items():
        ent = Entity(name, h, "typedef")
        entities.append(ent)
        qt = n.get("type", {}).get("qualType", "")
        c = add(ent, "size", ['FDC_OUT(@ID@, "%%zu", sizeof(%s));' % name])
        c.alts = [_presence_type(name)]
        if usable_type(qt):
            c = add(ent, "type", ["FDC_COMPAT(%s, %s);" % (name, qt)], runtime=False)
            c.expect = qt
            c.alts = [None]

    # Functions: the signature must be compatible with the reference's.
    for name, (h, n) in decls["functions"].items():
        ent = Entity(name + "()", h, "function")
        ent.fname = name
        ent.static_inline = n.get("storageClass") == "static"
        entities.append(ent)
        qt = n.get("type", {}).get("qualType", "")
        c = add(ent, "signature",
                ["FDC_COMPAT(__typeof__(&%s), __typeof__(%s) *);" % (name, qt),
                 'FDC_OUT(@ID@, "declared");'])
        c.expect = qt

    for name, (h, n) in decls["vars"].items():
        ent = Entity(name, h, "variable")
        entities.append(ent)
        qt = n.get("type", {}).get("qualType", "")
        c = add(ent, "type", ["FDC_COMPAT(__typeof__(%s), %s);" % (name, qt),
                              'FDC_OUT(@ID@, "declared");'])
        c.expect = qt

    for i, c in enumerate(checks):
        c.id = i + 1
        c.body = [_fill(b, c.id) for b in c.body]
        c.alts = [None if a is None else [_fill(b, c.id) for b in a] for a in c.alts]
    return entities, checks


def _fill(line, cid):
    return line.replace("@ID@", str(cid))


def _macro_int(name):
    return ["#ifdef %s" % name, "FDC_IS_INT(%s);" % name, "FDC_IS_ICE(%s);" % name,
            "FDC_INT(@ID@, %s);" % name, "#else", "FDC_MISSING(@ID@);", "#endif"]


def _macro_str(name):
    return ["#ifdef %s" % name, "FDC_IS_STR(%s);" % name,
            'FDC_OUT(@ID@, "str \\"%%s\\"", %s);' % name, "#else",
            "FDC_MISSING(@ID@);", "#endif"]


def _macro_defined(name):
    return ["#ifdef %s" % name, 'FDC_OUT(@ID@, "defined");', "#else",
            "FDC_MISSING(@ID@);", "#endif"]


def _macro_call(name, args):
    e = "%s(%s)" % (name, ", ".join(args))
    return ["#ifdef %s" % name, "FDC_IS_INT(%s);" % e, "FDC_IS_ICE(%s);" % e,
            "FDC_INT(@ID@, %s);" % e, "#else", "FDC_MISSING(@ID@);", "#endif"]


def _presence_type(name):
    return ["(void)(%s *)0;" % name, 'FDC_OUT(@ID@, "declared");']


# --------------------------------------------------------------------------
# FABRIC_DIRECT hook placement (a text scan: the hooks are preprocessor
# structure, which no AST keeps)


def direct_hooks(path):
    """Ordered (directive, subject) pairs that involve FABRIC_DIRECT."""
    try:
        with open(path) as fh:
            text = fh.read()
    except OSError:
        return None
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = text.replace("\\\n", " ")
    seq = []
    for line in text.splitlines():
        m = re.match(r"\s*#\s*(\w+)\s*(.*)$", line)
        if not m:
            continue
        d, rest = m.group(1), m.group(2).strip()
        if d == "include":
            mi = re.match(r"[<\"](rdma/fi_direct[^>\"]*)[>\"]", rest)
            if mi:
                seq.append(("include", mi.group(1)))
            continue
        names = re.findall(r"\bFABRIC_DIRECT\w*", rest)
        if not names:
            continue
        if d == "ifdef":
            seq.append(("if defined", names[0]))
        elif d == "ifndef":
            seq.append(("if !defined", names[0]))
        elif d in ("if", "elif"):
            neg = re.match(r"!\s*defined", rest) is not None
            form = ("if !defined" if neg else "if defined") if d == "if" else d
            seq.append((form, " ".join(names)))
        elif d in ("define", "undef"):
            seq.append((d, names[0]))
    return seq


def early_def_includes(seq):
    """Indices of `#include <rdma/fi_direct_X_def.h>` lines that sit inside
    an `#ifdef FABRIC_DIRECT` and precede a test of FABRIC_DIRECT_X_DEF in
    the same header.

    Upstream tests FABRIC_DIRECT_COLLECTIVE_DEF in fi_domain.h but includes
    the header defining it only later, from fi_collective.h, so a direct
    build never sees it in time.  Pulling the _def header in early, right
    where its guard is tested, is the fix; it is the one deviation from the
    reference's hook sequence we accept."""
    out = []
    for i, (d, subj) in enumerate(seq):
        m = re.match(r"rdma/fi_direct_(\w+_def)\.h$", subj) if d == "include" else None
        if not m:
            continue
        guard = "FABRIC_DIRECT_" + m.group(1).upper()
        opened = any(seq[j] == ("if defined", "FABRIC_DIRECT") for j in range(i))
        later = any(x == ("if !defined", guard) for x in seq[i + 1:])
        if opened and later:
            out.append(i)
    return out


def check_hooks(ref_root, ours_root, headers, present):
    problems, notes = [], []
    for h in headers:
        ref = direct_hooks(os.path.join(ref_root, "rdma", h))
        if h not in present:
            continue
        ours = direct_hooks(os.path.join(ours_root, "rdma", h))
        if ref == ours:
            continue
        allowed = set(early_def_includes(ours or []))
        extra = []
        clean = ours is not None
        sm = difflib.SequenceMatcher(a=ref, b=ours or [], autojunk=False)
        for op, _a0, _a1, b0, b1 in sm.get_opcodes():
            if op == "equal":
                continue
            if op == "insert" and all(i in allowed for i in range(b0, b1)):
                extra.extend(range(b0, b1))
            else:
                clean = False
        if clean and extra:
            notes.append("%s also includes %s before testing its guard (accepted: "
                         "upstream tests that guard too early)"
                         % (h, ", ".join("<%s>" % ours[i][1] for i in extra)))
            continue
        problems.append((h, ref, ours))
    return problems, notes


# --------------------------------------------------------------------------


def main():
    global VERBOSE
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ours", required=True,
                    help="our include dir (holding rdma/) or include/rdma itself")
    ap.add_argument("--reference", default="/usr/include/rdma",
                    help="libfabric 1.17 headers (default /usr/include/rdma)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"),
                    help="C compiler for the probes (default $CC or cc)")
    ap.add_argument("--clang", default="clang", help="clang used to read the AST")
    ap.add_argument("--out", help="work directory (default: a fresh temp dir)")
    ap.add_argument("--only", help="comma-separated reference headers to report on")
    ap.add_argument("--strict-guards", action="store_true",
                    help="also require the reference's include-guard macro names")
    ap.add_argument("--providers", choices=("auto", "yes", "no"), default="auto",
                    help="check rdma/providers/*.h too (auto: if ours ships any)")
    ap.add_argument("--direct", metavar="DIR",
                    help="also check a FABRIC_DIRECT build: DIR holds rdma/fi_direct_*.h "
                         "(include/fabric_direct)")
    ap.add_argument("--direct-include", metavar="DIR", action="append", default=[],
                    help="extra include dir for the FABRIC_DIRECT build (repeatable; "
                         "e.g. prov_verbs/include and <build>/include)")
    ap.add_argument("--json", help="also write the findings to this file")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    VERBOSE = args.verbose
    t0 = time.time()
    deadline = t0 + 240

    refdir = rdma_dir(args.reference)
    if not os.path.isfile(os.path.join(refdir, "fabric.h")):
        print("conformance: SKIP: reference headers not found (%s/fabric.h); "
              "install libfabric-dev" % refdir)
        return SKIP
    if shutil.which(args.clang) is None:
        print("conformance: ERROR: %s not found (needed to read the reference "
              "AST; apt-get install clang)" % args.clang, file=sys.stderr)
        return 2
    oursdir = rdma_dir(args.ours)
    work = os.path.abspath(args.out) if args.out else tempfile.mkdtemp(prefix="fd-conformance.")
    os.makedirs(work, exist_ok=True)
    try:
        return run(args, refdir, oursdir, work, t0, deadline)
    finally:
        if not args.out:
            shutil.rmtree(work, ignore_errors=True)


def run(args, refdir, oursdir, work, t0, deadline):
    comp = Compiler(args.cc)

    ref_root, ours_root, present, _stubs = stage_trees(refdir, oursdir, work)
    with_prov = args.providers == "yes" or (
        args.providers == "auto" and any(p.startswith("providers/") for p in present))
    headers = scope_headers(refdir, with_prov)
    scope_files = {os.path.normpath(os.path.join(ref_root, "rdma", h)): h for h in headers}
    sys_inc = system_includes(ref_root, headers)

    # ---- the reference: what exists and what it evaluates to
    macros = scan_macros(args.clang, ref_root, headers, scope_files)
    guards = set()
    for h in headers:
        with open(os.path.join(ref_root, "rdma", h)) as fh:
            m = re.search(r"^\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+\1\s*$",
                          fh.read(), re.M)
            if m:
                guards.add(m.group(1))
    ast, err = load_ast(args.clang, ref_root, headers, work)
    if ast is None:
        print("conformance: ERROR: clang could not parse the reference:\n" + err,
              file=sys.stderr)
        return 2
    decls = collect_decls(ast, scope_files)
    entities, checks = build_checks(macros, decls)
    ref_tmap = type_map(decls)
    note("%d entities, %d checks from the reference" % (len(entities), len(checks)))

    ref_probe = Probe(os.path.join(work, "probe_ref.c"), headers, sys_inc)
    pending = list(checks)
    dropped = []
    for _ in range(4):
        bad = find_failures(comp, ref_probe, ref_root, pending, deadline)
        if not bad:
            break
        for c in pending:
            if c.id in bad:
                if c.alts:
                    nxt = c.alts.pop(0)
                    if nxt is None:
                        dropped.append((c, bad[c.id]))
                        c.body = None
                    else:
                        c.body = nxt
                else:
                    dropped.append((c, bad[c.id]))
                    c.body = None
        pending = [c for c in pending if c.body is not None]
    checks = pending
    for c, msg in dropped:
        note("not checkable on the reference: %s %s (%s)" % (c.entity.name, c.aspect, msg))
    ref_vals = build_and_run(comp, ref_probe, ref_root, checks)

    def evaluate(ours_root, clang_flags):
        # ---- ours: which headers compile at all
        results = {}   # entity id -> list of (aspect, message)
        header_errors = {}
        usable = []
        for h in headers:
            if h not in present:
                header_errors[h] = "missing"
                continue
            src = os.path.join(work, "alone_%s.c" % re.sub(r"\W", "_", h))
            with open(src, "w") as fh:
                fh.write("#include <rdma/%s>\n" % h)
            rc, err = comp.run(src, ours_root)
            if rc != 0:
                groups = parse_errors(err, src)
                first = groups[0] if groups else None
                msg = "does not compile"
                if first:
                    msg += ": %s:%d: %s" % (os.path.relpath(first[1][0][2], ours_root)
                                            if first[1][0][2].startswith(ours_root)
                                            else first[1][0][2], first[1][0][1], first[0])
                header_errors[h] = msg
            else:
                usable.append(h)

        # Headers that compile alone may still clash with each other (or
        # with the system headers the probe adds); keep the largest prefix-
        # greedy set that compiles together and report the rest.
        together = []
        for h in usable:
            p = Probe(os.path.join(work, "probe_together.c"), together + [h], sys_inc)
            p.render([])
            rc, err = comp.run(p.path, ours_root)
            if rc == 0:
                together.append(h)
            else:
                groups = parse_errors(err, p.path)
                header_errors[h] = "does not compile together with %s: %s" % (
                    ", ".join(together) or "the system headers",
                    groups[0][0] if groups else "?")
        usable = together

        ours_probe = Probe(os.path.join(work, "probe_ours.c"), usable, sys_inc)
        bad = find_failures(comp, ours_probe, ours_root, checks, deadline)
        good = [c for c in checks if c.id not in bad]
        ours_vals = build_and_run(comp, ours_probe, ours_root, good) if good else {}

        def fail(ent, aspect, msg):
            results.setdefault(id(ent), []).append((aspect, msg))

        missing_re = re.compile(r"undeclared|no member named|has no member|unknown type|incomplete definition|"
                                r"incomplete type|isn't known|implicit declaration|"
                                r"not declared|undefined|use of undeclared|"
                                r"storage size|must use .(struct|union|enum).|"
                                r"not provided by the headers under test|"
                                r"expected expression|expected .\)|expected specifier")
        for c in checks:
            if c.id in bad:
                msg = bad[c.id]
                if c.aspect == "type" or c.aspect == "signature":
                    if "not compatible" in msg:
                        fail(c.entity, c.aspect, "differs; reference type is `%s`" % c.expect)
                        continue
                kind = "missing" if missing_re.search(msg) else "compile error"
                fail(c.entity, c.aspect, "%s (%s)" % (kind, msg))
                continue
            if not c.runtime:
                continue
            rv, ov = ref_vals.get(c.id), ours_vals.get(c.id)
            if ov == "MISSING":
                fail(c.entity, c.aspect, "missing (not defined)")
            elif rv != ov:
                fail(c.entity, c.aspect, "expected %s, got %s" % (rv, ov))

        # Linkage and enum membership need ours' declarations, not just types.
        pre, post = comp.flags_for.get(ours_root, ([], []))
        ours_ast, _ = (load_ast(args.clang, ours_root, usable, work, pre + post)
                       if usable else (None, ""))
        if ours_ast is not None:
            ours_files = {os.path.normpath(os.path.join(ours_root, "rdma", h)): h
                          for h in present}
            if clang_flags and args.direct:
                # In the direct build the wrappers come from fi_direct_*.h.
                ddir = os.path.join(os.path.abspath(args.direct), "rdma")
                for f in (os.listdir(ddir) if os.path.isdir(ddir) else []):
                    ours_files[os.path.normpath(os.path.join(ddir, f))] = f
            od = collect_decls(ours_ast, ours_files)
            enum_of = {}
            for _h, n in od["enums"]:
                for c in n.get("inner", []):
                    if c.get("kind") == "EnumConstantDecl":
                        enum_of[c["name"]] = n.get("name")
            ours_tmap = type_map(od)
            ours_types = {k: v.get("qualType") for k, v in ours_tmap.items()}
            # __builtin_types_compatible_p equates an enum with its underlying
            # integer type; an enum field that became a plain integer (or the
            # reverse) is still a source-level difference, so compare the enum
            # tags spelled in both types.
            for ent in entities:
                if ent.kind not in ("field", "typedef", "function"):
                    continue
                rt, ot = ref_tmap.get(ent.name), ours_tmap.get(ent.name)
                if rt is None or ot is None:
                    continue
                re_, oe = enum_tags(rt), enum_tags(ot)
                if re_ != oe:
                    fail(ent, "enum type", "reference uses %s, ours %s (`%s`)" % (
                        " ".join(re_) or "no enum", " ".join(oe) or "no enum",
                        ot.get("qualType")))
            for ent in entities:
                probs = results.get(id(ent), [])
                for i, (a, m) in enumerate(probs):
                    if m.startswith("differs") and ours_types.get(ent.name):
                        probs[i] = (a, m + ", ours is `%s`" % ours_types[ent.name])
            for ent in entities:
                if ent.kind == "function" and ent.fname in od["functions"]:
                    theirs = od["functions"][ent.fname][1].get("storageClass") == "static"
                    if theirs != ent.static_inline:
                        fail(ent, "linkage", "reference declares it %s, ours %s" % (
                            "static inline" if ent.static_inline else "extern",
                            "static" if theirs else "extern"))
                elif ent.kind == "enumerator" and ent.name in enum_of:
                    if enum_of[ent.name] != ent.enum:
                        fail(ent, "enum", "belongs to %s in the reference, to %s in ours" % (
                            "enum " + ent.enum if ent.enum else "an anonymous enum",
                            "enum " + enum_of[ent.name] if enum_of[ent.name]
                            else "an anonymous enum"))

        # Visibility: what <rdma/H> makes visible in the reference must be
        # visible from ours' <rdma/H> alone.  Fields ride along with their
        # record, so only top-level names are probed.
        closure = {h: include_closure(args.clang, ref_root, h, scope_files) for h in headers}
        first_per_entity = {}
        for c in checks:
            if c.entity.kind == "field" or id(c.entity) in results:
                continue
            first_per_entity.setdefault(id(c.entity), c)
        visibility = {}    # (through, home) -> [entity]
        for h in usable:
            vis = [c for c in first_per_entity.values()
                   if c.entity.header in closure[h] and c.entity.header != h]
            if not vis:
                continue
            p = Probe(os.path.join(work, "probe_vis.c"), [h])
            vbad = find_failures(comp, p, ours_root, vis, deadline)
            # A macro check is wrapped in #ifdef and compiles either way: run it.
            rest = [c for c in vis if c.id not in vbad and c.entity.kind == "macro"]
            vals = build_and_run(comp, p, ours_root, rest) if rest else {}
            for c in vis:
                if c.entity.name in guards and not args.strict_guards:
                    continue
                if c.id in vbad or vals.get(c.id) == "MISSING":
                    visibility.setdefault((h, c.entity.header), []).append(c.entity)
        return dict(header_errors=header_errors, usable=usable, results=results,
                    visibility=visibility)

    def report(o, label):
        header_errors, results, visibility = o["header_errors"], o["results"], o["visibility"]
        def wanted(h):
            return only is None or h in only

        counted = [e for e in entities if wanted(e.header)]
        guard_notes = sorted(e.name for e in counted if e.kind == "macro"
                             and e.name in guards and id(e) in results
                             and not args.strict_guards)
        failing = [e for e in counted if id(e) in results and e.name not in guard_notes]
        by_name = {e.name: e for e in entities}

        def is_missing(ent):
            probs = results.get(id(ent), [])
            return probs and all(m.startswith("missing") for _, m in probs)

        # Condense: a missing header hides its entities (ours has none of them);
        # a missing record hides its fields; after the first field of a record
        # that moved, later fields that merely moved with it are only counted.
        shown = []
        hidden_by_header = {}
        shifted = {}
        moved_in = set()
        for ent in failing:
            if ent.header in header_errors and is_missing(ent) and not VERBOSE:
                hidden_by_header[ent.header] = hidden_by_header.get(ent.header, 0) + 1
                continue
            if ent.kind == "field":
                rec = ent.name.split(".", 1)[0]
                if is_missing(by_name.get(rec)) and not VERBOSE:
                    continue
                probs = results[id(ent)]
                only_moved = all(a == "offset" and _same_size_moved(m) for a, m in probs)
                if only_moved and rec in moved_in and not VERBOSE:
                    shifted[rec] = shifted.get(rec, 0) + 1
                    continue
                if any(a == "offset" for a, _ in probs):
                    moved_in.add(rec)
            shown.append(ent)

        for h in headers:
            if wanted(h) and h in header_errors:
                extra = ""
                if h in hidden_by_header:
                    extra = " (%d of its entities unavailable in ours as a result; -v lists them)" % hidden_by_header[h]
                print("%sHEADER %s: %s%s" % (label, h, header_errors[h], extra))
        for ent in shown:
            probs = results[id(ent)]
            if is_missing(ent):
                text = probs[0][1]
            else:
                text = "; ".join("%s: %s" % (a, m) for a, m in probs)
            if ent.kind == "record":
                nf = sum(1 for e in entities if e.kind == "field"
                         and e.name.startswith(ent.name + "."))
                if is_missing(ent):
                    text += " (with its %d fields)" % nf
                elif ent.name in shifted:
                    text += " (%d later fields moved with it)" % shifted[ent.name]
            print("%sFAIL %-36s [%s] %s" % (label, ent.name, ent.header, text))
        for rec, n in shifted.items():
            ent = by_name[rec]
            if ent not in shown:
                print(label + "FAIL %-36s [%s] layout: %d fields after the first moved one "
                      "are displaced too" % (rec, ent.header, n))
        for (through, home), ents in sorted(visibility.items()):
            if not wanted(home):
                continue
            names = [e.name for e in ents]
            lst = ", ".join(names if VERBOSE or len(names) <= 6 else names[:6] + ["..."])
            print(label + "FAIL <rdma/%s> alone does not make %d name(s) from %s visible, "
                  "as the reference does: %s" % (through, len(names), home, lst))
        my_hooks = [] if label else hooks
        for h, ref, ours in my_hooks:
            if not wanted(h):
                continue
            print("FAIL FABRIC_DIRECT hooks in %s differ from the reference:" % h)
            print("     reference: %s" % "; ".join("%s %s" % x for x in ref))
            print("     ours:      %s" % "; ".join("%s %s" % x for x in (ours or [])))
        for n in ([] if label else hook_notes):
            print("note: " + n)
        if guard_notes and not label:
            print("note: include guards named differently (not a failure; "
                  "--strict-guards enforces): %s" % ", ".join(guard_notes))

        vis_count = {}
        for (through, home), ents in visibility.items():
            vis_count[home] = vis_count.get(home, 0) + len(ents)
        print()
        print("%-22s %8s %8s %10s" % ("header", "entities", "failing", "invisible"))
        for h in headers:
            if not wanted(h):
                continue
            n = sum(1 for e in counted if e.header == h)
            f = sum(1 for e in failing if e.header == h)
            tag = "" if h not in header_errors else "  (%s)" % header_errors[h].split(":")[0]
            print("%-22s %8d %8d %10d%s" % (h, n, f, vis_count.get(h, 0), tag))
        hook_bad = [h for h, _, _ in my_hooks if wanted(h)]
        unusable = [h for h in header_errors if wanted(h)]
        vis_bad = sum(len(v) for (t, home), v in visibility.items() if wanted(home))
        ok = not failing and not hook_bad and not unusable and not vis_bad
        print(label + "conformance: %d entities checked (%d checks), %d failing, %d not "
              "visible where expected, %d header(s) unusable, %d hook mismatch(es); "
              "%d compiles, %.1f s: %s"
              % (len(counted), len(checks), len(failing), vis_bad, len(unusable),
                 len(hook_bad), comp.compiles, time.time() - t0,
                 "PASS" if ok else "FAIL"))
        o["json"] = {
                    "pass": ok,
                    "entities": len(counted),
                    "headers": {h: header_errors.get(h, "ok") for h in headers},
                    "failures": [{"name": e.name, "header": e.header, "kind": e.kind,
                                  "problems": [{"aspect": a, "message": m}
                                               for a, m in results[id(e)]]}
                                 for e in failing],
                    "invisible": [{"through": t, "home": hm, "names": [e.name for e in v]}
                                  for (t, hm), v in sorted(visibility.items())],
                    "hooks": [{"header": h, "reference": r, "ours": x} for h, r, x in my_hooks],
                }
        return ok

    only = set(args.only.split(",")) if args.only else None
    hooks, hook_notes = check_hooks(ref_root, ours_root, headers, present)
    outcomes = [("", evaluate(ours_root, []))]
    if args.direct:
        # Same tree, second copy, compiled the way a FABRIC_DIRECT
        # application sees it: the provider's fi_direct_*.h replace the
        # default wrappers, and everything must still match the reference.
        droot = os.path.join(work, "ours_direct")
        if os.path.isdir(droot):
            shutil.rmtree(droot)
        shutil.copytree(ours_root, droot)
        pre = ["-DFABRIC_DIRECT", "-I", os.path.abspath(args.direct)]
        post = []
        for d in args.direct_include:
            post += ["-I", os.path.abspath(d)]
        comp.flags_for[droot] = (pre, post)
        outcomes.append(("[FABRIC_DIRECT] ", evaluate(droot, pre + post)))
    ok = True
    js = {}
    for label, o in outcomes:
        if label:
            print()
            print("=== FABRIC_DIRECT build (%s) ===" % args.direct)
        ok = report(o, label) and ok
        js[label.strip() or "default"] = o["json"]
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(js, fh, indent=1)
    return 0 if ok else 1


def _same_size_moved(msg):
    m = re.match(r"expected off=\d+ size=(\d+), got off=\d+ size=(\d+)$", msg)
    return bool(m) and m.group(1) == m.group(2)



if __name__ == "__main__":
    sys.exit(main())
