#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""check.py - runs a QEMU built with the fdr back-end and shows what fdr
does with QEMU's trace points (called by scripts/qemu-check.sh, which
builds it; not part of CI: a QEMU build is long).

    check.py QEMU-SRC QEMU-BUILD FDR-PREFIX WORKDIR [NOP-BUILD]

QEMU-BUILD holds qemu-img and qemu-io configured with
--enable-trace-backends=fdr,log; FDR-PREFIX is where fdr is installed
(bin/fdr, bin/fdrd). WORKDIR receives the images and traces (a tmpfs such
as /dev/shm keeps the disk out of the overhead figures). Each step prints
what it saw and the run stops at the first failure with one line saying
what was expected:

  1. FDR_TRACES='qcow2_*' qemu-img convert: QEMU's events printed live;
  2. FDR_OUTPUT + QEMU's log back-end (-T) in the same run: every qcow2_*
     event read back with babeltrace2 (bt2), rendered with its format from
     the trace-events file, equals the log back-end's line for it, and no
     event is discarded;
  3. fdr record -- qemu-img convert: the trace holds QEMU's events;
  4. SIGSEGV sent to qemu-img in the middle of a (rate-limited) convert with
     FDR_CRASH_DIR: the crash snapshot holds the events before the crash;
  5. fdr control PID on a running qemu-io (fdrd on a private socket):
     printing switched on, then off, between two writes;
  6. fdr scope -- qemu-img convert: the scope's /api/events counts QEMU's
     events (fdrd started by the scope, stopped at the end);
  7. the overhead of a 1 GiB qemu-img convert: fdr with events off, all
     recorded (the default), one busy event recorded, the log back-end
     printing it to a file, and the nop back-end's build when NOP-BUILD is
     given; interleaved runs, medians.
"""
import collections
import os
import re
import resource
import select
import shutil
import signal
import statistics
import subprocess
import sys
import time
import json
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "lib"))
import tracecheck  # noqa: E402

src, build, prefix, work = sys.argv[1:5]
nop_build = sys.argv[5] if len(sys.argv) > 5 else None
img = os.path.join(build, "qemu-img")
io = os.path.join(build, "qemu-io")
fdr = os.path.join(prefix, "bin", "fdr")
fdrd = os.path.join(prefix, "bin", "fdrd")
RUNS = int(os.environ.get("QEMU_CHECK_RUNS", "5"))


def fail(msg):
    print("qemu-check: FAIL: " + msg, flush=True)
    sys.exit(1)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
    env.update(extra)
    return env


def run(cmd, env=None, **kw):
    p = subprocess.run(cmd, env=env or clean_env(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=600, **kw)
    if p.returncode != 0:
        fail("%s exited with %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:]))
    return p


def wait_for(what, pred, seconds=120):
    """Polls pred() until true; fails naming what it still waited for."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    fail("still waiting after %d s for %s" % (seconds, what))


# -- formats of QEMU's events, from its trace-events files -----------------

def trace_formats():
    """name -> C format expression of every event of QEMU_SRC."""
    fmts = {}
    ev = re.compile(r'^\s*(?:[a-z-]+\s+)*([A-Za-z0-9_]+)\((.*?)\)\s*(".*)?$')
    for root, _, files in os.walk(src):
        if "trace-events" not in files:
            continue
        for line in open(os.path.join(root, "trace-events"), errors="replace"):
            if line.lstrip().startswith("#"):
                continue
            m = ev.match(line.rstrip("\n"))
            if m:
                fmts[m.group(1)] = (m.group(3) or '""').strip()
    return fmts


_ESC = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'", "r": "\r"}
_PRI = re.compile(r"PRI([diouxX])(8|16|32|64|PTR|MAX)")
_CONV = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|z|j|t|L|q)?([diouxXcsp%])")


def c_format(expr):
    """The format text a C compiler would make of the expression: literals
    joined, escapes decoded, PRI macros expanded to their conversion (the
    length is irrelevant here: Python integers have none)."""
    text = []
    for tok in re.finditer(r'"((?:[^"\\]|\\.)*)"|([A-Za-z_]\w*)', expr):
        if tok.group(2):
            m = _PRI.fullmatch(tok.group(2))
            if not m:
                raise ValueError("macro %s in a format" % tok.group(2))
            text.append("ll" + m.group(1))
            continue
        lit = tok.group(1)
        lit = re.sub(r"\\([0-7]{1,3}|x[0-9a-fA-F]+|.)", lambda e: _ESC.get(
            e.group(1), chr(int(e.group(1)[1:], 16)) if e.group(1)[0] == "x" else
            chr(int(e.group(1), 8)) if e.group(1)[0] in "01234567" else e.group(1)), lit)
        text.append(lit)
    return "".join(text)


def render(fmt, values):
    """printf(fmt, values...) as glibc prints it, for the conversions QEMU's
    events use."""
    vals = list(values)

    def conv(m):
        flags, width, prec, length, c = m.groups()
        if c == "%":
            return "%"
        if width == "*":
            width = str(vals.pop(0))
        if prec == "*":
            prec = str(vals.pop(0))
        v = vals.pop(0)
        spec = "%" + flags + (width or "") + ("." + prec if prec is not None else "")
        if c == "p":
            return (spec + "s") % ("(nil)" if v == 0 else "0x%x" % v)
        if c == "s":
            return (spec + "s") % ("(null)" if v is None else v)
        if c == "c":
            return (spec + "c") % chr(v)
        if c in "ouxX" and v < 0:
            v += 2 ** (64 if length in ("l", "ll", "z", "j", "t", "q") else 32)
        return (spec + ("d" if c in "iu" else c)) % v

    out = _CONV.sub(conv, fmt)
    if vals:
        raise ValueError("%d values left over by %r" % (len(vals), fmt))
    return out


def read_events(path, prefix_name="block:qcow2_"):
    t = tracecheck.read(path)
    return t, [e for e in t.events if e.name.startswith(prefix_name)]


# -- the runs ---------------------------------------------------------------

shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
small = os.path.join(work, "small.qcow2")
run([img, "create", "-q", "-f", "qcow2", small, "64M"])
run([io, "-f", "qcow2", "-c", "write -P 0x5a 0 8M", "-c", "write -P 0xa5 32M 4M", small])

ver = run([img, "--version"]).stdout.splitlines()[0]
print("QEMU: %s (%s)" % (ver, build))

# 1. printed live
p = run([img, "convert", "-O", "qcow2", small, os.path.join(work, "p.qcow2")],
        env=clean_env(FDR_TRACES="qcow2_*"))
printed = re.findall(r"\] block:(qcow2_\w+)", p.stderr)
if not printed:
    fail("FDR_TRACES='qcow2_*' qemu-img convert printed no qcow2 event:\n" + p.stderr[-2000:])
kinds = collections.Counter(printed)
print("1. FDR_TRACES='qcow2_*' qemu-img convert: %d events printed, %d kinds (%s)" % (
    len(printed), len(kinds), ", ".join("%s x%d" % kv for kv in sorted(kinds.items()))))
print("   first line: " + next(l for l in p.stderr.splitlines() if "block:qcow2_" in l))

# 2. FDR_OUTPUT and the log back-end, same run
out = os.path.join(work, "out")
log = os.path.join(work, "log.txt")
run([img, "--trace", "enable=qcow2_*,file=" + log, "convert", "-O", "qcow2", small,
     os.path.join(work, "o.qcow2")], env=clean_env(FDR_OUTPUT=out))
t, evs = read_events(out)
if t.discarded:
    fail("%d events discarded in the FDR_OUTPUT trace" % t.discarded)
fmts = trace_formats()
mine = collections.Counter()
nfields = 0
for e in evs:
    name = e.name.split(":", 1)[1]
    mine[name + " " + render(c_format(fmts[name]), e.fields.values())] += 1
    nfields += len(e.fields)
theirs = collections.Counter(l for l in open(log).read().splitlines() if l.startswith("qcow2_"))
if not theirs:
    fail("the log back-end wrote no qcow2 line to " + log)
if mine != theirs:
    only_fdr = list((mine - theirs).elements())[:5]
    only_log = list((theirs - mine).elements())[:5]
    fail("the FDR_OUTPUT trace and the log differ:\n  fdr only: %s\n  log only: %s" % (
        only_fdr, only_log))
print("2. FDR_OUTPUT + -T 'enable=qcow2_*' (log back-end), one run: %d qcow2 events "
      "(%d fields) read with bt2, all %d of the log's lines equal, 0 discarded; "
      "%d events of %d kinds in the whole trace" % (
          len(evs), nfields, sum(theirs.values()), len(t.events),
          len({e.name for e in t.events})))
first = evs[0].name.split(":", 1)[1]
print("   e.g. bt2: %s %s" % (evs[0].name, dict(evs[0].fields)))
print("        rendered, a line of the log: %s" % (first + " " + render(c_format(fmts[first]), evs[0].fields.values())))

# 3. fdr record
rec = os.path.join(work, "rec")
p = run([fdr, "record", "-o", rec, "--", img, "convert", "-O", "qcow2", small,
         os.path.join(work, "r.qcow2")])
t, evs = read_events(rec)
if not evs:
    fail("fdr record's trace holds no qcow2 event")
print("3. fdr record -- qemu-img convert: %s; %d qcow2 events, %d in all" % (
    p.stderr.strip().splitlines()[-1], len(evs), len(t.events)))

# 4. crash dump: SIGSEGV in the middle of a rate-limited convert
crash = os.path.join(work, "crash")
started = os.path.join(work, "crash.err")
with open(started, "w") as err:
    q = subprocess.Popen([img, "convert", "-r", "4M", "-O", "qcow2", small,
                          os.path.join(work, "c.qcow2")],
                         env=clean_env(FDR_CRASH_DIR=crash, FDR_TRACES="qcow2_writev_start_req"),
                         stdout=subprocess.DEVNULL, stderr=err)
try:
    wait_for("qemu-img convert to write (qcow2_writev_start_req printed)",
             lambda: "qcow2_writev_start_req" in open(started).read())
    if q.poll() is not None:
        fail("qemu-img convert -r 4M ended before the signal")
    q.send_signal(signal.SIGSEGV)
    rc = q.wait(timeout=120)
finally:
    if q.poll() is None:
        q.kill()
        q.wait()
if rc != -signal.SIGSEGV:
    fail("qemu-img ended with %d after SIGSEGV" % rc)
t, evs = read_events(os.path.join(crash, "crash-%d" % q.pid))
if not evs:
    fail("the crash snapshot holds no qcow2 event")
print("4. SIGSEGV to qemu-img convert -r 4M mid-run: crash-%d/ holds %d events, "
      "%d qcow2 (last: %s)" % (q.pid, len(t.events), len(evs), evs[-1].name))

# 5. fdr control on a running qemu-io
rundir = os.path.join(work, "run")
os.makedirs(rundir, mode=0o700)
env = clean_env(FDR_RUNDIR=rundir)
d = subprocess.Popen([fdrd, "-f"], env=env, stdout=subprocess.DEVNULL,
                     stderr=open(os.path.join(work, "fdrd.log"), "w"))
qerr = os.path.join(work, "qemu-io.err")
qio = None
try:
    wait_for("fdrd's socket", lambda: os.path.exists(os.path.join(rundir, "fdrd.sock")))
    qio = subprocess.Popen([io, "-f", "qcow2", small], env=env, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=open(qerr, "w"), text=True,
                           bufsize=1)
    buf = [""]

    def command(c):
        """Sends a qemu-io command and waits for its "read N/N bytes" line."""
        qio.stdin.write(c + "\n")
        qio.stdin.flush()
        end = time.monotonic() + 120
        while "bytes at offset" not in buf[0]:
            if time.monotonic() > end or qio.poll() is not None:
                fail("qemu-io did not answer %r: %r" % (c, buf[0][-300:]))
            r, _, _ = select.select([qio.stdout], [], [], 1)
            if r:
                buf[0] += os.read(qio.stdout.fileno(), 4096).decode()
        buf[0] = ""

    def printed_now():
        return len(re.findall(r"block:qcow2_", open(qerr).read()))

    def control(*args):
        c = subprocess.run([fdr, "control", str(qio.pid)] + list(args), env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=120)
        if c.returncode != 0:
            fail("fdr control %s: %s" % (" ".join(args), c.stderr.strip()))
        return c.stdout

    command("write -P 7 0 64k")
    n0 = printed_now()
    # the program registers with fdrd at start: wait until fdr control
    # knows it (its first answer lists QEMU's events)
    wait_for("fdr control to list qemu-io's events",
             lambda: "qcow2_writev_start_req" in control())
    control("--print", "qcow2_*")
    command("write -P 7 0 64k")
    n1 = printed_now()
    control("--print", "none")
    command("write -P 7 0 64k")
    n2 = printed_now()
    if not (n0 == 0 and n1 > 0 and n2 == n1):
        fail("qemu-io printed %d, %d, %d qcow2 lines (before, after --print qcow2_*, after "
             "--print none); expected 0, more, the same" % (n0, n1, n2))
    state = [l for l in control().splitlines() if "qcow2_writev_start_req" in l]
    print("5. fdr control PID on a running qemu-io: 0 lines printed, --print 'qcow2_*': "
          "%d lines after one write, --print none: no more (%s)" % (n1, state[0].strip()))
    qio.stdin.write("quit\n")
    qio.stdin.close()
    qio.wait(timeout=120)
finally:
    if qio and qio.poll() is None:
        qio.kill()
        qio.wait()
    d.terminate()
    d.wait(timeout=120)

# 6. fdr scope -- qemu-img: the scope's event list counts QEMU's events
srun = os.path.join(work, "scope-run")
os.makedirs(srun, mode=0o700)
senv = clean_env(FDR_RUNDIR=srun)
sout = os.path.join(work, "scope.out")
child = None
sc = subprocess.Popen([fdr, "scope", "--", img, "convert", "-r", "2M", "-O", "qcow2", small,
                       os.path.join(work, "s.qcow2")], env=senv,
                      stdout=open(sout, "w"), stderr=subprocess.DEVNULL)
try:
    wait_for("fdr scope's URL", lambda: "token=" in open(sout).read())
    url = re.search(r"(http://\S+)/\?token=(\w+)", open(sout).read())
    seen = {}

    def qcow2_counted():
        with urllib.request.urlopen("%s/api/events?token=%s" % url.groups(), timeout=30) as r:
            evs = json.load(r)["events"]
        seen.update((e["id"], e["count"]) for e in evs)
        return seen.get("block:qcow2_cache_get", 0) > 0

    with urllib.request.urlopen("%s/api/info?token=%s" % url.groups(), timeout=30) as r:
        child = json.load(r)["pid"]
    wait_for("the scope to count block:qcow2_cache_get", qcow2_counted)
    print("6. fdr scope -- qemu-img convert: %d events listed, block:qcow2_cache_get counted "
          "%d times so far" % (len(seen), seen["block:qcow2_cache_get"]))
finally:
    sc.terminate()
    sc.wait(timeout=120)
    if child:  # the scope leaves its command running: stop the convert
        try:
            os.kill(child, signal.SIGTERM)
        except ProcessLookupError:
            pass
    pidfile = os.path.join(srun, "fdrd.pid")  # the fdrd that fdr scope started
    if os.path.exists(pidfile):
        try:
            os.kill(int(open(pidfile).read()), signal.SIGTERM)
        except (ProcessLookupError, ValueError):
            pass

# 7. overhead
if RUNS <= 0:
    print("qemu-check: all checks passed (no overhead table: QEMU_CHECK_RUNS=0)")
    sys.exit(0)
big = os.path.join(work, "big.qcow2")
raw = os.path.join(work, "big.raw")
with open(raw, "wb") as f:  # 1 GiB of data: every cluster allocated
    block = bytes(range(256)) * 4096
    for _ in range(1024):
        f.write(block)
run([img, "convert", "-f", "raw", "-O", "qcow2", raw, big])
os.unlink(raw)
dst = os.path.join(work, "big-out.qcow2")
BUSY = "qcow2_cache_get"  # the most frequent event of a convert
configs = []
if nop_build:
    configs.append(("nop back-end build", os.path.join(nop_build, "qemu-img"), [], {}))
configs += [
    ("fdr,log build: fdr events off (FDR_EVENTS=-*)", img, [], {"FDR_EVENTS": "-*"}),
    ("fdr,log build: all events recorded (default)", img, [], {}),
    ("fdr,log build: fdr records %s only" % BUSY, img, [], {"FDR_EVENTS": BUSY}),
    ("fdr,log build: log prints %s to a file" % BUSY, img,
     ["--trace", "enable=%s,file=%s" % (BUSY, os.path.join(work, "busy.log"))],  # rewritten each run
     {"FDR_EVENTS": "-*"}),
]
times = collections.defaultdict(list)
cpu = collections.defaultdict(list)  # user + sys of qemu-img, all its threads
for i in range(RUNS):
    for name, binary, opts, extra in configs:
        if os.path.exists(dst):
            os.unlink(dst)
        t0 = time.monotonic()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        run([binary] + opts + ["convert", "-O", "qcow2", big, dst], env=clean_env(**extra))
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        times[name].append(time.monotonic() - t0)
        cpu[name].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
n_busy = sum(1 for l in open(os.path.join(work, "busy.log")) if l.startswith(BUSY + " "))
print("7. qemu-img convert -O qcow2 of a 1 GiB qcow2 (%s), %d interleaved runs each; "
      "%s fired %d times (the log of the last run):" % (work, RUNS, BUSY, n_busy))
base = statistics.median(times[configs[0][0]])
cbase = statistics.median(cpu[configs[0][0]])
print("   | configuration | wall median s | wall min s | vs first | CPU median s | vs first |")
print("   |---|---|---|---|---|---|")
for name, *_ in configs:
    m = statistics.median(times[name])
    c = statistics.median(cpu[name])
    print("   | %s | %.3f | %.3f | %+.1f%% | %.3f | %+.1f%% |" % (
        name, m, min(times[name]), 100 * (m / base - 1), c, 100 * (c / cbase - 1)))
os.unlink(dst)
os.unlink(big)
print("qemu-check: all checks passed")
