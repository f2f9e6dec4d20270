# SPDX-License-Identifier: MIT
"""test-fdr-daemon-collect.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
fdrd gives instrumented programs their rings and writes them out.

A real fdrd, real programs (tests/programs/progs/session-prog.c "go": T
threads each record N ses:tick events n = 0..N-1, and ses:rare at every
10th), one trace that selects ses:tick only, in discard mode:

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
Then flight-recorder mode: a trace created --overwrite keeps its rings
until it is destroyed; then the newest events are on disk, the last one
(n = N-1) of every thread among them."""
import collections
import importlib.util
import os
import signal
import subprocess
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "session_helpers", os.path.join(_here, "test-fdr-session-helpers.py"))
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
import bt2  # noqa: E402  (after the helpers put tests/lib on the path)

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


def per_thread(path):
    """{tid: [n values, discarded]} and the event names seen. A ring may
    pass from a thread that exits to a new one; its discarded count is
    reported by the next packet of the thread that lost the events (its
    exit closes one), so a discarded-events message is that packet's
    thread's."""
    threads = collections.defaultdict(lambda: [[], 0])
    names = collections.Counter()
    pending = collections.Counter()
    for m in bt2.TraceCollectionMessageIterator(path):
        if type(m) is bt2._PacketBeginningMessageConst:
            key = (int(m.packet.stream.trace.environment["vpid"]), m.packet.stream.id)
            tid = int(m.packet.context_field["tid"])
            threads[tid][1] += pending.pop(key, 0)
        elif type(m) is bt2._EventMessageConst:
            names[m.event.name] += 1
            threads[int(m.event.packet.context_field["tid"])][0].append(
                int(m.event.payload_field["n"]))
        elif type(m) is bt2._DiscardedEventsMessageConst:
            key = (int(m.stream.trace.environment["vpid"]), m.stream.id)
            pending[key] += m.count or 0
    c.check(not pending, "%s: discarded events no packet reports: %s" % (path, pending))
    return threads, names


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
    threads, names = per_thread(os.path.join(out, "session-prog-%d" % p.pid))
    c.check(set(names) == {"ses:tick"}, "pid %d: only ses:tick: %s" % (p.pid, dict(names)))
    used = {k: v for k, v in threads.items() if v[0]}
    c.check(len(used) == THREADS, "pid %d: %d threads with events, wanted %d"
            % (p.pid, len(used), THREADS))
    for tid, (ns, lost) in used.items():
        c.check(all(a < b for a, b in zip(ns, ns[1:])), "pid %d tid %d: n not "
                "strictly increasing" % (p.pid, tid))
        c.check(len(ns) + lost == N, "pid %d tid %d: %d recorded + %d discarded, "
                "emitted %d" % (p.pid, tid, len(ns), lost, N))
c.run(["babeltrace2", out], expect_rc=0)

# ---- flight recorder: written when the trace ends --------------------------
fout = os.path.join(s.work, "flight")
s.fdr("create", "F", "-o", fout, "--overwrite")
s.fdr("start", "F")
p = launch()
s.fdr("destroy", "F")
p.stdin.close()
c.check(p.wait(timeout=120) == 0, "the flight-recorded program")
threads, names = per_thread(os.path.join(fout, "session-prog-%d" % p.pid))
last = [v[0][-1] for v in threads.values() if v[0]]
c.check(sorted(last) == [N - 1] * THREADS, "the newest event of each thread: %s" % last)
c.check(set(names) == {"ses:tick", "ses:rare"}, "all events: %s" % dict(names))
c.finish()
