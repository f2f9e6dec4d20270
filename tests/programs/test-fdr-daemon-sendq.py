# SPDX-License-Identifier: MIT
"""test-fdr-daemon-sendq.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
fdrd never drops a process because its socket could not take a message
at once (daemon/server.c, the per-client queue): what does not fit waits
for the process to read.

Four programs (session-prog "resume", 3 threads each, recording ses:tick
n = 0, 1, ... in bursts of 20, 1 ms apart, once routed, 100,000 at most
so that the trace bt2 reads is bounded however slow the machine) record
into a started discard trace whose rings follow activity (fdrd sends
rings as threads fill theirs). The trace's selection is 16 KiB of pattern items,
so that each ROUTE fdrd sends is about 16 KiB. Meanwhile `fdr filter`
changes the trace's mask again and again (every mask takes ses:tick), so
that fdrd sends a ROUTE to every program each time; one program is
stopped (SIGSTOP) meanwhile: it reads nothing, and its socket's send
queue (net.core.wmem_default, 208 KiB here) fills after about ten of
them, whatever the machine's speed. It is then let go.

Before the queue, fdrd logged "route of trace D not sent (EAGAIN):
dropped" and dropped the stopped program (always), and sometimes a
running one; the dropped program registered again, and its trace then
held events twice and discarded events counted on no thread. Now: no
"dropped" in fdrd's log, every program ends with exit 0, and in the
trace (bt2), per thread, recorded + discarded == emitted, each thread's
n strictly increasing (no event twice), every discarded count on a
thread.

Then the bound: a stopped program while a trace is started and stopped
again and again (a doorbell and rings, 6 fds queued per start) is dropped
once its queue passes 256 fds, with the line "reads nothing fdrd sends",
not before, and fdrd serves on."""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]

PROGRAMS, THREADS, BURST, MAX = 4, 3, 20, 100000
ROUTE = 16 << 10  # bytes of pattern items: the size of each ROUTE message
try:
    with open("/proc/sys/net/core/wmem_default") as f:
        wmem = int(f.read())
except (OSError, ValueError):
    wmem = 212992
# More ROUTEs than the stopped program's socket takes, with room to spare.
CHANGES = max(20, 2 * (wmem // ROUTE) + 4)

out = os.path.join(s.work, "out")
s.start()
s.fdr("create", "D", "-o", out)
s.fdr("enable", "D", "ses:tick")
# 63 items of 255 bytes that match no event: ROUTE messages of ~16 KiB.
s.fdr("enable", "D", *[("x%03d" % i) + "y" * 251 for i in range(63)])
s.fdr("start", "D")

env = dict(s.env, FDR_EVENTS="-ses:*")
procs = []
for i in range(PROGRAMS):
    p = subprocess.Popen([prog, "resume", str(THREADS), str(BURST), str(MAX)], env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    procs.append(p)
for p in procs:
    c.check(h.line(p) == "ready\n", "pid %d: not ready" % p.pid)

stopped = procs[0]
os.kill(stopped.pid, signal.SIGSTOP)
try:
    for k in range(CHANGES):
        s.fdr("filter", "D", "0x21" if k % 2 else "0xffffffff")
finally:
    os.kill(stopped.pid, signal.SIGCONT)
# The stopped program reads the queued routes (the newest selection of
# each route: fdrd replaces one still queued) and goes on recording (it
# was stopped within ms of starting, far from its 100,000 events).
s.fdr("filter", "D", "0x1")
d = os.path.join(out, "session-prog-%d" % stopped.pid)
size = lambda: sum(os.path.getsize(os.path.join(d, f))  # noqa: E731
                   for f in (os.listdir(d) if os.path.isdir(d) else [])
                   if f.startswith("stream_"))
before = size()
h.wait_for(lambda: size() > before, lambda: "the stopped program's streams grow "
           "once it runs again: %d bytes, then %d" % (before, size()), limit=120)

emitted = h.resume_emitted(procs)
c.check(len(emitted) == PROGRAMS * THREADS, "counts of %d threads" % len(emitted))
h.wait_for(lambda: not {q["pid"] for q in s.json("list", "processes", "--json")["processes"]}
           & {p.pid for p in procs}, "fdrd saw the programs go", limit=120)
s.fdr("destroy", "D")

log = s.log_text()
bad = [ln for ln in log.splitlines() if "dropped" in ln or "registered again" in ln]
c.check(not bad, "fdrd dropped a client:\n" + "\n".join(bad[:20]))

ns, lost = h.per_thread(out)  # checks that every discarded count is a thread's
h.resume_exact(emitted, ns, lost)
print("%d filter changes; emitted %d, recorded %d, discarded %d"
      % (CHANGES, sum(emitted.values()), sum(len(v) for v in ns.values()),
         sum(lost.values())))

# The bound: a program that reads nothing while a trace is started and
# stopped again and again gets a doorbell and rings (6 fds) per start, all
# queued; past 256 fds fdrd drops it, saying so, and goes on serving.
s.fdr("create", "E", "-o", os.path.join(s.work, "out-e"))
s.fdr("enable", "E", "ses:tick")
s.fdr("start", "E")
p = subprocess.Popen([prog, "resume", "1", "1", "1000000"], env=env, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
s.pids.add(p.pid)
c.check(h.line(p) == "ready\n", "pid %d: not ready" % p.pid)
os.kill(p.pid, signal.SIGSTOP)
said = "(pid %d): reads nothing fdrd sends" % p.pid
try:
    for k in range(100):
        s.fdr("stop", "E")
        s.fdr("start", "E")
        if said in s.log_text():
            break
finally:
    os.kill(p.pid, signal.SIGCONT)
c.check(said in s.log_text(), "no line '%s' after %d starts:\n%s" % (said, k + 1, s.log_text()))
c.check(k + 1 >= 256 // 6, "dropped after %d starts, before 256 fds were queued" % (k + 1))
print("a stopped program dropped after %d starts of a trace" % (k + 1))
c.check("E" in s.traces(), "fdrd serves on")
p.kill()
p.wait(timeout=120)
c.finish()
