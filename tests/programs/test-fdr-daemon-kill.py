# SPDX-License-Identifier: MIT
"""test-fdr-daemon-kill.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
a program recording through fdrd loses nothing it committed, however it
ends.

Each round, a program (session-prog "pipe": 4 threads record ses:tick n =
0, 1, ... and, after each block of 100, tell the test through a pipe the
last n they committed) is ended mid-flight: SIGKILL at a random moment (100
rounds), or by itself after a random time with SIGSEGV, SIGABRT or
_exit(0) (10 rounds each). fdrd sees its socket hang up and writes out
every ring, the open packets up to their last committed event. Each round
its trace, read with bt2 (which must report no error), holds for every
thread each n at most once, in order, and every event up to the last one
the pipe reported is there or counted as discarded. Then the same
when no ring of the trace ever comes (6 rounds of SIGSEGV and of
SIGKILL): counted, per process."""
import collections
import os
import random
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
import bt2  # noqa: E402

THREADS = 4
rng = random.Random(14)


def processes():
    return {q["pid"] for q in s.json("list", "processes", "--json")["processes"]}


def by_thread(path):
    """{t: [n...]}, {t: discarded} of a trace (a discarded-events message
    belongs to the thread of its stream's next packet, as in per_thread)."""
    ns = collections.defaultdict(list)
    lost = collections.Counter()
    pending = collections.Counter()
    t_of = {}
    for m in bt2.TraceCollectionMessageIterator(path):
        if type(m) is bt2._PacketBeginningMessageConst:
            tid = int(m.packet.context_field["tid"])
            lost[tid] += pending.pop(m.packet.stream.id, 0)
        elif type(m) is bt2._EventMessageConst:
            tid = int(m.event.packet.context_field["tid"])
            t = int(m.event.payload_field["t"])
            c.check(t_of.setdefault(tid, t) == t, "%s: tid %d records as two threads" % (path, tid))
            ns[t].append(int(m.event.payload_field["n"]))
        elif type(m) is bt2._DiscardedEventsMessageConst:
            pending[m.stream.id] += m.count or 0
    c.check(not pending, "%s: discarded events no packet reports" % path)
    return ns, {t_of[tid]: n for tid, n in lost.items() if tid in t_of}, sum(lost.values())


def round_(end, ms, kill_after, no_rings=False):
    # Recording starts once routed: what "losing nothing committed" is
    # about is what is in fdrd's rings (before the route, events are in
    # the program's own flight rings, gone with it). With no_rings, no
    # ring of the trace ever reaches the program (FDR_TEST_NO_RINGS=1, as
    # when the trace's memory budget has none left): every event is
    # counted, per process (in the name of whichever thread fdrd names).
    e = dict(s.env, FDR_EVENTS="-ses:*", **({"FDR_TEST_NO_RINGS": "1"} if no_rings else {}))
    p = subprocess.Popen([prog, "pipe", str(THREADS), end, str(ms)], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    s.pids.add(p.pid)
    last = {}
    ready = threading.Event()

    def read():
        for line in p.stdout:
            if line == "ready\n":
                ready.set()
                continue
            t, n = map(int, line.split())
            last[t] = n
        ready.set()

    r = threading.Thread(target=read)
    r.start()
    c.check(ready.wait(120), "pid %d: not ready" % p.pid)
    if kill_after is not None:
        time.sleep(kill_after)
        p.kill()
    rc = p.wait(timeout=120)
    r.join()
    h.wait_for(lambda: p.pid not in processes(), "fdrd saw %d go" % p.pid)
    ns, lost, all_lost = by_thread(os.path.join(out, "session-prog-%d" % p.pid))
    what = "%s%s pid %d (exit %d)" % (end, ", no ring" if no_rings else "", p.pid, rc)
    c.check(len(last) == THREADS, "%s: %d threads reported" % (what, len(last)))
    if no_rings:
        have = sum(len(v) for v in ns.values())
        c.check(have + all_lost >= sum(n + 1 for n in last.values()),
                "%s: committed %d in all, trace has %d + %d discarded"
                % (what, sum(n + 1 for n in last.values()), have, all_lost))
        return rc
    for t, n in last.items():
        v = ns.get(t, [])
        c.check(all(a < b for a, b in zip(v, v[1:])), "%s: thread %d not in order" % (what, t))
        have = sum(1 for x in v if x <= n)
        c.check(have + lost.get(t, 0) >= n + 1,
                "%s: thread %d committed 0..%d, trace has %d + %d discarded"
                % (what, t, n, have, lost.get(t, 0)))
    return rc


out = os.path.join(s.work, "out")
s.start()
s.fdr("create", "K", "-o", out)
s.fdr("enable", "K", "ses:tick")
s.fdr("start", "K")
for i in range(100):
    round_("kill", 600000, rng.uniform(0, 0.05))
for end, no_rings in (("segv", False), ("abrt", False), ("exit", False), ("segv", True)):
    # With no ring, the crash dump's pause of the writers (crash.c) lost
    # the events that came meanwhile from the trace, uncounted: counted in
    # the thread's own ring alone, which fdrd does not read (up to 399
    # events in 4 runs of 6; writer.c, count_paused).
    for i in range(10 if not no_rings else 6):
        rc = round_(end, rng.randint(1, 50), None, no_rings)
        want = {"segv": -signal.SIGSEGV, "abrt": -signal.SIGABRT, "exit": 0}[end]
        # Under a sanitizer its report ends the process: status 1 (ASan) or
        # 66 (TSan).
        c.check(rc == want or (end != "exit" and rc in (1, 66)), "%s: exit status %d" % (end, rc))
for i in range(6):
    round_("kill", 600000, rng.uniform(0, 0.05), no_rings=True)
s.fdr("destroy", "K")
c.finish()
