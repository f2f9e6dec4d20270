# SPDX-License-Identifier: MIT
"""test-fdr-offline-record.py - `fdr record -- cmd` in the embedded mode.

    test-fdr-offline-record.py FDR OFFLINE_PROG OUTDIR

Checks: the layout DIR/<name>-<pid>/ (two processes with offline-prog
parent); the summary line's events, discarded, size and process count
equal to bt2's and the files'; -e patterns select what is recorded (bt2
counts); --quiet prints nothing; the default directory
fdr-record-YYYYmmdd-HHMMSS; the exit status passed through (exit 3), death
by a signal passed through (SIGTERM raised in the command kills fdr record
with SIGTERM); SIGTERM sent to fdr record reaches the command once; ^C
typed on a terminal (a pty) reaches the command once, not twice; a bad
pattern is one line, exit 2, and the command is not run; a missing command
gives 127 and a non-executable one 126, each with its line; a non-empty -o
DIR is refused."""
import collections
import fcntl
import os
import pty
import re
import select
import signal
import subprocess
import sys
import termios
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402

fdr, prog, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
env = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
SUMMARY = re.compile(r"^fdr record: (\d+) events recorded, (\d+) discarded, ([\d.]+) MB, "
                     r"(\d+) process\(es\), in (.+)$")


def fresh(name):
    d = os.path.join(out, name)
    subprocess.run(["rm", "-rf", d], check=True)
    return d


def record(args, cwd=None, extra_env=None, timeout=120):
    e = dict(env)
    e.update(extra_env or {})
    return subprocess.run([fdr, "record"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, cwd=cwd, env=e)


def summary(p, d):
    # The last line; lines before it may only be the library's ("fdr: ...").
    lines = p.stderr.splitlines()
    m = SUMMARY.match(lines[-1]) if lines else None
    if not c.check(m is not None and all(ln.startswith("fdr: ") for ln in lines[:-1]),
                   "no one summary line: %r" % p.stderr):
        return None
    c.check(m.group(5) == d, "summary names %s, not %s" % (m.group(5), d))
    return int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4))


def trace_mb(d):
    n = 0
    for p in os.listdir(d):
        for f in os.listdir(os.path.join(d, p)):
            if f in ("metadata", ".fdr-classes") or f.startswith("stream_"):
                n += os.path.getsize(os.path.join(d, p, f))
    return "%.3f" % (n / 1048576.0)


# Two processes; layout and summary.
d = fresh("two")
N = 25
p = record(["-o", d, "--", prog, "parent", str(N)])
c.check(p.returncode == 0, "two: exit %d: %s" % (p.returncode, p.stderr))
t = c.read(d)
c.clean(d)
dirs = sorted(os.listdir(d))
pids = sorted({e.pid for e in t.events})
c.check(dirs == sorted("offline-prog-%d" % x for x in pids) and len(pids) == 2,
        "layout: %s, pids %s" % (dirs, pids))
s = summary(p, d)
if s:
    c.check(s == (len(t.events), t.discarded, trace_mb(d), 2),
            "summary %s, bt2 (%d, %d), files %s MB" % (s, len(t.events), t.discarded, trace_mb(d)))
c.check(len(t.events) == 2 * (2 + 5 * 4 * N), "two: %d events" % len(t.events))

# Discards counted in the summary as bt2 counts them.
d = fresh("burst")
p = record(["-o", d, "--", prog, "burst", "50000", "3"],
           extra_env={"FDR_PACKET_SIZE": "4096", "FDR_BUFFER_SIZE": "8192"})
t = c.read(d)
s = summary(p, d)
emitted = int(p.stdout.split()[1]) if p.stdout else -1
if s:
    c.check(s[0] == len(t.events) and s[1] == t.discarded and s[1] > 0 and
            s[0] + s[1] == emitted, "burst: summary %s, bt2 %d + %d, emitted %d"
            % (s, len(t.events), t.discarded, emitted))

# -e selection; --overwrite runs (FDR_MODE=overwrite) with the same events.
for name, extra in [("select", []), ("select-ovw", ["--overwrite"])]:
    d = fresh(name)
    p = record(["-e", "ofl:ints", "-e", "text,oraw:*"] + extra + ["-o", d, "--", prog, "types", "10"])
    t = c.read(d, overwritten=bool(extra))
    got = collections.Counter(e.name for e in t.events)
    c.check(dict(got) == {"ofl:ints": 40, "ofl:text": 40, "oraw:event_0": 40},
            "%s: recorded %s" % (name, dict(got)))
    s = summary(p, d)
    c.check(s is not None and s[0] == 120, "%s: summary %s" % (name, s))

# --quiet, and the default directory name.
cwd = fresh("cwd")
os.makedirs(cwd)
p = record(["--quiet", "--", prog, "types", "2"], cwd=cwd)
made = os.listdir(cwd)
c.check(p.returncode == 0 and p.stderr == "", "--quiet: exit %d, %r" % (p.returncode, p.stderr))
c.check(len(made) == 1 and re.fullmatch(r"fdr-record-\d{8}-\d{6}", made[0]) is not None,
        "default directory: %s" % made)
if len(made) == 1:
    c.check(len(c.read(os.path.join(cwd, made[0])).events) == 2 + 5 * 4 * 2,
            "default directory: wrong event count")

# Exit status and death by signal passed through.
d = fresh("exit3")
p = record(["-o", d, "--", prog, "exit", "3"])
c.check(p.returncode == 3, "exit 3: fdr record exited %d" % p.returncode)
s = summary(p, d)
c.check(s is not None and s[0] == 1, "exit 3: summary %s" % (s,))
d = fresh("term")
p = record(["-o", d, "--", prog, "kill", str(int(signal.SIGTERM))])
c.check(p.returncode == -signal.SIGTERM, "SIGTERM in the command: fdr record status %d"
        % p.returncode)
s = summary(p, d)
c.check(s is not None and s[0] == 1, "SIGTERM: summary %s" % (s,))

# SIGTERM sent to fdr record: forwarded, once.
d = fresh("fwd")
pr = subprocess.Popen([fdr, "record", "-o", d, "--", prog, "sigcount"], stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE, text=True, env=env)
line = pr.stdout.readline()
c.check(line == "ready\n", "sigcount: %r" % line)
pr.send_signal(signal.SIGTERM)
o, e = pr.communicate(timeout=60)
c.check(pr.returncode == 1, "SIGTERM forwarded: the command counted %d signals (exit %d), not 1"
        % (pr.returncode, pr.returncode))
c.check(SUMMARY.match(e.strip()) is not None, "fwd: %r" % e)

# A command killed with nothing to finish its trace (FDR_DRAIN=off: no drain
# helper) after its trace was begun: its event is lost, uncounted, and the
# summary says so in a line of its own, naming the process (it said
# "1 events recorded"-style numbers only, as if the trace were whole).
d = fresh("cut")
pr = subprocess.Popen([fdr, "record", "-o", d, "--", prog, "sigcount"], stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE, text=True, env=dict(env, FDR_DRAIN="off"))
c.check(pr.stdout.readline() == "ready\n", "cut: no ready")
# The process's directory, once its classes are written (the consumer
# thread's first work): then a trace exists that the kill leaves unfinished.
t0 = time.monotonic()
procs = []
while time.monotonic() - t0 < 120:
    procs = [x for x in os.listdir(d) if os.path.exists(os.path.join(d, x, ".fdr-classes"))] \
        if os.path.isdir(d) else []
    if procs:
        break
    time.sleep(0.01)
c.check(len(procs) == 1, "cut: no process directory with its classes within 120 s: %s" % procs)
if procs:
    os.kill(int(procs[0].rsplit("-", 1)[1]), signal.SIGKILL)
o, e = pr.communicate(timeout=60)
c.check(pr.returncode == -signal.SIGKILL, "cut: fdr record status %d" % pr.returncode)
lines = e.splitlines()
warn = re.compile(r"^fdr record: %s: warning: process %s ended before finishing this trace "
                  r"\(killed with its drain helper, or without one\): the events it had not "
                  r"written yet are lost, and no count says how many$"
                  % (re.escape(os.path.join(d, procs[0] if procs else "?")),
                     procs[0].rsplit("-", 1)[1] if procs else "?"))
c.check(len(lines) == 2 and warn.match(lines[0]) and SUMMARY.match(lines[1]),
        "cut: not one warning line then the summary: %r" % e)

# ^C on a terminal: the command gets it from the terminal, not again from fdr.
# (Not under TSan: FDR_TEST_NO_TTY, see fdr-offline.cmake.)
if not os.environ.get("FDR_TEST_NO_TTY"):
    d = fresh("tty")
    master, slave = pty.openpty()


    def ctty():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)


    pr = subprocess.Popen([fdr, "record", "-o", d, "--", prog, "sigcount"], stdin=slave,
                          stdout=slave, stderr=slave, env=env, preexec_fn=ctty)
    os.close(slave)
    buf = b""


    def read_until(pred, limit=60):
        global buf
        while not pred(buf):
            r, _, _ = select.select([master], [], [], limit)
            if not r:
                return False
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return pred(buf)
            if not chunk:
                return pred(buf)
            buf += chunk
        return True


    c.check(read_until(lambda b: b"ready" in b), "tty: no ready: %r" % buf)
    os.write(master, b"\x03")
    rc = pr.wait(timeout=60)
    read_until(lambda b: b"fdr record:" in b and b.endswith(b"\n"), 10)
    os.close(master)
    c.check(rc == 1, "^C on a terminal: the command counted %d signals, not 1" % rc)
    c.check(b"fdr record: 1 events recorded" in buf, "tty: %r" % buf)

# A bad pattern: one line, exit 2, the command not run.
marker = os.path.join(out, "marker")
if os.path.exists(marker):
    os.remove(marker)
d = fresh("badpat")
p = record(["-e", "ofl:ints", "-e", "net:[rx", "-o", d, "--", "touch", marker])
c.check(p.returncode == 2 and p.stderr.count("\n") == 1 and "bad pattern 'net:[rx'" in p.stderr
        and "unterminated '['" in p.stderr, "bad pattern: %d %r" % (p.returncode, p.stderr))
c.check(not os.path.exists(marker) and not os.path.exists(d), "bad pattern: the command ran")

# Commands that cannot run.
d = fresh("missing")
p = record(["-o", d, "--", "no-such-command-fdr"])
c.check(p.returncode == 127 and p.stderr ==
        "fdr record: cannot run 'no-such-command-fdr': No such file or directory\n",
        "missing command: %d %r" % (p.returncode, p.stderr))
noexec = os.path.join(out, "noexec")
with open(noexec, "w") as f:
    f.write("#!/bin/sh\n")
os.chmod(noexec, 0o644)
d = fresh("noexec-out")
p = record(["-o", d, "--", noexec])
c.check(p.returncode == 126 and p.stderr ==
        "fdr record: cannot run '%s': Permission denied\n" % noexec,
        "non-executable command: %d %r" % (p.returncode, p.stderr))

# A non-empty -o DIR, a missing command line, an unknown option.
p = record(["-o", os.path.join(out, "two"), "--", prog, "types", "1"])
c.check(p.returncode == 1 and p.stderr.count("\n") == 1 and "is not empty" in p.stderr,
        "non-empty -o: %d %r" % (p.returncode, p.stderr))
p = record(["-o", fresh("nocmd")])
c.check(p.returncode == 2 and p.stderr.startswith("usage: fdr record"), "no command: %r" % p.stderr)
p = record(["--bogus", "--", "true"])
c.check(p.returncode == 2 and p.stderr.count("\n") == 1, "unknown option: %r" % p.stderr)
c.finish()
