#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-fdr-daemon-scribble-seeds.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG
[COUNT [FIRST]] - what fdrd writes from a scribbled ring always reads.

fdr-daemon-scribble runs one scribbler, seeded by its pid: a packet fdrd's
checks passed that was not whole events (a few bytes after the last event)
made its trace unreadable once in a while (issue 24). Here the same
scribbler (session-prog "scribble ROUNDS SEED") runs with seeds FIRST ..
FIRST + COUNT - 1 (4 at a time) into one discard trace (4 KiB packets,
64 KiB rings) of a real fdrd; each writes over its rings 60 times while a
thread records. Every scribbler ends by itself (its writer follows only
the geometry its rings were made with: never a crash), fdrd stays up,
and every scribbler's trace reads with babeltrace2 without an error (what
fdrd could not trust was left out and logged). A failing seed is replayed
alone with COUNT 1 and FIRST the seed."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
COUNT = int(sys.argv[6]) if len(sys.argv) > 6 else 24
FIRST = int(sys.argv[7]) if len(sys.argv) > 7 else 1
AT_ONCE, ROUNDS = 4, 60

out = os.path.join(s.work, "out")
e = h.scribble_trace(s, out)
# Writing over memory its own thread writes is the scribbler's point: a
# data race by design, not one of fdr's (TSan would exit 66 for it).
e["TSAN_OPTIONS"] = (e.get("TSAN_OPTIONS", "") + ":report_bugs=0").lstrip(":")
pids = {}
seeds = list(range(FIRST, FIRST + COUNT))
for k in range(0, len(seeds), AT_ONCE):
    running = []
    for seed in seeds[k:k + AT_ONCE]:
        p = subprocess.Popen([prog, "scribble", str(ROUNDS), str(seed)], env=e,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        s.pids.add(p.pid)
        pids[p.pid] = seed
        running.append((seed, p))
    for seed, p in running:
        o, err = p.communicate(timeout=300)
        c.check(p.returncode == 0 and o == "done\n",
                "seed %d (pid %d): exit status %d, %r: %s"
                % (seed, p.pid, p.returncode, o, err[-400:]))
c.check(s.daemon_pid() != 0, "fdrd is up")
h.wait_for(lambda: not s.json("list", "processes", "--json")["processes"],
           "fdrd saw every process go")
s.fdr("destroy", "S")
events = 0
for pid, seed in sorted(pids.items(), key=lambda kv: kv[1]):
    d = os.path.join(out, "session-prog-%d" % pid)
    if not os.path.isdir(d):
        continue  # routed too late to record anything: nothing to read
    r = subprocess.run(["babeltrace2", d], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, errors="replace", timeout=300)
    c.check(r.returncode == 0, "seed %d (pid %d): babeltrace2 %d: %s"
            % (seed, pid, r.returncode, r.stderr[-500:]))
    events += r.stdout.count("ses:tick")
print("%d scribblers: %d events read" % (COUNT, events))
c.check(events > 0, "the scribblers' intact packets were kept")
log = s.log_text()
c.check("corrupt" in log or "skipped" in log,
        "fdrd logged what it left out: %s" % log[-800:])
c.finish()
