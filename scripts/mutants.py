#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""mutants.py - break the code on purpose, one small change at a time, and
check that the test suite notices (`make mutants`; tests/README.md).

    scripts/mutants.py [--list] [--bound SECONDS] [--dir SCRATCH] [NAME...]

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
killed. NAME selects mutants by a part of their name."""
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
    timed out is left out and the rest run again."""
    timed_out = []
    t0 = time.time()
    while True:
        left = bound - (time.time() - t0)
        if left <= 0:
            return "timeout", timed_out or ["(bound)"]
        excl = ["-E", "^(%s)$" % "|".join(map(re.escape, timed_out))] if timed_out else []
        rc, text = run(["ctest", "--test-dir", build, "-j2", "--stop-on-failure"] + select + excl,
                       left, log)
        if rc is None:
            return "timeout", timed_out + ["(bound)"]
        failed = [(n, s) for n, s in RESULT.findall(text) if s != "Passed"]
        if not failed:
            if rc != 0 and "No tests were found" not in text:
                return "killed", "ctest exit %d" % rc
            return ("timeout", timed_out) if timed_out else ("passed", None)
        real = [n for n, s in failed if "Timeout" not in s]
        if real:
            return "killed", real[0]
        timed_out += [n for n, _ in failed]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--list", action="store_true", help="list the mutants and stop")
    ap.add_argument("--bound", type=float, default=600, help="seconds per mutant")
    ap.add_argument("--dir", default=os.path.join(ROOT, "build-mutants"))
    a = ap.parse_args()
    mutants = [m for m in parse(LIST) if not a.names or any(n in m.name for n in a.names)]
    if a.list:
        for m in mutants:
            print("%-45s %s  [%s]" % (m.name, m.file, " ".join(m.tests)))
        return 0
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
                if rc != 0:
                    what, detail = "does not build", text.strip().splitlines()[-1:]
                else:
                    left = a.bound - (time.time() - t0)
                    first = ["-R", "^(%s)$" % "|".join(map(re.escape, m.tests))]
                    what, detail = ctest(build, first, left, log) if m.tests else ("passed", None)
                    if what == "passed":
                        rest = ["-E", first[1]] if m.tests else []
                        what, detail = ctest(build, rest, a.bound - (time.time() - t0), log)
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
