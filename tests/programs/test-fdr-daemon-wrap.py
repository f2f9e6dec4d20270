# SPDX-License-Identifier: MIT
"""test-fdr-daemon-wrap.py FDR FDRD SESSION_CLIENT WORKDIR CORE_WRAP - the
32-bit event-header times through fdrd.

Two fdrd traces started at once, both selecting wrap:*: the program
(tests/recorder/progs/core-wrap.c "go") records into the first one's ring
on the fast path and its events are copied into the other's (a lane,
writer.c lanes_copy) in the slow path. In both, bt2's time of every event
lies between the clock reads around it, across a packet whose low 32 bits
wrap and a thread idle for more than 2^32 ticks (tests/lib/wrapcheck.py);
every event emitted is there."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
from wrapcheck import check_times  # noqa: E402  (tests/lib, on the path now)
s = h.Session(sys.argv)
prog = sys.argv[5]

s.start()
for name in ("A", "B"):
    s.fdr("create", name, "-o", os.path.join(s.work, name))
    s.fdr("enable", name, "wrap:*")
    s.fdr("start", name)
e = dict(s.env)
e["FDR_DEBUG"] = "1"
p = subprocess.Popen([prog, "go"], env=e, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True)
s.pids.add(p.pid)
h.wait_route(p, 2)
p.stdin.write("go\n")
p.stdin.flush()
got = h.line(p).split()
c.check(len(got) == 2 and got[0] == "emitted", "pid %d said %s" % (p.pid, got))
emitted = int(got[1])
c.check(h.line(p) == "done\n", "pid %d: not done" % p.pid)
p.stdin.close()
c.check(p.wait(timeout=120) == 0, "pid %d: exit status" % p.pid)
for name in ("A", "B"):
    s.fdr("destroy", name)
for name in ("A", "B"):
    path = os.path.join(s.work, name, "core-wrap-%d" % p.pid)
    check_times(path, emitted, "trace " + name)
    c.clean(path)
c.finish()
