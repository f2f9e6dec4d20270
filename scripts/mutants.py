#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""mutants.py - break the code on purpose, one small change at a time, and
check that the test suite notices (`make mutants`; tests/README.md).

    scripts/mutants.py [--list | --check] [--bound SECONDS] [--dir SCRATCH] [NAME...]

Each mutant of tests/mutants/mutants.txt names what it breaks, a file, an
exact snippet of its text and the replacement, and the tests most likely
to kill it. The tree is copied to a scratch directory (SCRATCH/src, default
build-mutants/ in the repository; only changed files are copied again, so
builds stay incremental), built once in the normal configuration
(SCRATCH/build), then for each mutant: apply, rebuild, run its tests first
and then the rest of the suite (ctest -j2 --stop-on-failure), restore.

A mutant is
    killed          a test failed (not by its timeout)
    survived        every test passed
    timeout         only timeouts (a test's TIMEOUT, or SECONDS for the
                    whole mutant): not a kill, a test that hangs catches
                    nothing quickly
    does not apply  its snippet is not in the file, or is there twice
    does not build  the change does not compile
The last four are failures: the exit status is 1 unless every mutant was
killed. NAME selects mutants by a part of their name.

A mutant of a tool that makes a test program fail to build (fdr-gen
rejecting a line the program uses) is run anyway when every target that
fails is under tests/: the rest is built (make -k), and a test whose
program is missing ("Not Run") is not counted as a kill.

--check only checks that every mutant applies to the tree as it is (its
snippet occurs exactly once in its file), builds nothing, and exits 1
otherwise."""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(ROOT, "tests", "mutants", "mutants.txt")


class Mutant:
    def __init__(self, name, line):
        self.name, self.line = name, line
        self.file, self.tests = None, []
        self.old, self.new = [], []


def parse(path):
    """The mutants of the list; exits with one line on a malformed entry."""
    out, m = [], None
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            where = "%s:%d: " % (os.path.relpath(path, ROOT), n)
            if line.startswith("== "):
                m = Mutant(line[3:].strip(), n)
                out.append(m)
            elif not line.strip() or line.startswith("#"):
                continue
            elif m is None:
                sys.exit(where + "text before the first '== name' line")
            elif line.startswith("file: "):
                m.file = line[6:].strip()
            elif line.startswith("tests: "):
                m.tests = line[7:].split()
            elif line.startswith("-"):
                m.old.append(line[2:] if line.startswith("- ") else line[1:])
            elif line.startswith("+"):
                m.new.append(line[2:] if line.startswith("+ ") else line[1:])
            else:
                sys.exit(where + "expected file:, tests:, '- old' or '+ new': " + line)
    for m in out:
        if not m.file or not m.old:
            sys.exit("%s:%d: mutant %r needs a file: and '- ' lines" % (path, m.line, m.name))
    return out


def sync(src, dst):
    """Copies src's tree to dst (no .git, no build dirs); a file whose bytes
    are unchanged keeps its time stamp, so the rebuild stays incremental."""
    for d, dirs, files in os.walk(src):
        rel = os.path.relpath(d, src)
        dirs[:] = [x for x in dirs if x != ".git" and not (rel == "." and x.startswith("build"))]
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for f in files:
            a, b = os.path.join(d, f), os.path.join(dst, rel, f)
            with open(a, "rb") as fa:
                data = fa.read()
            try:
                with open(b, "rb") as fb:
                    if fb.read() == data:
                        continue
            except OSError:
                pass
            shutil.copyfile(a, b)
            shutil.copymode(a, b)


def run(argv, bound, log):
    """Runs argv in its own process group; (exit status or None on the
    bound, output)."""
    with open(log, "w") as out:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = p.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = None
    with open(log) as f:
        return rc, f.read()


RESULT = re.compile(r"Test\s+#\d+: (\S+) \.*\s*(\S.*?)\s+[\d.]+ sec")


def ctest(build, select, bound, log):
    """Runs the tests ctest selects (stop at the first failure); returns
    ("killed", test) / ("timeout", tests) / ("passed", None). A test that
    timed out, or whose program was not built ("Not Run"), is left out and
    the rest run again."""
    timed_out, not_run = [], []
    t0 = time.time()
    while True:
        left = bound - (time.time() - t0)
        if left <= 0:
            return "timeout", timed_out or ["(bound)"]
        out = timed_out + not_run
        excl = ["-E", "^(%s)$" % "|".join(map(re.escape, out))] if out else []
        rc, text = run(["ctest", "--test-dir", build, "-j2", "--stop-on-failure"] + select + excl,
                       left, log)
        if rc is None:
            return "timeout", timed_out + ["(bound)"]
        failed = [(n, s) for n, s in RESULT.findall(text) if s != "Passed"]
        if not failed:
            if rc != 0 and "No tests were found" not in text:
                return "killed", "ctest exit %d" % rc
            return ("timeout", timed_out) if timed_out else ("passed", None)
        real = [n for n, s in failed if "Timeout" not in s and "Not Run" not in s]
        if real:
            return "killed", real[0]
        timed_out += [n for n, s in failed if "Timeout" in s]
        not_run += [n for n, s in failed if "Not Run" in s]


def failed_targets(build, bound, log):
    """Builds what still builds (make -k / ninja -k 0); the paths that fail
    to build, relative to the build directory ([] if all build)."""
    keep = ["-k", "0"] if os.path.exists(os.path.join(build, "build.ninja")) else ["-k"]
    rc, text = run(["cmake", "--build", build, "-j2", "--"] + keep, bound, log)
    if rc == 0:
        return []
    paths = re.findall(r"^FAILED: (\S+)", text, re.M)
    for inside in re.findall(r"\*\*\* \[([^\]]+)\] Error", text):
        path = inside.rsplit(": ", 1)[-1]
        if path != "all" and not path.endswith("/all"):
            paths.append(path)
    return paths or ["(unknown)"]


def check(mutants):
    """0 if every mutant applies to the tree as it is, else 1."""
    bad = 0
    for m in mutants:
        try:
            with open(os.path.join(ROOT, m.file)) as f:
                n = f.read().count("\n".join(m.old))
        except OSError:
            n = 0
        if n != 1:
            bad += 1
            print("does not apply %-45s snippet found %d times in %s" % (m.name, n, m.file))
    print("mutants: %d of %d apply" % (len(mutants) - bad, len(mutants)))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--list", action="store_true", help="list the mutants and stop")
    ap.add_argument("--check", action="store_true",
                    help="only check that every mutant applies (exit 1 if one does not)")
    ap.add_argument("--bound", type=float, default=600, help="seconds per mutant")
    ap.add_argument("--dir", default=os.path.join(ROOT, "build-mutants"))
    a = ap.parse_args()
    mutants = [m for m in parse(LIST) if not a.names or any(n in m.name for n in a.names)]
    if a.list:
        for m in mutants:
            print("%-45s %s  [%s]" % (m.name, m.file, " ".join(m.tests)))
        return 0
    if a.check:
        return check(mutants)
    if not mutants:
        sys.exit("mutants: no mutant matches %s" % a.names)
    t_start = time.time()
    src, build = os.path.join(a.dir, "src"), os.path.join(a.dir, "build")
    sync(ROOT, src)
    log = os.path.join(a.dir, "log.txt")
    for step in (["cmake", "-S", src, "-B", build, "-DFDR_BENCH=OFF"],
                 ["cmake", "--build", build, "-j2"]):
        rc, text = run(step, 3600, log)
        if rc != 0:
            sys.stdout.write(text[-3000:])
            sys.exit("mutants: the unchanged tree does not build (%s)" % " ".join(step))
    print("mutants: %d, tree built in %.0f s" % (len(mutants), time.time() - t_start))
    results = []
    for m in mutants:
        t0 = time.time()
        path = os.path.join(src, m.file)
        old, new = "\n".join(m.old), "\n".join(m.new)
        try:
            with open(path) as f:
                orig = f.read()
        except OSError:
            orig = ""
        n = orig.count(old)
        what, detail = "does not apply", "snippet found %d times in %s" % (n, m.file)
        if n == 1:
            with open(path, "w") as f:
                f.write(orig.replace(old, new))
            try:
                rc, text = run(["cmake", "--build", build, "-j2"], a.bound, log)
                note = None
                if rc != 0:
                    paths = failed_targets(build, a.bound, log)
                    if all(p.startswith("tests/") for p in paths):
                        rc, note = 0, "(test programs do not build: %s)" % " ".join(paths)
                if rc != 0:
                    errs = [l for l in text.splitlines() if "error" in l]
                    what, detail = "does not build", (errs or text.strip().splitlines())[:1]
                else:
                    left = a.bound - (time.time() - t0)
                    first = ["-R", "^(%s)$" % "|".join(map(re.escape, m.tests))]
                    what, detail = ctest(build, first, left, log) if m.tests else ("passed", None)
                    if what == "passed":
                        rest = ["-E", first[1]] if m.tests else []
                        what, detail = ctest(build, rest, a.bound - (time.time() - t0), log)
                    if note:
                        detail = "%s %s" % (", ".join(detail) if isinstance(detail, list)
                                            else detail or "", note)
            finally:
                with open(path, "w") as f:
                    f.write(orig)
        what = "survived" if what == "passed" else what
        if isinstance(detail, list):
            detail = ", ".join(detail)
        results.append(what)
        print("%-14s %-45s %4.0f s  %s" % (what, m.name, time.time() - t0, detail or ""),
              flush=True)
    # The last mutant's file is restored: rebuild, so the scratch build is
    # the unchanged tree again for the next run.
    run(["cmake", "--build", build, "-j2"], 3600, log)
    killed = results.count("killed")
    print("score: %d/%d killed (%.0f%%), %d survived, %d timeout, %d not applied/built; %.0f s"
          % (killed, len(results), 100.0 * killed / len(results), results.count("survived"),
             results.count("timeout"),
             results.count("does not apply") + results.count("does not build"),
             time.time() - t_start))
    return 0 if killed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
