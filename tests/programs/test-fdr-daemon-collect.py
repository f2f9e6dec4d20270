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
trace, which then holds n = 0..N exactly, already while the program runs
(not only copied by fdrd from its own rings when it ends).
Then flight-recorder mode: a trace created --overwrite keeps its rings
until its program is SIGKILLed with its threads' packets open; then the
newest events are on disk, the last one (n = N-1) of every thread among
them."""
import collections
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
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
    h.wait_route(p)
    p.stdin.write("go\n")
    p.stdin.flush()
    c.check(h.line(p) == "done\n", "pid %d: not done" % p.pid)
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
fdrd = s.daemon_pid()


def early(trace, n, ring):
    """A program records n ses:tick per thread while fdrd is stopped
    (SIGSTOP): it connects and sends its registration, which waits in the
    socket, and records them all before fdrd can route it; then, routed,
    one more. Per thread: recorded + discarded == n + 1, in order."""
    e = dict(s.env)
    e.update(FDR_DEBUG="1", FDR_BUFFER_SIZE=ring)
    d = os.path.join(s.work, trace)
    s.fdr("create", trace, "-o", d)
    s.fdr("enable", trace, "ses:tick")
    s.fdr("start", trace)
    os.kill(fdrd, signal.SIGSTOP)
    p = subprocess.Popen([prog, "early", str(THREADS), str(n)], env=e,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    c.check(h.line(p) == "recorded\n", "%s: not recorded" % trace)
    os.kill(fdrd, signal.SIGCONT)
    h.wait_route(p)
    threading.Thread(target=p.stderr.read, daemon=True).start()
    p.stdin.write("more\n")
    p.stdin.flush()
    c.check(h.line(p) == "done\n", "%s: not done" % trace)
    # Handed over at the threads' next event, not only when the process
    # ends (fdrd would then copy them from its own rings): the trace holds
    # them all while the program still runs, its threads ended.
    pdir = os.path.join(d, "session-prog-%d" % p.pid)
    want = THREADS * (n + 1)

    def handed():
        time.sleep(0.5)  # a whole read of the trace per look
        return h.bt_total(pdir) == want

    h.wait_for(handed, lambda: "%s: recorded + discarded %s of %d in the trace while the "
               "program runs (its first events handed over)" % (trace, h.bt_total(pdir), want))
    p.stdin.close()
    c.check(p.wait(timeout=120) == 0, "%s: exit status" % trace)
    h.wait_for(lambda: p.pid not in processes(), "fdrd saw it go")
    s.fdr("destroy", trace)
    ns, lost = h.per_thread(os.path.join(d, "session-prog-%d" % p.pid))
    c.check(len(ns) == THREADS, "%s: %d threads" % (trace, len(ns)))
    for (tid, _), v in ns.items():
        c.check(v == sorted(set(v)) and v[-1] == n and len(v) + lost[tid] == n + 1,
                "%s tid %d: %d recorded + %d discarded of %d, first %s, last %d"
                % (trace, tid, len(v), lost[tid], n + 1, v[:3], v[-1] if v else -1))


# Its ring holds them all (4 MiB): all are handed over.
early("early", N, "4M")
# More than its ring holds (2.2 MB in 256 KiB): in the registration window
# its flight recorder keeps the first events and counts the rest (libfdr
# buffer.h), so the trace accounts for every one. The window lasts 1 s
# without fdrd's answer; recording takes milliseconds.
early("window", 100000, "256K")

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
c.check(h.line(st) == "ready\n", "storm runs")
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
