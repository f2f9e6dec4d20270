# SPDX-License-Identifier: MIT
"""test-fdr-daemon-traces.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
several fdrd traces at once, each with its own selection and filter mask.

Programs (tests/programs/progs/session-prog.c "go": T threads each record N
ses:tick n = 0..N-1, ses:rare at every 10th n, ses:hot at every 7th n in
category 5) record into four traces started at once:

    A  ses:tick                      -> tick only
    B  ses:rare ses:hot              -> rare and hot
    C  ses:*, filter mask 0x1        -> tick and rare (hot is category 5)
    D  ses:*, filter mask 0x20       -> hot only

Each trace, read with bt2, holds exactly the events it selected, per
program and per thread: recorded + discarded == what the thread emitted of
them, the n values of each event strictly increasing.

A program that writes a trace of its own (FDR_OUTPUT, as `fdr record`
runs it) while a trace is started: its own trace holds every event as
FDR_EVENTS chose (all), the fdrd trace its selection; both exact.

Then 32 traces at once (each ses:tick): every one holds every tick of every
thread. Then a trace started, stopped and destroyed 1,000 times while 8
threads record ses:tick and ses:rare without pause into a flight-recorder
trace K that selects ses:tick only: K holds no ses:rare (no event of the
destroyed trace in another), and no program is harmed."""
import collections
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
import bt2  # noqa: E402  (after the helpers put tests/lib on the path)


def launch(threads, n, routes, env=None):
    """A program once fdrd routed it into `routes` traces (FDR_DEBUG)."""
    e = dict(s.env)
    e["FDR_DEBUG"] = "1"
    e.update(env or {})
    p = subprocess.Popen([prog, "go", str(threads), str(n)], env=e,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    h.wait_route(p, routes)
    return p


def run(programs):
    for p in programs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in programs:
        c.check(h.line(p) == "done\n", "pid %d: not done" % p.pid)
        p.stdin.close()
        c.check(p.wait(timeout=120) == 0, "pid %d: exit status" % p.pid)


def emitted(name, n):
    step = {"ses:tick": 1, "ses:rare": 10, "ses:hot": 7}[name]
    return (n + step - 1) // step


def check_trace(root, p, threads, n, names):
    path = os.path.join(root, "session-prog-%d" % p.pid)
    ns, lost = h.per_thread(path)
    got = {name for (_, name) in ns}
    c.check(got == set(names), "%s: events %s, selected %s" % (path, got, names))
    tids = {tid for (tid, _) in ns}
    c.check(len(tids) == threads, "%s: %d threads, wanted %d" % (path, len(tids), threads))
    for tid in tids:
        total = 0
        for name in names:
            v = ns.get((tid, name), [])
            c.check(all(a < b for a, b in zip(v, v[1:])),
                    "%s tid %d %s: n not strictly increasing" % (path, tid, name))
            total += len(v)
        want = sum(emitted(name, n) for name in names)
        c.check(total + lost[tid] == want, "%s tid %d: %d recorded + %d discarded, "
                "emitted %d" % (path, tid, total, lost[tid], want))


s.start()
# ---- four traces, four selections -----------------------------------------
T, N = 2, 20000
sel = {"A": (["ses:tick"], None), "B": (["ses:rare", "ses:hot"], None),
       "C": (["ses:*"], "0x1"), "D": (["ses:*"], "0x20")}
expect = {"A": ["ses:tick"], "B": ["ses:rare", "ses:hot"],
          "C": ["ses:tick", "ses:rare"], "D": ["ses:hot"]}
for name, (items, mask) in sel.items():
    s.fdr("create", name, "-o", os.path.join(s.work, name), "--buffer-size", "4M")
    s.fdr("enable", name, *items)
    if mask:
        s.fdr("filter", name, mask)
    s.fdr("start", name)
progs = [launch(T, N, 4) for _ in range(2)]
run(progs)
for name in sel:
    s.fdr("destroy", name)
for name in sel:
    for p in progs:
        check_trace(os.path.join(s.work, name), p, T, N, expect[name])

# ---- a program that writes its own trace (FDR_OUTPUT, as fdr record runs it)
# keeps it whole, and the started fdrd trace gets its copy -------------------
own = os.path.join(s.work, "own")
s.fdr("create", "R", "-o", os.path.join(s.work, "R"), "--buffer-size", "4M")
s.fdr("enable", "R", "ses:tick")
s.fdr("start", "R")
p = launch(T, N, 1, {"FDR_OUTPUT": own, "FDR_BUFFER_SIZE": "4M"})
run([p])
s.fdr("destroy", "R")
check_trace(os.path.join(s.work, "R"), p, T, N, ["ses:tick"])
check_trace(own, p, T, N, ["ses:tick", "ses:rare", "ses:hot"])

# ---- 32 traces at once ------------------------------------------------------
N32 = 2000
for i in range(32):
    s.fdr("create", "t%d" % i, "-o", os.path.join(s.work, "many", "t%d" % i))
    s.fdr("enable", "t%d" % i, "ses:tick")
    s.fdr("start", "t%d" % i)
p = launch(T, N32, 32)
run([p])
for i in range(32):
    s.fdr("destroy", "t%d" % i)
for i in range(32):
    check_trace(os.path.join(s.work, "many", "t%d" % i), p, T, N32, ["ses:tick"])

# ---- a trace comes and goes while threads record into another --------------
# K is a flight recorder (written at its end: bounded, whatever the speed)
s.fdr("create", "K", "-o", os.path.join(s.work, "K"), "--overwrite")
s.fdr("enable", "K", "ses:tick")
s.fdr("start", "K")
e = dict(s.env)
storm = subprocess.Popen([prog, "storm", "8"], env=e, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
s.pids.add(storm.pid)
c.check(h.line(storm) == "ready\n", "storm: not ready")
# 1,000 rounds over one connection (session-client speaks the verbs as
# `fdr` does, without a process per verb).
ROUNDS = 1000
script = "".join("create L %s\nenable L ses:rare\nstart L\nsleep 2\nstop L\ndestroy L\n"
                 % os.path.join(s.work, "L", str(i)) for i in range(ROUNDS))
drv = subprocess.run([s.client_bin, s.sock], input=script, stdout=subprocess.PIPE,
                     text=True, timeout=600)
replies = drv.stdout.splitlines()
c.check(drv.returncode == 0 and len(replies) == 5 * ROUNDS
        and all(r == "ok 0" for r in replies),
        "%d rounds: %d replies, not ok: %r" % (ROUNDS, len(replies),
                                               [r for r in replies if r != "ok 0"][:3]))
c.check(storm.poll() is None, "the storm runs on through the rounds")
# The rounds did catch the threads writing: some wrote packets out.
written = 0
for i in range(ROUNDS):
    for root, dirs, files in os.walk(os.path.join(s.work, "L", str(i))):
        written += any(f.startswith("stream_") and os.path.getsize(os.path.join(root, f))
                       for f in files)
c.check(written > 0, "no round wrote events: the storm was never caught")
print("rounds with packets written: %d of %d" % (written, ROUNDS))
storm.stdin.close()
c.check(storm.wait(timeout=120) == 0, "storm: exit status")
s.fdr("destroy", "K")
names = collections.Counter()
for m in bt2.TraceCollectionMessageIterator(os.path.join(s.work, "K")):
    if type(m) is bt2._EventMessageConst:
        names[m.event.name] += 1
c.check(set(names) == {"ses:tick"}, "K holds only ses:tick: %s" % dict(names))
c.check(os.path.isdir(os.path.join(s.work, "L")), "L was written")
c.finish()
