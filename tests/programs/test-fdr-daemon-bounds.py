# SPDX-License-Identifier: MIT
"""test-fdr-daemon-bounds.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
a packet header that claims more bytes than its slot, in a ring fdrd gave
a program, is rejected by every reader of fdrd's rings (issue 27).

Two programs ("session-prog bounds packet" and "... content", FDR_EVENTS
off until routed) record 2,000 ses:tick each into an overwrite trace of
4 KiB packets in 64 KiB file-backed rings (no wrap: fdrd writes nothing
before the end), then make packet 2 of their ring claim its events plus
copies of its last one written over the rest of its slot and the next
(tests/lib/overclaim.h: every byte parses as events in order, only the
size bound rejects it): packet and content size larger than a slot, or
content larger than the packet. Then each reader of fdrd's rings writes
them out:

  snapshot  `fdr snapshot` (the programs running);
  recover   fdrd SIGKILLed, then the programs: `fdr recover` on the
            buffer directory (exit 1, one line per ring: 2 corrupt
            packets skipped);
  end       a new fdrd and trace, the programs exit: fdrd writes their
            rings (collect.c) at their end.

Each time, per program: babeltrace2 reads the trace, no event is there
twice, events are in order, the first and the last are there and what is
missing is one run (packets 2 and 3, skipped): a reader that took packet 2
would hold its last event hundreds of times."""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
N = 2000
KINDS = ("packet", "content")


def launch():
    """The two programs, once each wrote its lie: {kind: Popen}."""
    e = dict(s.env, FDR_EVENTS="-ses:*", FDR_CRASH="0")
    out = {}
    for kind in KINDS:
        p = subprocess.Popen([prog, "bounds", kind], env=e, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        s.pids.add(p.pid)
        line = h.line(p)
        c.check(line.startswith("claims ") and line.split()[1] != "0",
                "%s: the program could not write its lie: %r" % (kind, line))
        out[kind] = p
    return out


def check_trace(what, path):
    r = subprocess.run(["babeltrace2", path], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    c.check(r.returncode == 0, "%s: babeltrace2 %d: %s" % (what, r.returncode,
                                                            r.stderr[-500:]))
    ns, _ = h.per_thread(path)
    v = [n for (_, name), vs in ns.items() if name == "ses:tick" for n in vs]
    missing = sorted(set(range(N)) - set(v))
    runs = sum(1 for k, n in enumerate(missing) if k == 0 or missing[k - 1] != n - 1)
    c.check(v == sorted(set(v)) and v and v[0] == 0 and v[-1] == N - 1 and
            0 < len(missing) < N // 2 and runs == 1,
            "%s: events once each and in order, first and last there, one run "
            "missing (the two skipped packets): %d events, %d twice, %d missing in %d runs"
            % (what, len(v), len(v) - len(set(v)), len(missing), runs))


# snapshot, then recover
out = os.path.join(s.work, "out")
buf = os.path.join(s.work, "buf")
pid = s.start()
s.fdr("create", "S", "-o", out, "--overwrite", "--file-buffers=" + buf, "--packet-size", "4K",
      "--buffer-size", "64K")
s.fdr("enable", "S", "ses:tick")
s.fdr("start", "S")
progs = launch()
snap = os.path.join(s.work, "snap")
s.fdr("snapshot", "S", "-o", snap)
for kind, p in progs.items():
    check_trace("snapshot, " + kind, os.path.join(snap, "session-prog-%d" % p.pid))
os.kill(pid, signal.SIGKILL)
h.wait_for(lambda: not h.pid_alive(pid), "fdrd %d gone" % pid)
for p in progs.values():
    p.kill()
    p.wait(timeout=120)
rec = os.path.join(s.work, "rec")
r = s.run(["recover", buf, "-o", rec])
c.check(r.returncode == 1 and r.stderr.count(": 2 corrupt packets skipped") == 2,
        "fdr recover: exit 1 (corrupt packets), one line per ring saying it skipped "
        "2: exit %d: %s" % (r.returncode, r.stderr[-500:]))
for kind, p in progs.items():
    check_trace("recover, " + kind, os.path.join(rec, "session-prog-%d" % p.pid))

# fdrd writes the rings of programs that end
end = os.path.join(s.work, "end")
s.start()
s.fdr("create", "E", "-o", end, "--overwrite", "--packet-size", "4K", "--buffer-size", "64K")
s.fdr("enable", "E", "ses:tick")
s.fdr("start", "E")
progs = launch()
for p in progs.values():
    p.stdin.close()
    c.check(p.wait(timeout=120) == 0, "pid %d: exit status" % p.pid)
h.wait_for(lambda: not s.json("list", "processes", "--json")["processes"],
           "fdrd saw both programs go")
s.fdr("destroy", "E")
for kind, p in progs.items():
    check_trace("end, " + kind, os.path.join(end, "session-prog-%d" % p.pid))
s.stop()
c.finish()
