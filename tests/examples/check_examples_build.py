#!/usr/bin/env python3
"""Build the examples the way an application would consume fabric-direct.

For each FABRIC_DIRECT mode asked for (verbs and OFF by default):
  * every example project under examples/ is configured, pulling
    fabric-direct in with add_subdirectory, and its target is built
    warning-free; the direct mode must hand the example -DFABRIC_DIRECT
    through the fabric::fabric target, the OFF mode must not. The examples
    go into one build tree per mode (a generated top project that adds
    each example's directory), so the library is compiled once for the
    three: the first example's own add_subdirectory line brings it in
    (rstream_echo's, which also turns the stream endpoints on), the
    others find fabric::fabric defined, as their CMakeLists allow;
  * fabric-direct itself is configured, built and installed into a
    temporary prefix, then examples/rma_write is built against it with
    find_package(fabric-direct), and compiled once more from the installed
    pkg-config file.

rstream_echo needs FABRIC_DIRECT_RSTREAM=ON and is built only with
--rstream ON.  Exit 0 when everything built; otherwise the failing step's
command and output are printed.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

EXAMPLES = ["msg_pingpong", "rma_write", "rstream_echo"]
WARN_FLAGS = "-Wall -Wextra -Werror"


class StepFailed(Exception):
    pass


def run(cmd, log, env=None, cwd=None):
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env, cwd=cwd)
    log.append((cmd, p.returncode, p.stdout, time.monotonic() - t0))
    if p.returncode != 0:
        raise StepFailed("%s\n--- exit %d ---\n%s" %
                         (" ".join(cmd), p.returncode, p.stdout[-6000:]))
    return p.stdout


def common_defs(args, mode):
    return ["-DFABRIC_DIRECT=" + mode,
            "-DFABRIC_DIRECT_THREADING=" + args.threading,
            "-DFABRIC_DIRECT_TESTS=OFF", "-DFABRIC_DIRECT_BENCH=OFF",
            "-DFABRIC_DIRECT_UTILS=OFF", "-DFABRIC_DIRECT_WERROR=ON",
            "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
            "-DCMAKE_C_COMPILER=" + args.cc,
            "-DCMAKE_C_FLAGS=" + WARN_FLAGS]


def flags_of(build_dir, target):
    path = os.path.join(build_dir, "CMakeFiles", target + ".dir", "flags.make")
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def check_direct_flag(build_dir, target, mode):
    flags = flags_of(build_dir, target)
    if flags is None:
        return  # not a Makefile generator: nothing to look at
    has = "-DFABRIC_DIRECT" in flags.replace("-DFABRIC_DIRECT_", "")
    if (mode == "verbs") != has:
        raise StepFailed("%s in %s: -DFABRIC_DIRECT %s the compile flags "
                         "(FABRIC_DIRECT=%s)" %
                         (target, build_dir, "in" if has else "missing from",
                          mode))


def build_examples(args, mode, names, work, log):
    top = os.path.join(work, "examples-top")
    os.makedirs(top, exist_ok=True)
    with open(os.path.join(top, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.20)\n"
                "project(fd_examples_together LANGUAGES C)\n")
        for name in names:
            f.write("add_subdirectory(%s %s)\n" %
                    (os.path.join(os.path.realpath(args.source), "examples", name), name))
    bdir = os.path.join(work, "examples")
    run(["cmake", "-S", top, "-B", bdir] + common_defs(args, mode), log)
    run(["cmake", "--build", bdir, "--target"] + names + ["-j", str(args.jobs)],
        log)
    for name in names:
        if not os.access(os.path.join(bdir, name, name), os.X_OK):
            raise StepFailed("%s: no executable after the build" % name)
        check_direct_flag(os.path.join(bdir, name), name, mode)


def build_installed_consumer(args, mode, work, log):
    lib = os.path.join(work, "fabric-direct")
    prefix = os.path.join(work, "prefix")
    run(["cmake", "-S", args.source, "-B", lib,
         "-DCMAKE_INSTALL_PREFIX=" + prefix] + common_defs(args, mode), log)
    # everything the install rules name (tests, benchmarks and tools are
    # off, so that is the library)
    run(["cmake", "--build", lib, "-j", str(args.jobs)], log)
    run(["cmake", "--install", lib], log)

    consumer = os.path.join(work, "rma_write-installed")
    run(["cmake", "-S", os.path.join(args.source, "examples", "rma_write"),
         "-B", consumer, "-DRMA_WRITE_USE_INSTALLED=ON",
         "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_C_COMPILER=" + args.cc,
         "-DCMAKE_C_FLAGS=" + WARN_FLAGS], log)
    run(["cmake", "--build", consumer, "--target", "rma_write"], log)
    check_direct_flag(consumer, "rma_write", mode)
    # The consumer must see the installed headers only, not the tree's.
    flags = (flags_of(consumer, "rma_write") or "").split()
    tree = [os.path.join(os.path.realpath(args.source), d)
            for d in ("include", "prov_verbs")]
    for i, tok in enumerate(flags):
        path = tok[2:] if tok.startswith("-I") else \
            flags[i + 1] if tok == "-isystem" and i + 1 < len(flags) else ""
        if any(os.path.realpath(path) == t or
               os.path.realpath(path).startswith(t + os.sep) for t in tree):
            raise StepFailed("find_package consumer compiled with %s on "
                             "its include path" % path)

    # pkg-config, as a Makefile-based application would use it
    if shutil.which("pkg-config"):
        pcdirs = [os.path.join(prefix, d, "pkgconfig")
                  for d in ("lib", "lib64", "lib/x86_64-linux-gnu")]
        env = dict(os.environ, PKG_CONFIG_PATH=":".join(pcdirs))
        cflags = run(["pkg-config", "--cflags", "fabric-direct"], log,
                     env=env).split()
        libs = run(["pkg-config", "--static", "--libs", "fabric-direct"],
                   log, env=env).split()
        if (mode == "verbs") != ("-DFABRIC_DIRECT" in cflags):
            raise StepFailed("pkg-config --cflags %s for FABRIC_DIRECT=%s" %
                             (" ".join(cflags), mode))
        out = os.path.join(work, "rma_write-pkgconfig")
        run([args.cc, "-std=gnu11"] + WARN_FLAGS.split() + cflags +
            [os.path.join(args.source, "examples", "rma_write", "rma_write.c"),
             "-o", out] + libs, log)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True, help="fabric-direct tree")
    ap.add_argument("--work", required=True,
                    help="scratch directory (emptied first)")
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--threading", default="domain")
    ap.add_argument("--rstream", default="OFF")
    ap.add_argument("--modes", default="verbs,OFF")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    rstream = args.rstream.upper() in ("ON", "1", "TRUE", "YES")
    # rstream_echo first: its add_subdirectory turns the stream
    # endpoints on for the tree the others share
    examples = [e for e in ["rstream_echo"] + EXAMPLES
                if e != "rstream_echo" or rstream]
    examples = list(dict.fromkeys(examples))
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)

    failures = 0
    for mode in args.modes.split(","):
        work = os.path.join(args.work, mode)
        steps = [("%s (add_subdirectory, one tree)" % ", ".join(examples),
                  lambda: build_examples(args, mode, examples, work, log))]
        steps.append(("rma_write (find_package and pkg-config after install)",
                      lambda: build_installed_consumer(args, mode, work, log)))
        for label, step in steps:
            log = []
            t0 = time.monotonic()
            try:
                step()
                print("ok    FABRIC_DIRECT=%-5s %s  (%.0f s)" %
                      (mode, label, time.monotonic() - t0), flush=True)
            except StepFailed as e:
                failures += 1
                print("FAIL  FABRIC_DIRECT=%-5s %s\n%s" % (mode, label, e),
                      flush=True)
    if not rstream:
        print("note: rstream_echo not built (FABRIC_DIRECT_RSTREAM is OFF "
              "in this build)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
