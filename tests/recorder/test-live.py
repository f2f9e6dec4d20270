#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-live.py - end-to-end tests of live tracing (issue #5).

    test-live.py CASE PROG WORKDIR

runs tests/recorder/progs/live-prog.c (PROG) with FDR_TRACES / FDR_EVENTS /
FDR_TRACE_FILE / FDR_OUTPUT set and checks the exact printed lines (a regex
only for the "<sec>.<ns> [tid] " prefix), the warnings on stderr, the
program's own report on stdout and, with bt2 (tracecheck.py), what reached
the trace on disk.

Cost of a printed event (live-prog bench 100000: three fields, one a string;
gcc -O2, 2-core VM, 2026-11): about 0.6-0.7 us/event to /dev/null, ~2 us to
a file on disk, i.e. formatting plus one write(2), the system call
dominating. The same event recorded and not printed: ~24 ns.
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest  # noqa: E402
import tracecheck  # noqa: E402

PREFIX = re.compile(r"^(\d+)\.(\d{9}) \[(\d+)\] (.*)$")
check = fdrtest.check

def run(prog, args, env, stdin=None, timeout=60):
    e = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
    e.update(env)
    p = subprocess.run([prog] + args, env=e, capture_output=True, text=True,
                       timeout=timeout)
    return p


def split_stderr(text):
    """(printed lines without prefix, [(sec, tid)], warnings, other lines)"""
    printed, meta, warns, other = [], [], [], []
    for line in text.splitlines():
        m = PREFIX.match(line)
        if m:
            printed.append(m.group(4))
            meta.append((int(m.group(1)) * 10**9 + int(m.group(2)), int(m.group(3))))
        elif line.startswith("fdr: "):
            warns.append(line)
        else:
            other.append(line)
    return printed, meta, warns, other


def pid_of(stdout):
    m = re.search(r"^pid=(\d+)$", stdout, re.M)
    return int(m.group(1)) if m else None


def expect_eq(got, want, what):
    if got != want:
        print("  got: ", got)
        print("  want:", want)
    check(got == want, what)


BASIC_ALL = [
    "live:start n=3 name=alpha",
    # zero padding goes after the sign and after the 0x prefix
    "live:value x=42 ratio=0.125 neg=-7 pad=-0042 hex=0x0000beef",
    "live:skip never=1",
    "live:empty",
    "other:ping seq=9",
]
ALL_EVENTS = sorted(["live:start", "live:value", "live:skip", "live:empty", "other:ping",
                     "live:thr", "live:a", "live:b", "live:bench"])
DEFAULT_TUNABLES = "tunables: batch_size=32 level=3 gain=0.5 ratio=0.25"


def case_lines(prog, work):
    p = run(prog, ["basic"], {"FDR_TRACES": "live:*,-live:skip,other:ping"})
    printed, meta, warns, other = split_stderr(p.stderr)
    check(p.returncode == 0, "exit status 0")
    expect_eq(printed, [BASIC_ALL[0], BASIC_ALL[1], BASIC_ALL[3], BASIC_ALL[4]],
              "exact printed lines")
    expect_eq(warns + other, [], "nothing else on stderr")
    pid = pid_of(p.stdout)
    check(all(tid == pid for _, tid in meta), "tid of the main thread is its pid")
    ts = [t for t, _ in meta]
    check(ts == sorted(ts) and ts[0] < 10 * 10**9, "times since start, in order")
    check(DEFAULT_TUNABLES in p.stdout and p.stdout.endswith("done\n"), "program ran")
    # Nothing printed by default.
    p = run(prog, ["basic"], {})
    expect_eq(p.stderr, "", "FDR_TRACES unset prints nothing")
    # 'none' / a later '-' override.
    p = run(prog, ["basic"], {"FDR_TRACES": "all none other:*"})
    expect_eq(split_stderr(p.stderr)[0], [BASIC_ALL[4]], "later items override earlier")


def case_trace_file(prog, work):
    path = os.path.join(work, "printed.txt")
    if os.path.exists(path):
        os.unlink(path)
    p = run(prog, ["basic"], {"FDR_TRACES": "live:start,live:empty",
                              "FDR_TRACE_FILE": path})
    expect_eq(p.stderr, "", "stderr empty with FDR_TRACE_FILE")
    with open(path) as f:
        printed, _, warns, other = split_stderr(f.read())
    expect_eq(printed, [BASIC_ALL[0], BASIC_ALL[3]], "lines in FDR_TRACE_FILE")
    expect_eq(warns + other, [], "only event lines in the file")
    # A file that cannot be opened: one warning, printing goes to stderr.
    p = run(prog, ["basic"], {"FDR_TRACES": "live:start",
                              "FDR_TRACE_FILE": os.path.join(work, "no/such/dir/x")})
    printed, _, warns, _ = split_stderr(p.stderr)
    expect_eq(printed, [BASIC_ALL[0]], "falls back to stderr")
    check(len(warns) == 1 and "FDR_TRACE_FILE" in warns[0] and "no/such/dir" in warns[0],
          "one warning naming FDR_TRACE_FILE: %r" % warns)


def trace_events(d):
    t = tracecheck.read(d)
    return [(e.name, e.fields) for e in t.events], t


def fresh(work, name):
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    return d


def case_print_not_record(prog, work):
    # With FDR_OUTPUT: live:value printed but not recorded; the rest recorded.
    d = fresh(work, "pnr")
    p = run(prog, ["basic"], {"FDR_OUTPUT": d, "FDR_EVENTS": "-live:value",
                              "FDR_TRACES": "live:value"})
    printed, _, warns, _ = split_stderr(p.stderr)
    expect_eq(printed, [BASIC_ALL[1]], "printed: live:value only")
    expect_eq(warns, [], "no warning")
    evs, t = trace_events(d)
    expect_eq([n for n, _ in evs], ["live:start", "live:skip", "live:empty", "other:ping"],
              "trace: everything but live:value")
    check(evs[0][1] == {"n": 3, "name": "alpha"}, "trace field values %r" % (evs[0][1],))
    check(t.discarded == 0, "nothing discarded")
    check(subprocess.run([sys.executable, tracecheck.__file__, "clean", d]).returncode == 0,
          "babeltrace2 reads it cleanly")
    # Nothing recorded at all, printing still works (with and without output).
    for out in (True, False):
        env = {"FDR_EVENTS": "none", "FDR_TRACES": "live:start,other:ping"}
        if out:
            d = fresh(work, "pnr-none")
            env["FDR_OUTPUT"] = d
        p = run(prog, ["basic"], env)
        expect_eq(split_stderr(p.stderr)[0], [BASIC_ALL[0], BASIC_ALL[4]],
                  "printed with FDR_EVENTS=none (output=%s)" % out)
        if out:
            evs, _ = trace_events(d)
            expect_eq(evs, [], "FDR_EVENTS=none: empty trace")


def case_record_not_print(prog, work):
    # A list starting with a name records only what it names.
    d = fresh(work, "rnp")
    p = run(prog, ["basic"], {"FDR_OUTPUT": d, "FDR_EVENTS": "live:value,live:start",
                              "FDR_TRACES": "live:*,-live:value"})
    printed, _, warns, _ = split_stderr(p.stderr)
    expect_eq(printed, [BASIC_ALL[0], BASIC_ALL[2], BASIC_ALL[3]], "printed: not value")
    expect_eq(warns, [], "no warning")
    evs, _ = trace_events(d)
    expect_eq([n for n, _ in evs], ["live:start", "live:value"], "trace: start and value")
    check(evs[1][1] == {"x": 42, "ratio": 0.125, "neg": -7, "pad": -42, "hex": 0xbeef}, "value fields %r" % (evs[1][1],))
    # Recorded and printed both.
    d = fresh(work, "both")
    p = run(prog, ["basic"], {"FDR_OUTPUT": d, "FDR_TRACES": "other:ping"})
    expect_eq(split_stderr(p.stderr)[0], [BASIC_ALL[4]], "printed: ping")
    evs, _ = trace_events(d)
    expect_eq(len(evs), 5, "all 5 recorded")
    # Without FDR_OUTPUT, recording in memory must not disturb printing.
    p = run(prog, ["basic"], {"FDR_EVENTS": "live:*", "FDR_TRACES": "other:*"})
    expect_eq(split_stderr(p.stderr)[0], [BASIC_ALL[4]], "printed without output")


LINE = re.compile(r"^\d+\.\d{9} \[(\d+)\] live:thr t=(\d) i=(\d+) pad=0123456789abcdef"
                  r"ghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz$")


def check_threads(text, n, what):
    lines = text.split("\n")
    check(lines[-1] == "", what + ": ends with a newline")
    seen = {}
    bad = [l for l in lines[:-1] if not LINE.match(l)]
    check(not bad, what + ": every line whole (%d bad, e.g. %r)" % (len(bad), bad[:2]))
    for l in lines[:-1]:
        m = LINE.match(l)
        if m:
            seen.setdefault(int(m.group(2)), []).append((int(m.group(1)), int(m.group(3))))
    check(sorted(seen) == [0, 1, 2, 3], what + ": 4 threads")
    for t, items in seen.items():
        check([i for _, i in items] == list(range(n)), what + ": thread %d in order" % t)
        check(len({tid for tid, _ in items}) == 1, what + ": one tid per thread")
    check(len({items[0][0] for items in seen.values()}) == 4, what + ": 4 distinct tids")


def case_threads(prog, work):
    n = 3000
    # Into a pipe (stderr captured by subprocess).
    p = run(prog, ["threads", str(n)], {"FDR_TRACES": "live:thr"})
    check(p.returncode == 0, "threads exit 0")
    check_threads(p.stderr, n, "pipe")
    # Into a file.
    path = os.path.join(work, "threads.txt")
    if os.path.exists(path):
        os.unlink(path)
    p = run(prog, ["threads", str(n)], {"FDR_TRACES": "live:thr", "FDR_TRACE_FILE": path})
    with open(path) as f:
        check_threads(f.read(), n, "file")


def case_tunables_env(prog, work):
    p = run(prog, ["basic"], {"FDR_TRACES": "batch_size=64,gain=1.5,level=7,ratio=1"})
    expect_eq(p.stderr, "", "no warning")
    check("tunables: batch_size=64 level=7 gain=1.5 ratio=1\n" in p.stdout,
          "values from FDR_TRACES: %r" % p.stdout)
    # FDR_EVENTS sets tunables too; FDR_TRACES is applied after it.
    p = run(prog, ["basic"], {"FDR_EVENTS": "batch_size=10 level=1",
                              "FDR_TRACES": "batch_size=0x14 gain=-2.5e-1"})
    expect_eq(p.stderr, "", "no warning")
    check("tunables: batch_size=20 level=1 gain=-0.25 ratio=0.25\n" in p.stdout,
          "FDR_EVENTS then FDR_TRACES: %r" % p.stdout)
    # A spec with only tunables does not change what is recorded.
    d = fresh(work, "tun-rec")
    p = run(prog, ["basic"], {"FDR_OUTPUT": d, "FDR_EVENTS": "level=2"})
    expect_eq(len(trace_events(d)[0]), 5, "FDR_EVENTS=level=2 still records all")


def case_bad(prog, work):
    spec = ("live:start,bogus:*,live:[x,level=12,batch_size=1.5,gain=abc,nosuch=1,"
            "-nope,ratio=0.5,gain=1e999,level=0x10")
    p = run(prog, ["basic"], {"FDR_TRACES": spec})
    printed, _, warns, other = split_stderr(p.stderr)
    check(p.returncode == 0 and p.stdout.endswith("done\n"), "the program goes on")
    expect_eq(printed, [BASIC_ALL[0]], "the rest of the setting applies")
    check("tunables: batch_size=32 level=3 gain=0.5 ratio=0.5\n" in p.stdout,
          "good tunable applied, bad ones not: %r" % p.stdout)
    expect_eq(sorted(warns), sorted([
        'fdr: FDR_TRACES: ignoring malformed item "live:[x": unterminated \'[\'',
        'fdr: FDR_TRACES: ignoring malformed item "gain=abc": invalid number',
        'fdr: FDR_TRACES: ignoring malformed item "gain=1e999": number out of range',
        'fdr: FDR_TRACES: ignoring "level=12": out of range for tunable level (0 to 9)',
        'fdr: FDR_TRACES: ignoring "level=0x10": out of range for tunable level (0 to 9)',
        'fdr: FDR_TRACES: ignoring "batch_size=1.5": tunable batch_size takes an integer',
        'fdr: FDR_TRACES: "bogus:*" matches no known event',
        'fdr: FDR_TRACES: "-nope" matches no known event',
        'fdr: FDR_TRACES: unknown tunable "nosuch" in "nosuch=1"',
    ]), "one warning per bad item")
    expect_eq(other, [], "nothing else")
    p = run(prog, ["basic"], {"FDR_EVENTS": "live:*,-livex:y", "FDR_TRACES": "@/no/such"})
    _, _, warns, other = split_stderr(p.stderr)
    check(len(warns) == 2, "two warnings: %r" % warns)
    check(any(w.startswith("fdr: FDR_TRACES: ") and "/no/such" in w for w in warns),
          "unreadable file named")
    check('fdr: FDR_EVENTS: "-livex:y" matches no known event' in warns, "FDR_EVENTS named")
    # Very long input: no crash, one warning for the long item, rest applies.
    long_spec = "x" * 100000 + ",live:empty," + ",".join("nomatch%d:*" % i for i in range(3))
    p = run(prog, ["basic"], {"FDR_TRACES": long_spec})
    printed, _, warns, _ = split_stderr(p.stderr)
    expect_eq(printed, [BASIC_ALL[3]], "long spec: rest applies")
    check(len(warns) == 4 and all(len(w) < 400 for w in warns), "long spec: 4 short warnings")


def case_help(prog, work):
    for word in ("help", "list"):
        p = run(prog, ["basic"], {"FDR_EVENTS": "-live:skip",
                                  "FDR_TRACES": word + ",live:start,batch_size=64"})
        check(p.returncode == 0 and p.stdout.endswith("done\n"), "program continues")
        lines = p.stderr.splitlines()
        check(lines[0].startswith("fdr: FDR_TRACES (printed), FDR_EVENTS (recorded)"),
              "syntax header first")
        for want in ["  -pattern         switch off; later items override earlier ones",
                     "  name=value       set a tunable (integer or floating: 64, 0x40, 1.5e3)",
                     "  @file            read items from a file (# comments)",
                     "events (R recorded, P printed):",
                     '  R- live:empty  ""',
                     '  RP live:start  "n=%d name=%s"',
                     '  -- live:skip  "never=%d"',
                     '  R- live:value  "x=%u ratio=%.3f neg=%d pad=%05d hex=%#010x"',
                     '  R- other:ping  "seq=%llu"',
                     "tunables (name=value to set):",
                     "  batch_size=64  (integer, default 32)",
                     "  level=3  (integer, default 3, 0 to 9)",
                     "  gain=0.5  (double, default 0.5)",
                     "  ratio=0.25  (double, default 0.25, 0 to 1)"]:
            check(want in lines, "%s: help has %r" % (word, want))
        ev = [l for l in lines if re.match(r"^  [R-][P-] ", l)]
        expect_eq(len(ev), len(ALL_EVENTS), word + ": every event listed once")
        expect_eq(sorted(l[5:l.index("  ", 5)] for l in ev), ALL_EVENTS, word + ": names")
        expect_eq(split_stderr(p.stderr)[0], [BASIC_ALL[0]], "help and still printing")


def case_file(prog, work):
    sub = os.path.join(work, "sub.pat")
    with open(sub, "w") as f:
        f.write("level=8 # from an included file\n")
    path = os.path.join(work, "live.pat")
    with open(path, "w") as f:
        f.write("# events printed by the live test\n"
                "live:*        # everything of live\n"
                "-live:skip\n"
                "batch_size=48\n"
                "@sub.pat\n"
                "nosuchevent   # warned about, with the file and line\n")
    p = run(prog, ["basic"], {"FDR_TRACES": "@" + path})
    printed, _, warns, other = split_stderr(p.stderr)
    expect_eq(printed, BASIC_ALL[0:2] + [BASIC_ALL[3]], "patterns from a file")
    check("tunables: batch_size=48 level=8 gain=0.5 ratio=0.25\n" in p.stdout,
          "tunables from the file and its include: %r" % p.stdout)
    expect_eq(warns, ['fdr: FDR_TRACES: "nosuchevent" matches no known event'],
              "unknown name from the file")


def case_api(prog, work):
    path = os.path.join(work, "api.pat")
    with open(path, "w") as f:
        f.write("live:a\nlevel=5\n")
    p = run(prog, ["api", path], {"FDR_TRACES": "live:b"})
    check(p.returncode == 0, "api exit 0")
    printed = [PREFIX.sub(r"\4", l) for l in p.stderr.splitlines()]
    expect_eq(printed, [
        "step 0 rc=0", "live:a step=0",
        "step 1 rc=0", "live:b step=1",
        "step 2 rc=0",
        "step 3 rc=0", "live:a step=3",
    ], "fdr_trace_set takes effect at once, also from @file")
    out = p.stdout.splitlines()
    for want in ["after file: batch_size=32 level=5 gain=0.5 ratio=0.25",
                 "set batch_size=64: 0", "set level=10: -34", "set level=9: 0",
                 "set_double level=2.5: -22", "set_double level=4: 0",
                 "set_double ratio=1.5: -34", "set_double ratio=0.75: 0",
                 "set gain=2: 0", "set nosuch=1: -2",
                 "get level: 0 value=4 def=3 min=0 max=9 range=1 double=0",
                 "get nosuch: -2",
                 "after api: batch_size=64 level=4 gain=2 ratio=0.75"]:
        check(want in out, "stdout has %r" % want)
    events = sorted(l for l in out if l.startswith("event "))
    want = ["event %s %s" % (n, {"live:a": "--", "live:b": "RP"}.get(n, "R-"))
            for n in ALL_EVENTS]
    expect_eq(events, want, "fdr_event_list states")
    tun = sorted(l for l in out if l.startswith("tunable "))
    expect_eq(tun, ["tunable batch_size=64 def=32 range=0", "tunable gain=-1 def=0.5 range=0",
                    "tunable level=4 def=3 range=1", "tunable ratio=0.75 def=0.25 range=1"],
              "fdr_tunable_list")


CASES = {n[5:].replace("_", "-"): f for n, f in globals().items() if n.startswith("case_")}

if __name__ == "__main__":
    case, prog, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    CASES[case](prog, work)
    fdrtest.finish()
