#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""mutants.py - break the code on purpose, one small change at a time, and
check that the test suite notices (`make mutants`; tests/README.md).

    scripts/mutants.py [--list | --check] [--listed] [--bound SECONDS] [--dir SCRATCH]
                       [--results FILE] [NAME...]

Each mutant of tests/mutants/mutants.txt names what it breaks, a file, an
exact snippet of its text and the replacement, and the tests most likely
to kill it. The tree is copied to a scratch directory (SCRATCH/src, default
build-mutants/ in the repository; only changed files are copied again, so
builds stay incremental), built once in the normal configuration
(SCRATCH/build), then for each mutant: apply, rebuild, run its tests first
and then the rest of the suite (ctest -j2 --stop-on-failure), restore.

A mutant is
    killed            a test failed by an assertion (not by its timeout,
                      not by skipping: exit 77, ctest's "Skipped", and a
                      test that did not run are never kills)
    survived          every test that ran passed
    survived (bound)  its listed tests passed and the rest of the suite
                      was cut by SECONDS before any test failed: nothing
                      caught it in the time given (raise --bound)
    timeout           only timeouts (a test's TIMEOUT): not a kill, a
                      test that hangs catches nothing quickly
    does not apply    its snippet is not in the file, or is there twice
    does not build    the change does not compile
All but "killed" are failures: the exit status is 1 unless every mutant
was killed. The summary lists the survivors first, then the score. NAME
selects mutants by a part of their name. After each mutant, a process of
the scratch build still running (a failed test's fdrd -d, ...) is named
on its line and killed (tests/lib/leftovers.py), and the summary counts
them: a mutants run leaves nothing running either.

Without --bound, the unchanged tree's whole suite is run once first: it
must pass (a test that fails unmutated would kill every mutant), and its
time, x1.5 plus a minute for the rebuild, is the bound per mutant.

A mutant of a tool that makes a test program fail to build (fdr-gen
rejecting a line the program uses) is run anyway when every target that
fails is under tests/: the rest is built (make -k), and a test whose
program is missing ("Not Run") is not counted as a kill.

--listed runs each mutant's listed tests only, not the rest of the suite
(the per-mutant form, when the whole suite per mutant does not fit the
time): a mutant they do not kill is "survived", the unchanged suite is
not run first, and the bound defaults to 1800 s per mutant. Each
mutant's ctest output is kept in SCRATCH/logs/, so that a kill can be
read (which assertion). --results FILE also writes the per-mutant lines
(in the list's order), the score, the run's date, command and time to
FILE (tests/mutants/results.txt holds the last full run's).

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
    ("killed", test) / ("timeout", tests) / ("bound", tests) /
    ("passed", None). A test that timed out, was skipped (exit 77) or whose
    program was not built ("Not Run") is never a kill: it is left out and
    the rest run again. "bound": the time ran out before any test failed."""
    timed_out, not_run = [], []
    t0 = time.time()
    while True:
        left = bound - (time.time() - t0)
        if left <= 0:
            return "bound", timed_out
        out = timed_out + not_run
        excl = ["-E", "^(%s)$" % "|".join(map(re.escape, out))] if out else []
        rc, text = run(["ctest", "--test-dir", build, "-j2", "--stop-on-failure",
                        "--output-on-failure"] + select + excl,
                       left, log)
        results = RESULT.findall(text)
        failed = [(n, s) for n, s in results if s != "Passed"]
        skipped = [n for n, s in failed if "Skipped" in s or "Not Run" in s]
        real = [n for n, s in failed if "Timeout" not in s and n not in skipped]
        # A test that failed before the bound cut the run is a kill: ctest
        # waits for the tests still running (-j2) before it stops, and one
        # of them may be a long one (disk-kill) that the bound then cuts.
        if real:
            return "killed", real[0]
        if rc is None:
            return "bound", timed_out
        if not failed:
            # a failure ctest did not list per test (a crash of ctest
            # itself, a test it could not start) is no assertion either
            if rc != 0 and "No tests were found" not in text:
                return "error", "ctest exit %d without a failed test" % rc
            return ("timeout", timed_out) if timed_out else ("passed", None)
        timed_out += [n for n, s in failed if "Timeout" in s]
        not_run += skipped


def leftovers(build):
    """The processes of build still running (tests/lib/leftovers.py: its
    grace period, then each one named and killed)."""
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "lib", "leftovers.py"),
                        build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return [l.split(": ", 2)[2] for l in p.stdout.splitlines()
            if l.startswith("leftovers: still running after the suite: ")]


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
    ap.add_argument("--bound", type=float, default=None,
                    help="seconds per mutant (default: the unchanged suite's time x1.5 + 60)")
    ap.add_argument("--dir", default=os.path.join(ROOT, "build-mutants"))
    ap.add_argument("--listed", action="store_true",
                    help="run each mutant's listed tests only (default bound 1800 s)")
    ap.add_argument("--results", default=None,
                    help="also write the lines, score, date and time to this file")
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
    print("mutants: %d, tree built in %.0f s" % (len(mutants), time.time() - t_start), flush=True)
    if a.bound is None and a.listed:
        a.bound = 1800
    if a.bound is None:
        t0 = time.time()
        what, detail = ctest(build, [], 7200, log)
        if what != "passed":
            sys.exit("mutants: the unchanged tree's suite does not pass (%s: %s); fix that first"
                     % (what, detail))
        a.bound = 1.5 * (time.time() - t0) + 60
        print("mutants: the unchanged suite passes in %.0f s: bound %.0f s per mutant"
              % (time.time() - t0, a.bound), flush=True)
    results, lines, n_left = [], [], 0
    logs = os.path.join(a.dir, "logs")
    os.makedirs(logs, exist_ok=True)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for k, m in enumerate(mutants):
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
                    # Stale test programs still run the unmutated copy of
                    # an inline function of a public header: not a test.
                    if all(p.startswith("tests/") for p in paths) and \
                            not m.file.startswith("include/"):
                        rc, note = 0, "(test programs do not build: %s)" % " ".join(paths)
                if rc != 0:
                    errs = [l for l in text.splitlines() if "error" in l]
                    what, detail = "does not build", (errs or text.strip().splitlines())[:1]
                else:
                    left = a.bound - (time.time() - t0)
                    first = ["-R", "^(%s)$" % "|".join(map(re.escape, m.tests))]
                    what, detail = ctest(build, first, left, log) if m.tests else ("passed", None)
                    if what == "passed" and not a.listed:
                        rest = ["-E", first[1]] if m.tests else []
                        what, detail = ctest(build, rest, a.bound - (time.time() - t0), log)
                        if what == "bound":
                            what = "survived (bound)"
                    if what == "bound":
                        what = "timeout"
                    if note:
                        detail = "%s %s" % (", ".join(detail) if isinstance(detail, list)
                                            else detail or "", note)
            finally:
                with open(path, "w") as f:
                    f.write(orig)
        what = "survived" if what == "passed" else what
        if os.path.exists(log):
            shutil.copyfile(log, os.path.join(
                logs, "%03d-%s.txt" % (k + 1, re.sub(r"[^A-Za-z0-9]+", "-", m.name)[:60])))
        if isinstance(detail, list):
            detail = ", ".join(detail)
        # Nothing a test started may outlive the mutant's run (a failed
        # test may leave its fdrd -d): named, killed, and counted.
        left = leftovers(build)
        if left:
            n_left += len(left)
            detail = "%s (left running, killed: %s)" % (detail or "", "; ".join(left))
        results.append(what)
        line = "%-16s %-45s %4.0f s  %s" % (what, m.name, time.time() - t0, detail or "")
        lines.append((what != "survived" and what != "survived (bound)", line))
        print(line, flush=True)
    # The last mutant's file is restored: rebuild, so the scratch build is
    # the unchanged tree again for the next run.
    run(["cmake", "--build", build, "-j2"], 3600, log)
    killed = results.count("killed")
    summary = ["", "summary (survivors first):"] + [l for _, l in sorted(lines, key=lambda x: x[0])]
    summary.append("score: %d/%d killed (%.0f%%), %d survived, %d survived (bound), %d timeout, "
                   "%d not applied/built, %d errors; %.0f s"
                   % (killed, len(results), 100.0 * killed / len(results),
                      results.count("survived"), results.count("survived (bound)"),
                      results.count("timeout"),
                      results.count("does not apply") + results.count("does not build"),
                      results.count("error"), time.time() - t_start))
    summary.append("left running after a mutant's tests (killed): %d process(es)" % n_left)
    print("\n".join(summary))
    if a.results:
        with open(a.results, "w") as f:
            f.write("# scripts/mutants.py %s\n# started %s, %.0f s, %s, load %.1f at the end\n"
                    % (" ".join(sys.argv[1:]), started, time.time() - t_start,
                       "listed tests only" if a.listed else "listed tests, then the suite",
                       os.getloadavg()[0]))
            f.write("\n".join(l for _, l in lines) + "\n" + "\n".join(summary[2 + len(lines):])
                    + "\n")
    return 0 if killed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
