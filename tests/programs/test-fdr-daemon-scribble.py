# SPDX-License-Identifier: MIT
"""test-fdr-daemon-scribble.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
a process that scribbles on the rings fdrd gave it harms nobody else.

One trace (4 KiB packets, 64 KiB rings, discard mode: fdrd writes packets
as they come) records three programs at once: two record normally
(session-prog "go", 2 threads x N ses:tick), the third (session-prog
"scribble") records without pause while it writes over its own rings 300
times: random bytes, absurd produced/consumed counts, packet headers with
bad sizes and sequence numbers, event bytes, committed positions pointing
anywhere. fdrd stays up and keeps serving; the two others' traces are
exact per thread (recorded + discarded == N); the scribbler's trace reads
with babeltrace2 without an error (what fdrd could not trust was left
out); fdrd logged what it skipped."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]

THREADS, N = 2, 100000
out = os.path.join(s.work, "out")
e = h.scribble_trace(s, out)
bad = subprocess.Popen([prog, "scribble", "300"], env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
s.pids.add(bad.pid)
good = []
for i in range(2):
    p = subprocess.Popen([prog, "go", str(THREADS), str(N)], env=dict(s.env, FDR_DEBUG="1"),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    h.wait_route(p)
    good.append(p)
for p in good:
    p.stdin.write("go\n")
    p.stdin.flush()
for p in good:
    c.check(h.line(p) == "done\n", "pid %d: not done" % p.pid)
    p.stdin.close()
    c.check(p.wait(timeout=300) == 0, "pid %d: exit status" % p.pid)
bad.wait(timeout=300)  # its own writer trusts what it broke: any end will do
c.check(s.daemon_pid() != 0, "fdrd is up")
h.wait_for(lambda: not s.json("list", "processes", "--json")["processes"],
           "fdrd saw every process go")
s.fdr("destroy", "S")
for p in good:
    ns, lost = h.per_thread(os.path.join(out, "session-prog-%d" % p.pid))
    c.check(len(ns) == THREADS, "pid %d: %d threads" % (p.pid, len(ns)))
    for (tid, _), v in ns.items():
        c.check(v == sorted(set(v)) and len(v) + lost[tid] == N,
                "pid %d tid %d: %d recorded + %d discarded of %d"
                % (p.pid, tid, len(v), lost[tid], N))
d = os.path.join(out, "session-prog-%d" % bad.pid)
r = subprocess.run(["babeltrace2", d], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   text=True, timeout=300)
c.check(r.returncode == 0, "the scribbler's trace: babeltrace2 %d: %s"
        % (r.returncode, r.stderr[-500:]))
log = s.log_text()
c.check("corrupt" in log or "skipped" in log or "bad" in log,
        "fdrd logged what it left out: %s" % log[-800:])
c.finish()
