# SPDX-License-Identifier: MIT
"""test-fdr-daemon-grow.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
through a discard trace of fdrd, rings follow activity: every thread
starts with the trace's ring (1 MiB), and fdrd keeps one larger ring
(8 MiB) ready in the process, which a thread that fills its ring moves to
(daemon/collect.c route_spare, libfdr's writer.c grow_routed).

session-prog "grow 8 N": 8 idle threads record one ses:tick each and
wait; then, with fdrd stopped (SIGSTOP: nothing is written out, so the
busy thread fills its first ring whatever the machine's speed), main
records N ses:tick, about 5 MB: more than its first ring holds, less than
the first and the larger together. In the process's mappings of fdrd's
rings (/proc/PID/smaps, "fdrd-ring"): the busy thread wrote more than
its first ring into a larger one, and no idle thread's ring holds more
than a few pages. In the trace (bt2): every thread's events, exactly,
in order, and none of the busy thread's discarded (without the larger
ring, about 4 in 5 would be)."""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]

IDLE, N = 8, 200000
START, GROWN = 4096 + (1 << 20), 4096 + (8 << 20)


def rings(pid):
    """[(Size, Rss) in bytes] of the mappings of fdrd's rings in pid."""
    out = []
    inside = False
    size = 0
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            head = line.split()
            if head and "-" in head[0] and ":" not in head[0]:
                inside = "/memfd:fdrd-ring" in line
            elif inside and line.startswith("Size:"):
                size = int(head[1]) * 1024
            elif inside and line.startswith("Rss:"):
                out.append((size, int(head[1]) * 1024))
    return out


s.start()
out = os.path.join(s.work, "out")
s.fdr("create", "G", "-o", out)
s.fdr("enable", "G", "ses:tick")
s.fdr("start", "G")
env = dict(s.env, FDR_EVENTS="-ses:*")
p = subprocess.Popen([prog, "grow", str(IDLE), str(N)], env=env, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
s.pids.add(p.pid)
c.check(h.line(p) == "idle\n", "the idle threads recorded")


def ready():
    """The larger ring, and rings enough for every thread and two more:
    the main thread takes one at its first event, with fdrd stopped (one
    that waited for its ring would record in its own small ring meanwhile,
    and count what that lost). libfdr maps fdrd's rings in the order they
    come and puts each one in its free list before mapping the next."""
    got = rings(p.pid)
    return (any(size == GROWN for size, _ in got) and
            sum(size == START for size, _ in got) >= IDLE + 3)


h.wait_for(ready, lambda: "a larger ring and %d rings from fdrd in the process: %s"
           % (IDLE + 3, rings(p.pid)))
fdrd = s.daemon_pid()
os.kill(fdrd, signal.SIGSTOP)
try:
    p.stdin.write("go\n")
    p.stdin.flush()
    c.check(h.line(p) == "done\n", "the busy thread recorded")
    got = rings(p.pid)
finally:
    os.kill(fdrd, signal.SIGCONT)
print("rings (size, rss):", got)
busy = [rss for size, rss in got if size == GROWN and rss > 1 << 20]
c.check(len(busy) == 1, "one larger ring written past 1 MiB (the busy thread's): %s" % got)
full = [rss for size, rss in got if size == START and rss > 256 << 10]
c.check(len(full) <= 1, "at most one first ring written past 256 KiB (the busy "
        "thread's, which it filled): %s" % got)
c.check(all(size in (START, GROWN) for size, _ in got), "ring sizes: %s" % got)
p.stdin.close()
c.check(p.wait(timeout=300) == 0, "exit status")
s.fdr("destroy", "G")

path = os.path.join(out, "session-prog-%d" % p.pid)
ns, lost = h.per_thread(path)
by_t = {}
for (tid, name), v in ns.items():
    c.check(name == "ses:tick", "event %s" % name)
    by_t.setdefault(tid, []).extend(v)
c.check(len(by_t) == IDLE + 1, "%d threads in the trace" % len(by_t))
main = max(by_t, key=lambda tid: len(by_t[tid]))
c.check(by_t[main] == list(range(N)) and lost[main] == 0,
        "the busy thread: %d recorded, %d discarded of %d (its events in order, none lost)"
        % (len(by_t[main]), lost[main], N))
for tid, v in by_t.items():
    if tid != main:
        c.check(v == [0] and lost[tid] == 0, "idle thread %d: %s, %d discarded" %
                (tid, v, lost[tid]))
c.clean(path)
c.finish()
