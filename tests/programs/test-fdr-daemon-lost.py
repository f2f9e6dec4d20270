#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-fdr-daemon-lost.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG - a
process that ends before any ring of its route came has its events
counted in the trace, not taken along.

A thread that cannot record into its route (no ring of it: fdrd could not
make one, or had not sent one yet) counts what it loses, and at its end
hands the count to a ring of the route; with none at all the count waits
in the process (libfdr's buffer.c, route_lost) for the first ring that
comes. A process that ended first took the count along: its events were
neither in the trace nor counted, with no directory for it at all. Now
the process sends the count to fdrd at its end (LOST), and fdrd writes it
as discarded (daemon/collect.c, fdrd_collect_lost).

FDR_TEST_NO_RINGS=1 (tests only) makes libfdr close every ring fdrd sends,
as if none had come. `session-prog soak 4 500 exit` (FDR_EVENTS=-ses:*:
its events are the route's only) waits for its route, records 500
ses:tick on each of 4 threads and exits 0: the trace (bt2) holds that
process, none of its events recorded and all 2,000 counted as discarded,
and fdrd's log says so once; 6 such processes at once, each counted.
The count is in the process's first own ring, where fdrd reads it when
the process ends (common/ring.h, route_lost): also after SIGKILL (`soak
4 500 hang`, killed once it says "done"), and with the time of the count
scribbled past any clock (`soak 4 500 late`): fdrd takes its own clock's
instead, and the trace reads. FDR_TEST_NO_RINGS=2: not shown
there (as in a process that registered again after fdrd died, which hands
no own ring over): the process sends it at exit (LOST). The same program
without the hook: all 2,000 recorded, none discarded (the count is not
made up). And the trace stopped, or destroyed, while the processes live
(`soak 4 500 hang`, then SIGKILL): fdrd takes the count at the trace's
end (collect.c, route_lost_read), before libfdr, told the route ended,
drops it; before, those processes' events were neither in the trace nor
counted (no directory for them).

Each phase's trace starts after fdrd has routed every process into a gate
trace, which it does once it has the process's class table: the measured
route is then not one that came with the registration, which would want
the threads' past and, for a thread whose ring was made as the
registration's window closed, take its events from that ring instead of
the count (all recorded: right, but not what the phase tests).

fdrd read the LOST of a process that hung up with fdrd's last rings
unread only when poll said "writable" with the hang-up: the socket reports
the reset first, and fdrd took it for the end (server.c, read_one): 1
process in 4 uncounted in the ASan build."""
import os
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
THREADS, N = 4, 500

s.start()
# (name, FDR_TEST_NO_RINGS, processes at once, how each ends, where fdrd
# finds the count). Several at once: fdrd is busier, and each run of the
# test tries the end of a process that many times.
PHASES = (("shown", "1", 6, "exit", "left in its own ring"),
          ("killed", "1", 2, "hang", "left in its own ring"),
          ("late", "1", 1, "late", "left in its own ring"),
          ("sent", "2", 6, "exit", "sent at its end"),
          ("stopped", "1", 2, "stop", "at the trace's end"),
          ("destroyed", "1", 2, "destroy", "at the trace's end"),
          ("rings", "", 1, "exit", None))

def drain(p):
    """The rest of p's stderr, read as it comes (FDR_DEBUG: never a full pipe)."""
    p.err = []
    t = threading.Thread(target=lambda: p.err.extend(p.stderr), daemon=True)
    t.start()
    p.drainer = t


for name, hook, procs, end, how in PHASES:
    # The trace is started once fdrd has the processes' class tables: a
    # route that came with the registration wants the threads' past, and a
    # thread whose first event came as the registration's window closed
    # (its own ring sent to fdrd) then leaves its events there for fdrd to
    # copy: all 2,000 recorded, the count never made (1 process in 6 in the
    # ASan build at load 8). A gate trace routes each process first (fdrd
    # sends routes once it has the class table); it ends before the
    # measured trace starts, which takes its slot.
    s.fdr("create", "gate-" + name, "-o", os.path.join(s.work, "gate-" + name))
    s.fdr("enable", "gate-" + name, "ses:rare")
    s.fdr("start", "gate-" + name)
    env = dict(s.env, FDR_EVENTS="-ses:*", FDR_TEST_NO_RINGS=hook, FDR_DEBUG="1")
    soak_end = "hang" if end in ("stop", "destroy") else end
    ps = [subprocess.Popen([prog, "soak", str(THREADS), str(N), soak_end], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
          for _ in range(procs)]
    for p in ps:
        h.wait_route(p)
        drain(p)
    s.fdr("destroy", "gate-" + name)
    out = h.early_trace(s, name)
    if end in ("hang", "stop", "destroy"):  # its threads have ended
        for p in ps:
            c.check(p.stdout.readline().strip() == "done", "%s: soak said done" % name)
        if end != "hang":  # the trace ends while the processes live
            s.fdr(end, name)
        for p in ps:  # SIGKILL, no exit handler
            p.kill()
    if end == "late":  # the count's time scribbled past any clock, then SIGKILL
        for p in ps:
            said = p.stdout.readline().split()
            c.check(said[:1] == ["late"] and int(said[1]) >= 1,
                    "%s: soak found no count to make late: %r" % (name, said))
    for p in ps:
        p.stdout.read()
        p.wait(timeout=300)
        p.drainer.join(timeout=60)
        c.check(p.returncode == (0 if end == "exit" else -9),
                "%s: session-prog soak: exit %d, stderr %r"
                % (name, p.returncode, "".join(p.err)[-500:]))
    if end == "destroy":
        h.early_gone(s)
        ev, lost, dirs = h.early_read(out)
    else:
        ev, lost, dirs = h.early_finish(s, name, out)
    pids = sorted(set(ev) | set(lost))
    for pid in [p.pid for p in ps]:
        recorded = sum(len(e) for e in ev[pid].values())
        discarded = sum(lost[pid].values())
        want = (0, THREADS * N) if hook else (THREADS * N, 0)
        if c.check((recorded, discarded) == want,
                   "%s: process %d: %d events recorded and %d discarded; wanted %d and %d"
                   % (name, pid, recorded, discarded, *want)):
            print("%s: process %d: %d events recorded, %d counted as discarded" % (
                name, pid, recorded, discarded))
        line = "(pid %d): %d events of thread" % (pid, THREADS * N)
        said = [x for x in s.log_text().splitlines() if line in x]
        if how:
            c.check(len(said) == 1 and "(%s)" % how in said[0],
                    "%s: fdrd's log does not say once it counted the %d events of process "
                    "%d (%s): %r" % (name, THREADS * N, pid, how, said))
    c.check(pids == sorted(p.pid for p in ps), "%s: processes in the trace %s, ran %s"
            % (name, pids, sorted(p.pid for p in ps)))
c.finish()
