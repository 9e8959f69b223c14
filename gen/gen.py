#!/usr/bin/env python3
"""Write the FABRIC_DIRECT wrappers and the OFF build's ops tables.

Inputs: gen/api.spec (which provider function implements which call) and the
public headers in include/rdma (the calls' signatures and default bodies).
Outputs (committed; never edit them by hand):
  include/fabric_direct/rdma/fi_direct*.h
  prov_verbs/verbs/fdv_ops_gen.c, prov_verbs/verbs/fdv_ops.h
  prov_verbs/verbs/fdv_ops_locked_gen.c      the OFF build's locked ops tables
  src/fd_enosys.c, src/include/fd_enosys.h   the shared -FI_ENOSYS stubs
  src/fabric-direct.map                      what a shared libfabric-direct exports:
                                             the public API and the FDV_EXPORT entry
                                             points of the installed inline headers

  gen/gen.py           regenerate in place
  gen/gen.py --check   exit 1 and name each output regeneration would change

Python 3 standard library only: a fresh Debian has everything it needs.
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC = "gen/api.spec"
DIRECT_DIR = "include/fabric_direct/rdma"
OPS_C = "prov_verbs/verbs/fdv_ops_gen.c"
OPS_H = "prov_verbs/verbs/fdv_ops.h"
OPS_LOCKED_C = "prov_verbs/verbs/fdv_ops_locked_gen.c"
ENOSYS_C = "src/fd_enosys.c"
ENOSYS_H = "src/include/fd_enosys.h"
# The public headers whose ops tables get a shared "not supported" stub per
# field; fi_ext.h's peer/owner tables are implemented by the application.
ENOSYS_HEADERS = ("fabric.h", "fi_domain.h", "fi_cm.h", "fi_endpoint.h", "fi_eq.h",
                  "fi_rma.h", "fi_tagged.h", "fi_atomic.h", "fi_collective.h")
# Whole "not supported" tables in the core (fd_no_ops_<name>, every field
# its fd_no_ stub), for an object to hand out for a set of calls it does not
# serve at all (a layer's endpoint without RMA, a DGRAM endpoint without
# fi_cancel or options, a domain without memory registration).
NO_OPS_STRUCTS = ("fi_ops_msg", "fi_ops_rma", "fi_ops_tagged", "fi_ops_atomic",
                  "fi_ops_collective", "fi_ops_ep", "fi_ops_cm", "fi_ops_mr")
REGEN = "python3 gen/gen.py"
# The version script of every shared libfabric-direct (CMakeLists.txt).
EXPORT_MAP = "src/fabric-direct.map"
EXPORT_NODE = "FABRIC_DIRECT_0"
# Where the public API is declared (fi_* functions that are not inline).
PUBLIC_DIRS = ("include/rdma", "include/rdma/providers")
# The installed inline headers besides the generated direct ones: every
# function they declare and do not define is the library's, and must be
# marked FDV_EXPORT (fdv/fdv_compiler.h) so that the map exports it.
INLINE_DIRS = ("prov_verbs/include/fdv",)
EXPORT_MARK = "FDV_EXPORT"

# Which ops struct a dispatch `obj->member->field(...)` goes through, keyed by
# the first parameter's struct and the member naming the table.
OPS_STRUCTS = {
    ("fid_ep", "msg"): "fi_ops_msg",
    ("fid_ep", "rma"): "fi_ops_rma",
    ("fid_ep", "tagged"): "fi_ops_tagged",
    ("fid_ep", "atomic"): "fi_ops_atomic",
    ("fid_ep", "collective"): "fi_ops_collective",
    ("fid_cq", "ops"): "fi_ops_cq",
}


# ops struct -> fields the locked tables call without the object's lock
# (from @unlocked in the spec; filled by parse_spec).
UNLOCKED = {}


class GenError(Exception):
    pass


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


# --------------------------------------------------------------------------
# Spec
# --------------------------------------------------------------------------
class Header:
    def __init__(self, name, public, guard, includes, line):
        self.name = name          # "endpoint", or "-" for fi_direct.h
        self.public = public      # "fi_endpoint.h"
        self.guard = guard        # "FABRIC_DIRECT_ENDPOINT" or None
        self.includes = includes  # provider headers
        self.calls = {}           # call -> {ep_type or None: impl}
        self.line = line

    @property
    def filename(self):
        return "fi_direct.h" if self.name == "-" else "fi_direct_%s.h" % self.name


class Layers:
    """`@layers MACRO LAYER-KIND [CQ-LAYER-KIND]`: endpoints of layers built
    over verbs exist when MACRO is non-zero; LAYER-KIND is their
    fdv_ep_kind() value (every layer's: they all go through their own ops
    tables). CQ-LAYER-KIND, when given, is the fdv_cq_kind() value of a
    layer's completion queue: every inline CQ call then tests it the same
    way (a layer such as RDM has CQs of its own)."""
    def __init__(self, macro=None, layer_kind=None, cq_kind=None):
        self.macro, self.layer_kind, self.cq_kind = macro, layer_kind, cq_kind
        self.inline = {}
        # call -> IMPL that tests the CQ's kind itself (@cq-kind-inside)
        self.cq_inside = {}


class InlineLayer:
    """`@inline-layer TYPE CONFIG-HEADER CONFIG-MACRO KIND HEADER`: a layer
    whose endpoints (fdv_ep_kind() == KIND) the direct wrappers serve
    inline, with the implementations named TYPE=IMPL in the calls below,
    when CONFIG-MACRO (from CONFIG-HEADER) is non-zero. HEADER defines the
    implementations; it calls verbs through the public fi_* calls, so it is
    included at the end of each wrapper header (after the wrappers it
    uses) and the implementations are declared before the wrappers."""
    def __init__(self, ep_type, config_header, macro, kind, header):
        self.ep_type, self.config_header, self.macro = ep_type, config_header, macro
        self.kind, self.header = kind, header


def parse_spec(text):
    headers = []
    layers = Layers()
    inline = {}        # ep type -> InlineLayer
    unsupported = {}   # ops struct -> fields with no wrapper, answered -FI_ENOSYS
    cq_inside = {}     # CQ call -> IMPL testing the CQ kind itself
    cur = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if words[0] == "@unsupported":
            if len(words) < 3:
                raise GenError("%s:%d: @unsupported OPS-STRUCT FIELD..." % (SPEC, n))
            unsupported.setdefault(words[1], []).extend(words[2:])
            continue
        if words[0] == "@unlocked":
            if len(words) < 3:
                raise GenError("%s:%d: @unlocked OPS-STRUCT FIELD..." % (SPEC, n))
            UNLOCKED.setdefault(words[1], set()).update(words[2:])
            continue
        if words[0] == "@inline-layer":
            if len(words) != 6 or words[1] in inline or words[1] == "msg":
                raise GenError("%s:%d: @inline-layer TYPE CONFIG-HEADER CONFIG-MACRO KIND HEADER"
                               % (SPEC, n))
            inline[words[1]] = InlineLayer(*words[1:])
            continue
        if words[0] == "@cq-kind-inside":
            if len(words) < 2 or not all("=" in w for w in words[1:]):
                raise GenError("%s:%d: @cq-kind-inside CALL=IMPL..." % (SPEC, n))
            for w in words[1:]:
                call, _, impl = w.partition("=")
                cq_inside[call] = impl
            continue
        if words[0] == "@layers":
            if len(words) not in (3, 4) or layers.macro:
                raise GenError("%s:%d: one @layers CONFIG-MACRO LAYER-KIND [CQ-LAYER-KIND]"
                               % (SPEC, n))
            layers = Layers(*words[1:])
            continue
        if words[0] == "@header":
            if len(words) < 4:
                raise GenError("%s:%d: @header NAME PUBLIC GUARD [INCLUDES]" % (SPEC, n))
            cur = Header(words[1], words[2], None if words[3] == "-" else words[3],
                         words[4:], n)
            headers.append(cur)
            continue
        if cur is None or cur.guard is None:
            raise GenError("%s:%d: call outside a guarded @header" % (SPEC, n))
        call, impls = words[0], {}
        if len(words) < 2:
            raise GenError("%s:%d: %s has no implementation" % (SPEC, n, call))
        for w in words[1:]:
            t, _, impl = w.rpartition("=")
            impls[t or None] = impl
        if call in cur.calls:
            raise GenError("%s:%d: %s listed twice" % (SPEC, n, call))
        cur.calls[call] = impls
    for h in headers:
        for inc in h.includes:
            if ":" in inc:
                raise GenError("%s: include %s: layers' headers are not included "
                               "(their calls go through the ops table)" % (SPEC, inc))
        for call, impls in h.calls.items():
            for t in impls:
                if t is not None and t != "msg" and t not in inline:
                    raise GenError("%s: %s: endpoint type %s: only msg and the types of "
                                   "@inline-layer are implemented inline; other layers "
                                   "install their own ops tables" % (SPEC, call, t))
                if t in inline and impls[t] == "enosys":
                    raise GenError("%s: %s: %s=enosys: an inline layer's missing calls "
                                   "go through its ops table; leave them out" % (SPEC, call, t))
    if inline and not layers.macro:
        raise GenError("%s: @inline-layer needs @layers" % SPEC)
    if cq_inside and not layers.cq_kind:
        raise GenError("%s: @cq-kind-inside needs a CQ-LAYER-KIND in @layers" % SPEC)
    layers.inline = inline
    layers.cq_inside = cq_inside
    return headers, layers, unsupported


# --------------------------------------------------------------------------
# Public headers
# --------------------------------------------------------------------------
def strip_comments(text):
    return re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)),
                  text, flags=re.S)


def include_guard(text, public):
    m = re.search(r"^\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+\1\b", text, re.M)
    if not m:
        raise GenError("include/rdma/%s: no include guard found" % public)
    return m.group(1)


def guarded_region(text, guard, public):
    """The text between `#ifndef GUARD` and its matching #endif."""
    m = re.search(r"^[ \t]*#[ \t]*ifndef[ \t]+%s\b[^\n]*\n" % guard, text, re.M)
    if not m:
        raise GenError("include/rdma/%s: no #ifndef %s section" % (public, guard))
    depth, pos = 1, m.end()
    for d in re.finditer(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|endif)\b[^\n]*\n?",
                         text[pos:], re.M):
        depth += -1 if d.group(1) == "endif" else 1
        if depth == 0:
            return text[pos:pos + d.start()]
    raise GenError("include/rdma/%s: #ifndef %s never closed" % (public, guard))


class Func:
    def __init__(self, start, body_start, end, ret, name, params, body):
        self.start, self.body_start, self.end = start, body_start, end
        self.ret, self.name, self.params, self.body = ret, name, params, body

    def param_names(self):
        names = []
        for p in split_params(self.params):
            if p == "void":
                continue
            m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", p)
            names.append(m.group(1))
        return names

    def param_types(self):
        out = []
        for p in split_params(self.params):
            if p == "void":
                continue
            m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", p)
            out.append(p[:m.start(1)].strip())
        return out


def split_params(params):
    parts, depth, cur = [], 0, ""
    for ch in params:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(" ".join(cur.split()))
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(" ".join(cur.split()))
    return parts


def inline_functions(region):
    """Every `static inline` function definition of a region."""
    clean = strip_comments(region)
    funcs = []
    for m in re.finditer(r"static\s+inline\s+([^;{}()]*?)\b(\w+)\s*\(", clean):
        depth, i = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(clean[i], 0)
            i += 1
        params = clean[m.end():i - 1]
        j = i
        while clean[j].isspace():
            j += 1
        if clean[j] != "{":
            continue  # a declaration, not a definition
        depth, k = 1, j + 1
        while depth:
            depth += {"{": 1, "}": -1}.get(clean[k], 0)
            k += 1
        funcs.append(Func(m.start(), j, k, " ".join(m.group(1).split()),
                          m.group(2), params, clean[j + 1:k - 1]))
    return funcs


def ops_fields(text, struct):
    m = re.search(r"struct\s+%s\s*\{(.*?)\};" % struct, strip_comments(text), re.S)
    if not m:
        raise GenError("struct %s not found in the public headers" % struct)
    return re.findall(r"\(\s*\*\s*(\w+)\s*\)", m.group(1))


def dispatch_of(func):
    """(first param struct, table member, field) of a one-line default body
    `return p->table->field(args)` whose args are the parameters in order."""
    m = re.fullmatch(r"\s*return\s+(\w+)\s*->\s*(\w+)\s*->\s*(\w+)\s*\(([^;]*)\)\s*;\s*",
                     func.body)
    names = func.param_names()
    if not m or not names or m.group(1) != names[0]:
        raise GenError("%s: default body is not a plain ops dispatch; "
                       "it cannot be specialized" % func.name)
    args = [a.strip() for a in m.group(4).split(",")] if m.group(4).strip() else []
    if args != names:
        raise GenError("%s: ops call does not pass the parameters through" % func.name)
    pm = re.search(r"struct\s+(\w+)", func.param_types()[0])
    return pm.group(1), m.group(2), m.group(3)


# --------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------
def banner(comment_open, comment_close):
    return ("%s Generated from gen/api.spec and include/rdma by gen/gen.py: do not\n"
            " * edit; regenerate with `%s`. %s\n" % (comment_open, REGEN, comment_close))


def enosys_body(func):
    lines = ["\t(void)%s;" % n for n in func.param_names()]
    lines.append("\treturn -FI_ENOSYS;")
    return "\n".join(lines)


def is_ep_call(func):
    types = func.param_types()
    return bool(types) and re.fullmatch(r"struct\s+fid_ep\s*\*", types[0]) is not None


def call_impl(func, impl):
    if impl == "enosys":
        return "return -FI_ENOSYS;"
    return "return %s(%s);" % (impl, ", ".join(func.param_names()))


def is_cq_call(func):
    types = func.param_types()
    return bool(types) and re.fullmatch(r"struct\s+fid_cq\s*\*", types[0]) is not None


def impl_body(func, impls, layers):
    """Body of a direct wrapper. When a layer's endpoints are compiled in,
    an endpoint call tests the kind once: a layer's endpoint takes the
    default body (its own ops table), a MSG endpoint the inline code. CQ
    calls do the same with the CQ's kind when the spec names one."""
    if not is_ep_call(func):
        if list(impls) != [None]:
            raise GenError("%s: endpoint types given for a call that takes no endpoint" % func.name)
        impl = impls[None]
        if impl == "enosys":
            return enosys_body(func)
        lines = []
        if layers.macro and func.name in layers.cq_inside:
            if not is_cq_call(func):
                raise GenError("%s: @cq-kind-inside names a call that takes no CQ" % func.name)
            # The IMPL tests the kind itself, merged with its first test
            # of the CQ's state: one compare on the common path.
            lines.append("#if %s" % layers.macro)
            lines.append("\t" + call_impl(func, layers.cq_inside[func.name]))
            lines.append("#else")
            lines.append("\t" + call_impl(func, impl))
            lines.append("#endif")
            return "\n".join(lines)
        if layers.macro and layers.cq_kind and is_cq_call(func):
            lines.append("#if %s" % layers.macro)
            lines.append("\tif (fdv_unlikely(fdv_cq_kind(%s) == %s))"
                         % (func.param_names()[0], layers.cq_kind))
            lines.append("\t\t" + " ".join(func.body.split()))
            lines.append("#endif")
        lines.append("\t" + call_impl(func, impl))
        return "\n".join(lines)
    if None in impls:
        raise GenError("%s: endpoint calls name their endpoint type (msg=...)" % func.name)
    if "msg" not in impls:
        raise GenError("%s: no msg implementation" % func.name)
    lines = ["\t(void)%s;" % n for n in func.param_names()] if impls["msg"] == "enosys" else []
    ep = func.param_names()[0]
    own = [layers.inline[t] for t in impls if t in layers.inline]
    if layers.macro and own:
        # A layer's endpoint (the FDV_EP_KIND_LAYER bit): one bit test,
        # as for every call; then the inline layer's kind, else the
        # layer's ops table.
        lines.append("#if %s" % layers.macro)
        lines.append("\tif (fdv_unlikely(fdv_ep_kind(%s) & FDV_EP_KIND_LAYER)) {" % ep)
        for il in own:
            lines.append("#if %s" % il.macro)
            lines.append("\t\tif (fdv_likely(fdv_ep_kind_reload(%s) == %s))" % (ep, il.kind))
            lines.append("\t\t\t" + call_impl(func, impls[il.ep_type]))
            lines.append("#endif")
        lines.append("\t\t" + " ".join(func.body.split()))
        lines.append("\t}")
        lines.append("#endif")
    elif layers.macro:
        # Every layer's kind has the FDV_EP_KIND_LAYER bit (one test of a
        # byte in memory): an inline layer's endpoint too takes its ops
        # table for the calls it does not inline.
        lines.append("#if %s" % layers.macro)
        lines.append("\tif (fdv_unlikely(fdv_ep_kind(%s) & FDV_EP_KIND_LAYER))" % ep)
        lines.append("\t\t" + " ".join(func.body.split()))
        lines.append("#endif")
    lines.append("\t" + call_impl(func, impls["msg"]))
    return "\n".join(lines)


def include_lines(includes, layers, ep_calls):
    out = ["#include <%s>" % hdr for hdr in includes]
    if layers.macro and ep_calls:
        out.append("#include <fdv/fdv_config.h>")
    return out


def direct_header(h, public_text, layers):
    pub_guard = include_guard(public_text, h.public)
    out = [banner("/*", "*/"), ""]
    own = "FD_DIRECT_%s_H" % (h.name.upper() if h.name != "-" else "FABRIC")
    out.append("#ifndef %s" % own)
    if h.guard is None:
        out.append("#define %s" % own)
        out.append("")
        out.append("/* Included by <rdma/%s> under FABRIC_DIRECT. The verbs provider "
                   "keeps\n * the default definitions here, so this header defines "
                   "nothing. */" % h.public)
        out.append("")
        out.append("#endif /* %s */" % own)
        return "\n".join(out) + "\n"

    region = guarded_region(public_text, h.guard, h.public)
    funcs = {f.name: f for f in inline_functions(region)}
    for call in h.calls:
        if call not in funcs:
            raise GenError("%s:%d: %s is not a wrapper in the %s section of "
                           "include/rdma/%s" % (SPEC, h.line, call, h.guard, h.public))
    # Rebuild the region with the listed calls' bodies replaced; comments of
    # the original are dropped with the body they described.
    clean = strip_comments(region)
    pieces, pos = [], 0
    for f in sorted(funcs.values(), key=lambda f: f.start):
        if f.name in h.calls:
            dispatch_of(f)  # the body must be the plain dispatch we replace
            # Forced inline: a data-path wrapper left out of line by the
            # compiler's size heuristics would cost a call per operation.
            pieces.append(clean[pos:f.start])
            pieces.append("FDV_INLINE" + clean[f.start:f.body_start][len("static inline"):]
                          if clean.startswith("static inline", f.start)
                          else clean[f.start:f.body_start])
            pieces.append("{\n%s\n}" % impl_body(f, h.calls[f.name], layers))
            pos = f.end
    pieces.append(clean[pos:])
    body = "".join(pieces)
    body = re.sub(r"[ \t]+\n", "\n", body)
    body = re.sub(r"\n{3,}", "\n\n", body).strip("\n")

    out.append("/* Included on its own: go through the public header, which "
               "includes this\n * one at the point where its types are "
               "complete. */")
    out.append("#ifndef %s" % pub_guard)
    out.append("#include <rdma/%s>" % h.public)
    out.append("#else")
    out.append("#define %s" % own)
    out.append("")
    out.append("#define %s" % h.guard)
    out.append("")
    out.extend(include_lines(h.includes, layers,
                             any(is_ep_call(funcs[c]) or
                                 (layers.cq_kind and is_cq_call(funcs[c]))
                                 for c in h.calls)))
    # Inline layers with calls here: their configuration, and their
    # implementations declared before the wrappers use them.
    used = [il for t, il in sorted(layers.inline.items())
            if any(t in impls for impls in h.calls.values())]
    for il in used:
        if "#include <%s>" % il.config_header not in out:
            out.append("#include <%s>" % il.config_header)
    out.append("")
    out.append("#ifdef __cplusplus")
    out.append('extern "C" {')
    out.append("#endif")
    out.append("")
    for il in used:
        # (not again when another wrapper header already included it)
        guard = re.sub(r"\W", "_", os.path.basename(il.header)).upper()
        out.append("#if %s && !defined(%s)" % (il.macro, guard))
        out.append("/* defined in <%s>, included at the end of this file */" % il.header)
        for call, impls in h.calls.items():
            if il.ep_type in impls:
                f = funcs[call]
                out.append("FDV_INLINE %s %s(%s);" % (f.ret, impls[il.ep_type],
                                                     ", ".join(split_params(f.params))))
        out.append("#endif")
        out.append("")
    out.append(body)
    out.append("")
    out.append("#ifdef __cplusplus")
    out.append("}")
    out.append("#endif")
    out.append("")
    for il in used:
        out.append("#if %s" % il.macro)
        out.append("#include <%s>" % il.header)
        out.append("#endif")
        out.append("")
    out.append("#endif /* %s */" % pub_guard)
    out.append("#endif /* %s */" % own)
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# Shared -FI_ENOSYS stubs: one per ops-table field, in the core
# --------------------------------------------------------------------------
def enosys_name(struct, field, prefix="fd_no"):
    """fd_no_<table>_<field>; the table of every fid (struct fi_ops) is "fid"."""
    short = "fid" if struct == "fi_ops" else struct[len("fi_ops_"):]
    return "%s_%s_%s" % (prefix, short, field)


# Tables that also get a second stub set answering -FI_EOPNOTSUPP
# (fd_eopnotsupp_<table>_<field>): "this object never does that", where
# -FI_ENOSYS would read "not implemented". The verbs SRX context's CM calls.
EOPNOTSUPP_STRUCTS = ("fi_ops_cm",)


def enosys_fields(all_text):
    """[(struct, field, return type, parameters)] of every ops-table field that
    can answer -FI_ENOSYS: an int or ssize_t return, and not close (an object
    that exists can always be closed)."""
    out = []
    clean = strip_comments(all_text)
    for m in re.finditer(r"struct\s+(fi_ops\w*)\s*\{(.*?)\};", clean, re.S):
        for f in re.finditer(r"([\w\s\*]+?)\(\s*\*\s*(\w+)\s*\)\s*\(([^;]*)\)\s*;",
                             m.group(2)):
            ret = " ".join(f.group(1).split())
            if ret not in ("int", "ssize_t") or f.group(2) == "close":
                continue
            out.append((m.group(1), f.group(2), ret, ", ".join(split_params(f.group(3)))))
    return out


def enosys_files(all_text):
    fields = enosys_fields(all_text)
    h = [banner("/*", "*/"), ""]
    h.append("/* \"Not supported\" for every ops-table field that can say so: a provider")
    h.append(" * or layer points a field it does not implement at fd_no_<table>_<field>")
    h.append(" * instead of writing its own stub. Every stub answers -FI_ENOSYS and")
    h.append(" * touches nothing; the tables of EOPNOTSUPP_STRUCTS (gen/gen.py) also")
    h.append(" * get fd_eopnotsupp_<table>_<field>, answering -FI_EOPNOTSUPP. Not")
    h.append(" * installed: the core's interface to providers. */")
    h.append("#ifndef FD_ENOSYS_H")
    h.append("#define FD_ENOSYS_H")
    h.append("")
    for pub in ENOSYS_HEADERS:
        h.append("#include <rdma/%s>" % pub)
    h.append("")
    h.append("#ifdef __cplusplus")
    h.append('extern "C" {')
    h.append("#endif")
    c = [banner("/*", "*/"), ""]
    c.append('#include "fd_enosys.h"')
    last = None
    stubs = [(s_, f_, r_, p_, "fd_no", "-FI_ENOSYS") for s_, f_, r_, p_ in fields]
    stubs += [(s_, f_, r_, p_, "fd_eopnotsupp", "-FI_EOPNOTSUPP")
              for s_, f_, r_, p_ in fields if s_ in EOPNOTSUPP_STRUCTS]
    for struct, field, ret, params, prefix, value in stubs:
        if (struct, prefix) != last:
            h.append("")
            h.append("/* struct %s%s */" % (struct, ", %s" % value if prefix != "fd_no" else ""))
            last = (struct, prefix)
        h.append("%s %s(%s);" % (ret, enosys_name(struct, field, prefix), params))
        names = [re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", p).group(1)
                 for p in split_params(params) if p != "void"]
        c.append("")
        c.append("%s %s(%s)" % (ret, enosys_name(struct, field, prefix), params))
        c.append("{")
        c.append("\t" + " ".join("(void)%s;" % nm for nm in names))
        c.append("\treturn %s;" % value)
        c.append("}")
    have = {(s_, f_) for s_, f_, _, _ in fields}
    h.append("")
    h.append("/* Whole tables answering -FI_ENOSYS for every call, for an object's")
    h.append(" * ops it does not serve at all; fd_eopnotsupp_ops_<table> answer")
    h.append(" * -FI_EOPNOTSUPP. */")
    tables = [(st, "fd_no") for st in NO_OPS_STRUCTS]
    tables += [(st, "fd_eopnotsupp") for st in EOPNOTSUPP_STRUCTS]
    for struct, prefix in tables:
        name = "%s_ops_%s" % (prefix, struct[7:])
        h.append("extern struct %s %s;" % (struct, name))
        c.append("")
        c.append("struct %s %s = {" % (struct, name))
        c.append("\t.size = sizeof(struct %s)," % struct)
        for fl in ops_fields(all_text, struct):
            if (struct, fl) not in have:
                raise GenError("%s.%s: no %s stub for %s" % (struct, fl, prefix, name))
            c.append("\t.%s = %s," % (fl, enosys_name(struct, fl, prefix)))
        c.append("};")
    h.append("")
    h.append("#ifdef __cplusplus")
    h.append("}")
    h.append("#endif")
    h.append("")
    h.append("#endif /* FD_ENOSYS_H */")
    return "\n".join(h) + "\n", "\n".join(c) + "\n"


def ops_c(headers, public_texts, layers, unsupported, locked_tables):
    """The MSG endpoints' and the CQ's ops tables. Every -FI_ENOSYS field
    points at the core's shared stub (fd_no_<table>_<field>, fd_enosys.h;
    whole -FI_ENOSYS tables are the core's fd_no_ops_*). fdv_ops.h declares
    them all, and the locked tables of fdv_ops_locked_gen.c."""
    all_text = "\n".join(public_texts.values())
    tables = {}    # (ep_type, struct) -> {field: impl}
    includes = []
    for h in headers:
        if h.guard is None:
            continue
        for inc in h.includes:
            if inc not in includes:
                includes.append(inc)
        funcs = {f.name: f for f in inline_functions(
            guarded_region(public_texts[h.public], h.guard, h.public))}
        for call, impls in h.calls.items():
            f = funcs[call]
            obj, member, field = dispatch_of(f)
            struct = OPS_STRUCTS.get((obj, member))
            if struct is None:
                raise GenError("%s: no ops table known for %s->%s" % (call, obj, member))
            if is_ep_call(f):
                tables.setdefault(("no", struct), {})[field] = enosys_name(struct, field)
            for ep_type, impl in impls.items():
                if ep_type in layers.inline:
                    continue  # inline layers have ops tables of their own
                if impl == "enosys":
                    impl = enosys_name(struct, field)
                tables.setdefault((ep_type, struct), {})[field] = impl
    for struct, fields in unsupported.items():
        for fl in fields:
            for (ep_type, st), impls in tables.items():
                if st != struct:
                    continue
                if fl in impls and ep_type != "no":
                    raise GenError("%s.%s: both implemented and @unsupported" % (struct, fl))
                impls[fl] = enosys_name(struct, fl)

    c = [banner("/*", "*/"), ""]
    c.append("/* The ops tables an object hands out in the OFF build (and to programs")
    c.append(" * compiled without FABRIC_DIRECT): the same provider functions the")
    c.append(" * direct wrappers call, here compiled out of line. */")
    c.append("")
    for pub in ("fi_endpoint.h", "fi_rma.h", "fi_atomic.h", "fi_tagged.h", "fi_eq.h",
                "fi_collective.h"):
        c.append("#include <rdma/%s>" % pub)
    c.extend("#include <%s>" % inc for inc in includes)
    c.append('#include "fdv_ops.h"')
    c.append("")

    h = [banner("/*", "*/"), ""]
    h.append("/* The ops tables of fdv_ops_gen.c and of fdv_ops_locked_gen.c; the")
    h.append(" * -FI_ENOSYS stubs and whole tables are the core's (fd_enosys.h). */")
    h.append("#ifndef FDV_OPS_H")
    h.append("#define FDV_OPS_H")
    h.append("")
    for pub in ("fi_endpoint.h", "fi_rma.h", "fi_atomic.h", "fi_tagged.h", "fi_eq.h",
                "fi_collective.h"):
        h.append("#include <rdma/%s>" % pub)
    h.append("#include <fdv/fdv_config.h>")
    h.append('#include "fd_enosys.h"')
    h.append("")
    order = {"msg": 0, None: 1, "no": 2}
    for (ep_type, struct), fields in sorted(tables.items(),
                                            key=lambda kv: (order[kv[0][0]], kv[0][1])):
        if ep_type == "no":
            continue    # the core's fd_no_ops_* (enosys_files)
        want = ops_fields(all_text, struct)
        if struct in NO_OPS_STRUCTS and all(
                fields.get(fl) == enosys_name(struct, fl) for fl in want):
            continue    # nothing served: the object hands out fd_no_ops_*
        missing = [fl for fl in want if fl not in fields]
        if missing:
            raise GenError("%s: no implementation for %s in gen/api.spec"
                           % (struct, ", ".join(missing)))
        name = "fdv_%s_ops_%s" % (ep_type, struct[7:]) if ep_type else "fdv_ops_%s" % struct[7:]
        h.append("extern struct %s %s;" % (struct, name))
        c.append("struct %s %s = {" % (struct, name))
        c.append("\t.size = sizeof(struct %s)," % struct)
        for fl in want:
            c.append("\t.%s = %s," % (fl, fields[fl]))
        c.append("};")
        c.append("")
    h.append("")
    h.append("#if FDV_OPS_LOCKED")
    h.append("/* The same calls inside the endpoint's or CQ's lock, for objects opened")
    h.append(" * at FI_THREAD_ENDPOINT, FID or SAFE. */")
    for struct, name in locked_tables:
        h.append("extern struct %s %s;" % (struct, name))
    h.append("#endif")
    h.append("")
    h.append("#endif /* FDV_OPS_H */")
    return "\n".join(c).rstrip("\n") + "\n", "\n".join(h) + "\n"


# --------------------------------------------------------------------------
# Locked ops tables (OFF build, FI_THREAD_ENDPOINT/FID/SAFE at run time)
# --------------------------------------------------------------------------
# Which lock a locked table's wrapper takes, by the table's object.
LOCKS = {"fid_ep": "fdv_mt_ep", "fid_cq": "fdv_mt_cq"}


def locked_ops_c(headers, public_texts):
    """The msg endpoint's and the CQ's ops tables again, each call wrapped
    in its object's lock: what an object opened at FI_THREAD_ENDPOINT, FID
    or SAFE gets in the OFF build. The wrapped functions are the same
    provider functions the lock-free tables and the direct wrappers call,
    so both variants come from one source. Fields answered -FI_ENOSYS need
    no lock and point at the shared stub; @unlocked fields (blocking waits
    that re-enter the locked table, and calls that touch no queue state)
    are called as they are."""
    all_text = "\n".join(public_texts.values())
    tables = {}     # struct -> {field: (impl, func, lock or None)}
    includes = []
    for h in headers:
        if h.guard is None:
            continue
        funcs = {f.name: f for f in inline_functions(
            guarded_region(public_texts[h.public], h.guard, h.public))}
        for call, impls in h.calls.items():
            f = funcs[call]
            obj, member, field = dispatch_of(f)
            struct = OPS_STRUCTS[(obj, member)]
            impl = impls["msg"] if is_ep_call(f) else impls[None]
            for inc in h.includes:
                if ":" not in inc and inc not in includes:
                    includes.append(inc)
            if impl == "enosys":
                entry = (enosys_name(struct, field), None, None)
            elif field in UNLOCKED.get(struct, ()):
                entry = (impl, None, None)
            else:
                entry = (impl, f, LOCKS[obj])
            tables.setdefault(struct, {})[field] = entry
    out = [banner("/*", "*/"), ""]
    out.append("/* The OFF build's locked ops tables: each call of a msg endpoint or a CQ")
    out.append(" * opened at FI_THREAD_ENDPOINT, FID or SAFE holds that object's lock")
    out.append(" * (fdv_mt.h) around the same provider function the lock-free table")
    out.append(" * calls. Objects opened at FI_THREAD_DOMAIN or COMPLETION keep the")
    out.append(" * lock-free tables of fdv_ops_gen.c and never reach this file. */")
    out.append("")
    out.append("#include <fdv/fdv_config.h>")
    out.append("#if FDV_OPS_LOCKED")
    out.append("")
    for pub in ("fi_endpoint.h", "fi_rma.h", "fi_atomic.h", "fi_eq.h"):
        out.append("#include <rdma/%s>" % pub)
    out.extend("#include <%s>" % inc for inc in includes)
    out.append('#include "fd_enosys.h"')
    out.append('#include "fdv_mt.h"')
    out.append('#include "fdv_ops.h"')
    table_lines = []
    locked_tables = []
    for struct in sorted(tables):
        fields = tables[struct]
        if all(lock is None for _, _, lock in fields.values()):
            continue  # nothing to lock: the lock-free table serves
        want = ops_fields(all_text, struct)
        for fl in want:
            if fl not in fields:
                fields[fl] = (enosys_name(struct, fl), None, None)
        for fl in want:
            impl, f, lock = fields[fl]
            if lock is None:
                continue
            names = f.param_names()
            params = ", ".join(split_params(f.params))
            out.append("")
            out.append("static %s %s_locked(%s)" % (f.ret, impl, params))
            out.append("{")
            out.append("\t%s ret;" % f.ret)
            out.append("")
            out.append("\t%s_lock(%s);" % (lock, names[0]))
            out.append("\tret = %s(%s);" % (impl, ", ".join(names)))
            out.append("\t%s_unlock(%s);" % (lock, names[0]))
            out.append("\treturn ret;")
            out.append("}")
        short = struct[len("fi_ops_"):]
        name = "fdv_ops_locked_cq" if struct == "fi_ops_cq" else "fdv_msg_ops_locked_%s" % short
        locked_tables.append((struct, name))
        table_lines.append("")
        table_lines.append("struct %s %s = {" % (struct, name))
        table_lines.append("\t.size = sizeof(struct %s)," % struct)
        for fl in want:
            impl, f, lock = fields[fl]
            table_lines.append("\t.%s = %s%s," % (fl, impl, "_locked" if lock else ""))
        table_lines.append("};")
    out.extend(table_lines)
    out.append("")
    out.append("#endif /* FDV_OPS_LOCKED */")
    return "\n".join(out) + "\n", locked_tables


# --------------------------------------------------------------------------
# The export map
# --------------------------------------------------------------------------
C_WORDS = {"if", "while", "for", "switch", "return", "sizeof", "else", "do",
           "_Static_assert", "static_assert", "_Alignof", "__typeof__", "typeof"}


# A declaration with one of these is of a function the header itself
# defines (FDV_INLINE is fdv_compiler.h's `static inline`).
STATIC_WORDS = {"static", "FDV_INLINE"}


def drop_parens_after(text, word):
    """text without each `word(...)` (balanced), e.g. __attribute__((x))."""
    out, pos = [], 0
    for m in re.finditer(r"\b%s\s*\(" % word, text):
        if m.start() < pos:
            continue
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        out.append(text[pos:m.start()])
        out.append(" ")
        pos = i
    out.append(text[pos:])
    return "".join(out)


def function_declarations(text):
    """(name, words before it) of every top-level function declaration (a
    prototype, not a definition) of a header. Comments, preprocessor lines,
    attributes and extern "C" braces are ignored; both sides of an #if are
    read, which for declarations is what we want (every one counts)."""
    clean = strip_comments(text)
    clean = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", clean, flags=re.M)
    clean = re.sub(r'\bextern\s*"C(?:\+\+)?"\s*\{', " ", clean)
    clean = drop_parens_after(clean, "__attribute__")
    decls, depth, cur = [], 0, []
    for ch in clean:
        if depth:
            depth += {"{": 1, "}": -1}.get(ch, 0)
            continue
        if ch == "{":
            depth, cur = 1, []  # a body or a struct: not a declaration
        elif ch == "}":
            cur = []            # an extern "C" block's end
        elif ch == ";":
            decls.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out = []
    for d in decls:
        m = re.search(r"\b(\w+)\s*\(", d)
        if not m:
            continue
        before = re.findall(r"\w+", d[:m.start()])
        name = m.group(1)
        if not before or name in C_WORDS or "typedef" in before or \
                STATIC_WORDS.intersection(before):
            continue
        out.append((name, before))
    return out


def header_files(rel_dir):
    d = os.path.join(ROOT, rel_dir)
    return sorted("%s/%s" % (rel_dir, f) for f in os.listdir(d) if f.endswith(".h"))


def export_lists(outputs):
    """The public API (fi_* declared in include/rdma) and the entry points
    (every FDV_EXPORT declaration of an installed inline header). A
    function an inline header declares without FDV_EXPORT is an error:
    inline code that calls it would not link against a shared library."""
    public, entry = set(), {}
    for rel in [h for d in PUBLIC_DIRS for h in header_files(d)]:
        for name, before in function_declarations(read(rel)):
            if EXPORT_MARK in before:
                raise GenError("%s: %s: the public API is exported as fi_*, "
                               "not with %s" % (rel, name, EXPORT_MARK))
            if name.startswith("fi_"):
                public.add(name)
    inline = [(h, read(h)) for d in INLINE_DIRS for h in header_files(d)]
    inline += sorted((rel, text) for rel, text in outputs.items() if rel.startswith(DIRECT_DIR))
    for rel, text in inline:
        for name, before in function_declarations(text):
            if EXPORT_MARK not in before:
                raise GenError("%s: %s is declared, not defined, in an installed inline "
                               "header: mark it %s (the library must export it)"
                               % (rel, name, EXPORT_MARK))
            if name.startswith("fi_"):
                raise GenError("%s: %s: an entry point has its layer's prefix" % (rel, name))
            entry.setdefault(name, rel)
    if not public:
        raise GenError("no fi_* function declared in %s" % ", ".join(PUBLIC_DIRS))
    return sorted(public), entry


def export_map(public, entry):
    out = ["/* Generated from the installed headers by gen/gen.py: do not edit;",
           " * regenerate with `%s`." % REGEN,
           " *",
           " * What every shared libfabric-direct exports (libfabric-direct.so.0 of",
           " * each build; the drop-in libfabric.so.1 has Debian's version nodes in",
           " * src/dropin/libfabric.map): the public API, that is every fi_* function",
           " * include/rdma declares, and the out-of-line entry points the installed",
           " * inline headers call, each declared there with %s. Everything" % EXPORT_MARK,
           " * else (fd_, fdv_, fdr_, fdm_ internals) stays local: the inline headers",
           " * are the only ABI besides fi_*. tests/exports checks the result. */",
           "%s {" % EXPORT_NODE,
           "\tglobal:",
           "\t\t/* the public API */"]
    out.extend("\t\t%s;" % n for n in public)
    last = None
    for name in sorted(entry, key=lambda n: (entry[n], n)):
        if entry[name] != last:
            last = entry[name]
            out.append("\t\t/* %s */" % last)
        out.append("\t\t%s;" % name)
    out.append("\tlocal: *;")
    out.append("};")
    return "\n".join(out) + "\n"


def generate():
    headers, layers, unsupported = parse_spec(read(SPEC))
    public_texts = {}
    for h in headers:
        if h.public not in public_texts:
            public_texts[h.public] = read("include/rdma/%s" % h.public)
    outputs = {}
    for h in headers:
        outputs["%s/%s" % (DIRECT_DIR, h.filename)] = direct_header(h, public_texts[h.public], layers)
    outputs[OPS_LOCKED_C], locked_tables = locked_ops_c(headers, public_texts)
    outputs[OPS_C], outputs[OPS_H] = ops_c(headers, public_texts, layers, unsupported,
                                           locked_tables)
    all_public = "\n".join(read("include/rdma/%s" % p) for p in ENOSYS_HEADERS)
    outputs[ENOSYS_H], outputs[ENOSYS_C] = enosys_files(all_public)
    outputs[EXPORT_MAP] = export_map(*export_lists(outputs))
    return outputs


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true",
                    help="change nothing; exit 1 if an output is out of date")
    args = ap.parse_args()
    try:
        outputs = generate()
    except GenError as e:
        print("gen.py: %s" % e, file=sys.stderr)
        return 2
    stale = []
    for rel, text in outputs.items():
        path = os.path.join(ROOT, rel)
        old = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                old = f.read()
        if old == text:
            continue
        stale.append(rel)
        if not args.check:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    # Anything else in the direct directory was not generated from the spec.
    extra = sorted(set(os.listdir(os.path.join(ROOT, DIRECT_DIR))) -
                   {os.path.basename(r) for r in outputs if r.startswith(DIRECT_DIR)})
    if args.check:
        for rel in stale:
            print("out of date: %s (regenerate with `%s`)" % (rel, REGEN))
        for e in extra:
            print("not generated: %s/%s" % (DIRECT_DIR, e))
        if stale or extra:
            return 1
        print("generated files up to date (%d files)" % len(outputs))
        return 0
    for e in extra:
        print("warning: %s/%s is not generated from the spec" % (DIRECT_DIR, e))
    for rel in stale:
        print("wrote %s" % rel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
