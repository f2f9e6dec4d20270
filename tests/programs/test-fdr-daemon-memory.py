# SPDX-License-Identifier: MIT
"""test-fdr-daemon-memory.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
the ring memory of one process is bounded by its budget, whatever its
thread count, and what smaller rings lose is counted.

1,000 threads record at once (session-prog "many": each records N ses:tick
n = 0..N-1 and waits, so that every ring is held at the same time):
- alone, writing its own trace (FDR_OUTPUT, FDR_MEMORY=16M, 8 MiB rings):
  its rings (the fdr-buffer memfds in /proc/PID/smaps) add up to at most
  the budget plus one smallest ring (12 KiB) per thread past it, not 1,000
  rings of 8 MiB;
- through fdrd (`fdr create --memory 8M`, 1 MiB rings): the same for the
  rings fdrd gave it (fdrd-ring);
and in both traces, read with bt2, every thread's events are there or
counted: recorded + discarded == N, the n values increasing."""
import os
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]

THREADS, N = 1000, 40
SMALLEST = 4096 + 2 * 4096


def rings(pid, name):
    """(count, total bytes) of the mappings of memfd `name` in pid."""
    n = total = 0
    inside = False
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            head = line.split()
            if head and "-" in head[0] and ":" not in head[0]:
                inside = "/memfd:%s" % name in line
                n += inside
            elif inside and line.startswith("Size:"):
                total += int(head[1]) * 1024
    return n, total


def run_many(env, name, budget, all_rings, before=None):
    p = subprocess.Popen([prog, "many", str(THREADS), str(N)] + (["go"] if before else []),
                         env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE if before else None, text=True)
    s.pids.add(p.pid)
    if before:
        before(p)
        p.stdin.write("go\n")
        p.stdin.flush()
    c.check(p.stdout.readline() == "done\n", "%s: the threads recorded" % name)
    n, total = rings(p.pid, name)
    # Alone, every thread has its ring; through fdrd, a thread whose ring
    # has not come yet records in its own ring and hands its events over
    # when it comes (at the latest as it ends).
    c.check(n >= (THREADS if all_rings else 1), "%s: %d rings for %d threads" % (name, n, THREADS))
    c.check(total <= budget + n * SMALLEST,
            "%s: %d bytes of rings, budget %d + %d smallest rings" % (name, total, budget, n))
    p.stdin.close()
    c.check(p.wait(timeout=300) == 0, "%s: exit status" % name)
    return p.pid


def check_trace(path, what):
    """Exact per process: recorded + discarded == THREADS * N. Per thread
    each n at most once, in order (a thread that ended before its ring
    came leaves its count to the next ring of the route, another thread's)."""
    ns, lost = h.per_thread(path)
    got = sum(len(v) for v in ns.values())
    c.check(got + sum(lost.values()) == THREADS * N,
            "%s: %d recorded + %d discarded of %d" % (what, got, sum(lost.values()), THREADS * N))
    c.check(got > 0, "%s: nothing recorded" % what)
    for (tid, name), v in ns.items():
        c.check(len(v) <= N and all(a < b for a, b in zip(v, v[1:])),
                "%s: thread %d: %s..." % (what, tid, v[:10]))


# ---- alone, its own trace --------------------------------------------------
e = dict(s.env)
e.update(FDR_DAEMON="0", FDR_OUTPUT=os.path.join(s.work, "own"), FDR_MEMORY="16M")
pid = run_many(e, "fdr-buffer", 16 << 20, True)
check_trace(os.path.join(s.work, "own", "session-prog-%d" % pid), "own trace")

# ---- through fdrd ------------------------------------------------------------
def processes():
    return {q["pid"] for q in s.json("list", "processes", "--json")["processes"]}


s.start()
# A trace started before the program: every thread hands over what it
# recorded before its ring came (the route's backfill).
out = os.path.join(s.work, "out")
s.fdr("create", "M", "-o", out, "--memory", "8M", "--buffer-size", "1M")
s.fdr("enable", "M", "ses:tick")
s.fdr("start", "M")
c.check(s.traces()["M"]["memory"] == 8 << 20, "fdr list traces shows the budget")
pid = run_many(dict(s.env), "fdrd-ring", 8 << 20, False)
h.wait_for(lambda: pid not in processes(), "fdrd saw it go")
s.fdr("destroy", "M")
check_trace(os.path.join(out, "session-prog-%d" % pid), "fdrd trace")

# A trace started once the program runs, before its threads: no backfill;
# the threads that start waiting for a ring hand over what they recorded
# since.
out2 = os.path.join(s.work, "out2")
s.fdr("create", "M2", "-o", out2, "--memory", "8M", "--buffer-size", "1M")
s.fdr("enable", "M2", "ses:tick")
e = dict(s.env)
e["FDR_DEBUG"] = "1"


def start_then(p):
    h.wait_for(lambda: p.pid in processes(), "registered")
    s.fdr("start", "M2")
    while True:
        line = p.stderr.readline()
        c.check(line != "", "pid %d: no route from fdrd" % p.pid)
        if "recording into an fdrd trace" in line:
            break
    threading.Thread(target=p.stderr.read, daemon=True).start()  # the rest


pid = run_many(e, "fdrd-ring", 8 << 20, False, start_then)
h.wait_for(lambda: pid not in processes(), "fdrd saw it go")
s.fdr("destroy", "M2")
check_trace(os.path.join(out2, "session-prog-%d" % pid), "fdrd trace started first")
c.finish()
