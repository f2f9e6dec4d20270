# SPDX-License-Identifier: MIT
"""test-fdr-daemon-collect.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
fdrd gives instrumented programs their rings and writes them out.

A real fdrd, real programs (tests/programs/progs/session-prog.c "go": T
threads each record N ses:tick events n = 0..N-1, and ses:rare at every
10th, ses:hot at every 7th), one trace that selects ses:tick only, in
discard mode:

  - every program records into the trace once fdrd routed it (FDR_DEBUG's
    "recording into an fdrd trace": the rings came before the route);
  - one program exits normally, one is SIGKILLed once its threads are done
    (no exit path runs: what is in its rings, the open packets too, is
    written by fdrd when the socket hangs up), one exits while the trace
    is being stopped and destroyed;
  - babeltrace2 (bt2) reads OUT/<name>-<pid>/ for each: only ses:tick,
    and per thread recorded + discarded == N exactly,
    the n values strictly increasing; the CLI reads the whole directory
    without an error.
A program that records before fdrd routed it (a trace started before it
came): at its threads' next event those first events are handed to the
trace, which then holds n = 0..N exactly.
Then flight-recorder mode: a trace created --overwrite keeps its rings
until its program is SIGKILLed with its threads' packets open; then the
newest events are on disk, the last one (n = N-1) of every thread among
them."""
import collections
import importlib.util
import os
import signal
import subprocess
import sys
import threading

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "session_helpers", os.path.join(_here, "test-fdr-session-helpers.py"))
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]

THREADS, N = 2, 40000


def launch(*extra):
    e = dict(s.env)
    e["FDR_DEBUG"] = "1"
    p = subprocess.Popen([prog, "go", str(THREADS), str(N)] + list(extra), env=e,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    # The rings come before the route: once it is there, every event is
    # the trace's.
    while True:
        line = p.stderr.readline()
        c.check(line != "", "pid %d: no route from fdrd" % p.pid)
        if "recording into an fdrd trace" in line:
            break
    p.stdin.write("go\n")
    p.stdin.flush()
    c.check(p.stdout.readline() == "done\n", "pid %d: not done" % p.pid)
    return p


def processes():
    return {q["pid"] for q in s.json("list", "processes", "--json")["processes"]}


out = os.path.join(s.work, "out")
s.start()
s.fdr("create", "A", "-o", out)
s.fdr("enable", "A", "ses:tick")
s.fdr("start", "A")

normal = launch()
killed = launch("kill")
late = launch()
normal.stdin.close()
c.check(normal.wait(timeout=120) == 0, "the program that ends normally")
killed.kill()
killed.wait(timeout=120)
h.wait_for(lambda: normal.pid not in processes() and killed.pid not in processes(),
           "fdrd saw both go")
s.fdr("stop", "A")
s.fdr("destroy", "A")
late.stdin.close()
c.check(late.wait(timeout=120) == 0, "the program that ends after destroy")

dirs = sorted(os.listdir(out))
want = sorted("session-prog-%d" % p.pid for p in (normal, killed, late))
c.check(dirs == want, "one trace per process: %s, wanted %s" % (dirs, want))
for p in (normal, killed, late):
    ns, lost = h.per_thread(os.path.join(out, "session-prog-%d" % p.pid))
    names = {name for (_, name) in ns}
    c.check(names == {"ses:tick"}, "pid %d: only ses:tick: %s" % (p.pid, names))
    c.check(len(ns) == THREADS, "pid %d: %d threads with events, wanted %d"
            % (p.pid, len(ns), THREADS))
    for (tid, _), v in ns.items():
        c.check(all(a < b for a, b in zip(v, v[1:])), "pid %d tid %d: n not "
                "strictly increasing" % (p.pid, tid))
        c.check(len(v) + lost[tid] == N, "pid %d tid %d: %d recorded + %d discarded, "
                "emitted %d" % (p.pid, tid, len(v), lost[tid], N))
c.run(["babeltrace2", out], expect_rc=0)

# ---- events recorded before fdrd routed the program are handed to a trace
# that was started before it came ---------------------------------------------
e = dict(s.env)
e.update(FDR_DEBUG="1", FDR_BUFFER_SIZE="4M")
s.fdr("create", "E", "-o", os.path.join(s.work, "early"))
s.fdr("enable", "E", "ses:tick")
s.fdr("start", "E")
# fdrd stopped (SIGSTOP) while the program starts: it connects and sends
# its registration, which waits in the socket, and records all its events
# before fdrd can route it.
fdrd = s.daemon_pid()
os.kill(fdrd, signal.SIGSTOP)
p = subprocess.Popen([prog, "early", str(THREADS), str(N)], env=e, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
s.pids.add(p.pid)
c.check(p.stdout.readline() == "recorded\n", "early: not recorded")
os.kill(fdrd, signal.SIGCONT)
while "recording into an fdrd trace" not in p.stderr.readline():
    pass
p.stdin.write("more\n")
p.stdin.flush()
c.check(p.stdout.readline() == "done\n", "early: not done")
p.stdin.close()
c.check(p.wait(timeout=120) == 0, "early: exit status")
h.wait_for(lambda: p.pid not in processes(), "fdrd saw it go")
s.fdr("destroy", "E")
ns, lost = h.per_thread(os.path.join(s.work, "early", "session-prog-%d" % p.pid))
c.check(len(ns) == THREADS, "early: %d threads" % len(ns))
for (tid, _), v in ns.items():
    c.check(v == sorted(set(v)) and v[-1] == N and len(v) + lost[tid] == N + 1,
            "early tid %d: %d recorded + %d discarded of %d, last %d"
            % (tid, len(v), lost[tid], N + 1, v[-1] if v else -1))

# More events at once than the program's own ring holds, before fdrd routes
# it (registration takes a moment and the program does not wait): in the
# registration window its flight recorder keeps its first events and counts
# the rest (libfdr buffer.h), so the trace accounts for every one.
e = dict(s.env)
e.update(FDR_DEBUG="1", FDR_BUFFER_SIZE="256K")
s.fdr("create", "W", "-o", os.path.join(s.work, "window"))
s.fdr("enable", "W", "ses:tick")
s.fdr("start", "W")
NW = 100000  # 2.2 MB of ses:tick per thread, in a 256 KiB ring
# fdrd stopped meanwhile, so that the route surely comes after them (the
# window lasts 1 s without an answer: recording takes milliseconds).
os.kill(fdrd, signal.SIGSTOP)
p = subprocess.Popen([prog, "early", str(THREADS), str(NW)], env=e, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
s.pids.add(p.pid)
c.check(p.stdout.readline() == "recorded\n", "window: not recorded")
os.kill(fdrd, signal.SIGCONT)
while "recording into an fdrd trace" not in p.stderr.readline():
    pass
threading.Thread(target=p.stderr.read, daemon=True).start()
p.stdin.write("more\n")
p.stdin.flush()
c.check(p.stdout.readline() == "done\n", "window: not done")
p.stdin.close()
c.check(p.wait(timeout=120) == 0, "window: exit status")
h.wait_for(lambda: p.pid not in processes(), "fdrd saw it go")
s.fdr("destroy", "W")
ns, lost = h.per_thread(os.path.join(s.work, "window", "session-prog-%d" % p.pid))
c.check(len(ns) == THREADS, "window: %d threads" % len(ns))
for (tid, _), v in ns.items():
    c.check(v == sorted(set(v)) and v[-1] == NW and len(v) + lost[tid] == NW + 1,
            "window tid %d: %d recorded + %d discarded of %d, first %s"
            % (tid, len(v), lost[tid], NW + 1, v[:3]))

# ---- flight recorder: written when the trace ends --------------------------
fout = os.path.join(s.work, "flight")
s.fdr("create", "F", "-o", fout, "--overwrite")
s.fdr("enable", "F", "ses:*")
s.fdr("start", "F")
p = launch("kill")  # its threads stay, each with its own ring
p.kill()
p.wait(timeout=120)
h.wait_for(lambda: p.pid not in processes(), "fdrd saw it go")
s.fdr("destroy", "F")
ns, lost = h.per_thread(os.path.join(fout, "session-prog-%d" % p.pid))
newest = collections.defaultdict(int)
for (tid, name), v in ns.items():
    newest[tid] = max(newest[tid], v[-1])
c.check(sorted(newest.values()) == [N - 1] * THREADS,
        "the newest event of each thread: %s" % dict(newest))
names = {name for (_, name) in ns}
c.check(names == {"ses:tick", "ses:rare", "ses:hot"}, "all events: %s" % names)

# ---- fdr snapshot: what the rings hold, the program running on -------------
# Of a program whose threads wait: exactly what the trace holds when it ends.
sout = os.path.join(s.work, "snapped")
s.fdr("create", "S", "-o", sout, "--overwrite", "--buffer-size", "64K", "--packet-size", "4K")
s.fdr("enable", "S", "ses:*")
s.fdr("start", "S")
p = launch("kill")
snap = os.path.join(s.work, "snap1")
r = s.fdr("snapshot", "S", "-o", snap)
c.check(r.stdout == "snapshot of trace S written to %s\n" % snap, "snapshot line: %r" % r.stdout)
snapped, snapped_lost = h.per_thread(os.path.join(snap, "session-prog-%d" % p.pid))
# The default directory: OUTPUT/snapshot-N-DATE-TIME, N counting from 1.
r = s.fdr("snapshot", "S")
auto = r.stdout.split(" written to ")[-1].strip()
c.check(os.path.dirname(auto) == sout and os.path.basename(auto).startswith("snapshot-2-"),
        "default snapshot directory: %r" % r.stdout)
again, _ = h.per_thread(os.path.join(auto, "session-prog-%d" % p.pid))
c.check(again == snapped, "two snapshots of a waiting program are equal")
s.fdr_err(["snapshot", "S", "-o", "/proc/version/x"],
          "fdr snapshot: cannot write the snapshot in '/proc/version/x': Not a directory", 1)
p.kill()
p.wait(timeout=120)
h.wait_for(lambda: p.pid not in processes(), "fdrd saw it go")
s.fdr("destroy", "S")
final, _ = h.per_thread(os.path.join(sout, "session-prog-%d" % p.pid))
c.check(snapped == final and len(snapped) >= THREADS,
        "snapshot of a waiting program == its trace at the end (%d, %d keys)"
        % (len(snapped), len(final)))
for (tid, name), v in snapped.items():
    c.check(name != "ses:tick" or v[-1] == N - 1, "snapshot: newest tick of %d: %d" % (tid, v[-1]))

# Of threads recording flat out: every copy is whole (a packet reused while
# fdrd copied it is left out), so each thread's numbers only go up.
s.fdr("create", "R", "-o", os.path.join(s.work, "storm"), "--overwrite",
      "--buffer-size", "64K", "--packet-size", "4K")
s.fdr("enable", "R", "ses:*")
s.fdr("start", "R")
e = dict(s.env)
st = subprocess.Popen([prog, "storm", "2"], env=e, stdin=subprocess.PIPE,
                      stdout=subprocess.PIPE, text=True)
s.pids.add(st.pid)
c.check(st.stdout.readline() == "ready\n", "storm runs")
h.wait_for(lambda: st.pid in processes(), "storm registered")
seen = 0
for i in range(20):
    d = os.path.join(s.work, "storm-snap%d" % i)
    s.fdr("snapshot", "R", "-o", d)
    ns, _ = h.per_thread(os.path.join(d, "session-prog-%d" % st.pid))
    for key, v in ns.items():
        seen += len(v)
        c.check(all(a < b for a, b in zip(v, v[1:])), "snapshot %d, %s: not increasing" % (i, key))
c.check(seen > 0, "the storm's snapshots hold events")
st.stdin.close()
st.wait(timeout=120)
s.fdr("destroy", "R")
c.finish()
