#!/usr/bin/env python3
"""tests/label-targets.py BUILD_DIR SELECTION... - the build targets that
the ctest tests of the selections run, one a line, for
`cmake --build BUILD_DIR --target ...`.

A selection is labels joined by '+': a test is chosen when it carries
every one of them (device+asan: the ASan device subset). Several
selections add up. A test's targets are the executables of the build that
its command line names (the program, and any program given to a script
as an argument), matched by file name against the build's targets.

CI builds the sanitizer and FI_THREAD_SAFE variants this way (tests/run-
all.sh): each runs only a labelled subset, and compiling the ~40 test
programs no test of the subset runs cost minutes of CI on 2 cores. A
configured but unbuilt tree is enough: ctest and the generator know every
test's command before anything is compiled. Exits 1 when a selection
chooses no test (a misspelt label must not build nothing and pass)."""
import json
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split("\n")[0])
    bdir, selections = sys.argv[1], [s.split("+") for s in sys.argv[2:]]
    tests = json.loads(subprocess.run(
        ["ctest", "--test-dir", bdir, "-N", "--show-only=json-v1"],
        check=True, capture_output=True, text=True).stdout)["tests"]
    # "... name" lines, and the phony/all/clean ones that are no program
    help_out = subprocess.run(["cmake", "--build", bdir, "--target", "help"],
                              check=True, capture_output=True, text=True).stdout
    known = {l[4:].split()[0] for l in help_out.splitlines() if l.startswith("... ")}
    # ctest -N names no command whose program is not built yet: read
    # them from the generated CTestTestfile.cmake files instead
    commands = {}
    for top, _, files in os.walk(bdir):
        if "CTestTestfile.cmake" in files:
            with open(os.path.join(top, "CTestTestfile.cmake")) as f:
                for line in f:
                    m = re.match(r'add_test\(\[=\[(.*?)\]=\]\s+(.*)\)\s*$', line)
                    if m:
                        commands[m.group(1)] = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))
    chosen, targets = 0, set()
    for sel in selections:
        n = 0
        for t in tests:
            labels = set()
            for p in t.get("properties", []):
                if p.get("name") == "LABELS":
                    labels.update(p.get("value", []))
            if not set(sel) <= labels:
                continue
            n += 1
            for arg in t.get("command") or commands.get(t["name"], []):
                name = os.path.basename(arg)
                if name in known and os.path.isabs(arg) and \
                        os.path.realpath(arg).startswith(os.path.realpath(bdir) + os.sep):
                    targets.add(name)
        if n == 0:
            sys.exit("label-targets: no test in %s carries %s" % (bdir, "+".join(sel)))
        chosen += n
    print("\n".join(sorted(targets)))
    print("label-targets: %d tests, %d targets" % (chosen, len(targets)), file=sys.stderr)


if __name__ == "__main__":
    main()
