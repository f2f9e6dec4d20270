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
counted: recorded + discarded == N, the n values increasing. How many
are recorded depends on fdrd's pace (a thread that ends before its ring
came counts its events in a used ring: 7,840 of 40,000 recorded in an
ASan build at load 11, 39,560 in a normal one); that case made certain:
fdrd stopped (SIGSTOP) while 8 threads start, 4 take the rings it sent,
the others end still waiting after them: each one's events counted in a
packet of its own (recorded + discarded == N per thread). The same with
the waiting threads ending first and the process exiting with the
holders ("waiters exit"), and with fdrd killed after the threads ended
and the program routed again by the next one ("waiters dead"): per
process recorded + discarded == emitted, the counts of the threads that
lost their events to the route reaching the trace with no thread taking
a ring of it again (before: 400 and 800 of 800 lost uncounted); and
with the program SIGKILLed while the waiting threads still wait ("waiters
killed": before, 400 of 800 lost uncounted, every run)."""
import os
import signal
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


def ring_sizes(pid, name):
    """The size of each mapping of memfd `name` in pid."""
    sizes, inside = [], False
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            head = line.split()
            if head and "-" in head[0] and ":" not in head[0]:
                inside = "/memfd:%s" % name in line
            elif inside and line.startswith("Size:"):
                sizes.append(int(head[1]) * 1024)
    return sizes


def run_many(env, name, budget, all_rings, before=None):
    p = subprocess.Popen([prog, "many", str(THREADS), str(N)] + (["go"] if before else []),
                         env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE if before else None, text=True)
    s.pids.add(p.pid)
    if before:
        before(p)
        p.stdin.write("go\n")
        p.stdin.flush()
    c.check(h.line(p) == "done\n", "%s: the threads recorded" % name)
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
h.wait_for(lambda: pid not in processes(), "fdrd saw it go (its rings written)", limit=300)
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
    h.wait_route(p)
    threading.Thread(target=p.stderr.read, daemon=True).start()  # the rest


pid = run_many(e, "fdrd-ring", 8 << 20, False, start_then)
h.wait_for(lambda: pid not in processes(), "fdrd saw it go (its rings written)", limit=300)
s.fdr("destroy", "M2")
check_trace(os.path.join(out2, "session-prog-%d" % pid), "fdrd trace started first")

# Threads that end while still waiting for their ring, made certain: fdrd
# stopped (SIGSTOP) once it routed the program, so no ring comes past the
# ones it sent with the route (4, collect.c); WAITERS threads start one
# after the other, the first ones take those rings and hold them, the
# others wait; they end in that order: each waiting one, after its ~50 ms
# for an unused ring, takes a used ring the holders gave back (writer.c,
# want_at_exit) and counts there, in a packet of its own, what it recorded
# meanwhile (older than that ring's last packet: counted, not copied). Per
# thread recorded + discarded == WN: no waiting thread missing from the
# trace with its count left to a holder's stream.
WAITERS, WN = 8, 100


def waiters(what, name, end, status=0):
    """Trace `name` of ses:tick; a "waiters" program routed into it, fdrd
    stopped while its threads record; then end(p, held) with held the
    rings the threads took: not the larger one fdrd keeps ready for a
    thread that fills its own (collect.c, route_spare). Returns held, the
    ring sizes, and per thread the ticks and the discarded."""
    out = os.path.join(s.work, "out-" + name)
    s.fdr("create", name, "-o", out)
    s.fdr("enable", name, "ses:tick")
    s.fdr("start", name)
    p = subprocess.Popen([prog, "waiters", str(WAITERS), str(WN)],
                         env=dict(s.env, FDR_DEBUG="1", FDR_EVENTS="-ses:*"),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    s.pids.add(p.pid)
    h.wait_route(p)
    p.err = []  # its FDR_DEBUG lines from now on (end_then_kill)
    threading.Thread(target=lambda: p.err.extend(p.stderr), daemon=True).start()
    fdrd, held, sizes = s.daemon_pid(), 0, []
    os.kill(fdrd, signal.SIGSTOP)
    try:
        p.stdin.write("go\n")
        p.stdin.flush()
        c.check(h.line(p) == "recorded\n", "%s: the threads recorded" % what)
        sizes = ring_sizes(p.pid, "fdrd-ring")
        held = sizes.count(min(sizes)) if sizes else 0
        c.check(0 < held < WAITERS, "%s: %d rings from the stopped fdrd for %d threads "
                "(some must wait): %s" % (what, held, WAITERS, sizes))
        end(p, held)
    finally:
        if h.pid_alive(fdrd):
            os.kill(fdrd, signal.SIGCONT)
    p.stdin.close()
    c.check(p.wait(timeout=300) == status, "%s: exit status %d, wanted %d"
            % (what, p.returncode, status))
    h.wait_for(lambda: p.pid not in processes(), "fdrd saw the waiters go", limit=300)
    s.fdr("destroy", name)
    try:
        ns, lost = h.per_thread(os.path.join(out, "session-prog-%d" % p.pid))
    except RuntimeError as e:  # no stream of the process has a packet
        c.check(False, "%s: the process's trace does not read: %s" % (what, e))
        ns, lost = {}, {}
    ticks = {tid: v for (tid, n), v in ns.items() if n == "ses:tick"}
    return held, sizes, ticks, lost


def end_in_order(p, held):
    p.stdin.write("end\n")
    p.stdin.flush()
    c.check(h.line(p) == "ended\n", "waiters: the threads ended")


held, sizes, ticks, lost = waiters("waiters", "W", end_in_order)
counts = {tid: len(ticks.get(tid, [])) + lost[tid] for tid in set(ticks) | set(lost)}
c.check(sorted(counts.values()) == [WN] * WAITERS,
        "waiters: recorded + discarded per thread %s, wanted %d threads of %d "
        "(%d held a ring)" % (sorted(counts.values()), WAITERS, WN, held))
c.check(all(v == list(range(WN)) for v in ticks.values()),
        "waiters: a thread's events not all there in order: %s"
        % sorted(len(v) for v in ticks.values()))

# The same, but the waiting threads end first, while the holders keep every
# ring of the route, and the process exits with the holders still there:
# no ring of the route is free when a waiting thread ends, so its count is
# kept for the route (buffer.c, route_lost) and, before, reported only
# when a thread next took a ring of it, which none did: the trace lacked
# their events uncounted (400 of 800, every run). Now a ring of the route
# in a holder's hands that a packet was opened in carries it, which fdrd
# reports at the process's end (after the open packet). Per process
# recorded + discarded == WAITERS x WN.


def exit_with_holders(p, held):
    p.stdin.write("exit %d\n" % held)
    p.stdin.flush()
    c.check(h.line(p) == "ended\n", "waiters exit: the waiting threads ended")
    # Gone before fdrd runs again: no ring of the route comes before.
    c.check(p.wait(timeout=300) == 0, "waiters exit: exit status")


def per_process(what, name, end, status=0):
    """waiters(what, name, end), then per process recorded + discarded ==
    emitted (the threads that lost their events to the route are not
    told apart: their counts are in whichever ring could carry them)."""
    held, sizes, ticks, lost = waiters(what, name, end, status)
    kept = sum(len(v) for v in ticks.values())
    c.check(kept + sum(lost.values()) == WAITERS * WN,
            "%s: recorded %d + discarded %d == %d emitted (%d threads of %d, %d held a "
            "ring; rings %s)" % (what, kept, sum(lost.values()), WAITERS * WN, WAITERS, WN,
                                 held, sizes))
    print("%s: recorded %d + discarded %d of %d" % (what, kept, sum(lost.values()),
                                                    WAITERS * WN))


per_process("waiters exit", "X", exit_with_holders)

# fdrd dies (SIGKILL, while stopped) after the threads ended in order: its
# free rings hold all they recorded, unwritten; the next fdrd routes the
# program again, and the free rings of the dead route are counted into the
# new route (buffer.c, fdr__buf_set_route), whose rings came before it,
# all fresh. Before, with no used ring of the new route, the count waited
# for a thread to take one, and none did (the threads had ended, and the
# program then exited). Now a fresh ring reports it at once, in a packet
# of the thread that last wrote the dead ring. Per process recorded +
# discarded == WAITERS x WN.


def end_then_kill(p, held):
    end_in_order(p, held)
    pid = s.daemon_pid()
    os.kill(pid, signal.SIGKILL)
    h.wait_for(lambda: not h.pid_alive(pid), "fdrd %d gone" % pid, limit=60)
    routed = lambda: sum("recording into an fdrd trace" in e for e in p.err)  # noqa: E731
    again = routed()
    s.traces()  # any verb brings fdrd back
    s.note_daemon()
    # Its FDR_DEBUG line comes once the new route is set (daemon.c), the
    # dead rings counted into it.
    h.wait_for(lambda: routed() > again, "the waiters program routed again by the new fdrd",
               limit=120)


per_process("waiters dead", "Y", end_then_kill)

# The program SIGKILLed while the waiting threads still wait: what they
# recorded is in their own rings, to be handed over when a ring comes,
# which fdrd does not hold; each such event is shown to fdrd beside the
# route's kept count (buffer.c, fdr__buf_route_pending) until then, and
# fdrd counts it when the process ends. Before: 400 of 800 neither
# recorded nor counted, every run.


def kill_waiting(p, held):
    p.kill()
    p.wait(timeout=300)


per_process("waiters killed", "Z", kill_waiting, -signal.SIGKILL)
c.finish()
