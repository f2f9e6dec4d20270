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
and fdrd's log says so. The same program without the hook: all 2,000
recorded, none discarded (the count is not made up)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
THREADS, N = 4, 500

s.start()
for name, hook in (("norings", "1"), ("rings", "")):
    out = h.early_trace(s, name)
    env = dict(s.env, FDR_EVENTS="-ses:*", FDR_TEST_NO_RINGS=hook)
    r = subprocess.run([prog, "soak", str(THREADS), str(N), "exit"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300)
    c.check(r.returncode == 0, "%s: session-prog soak: exit %d, stderr %r" % (
        name, r.returncode, r.stderr[-500:]))
    ev, lost, dirs = h.early_finish(s, name, out)
    procs = set(ev) | set(lost)
    recorded = sum(len(e) for p in procs for e in ev[p].values())
    discarded = sum(sum(lost[p].values()) for p in procs)
    want = (0, THREADS * N) if hook else (THREADS * N, 0)
    if c.check(len(procs) == 1 and (recorded, discarded) == want,
               "%s: %d process(es) in the trace, %d events recorded and %d discarded; "
               "wanted 1, %d and %d" % (name, len(procs), recorded, discarded, *want)):
        print("%s: %d events recorded, %d counted as discarded" % (name, recorded,
                                                                   discarded))
    if hook:
        c.check("%d events of thread" % (THREADS * N) in s.log_text(),
                "fdrd's log does not say it counted the %d events" % (THREADS * N))
c.finish()
