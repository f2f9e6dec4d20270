# SPDX-License-Identifier: MIT
"""test-fdr-daemon-recover.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
file-backed buffers (fdr create --file-buffers) and `fdr recover`.

A real fdrd, two traces with file-backed buffers, both selecting ses:*:
D in discard mode (its own directory), O in overwrite mode (fdrd's default
directory, <run dir>/buffers/..., as fdr create prints it). Small rings
(O: 4 packets of 16K, so that it wraps; D: 64 of them, written by fdrd
as they fill).
Two programs "go 3 N kill" (3 threads each record N ses:tick, ses:rare at
every 10th, ses:hot at every 7th, then keep their packets open), one
"go 1 NX kill" that records more than its D ring holds while fdrd is
stopped (SIGSTOP: its discards are reported by no packet fdrd wrote), and
one storm (2 threads flat out). Once the go programs are done and fdrd wrote
every closed packet of their D rings (polled: consumed == produced in each
ring file's header), fdrd is SIGKILLed, then every program. Random bytes
over the header of one storm ring of D, and over the middle of another.

  - fdr recover D: exit 1, one line for the corrupt ring, a summary line
    that counts it; fdr recover O: exit 0; babeltrace2 reads both
    outputs without an error; on a terminal (a pty) recover shows its
    progress bar;
  - D, per go thread: what fdrd wrote before it died plus what was
    recovered holds every event at most once, in order, and recorded +
    discarded == emitted exactly (bt2, per_thread), the discards of the
    program recorded while fdrd was stopped too;
  - O, per go thread and event: n strictly increasing, the last tick
    n = N-1 (the newest events, from the open packets);
  - errors of fdr recover (missing directory, not a buffer directory, a
    ring that is a symlink, a process without metadata, usage) and of
    fdr create --file-buffers (a directory that exists);
  - with a new fdrd: destroy removes the buffer directory after writing
    everything; a program that shrinks its own ring files (SIGBUS for a
    careless reader) leaves fdrd up and another program's trace exact."""
import collections
import glob
import os
import pty
import re
import signal
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]

THREADS, N = 3, 20000
NX = 60000  # the go program that records while fdrd is stopped: > its 1M ring


def emitted(n):
    """Events a go thread records: n ses:tick, ses:rare at every 10th,
    ses:hot at every 7th."""
    return n + (n + 9) // 10 + (n + 6) // 7


EMITTED = emitted(N)
SIZES = ["--buffer-size", "64K", "--packet-size", "16K"]
# D's rings hold a go thread's events, so that its open packet holds the
# last ones (fdrd may still lag and discard: the accounting covers it).
SIZES_D = ["--buffer-size", "1M", "--packet-size", "16K"]


def ring_header(path):
    """(mode, produced, consumed) of a ring file (common/ring.h); None while
    fdrd is still making it."""
    with open(path, "rb") as f:
        b = f.read(136)
    if len(b) < 136:
        return None
    mode = struct.unpack_from("=I", b, 16)[0]
    produced = struct.unpack_from("=Q", b, 64)[0]
    consumed = struct.unpack_from("=Q", b, 128)[0]
    return mode, produced, consumed


def routed(*args, routes=2):
    """session-prog ARGS, once fdrd routed it into `routes` traces (FDR_DEBUG
    says so once per route; its rings came before each)."""
    e = dict(s.env)
    e["FDR_DEBUG"] = "1"
    p = subprocess.Popen([prog] + list(args), env=e, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    h.wait_route(p, routes)
    return p


def kill(pid):
    os.kill(pid, signal.SIGKILL)
    h.wait_for(lambda: not h.pid_alive(pid), "pid %d dies" % pid)


def bt_cli(path):
    p = subprocess.run(["babeltrace2", path], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=600)
    c.check(p.returncode == 0 and "ERROR" not in p.stderr,
            "babeltrace2 %s: exit %d: %s" % (path, p.returncode, p.stderr[-2000:]))


out_d = os.path.join(s.work, "out-D")
out_o = os.path.join(s.work, "out-O")
buf_d = os.path.join(s.work, "buffers-D")
s.start()
fdrd = s.daemon_pid()
r = s.fdr("create", "D", "-o", out_d, "--file-buffers=" + buf_d, *SIZES_D)
c.check(r.stdout == "trace D created, buffers in %s\n" % buf_d, "create D: %r" % r.stdout)
r = s.fdr("create", "O", "-o", out_o, "--overwrite", "--file-buffers", *SIZES)
m = re.match(r"trace O created, buffers in (.*)\n$", r.stdout)
c.check(m is not None, "create O: %r" % r.stdout)
buf_o = m.group(1)
c.check(buf_o.startswith(os.path.join(s.rundir, "buffers") + "/O-"),
        "O's buffers under the run directory: %s" % buf_o)
for d in (buf_d, buf_o, os.path.dirname(buf_o)):
    st = os.lstat(d)
    c.check(st.st_mode & 0o7777 == 0o700, "%s: mode %o" % (d, st.st_mode & 0o7777))
s.fdr_err(["create", "E", "--file-buffers=" + buf_d],
          "fdr create: buffer directory %s exists (what an earlier fdrd left? fdr "
          "recover it, then remove it)" % buf_d, 1)
for t in ("D", "O"):
    s.fdr("enable", t, "ses:*")
    s.fdr("start", t)

gos = [routed("go", str(THREADS), str(N), "kill") for _ in range(2)]
# One more fills its D ring while fdrd is stopped: its last events are
# discarded, counted by no packet fdrd wrote; the recovery must report them.
gx = routed("go", "1", str(NX), "kill")
shape = {p.pid: (THREADS, N) for p in gos}
shape[gx.pid] = (1, NX)
os.kill(fdrd, signal.SIGSTOP)
gx.stdin.write("go\n")
gx.stdin.flush()
c.check(h.line(gx) == "done\n", "pid %d: not done" % gx.pid)
os.kill(fdrd, signal.SIGCONT)
storm = routed("storm", "2")
c.check(h.line(storm) == "ready\n", "storm ready")
for p in gos:
    p.stdin.write("go\n")
    p.stdin.flush()
for p in gos:
    c.check(h.line(p) == "done\n", "pid %d: not done" % p.pid)
gos.append(gx)


def proc_dir(buf, pid):
    return os.path.join(buf, "session-prog-%d" % pid)


def settled():
    """Every class is in the buffer directories' metadata, and fdrd wrote
    every closed packet of the go programs' D rings."""
    for buf in (buf_d, buf_o):
        for p in gos + [storm]:
            try:
                with open(os.path.join(proc_dir(buf, p.pid), "metadata")) as f:
                    meta = f.read()
            except FileNotFoundError:
                return False
            if not all('"ses:%s"' % n in meta for n in ("tick", "rare")):
                return False
            if p is not storm and '"ses:hot"' not in meta:
                return False
    for p in gos:
        for ring in glob.glob(os.path.join(proc_dir(buf_d, p.pid), "ring-*")):
            hdr = ring_header(ring)
            if hdr is None or hdr[1] != hdr[2]:
                return False
    return True


h.wait_for(settled, "fdrd caught up", limit=300)
kill(fdrd)
for p in gos + [storm]:
    kill(p.pid)
    p.wait()

# The storm's D rings: one header overwritten, one ring's middle.
used = []
for ring in sorted(glob.glob(os.path.join(proc_dir(buf_d, storm.pid), "ring-*"))):
    if (ring_header(ring) or (0, 0, 0))[1] > 1:
        used.append(ring)
c.check(len(used) >= 2, "storm rings used: %s" % used)
with open(used[0], "r+b") as f:
    f.write(os.urandom(256))
with open(used[1], "r+b") as f:
    f.seek(4096 + 16384 + 1000)
    f.write(os.urandom(3000))

rec_d = os.path.join(s.work, "rec-D")
rec_o = os.path.join(s.work, "rec-O")
r = s.run(["recover", buf_d, "-o", rec_d])
c.check(r.returncode == 1, "recover D: exit %d: %s" % (r.returncode, r.stderr))
bad = "%s/%s" % (os.path.basename(os.path.dirname(used[0])), os.path.basename(used[0]))
c.check(r.stderr == "fdr recover: %s: not a ring (corrupt header): skipped\n" % bad,
        "recover D stderr: %r" % r.stderr)
c.check(re.match(r"recovered [1-9]\d* events in [1-9]\d* packets from \d+ rings of 4 "
                 r"processes into %s; 1 rings skipped, \d+ corrupt packets skipped, \d+ "
                 r"packets cut\n$" % re.escape(rec_d), r.stdout),
        "recover D summary: %r" % r.stdout)
r = s.run(["recover", buf_o, "-o", rec_o])
c.check(r.returncode == 0 and r.stderr == "", "recover O: %d %r" % (r.returncode,
                                                                    r.stderr))
c.check(re.match(r"recovered [1-9]\d* events in [1-9]\d* packets from \d+ rings of 4 "
                 r"processes into %s; 0 rings skipped, 0 corrupt packets skipped, 0 "
                 r"packets cut\n$" % re.escape(rec_o), r.stdout),
        "recover O summary: %r" % r.stdout)
for d in (rec_d, rec_o):
    bt_cli(d)

# On a terminal, recover shows its progress bar (bytes of ring files done of
# all, rate, time left); on a pipe (above) it printed nothing but its line.
master, slave = pty.openpty()
e = dict(s.env, FDR_PROGRESS_DELAY_MS="0")
pr = subprocess.Popen([s.fdr_bin, "recover", buf_o, "-o", rec_o + "-tty"], env=e,
                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
os.close(slave)
seen = b""
while True:
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
os.close(master)
c.check(pr.wait(timeout=120) == 0 and b"\r\x1b[Kfdr recover: " in seen and
        b" MB of " in seen and b"MB/s" in seen, "recover: no progress bar on a "
        "terminal: %r" % seen[:200])

# D: fdrd's output and the recovered rest, exact per thread.
rec_events = 0
for p in gos:
    threads, n = shape[p.pid]
    name = "session-prog-%d" % p.pid
    events = collections.defaultdict(list)
    lost = collections.Counter()
    for part in (os.path.join(out_d, name), os.path.join(rec_d, name)):
        if not os.path.isdir(part):
            continue
        ns, ls = h.per_thread(part)
        if part.startswith(rec_d):
            rec_events += sum(len(v) for v in ns.values())
        for k, v in ns.items():
            events[k] += v
        lost.update(ls)
    tids = {tid for (tid, _) in events}
    c.check(len(tids) == threads, "D pid %d: %d threads" % (p.pid, len(tids)))
    for (tid, ev), v in events.items():
        c.check(all(a < b for a, b in zip(v, v[1:])),
                "D pid %d tid %d %s: n not strictly increasing across fdrd's output and "
                "the recovered part" % (p.pid, tid, ev))
    for tid in tids:
        got = sum(len(v) for (t, _), v in events.items() if t == tid)
        c.check(got + lost[tid] == emitted(n), "D pid %d tid %d: %d recorded + %d "
                "discarded, emitted %d" % (p.pid, tid, got, lost[tid], emitted(n)))
        if p is gx:
            c.check(lost[tid] > 0, "D: the stopped fdrd made pid %d lose events"
                    % p.pid)
c.check(rec_events > 0, "D: the open packets were recovered")

# O: the newest events of every thread, the last one among them.
for p in gos:
    threads, n = shape[p.pid]
    ns, _ = h.per_thread(os.path.join(rec_o, "session-prog-%d" % p.pid))
    tids = {tid for (tid, _) in ns}
    c.check(len(tids) == threads, "O pid %d: %d threads" % (p.pid, len(tids)))
    for (tid, ev), v in ns.items():
        c.check(all(a < b for a, b in zip(v, v[1:])),
                "O pid %d tid %d %s: n not strictly increasing" % (p.pid, tid, ev))
        if ev == "ses:tick":
            c.check(v[-1] == n - 1, "O pid %d tid %d: last tick %d, wanted %d"
                    % (p.pid, tid, v[-1], n - 1))
c.check(not os.path.exists(out_o) or not os.listdir(out_o),
        "fdrd wrote nothing of the flight recorder before it died")

# ---- errors of fdr recover ------------------------------------------------------
nowhere = os.path.join(s.work, "nowhere")
s.fdr_err(["recover", nowhere, "-o", rec_d],
          "fdr recover: %s: No such file or directory" % nowhere, 1)
s.fdr_err(["recover", s.work, "-o", rec_d],
          "fdr recover: %s is not a buffer directory (no fdr-buffers file of fdr's: see "
          "fdr create --file-buffers)" % s.work, 1)
s.fdr_err(["recover", buf_d], "fdr recover: missing -o OUT (fdr help recover)", 2)
s.fdr_err(["recover", "-o", rec_d], "fdr recover: missing buffer directory (fdr help "
          "recover)", 2)
s.fdr_err(["recover", buf_d, "-o", rec_d, "x"], "fdr recover: unexpected argument 'x' "
          "(fdr help recover)", 2)
odd = os.path.join(s.work, "odd")
os.makedirs(os.path.join(odd, "p-1"))
os.makedirs(os.path.join(odd, "q-2"))
with open(os.path.join(odd, "fdr-buffers"), "w") as f:
    f.write("fdr buffers 1\n")
with open(os.path.join(odd, "q-2", "ring-1-0"), "w") as f:
    f.write("x")
gd = proc_dir(buf_d, gos[0].pid)
for f in ("metadata", ".fdr-classes"):
    with open(os.path.join(gd, f), "rb") as src, \
            open(os.path.join(odd, "p-1", f), "wb") as dst:
        dst.write(src.read())
os.symlink(glob.glob(os.path.join(gd, "ring-*"))[0], os.path.join(odd, "p-1", "ring-1-0"))
r = s.run(["recover", odd, "-o", os.path.join(s.work, "rec-odd")])
c.check(r.returncode == 1, "recover odd: exit %d" % r.returncode)
c.check(sorted(r.stderr.splitlines()) == [
    "fdr recover: p-1/ring-1-0: Too many levels of symbolic links: skipped",
    "fdr recover: q-2: no metadata: its 1 rings skipped"], "recover odd: %r" % r.stderr)
c.check(r.stdout.endswith("; 2 rings skipped, 0 corrupt packets skipped, 0 packets "
                          "cut\n"), "recover odd summary: %r" % r.stdout)
r = s.fdr("help", "recover")
c.check("DIR -o OUT" in r.stdout, "fdr help recover: %r" % r.stdout)

# ---- a new fdrd: destroy removes the buffer directory; a program that
# shrinks its ring files cannot take fdrd down ----------------------------------
s.start()
fdrd2 = s.daemon_pid()
out_f = os.path.join(s.work, "out-F")
r = s.fdr("create", "F", "-o", out_f, "--file-buffers", *SIZES)
buf_f = re.match(r"trace F created, buffers in (.*)\n$", r.stdout).group(1)
c.check(buf_f != buf_o, "a new directory for the new fdrd's trace")
s.fdr("enable", "F", "ses:*")
s.fdr("start", "F")
e2 = dict(s.env)
e2["FDR_EVENTS"] = "-ses:*"
shr = subprocess.Popen([prog, "shrink", "3000"], env=e2, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
s.pids.add(shr.pid)
line = h.line(shr)
if re.match(r"shrunk [1-9]", line) is None:
    c.fail("shrink: %r" % line)
shr.wait(timeout=120)
good = routed("go", "2", str(N), routes=1)
good.stdin.write("go\n")
good.stdin.flush()
c.check(h.line(good) == "done\n", "the good program")
good.stdin.close()
c.check(good.wait(timeout=120) == 0, "the good program exits 0")
s.wait_log("faulted (its file was shrunk): dropped")
c.check(h.pid_alive(fdrd2), "fdrd survives a program that shrinks its rings")
s.fdr("destroy", "F")
c.check(not os.path.exists(buf_f), "destroy removed %s" % buf_f)
ns, lost = h.per_thread(os.path.join(out_f, "session-prog-%d" % good.pid))
for tid in {t for (t, _) in ns}:
    got = sum(len(v) for (t, _), v in ns.items() if t == tid)
    c.check(got + lost[tid] == EMITTED, "F tid %d: %d + %d != %d"
            % (tid, got, lost[tid], EMITTED))
c.check(len({t for (t, _) in ns}) == 2, "F: both threads")
s.stop()
c.finish()
