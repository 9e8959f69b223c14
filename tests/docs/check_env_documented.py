#!/usr/bin/env python3
"""Every environment variable the library reads is documented.

The variables are found in the library's sources (src/, prov_verbs/,
including the inline headers and rstream):
  * getenv("NAME") / secure_getenv("NAME") with a literal name;
  * fd_param_define / fi_param_define (PROV, "name", ...), the
    fd_param_get_* / fi_param_get* / fd_param_*_range reads of a literal
    name, and the { "name", FI_PARAM_... } rows of a definition table
    handed to FD_PARAM_DEFINE_TABLE(PROV, table), which mean
    FI_<PROV>_<NAME> (FI_<NAME> for a NULL or "core" provider), PROV being
    NULL, a string literal or a macro #defined to one.

A variable is documented when the ENVIRONMENT section of
docs/fi_direct_verbs.7.md gives it an entry of its own (a definition-list
term, list item, table row or heading), or, for variables read by the
rstream sources, when the ENVIRONMENT section of docs/fi_rstream.7.md names
it (if that page exists).  Entries in fi_direct_verbs.7.md for variables
the code does not read are reported too.

With --fi-info BINARY, `BINARY -e` must list every parameter the build
defines (rstream ones only with --rstream ON) with a help line, and show
the current value of one that is set.

Exit 0 when all is well, 1 naming what is missing.
"""
import argparse
import os
import re
import subprocess
import sys

SOURCE_DIRS = ["src", "prov_verbs"]
MAIN_DOC = "docs/fi_direct_verbs.7.md"
RSTREAM_DOC = "docs/fi_rstream.7.md"
RSTREAM_DIRS = ("prov_verbs/rstream/", "prov_verbs/include/fdv/fdr")

GETENV_RE = re.compile(r'\b(?:secure_)?getenv\s*\(\s*"([A-Za-z0-9_]+)"\s*\)')
DEFINE_RE = re.compile(
    r'\b(fd_param_define|fi_param_define|fd_param_get_\w+|fi_param_get\w*'
    r'|fd_param_\w+_range)'
    r'\s*\(\s*([^,()]+?)\s*,\s*"([^"]+)"', re.S)
MACRO_RE = re.compile(r'^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)\s+"([^"]*)"',
                      re.M)
TABLE_USE_RE = re.compile(
    r'\bFD_PARAM_DEFINE_TABLE\s*\(\s*([^,()]+?)\s*,\s*([A-Za-z_]\w*)\s*\)')
TABLE_ROW_RE = re.compile(r'\{\s*"([^"]+)"\s*,\s*FI_PARAM_')
ENV_NAME_RE = re.compile(r'\bFI_[A-Z0-9_]+\b')


def strip_comments(text):
    """Comments out, string literals and line structure kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def env_name(prov, name):
    def up(s):
        return re.sub(r'[^A-Za-z0-9]', '_', s).upper()
    if prov is None or prov == "" or prov.lower() == "core":
        return "FI_" + up(name)
    return "FI_%s_%s" % (up(prov), up(name))


def scan_sources(root):
    """{variable: [(file, kind), ...]} for everything the code reads."""
    files = []
    for d in SOURCE_DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, d)):
            for fn in sorted(names):
                if fn.endswith((".c", ".h")):
                    files.append(os.path.join(dirpath, fn))
    texts = {}
    macros = {}
    for path in files:
        with open(path, errors="replace") as f:
            texts[path] = strip_comments(f.read())
        for m in MACRO_RE.finditer(texts[path]):
            macros.setdefault(m.group(1), m.group(2))

    found = {}
    problems = []
    for path, text in texts.items():
        rel = os.path.relpath(path, root)
        for m in GETENV_RE.finditer(text):
            found.setdefault(m.group(1), []).append((rel, "getenv"))
        uses = [m.groups() for m in DEFINE_RE.finditer(text)]
        for m in TABLE_USE_RE.finditer(text):
            prov_expr, table = m.groups()
            line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
            if re.match(r'\s*#\s*define\b', line):
                continue    # the macro itself
            body = re.search(r'\b%s\s*\[\s*\]\s*=\s*\{(.*?)\};'
                             % re.escape(table), text, re.S)
            if not body:
                problems.append("%s: definition table '%s' not found"
                                % (rel, table))
                continue
            rows = TABLE_ROW_RE.findall(body.group(1))
            if not rows:
                problems.append("%s: definition table '%s' has no rows"
                                % (rel, table))
            uses += [("FD_PARAM_DEFINE_TABLE", prov_expr, r) for r in rows]
        for fn, prov_expr, name in uses:
            prov_expr = prov_expr.strip()
            if prov_expr == "NULL":
                prov = None
            elif prov_expr.startswith('"') and prov_expr.endswith('"'):
                prov = prov_expr[1:-1]
            elif prov_expr in macros:
                prov = macros[prov_expr]
            else:
                # a variable or a function parameter: the definition of
                # the mechanism itself, not of a parameter
                if re.fullmatch(r'[a-z_][a-z0-9_>.-]*', prov_expr):
                    continue
                problems.append("%s: cannot resolve provider '%s' of %s(%s)"
                                % (rel, prov_expr, fn, name))
                continue
            found.setdefault(env_name(prov, name), []).append((rel, fn))
    return found, problems


def is_rstream(where):
    return all(f.startswith(RSTREAM_DIRS) for f, _ in where)


# An entry of its own: a definition-list term (`FI_X` alone on its line),
# a list item or table row starting with it, or a heading naming it.
TERM_RE = re.compile(r'^\s*(?:[*+-]\s+|\|\s*|#+\s+)?[`*]*(FI_[A-Z0-9_]+)[`*]*'
                     r'\s*(?:$|[|:(=-])')


def env_section(path, terms_only=False):
    """Variable names in the ENVIRONMENT section(s) of a markdown page:
    every name mentioned, or with terms_only those given an entry."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    names, inside, level = set(), False, 0
    for line in lines:
        m = re.match(r'^(#+)\s+(.*)', line)
        if m:
            if inside and len(m.group(1)) <= level:
                inside = False
            if "ENVIRONMENT" in m.group(2).upper():
                inside, level = True, len(m.group(1))
            continue
        if inside:
            if terms_only:
                t = TERM_RE.match(line)
                if t:
                    names.add(t.group(1))
            else:
                names.update(ENV_NAME_RE.findall(line))
    return names


def check_fi_info(binary, found, rstream_on):
    errors = []
    env = dict(os.environ, FI_VERBS_TX_SIZE="17")
    p = subprocess.run([binary, "-e"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode != 0:
        return ["%s -e: exit %d: %s" % (binary, p.returncode, p.stderr)]
    listed = {}
    lines = p.stdout.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r'^# (FI_[A-Z0-9_]+): (\S.*)$', line)
        if m:
            help_line = lines[i + 1] if i + 1 < len(lines) else ""
            listed[m.group(1)] = help_line
    for var, where in sorted(found.items()):
        if not any(k != "getenv" for _, k in where) and var not in listed:
            # read with getenv only: it need not be a parameter, but the
            # ones of the core logging are, as in libfabric
            if not var.startswith("FI_LOG_"):
                continue
        if is_rstream(where) and not rstream_on:
            continue
        if var not in listed:
            errors.append("%s -e does not list %s" % (binary, var))
        elif not re.match(r'^# \S', listed[var]):
            errors.append("%s -e lists %s without help text" % (binary, var))
    if "FI_VERBS_TX_SIZE=17" not in lines:
        errors.append("%s -e does not show FI_VERBS_TX_SIZE=17 when it is "
                      "set" % binary)
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--fi-info", help="fd_fi_info binary to check -e of")
    ap.add_argument("--rstream", default="OFF",
                    help="ON when the fd_fi_info build has rstream")
    ap.add_argument("--list", action="store_true",
                    help="print what was found and where")
    args = ap.parse_args()
    root = os.path.abspath(args.source)

    found, errors = scan_sources(root)
    if args.list:
        for var, where in sorted(found.items()):
            print("%-28s %s" % (var, ", ".join(sorted({f for f, _ in where}))))

    main_doc = env_section(os.path.join(root, MAIN_DOC), terms_only=True)
    rs_doc = env_section(os.path.join(root, RSTREAM_DOC))
    if main_doc is None:
        errors.append("%s is missing" % MAIN_DOC)
        main_doc = set()
    for var, where in sorted(found.items()):
        docs = set(main_doc)
        if is_rstream(where) and rs_doc is not None:
            docs |= rs_doc
        if var not in docs:
            errors.append("%s (read in %s) is not documented in the "
                          "ENVIRONMENT section of %s%s" %
                          (var, ", ".join(sorted({f for f, _ in where})),
                           MAIN_DOC,
                           " or " + RSTREAM_DOC if is_rstream(where) else ""))
    for var in sorted(main_doc - set(found)):
        errors.append("%s documents %s, which the library does not read" %
                      (MAIN_DOC, var))

    if args.fi_info:
        errors += check_fi_info(args.fi_info, found,
                                args.rstream.upper() in ("ON", "1", "YES",
                                                         "TRUE"))

    for e in errors:
        print("FAIL:", e)
    if not errors:
        print("ok: %d environment variables, all documented%s" %
              (len(found), " and listed by fi_info -e" if args.fi_info
               else ""))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
