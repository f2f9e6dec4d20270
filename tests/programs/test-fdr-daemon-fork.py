# SPDX-License-Identifier: MIT
"""test-fdr-daemon-fork.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
forked children record through fdrd on their own, exec'd images register
again, and every event is accounted for.

Fork storm: a routed parent (session-prog "forks") records N ses:tick, then
forks 500 children while 2 more threads of its own record N each; every
child, once fdrd routed it, records N (t = its number) and exits. The trace
has one directory per process; read with bt2 (one pass), each child's
events are exactly its own N, under its pid, and the parent's 3 x N are
there: 500 x N child events in all, none discarded (their rings are far
from full).

fork + exec: a routed parent records N (t = 0); its child records N (t = 1)
and execs an instrumented image, which registers again under the same pid
and records N (t = 0): the child's directory holds its N, a second
directory of the same pid holds the new image's N (fdrd never writes over
a process directory), and the parent's holds its own."""
import collections
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
import bt2  # noqa: E402

K, N, T = 500, 1000, 2
fe = dict(s.env, FDR_EVENTS="-ses:*")  # nothing of their own: fdr_enabled waits for the route


def gone():
    h.wait_for(lambda: not s.json("list", "processes", "--json")["processes"],
               "fdrd saw every process go", limit=300)


def read_all(path):
    """{(vpid, t): [n...]}, {vpid: discarded} over every trace under path."""
    ns = collections.defaultdict(list)
    lost = collections.Counter()
    for m in bt2.TraceCollectionMessageIterator(path):
        if type(m) is bt2._EventMessageConst:
            pid = int(m.event.packet.stream.trace.environment["vpid"])
            ns[(pid, int(m.event.payload_field["t"]))].append(int(m.event.payload_field["n"]))
        elif type(m) is bt2._DiscardedEventsMessageConst:
            lost[int(m.stream.trace.environment["vpid"])] += m.count or 0
    return ns, lost


s.start()
# ---- fork storm -------------------------------------------------------------
out = os.path.join(s.work, "storm")
s.fdr("create", "FK", "-o", out)
s.fdr("enable", "FK", "ses:tick")
s.fdr("start", "FK")
p = subprocess.Popen([prog, "forks", str(K), str(N), str(T)], env=fe, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True)
s.pids.add(p.pid)
o, e = p.communicate(timeout=600)
c.check(p.returncode == 0 and o == "done 0\n", "forks: %d %r %r" % (p.returncode, o, e))
gone()
s.fdr("destroy", "FK")
dirs = os.listdir(out)
c.check(len(dirs) == K + 1, "one directory per process: %d of %d" % (len(dirs), K + 1))
ns, lost = read_all(out)
c.check(not lost, "nothing discarded: %s" % dict(lost))
children = {pid: t for (pid, t) in ns if pid != p.pid}
c.check(sorted(children.values()) == list(range(1, K + 1)),
        "each child once, under a pid of its own: %d children, %d distinct numbers, "
        "missing %s" % (len(children), len(set(children.values())),
                        sorted(set(range(1, K + 1)) - set(children.values()))[:20]))
for (pid, t), v in ns.items():
    c.check(v == list(range(N)), "pid %d, t %d: %d events, not 0..%d" % (pid, t, len(v), N - 1))
c.check(sum(len(v) for (pid, _), v in ns.items() if pid != p.pid) == K * N,
        "%d child events" % (K * N))
c.check(sorted(t for (pid, t) in ns if pid == p.pid) == [0] + [100000 + i for i in range(T)],
        "the parent's threads: %s" % sorted(t for (pid, t) in ns if pid == p.pid))
for d in dirs:
    c.check(d == "session-prog-%d" % p.pid or int(d.rsplit("-", 1)[1]) in children,
            "directory %s names its process" % d)

# ---- fork + exec ---------------------------------------------------------------
out = os.path.join(s.work, "exec")
s.fdr("create", "EX", "-o", out)
s.fdr("enable", "EX", "ses:tick")
s.fdr("start", "EX")
p = subprocess.Popen([prog, "exec", str(N)], env=fe, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True)
s.pids.add(p.pid)
o, e = p.communicate(timeout=300)
# the new image's line, then the parent's
c.check(p.returncode == 0 and o == "done 0\ndone 0\n", "exec: %d %r %r" % (p.returncode, o, e))
gone()
s.fdr("destroy", "EX")
dirs = sorted(os.listdir(out))
child = [d for d in dirs if d != "session-prog-%d" % p.pid]
c.check(len(dirs) == 3 and len(child) == 2 and child[1] == child[0] + "-2",
        "parent, child, and the child's new image: %s" % dirs)
got = {}
for d in dirs:
    ns, lost = h.per_thread(os.path.join(out, d))
    c.check(len(ns) == 1 and not sum(lost.values()), "%s: one thread, nothing lost" % d)
    for (tid, _), v in ns.items():
        got[d] = v
        c.check(v == list(range(N)), "%s: %d events" % (d, len(v)))
        c.check(tid == (p.pid if d == "session-prog-%d" % p.pid else
                        int(child[0].rsplit("-", 1)[1])), "%s: under its pid (%d)" % (d, tid))
c.finish()
