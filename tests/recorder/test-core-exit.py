#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-exit.py PROG OUTDIR MODE - nothing committed is lost at exit.

MODE is exit, return, _exit (after fdr_flush) or thread (exit() from a
recording thread); see tests/recorder/progs/core-exit.c. The workers are still
alive, their packets partially filled, when the process ends. Every event
must be in the trace, exactly once and in order, nothing discarded; the
events recorded by an atexit handler registered after the first event too
(except with _exit, which runs no handler)."""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check
bt2 = c.bt2

prog, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
c.run([prog, mode], out, timeout=60)

seqs = collections.defaultdict(list)
discarded = 0
for msg in bt2.TraceCollectionMessageIterator(out):
    t = type(msg)
    if t is bt2._EventMessageConst:
        ev = msg.event
        p = ev.payload_field
        if ev.name == "ex:work":
            seqs["work%d" % int(p["thread"])].append(int(p["seq"]))
        elif ev.name == "ex:atexit":
            seqs["atexit"].append(int(p["seq"]))
        else:
            seqs[ev.name].append(str(p[list(p.keys())[0]]))
    elif t is bt2._DiscardedEventsMessageConst:
        discarded += msg.count or 0

want = {
    "ex:first": [mode],
    "work0": list(range(1000)),
    "work1": list(range(20000)),
    "ex:last": ["thread" if mode == "thread" else "main"],
    "atexit": [] if mode == "_exit" else list(range(100)),
}
check(discarded == 0, "%d events discarded" % discarded)
for k, v in want.items():
    got = seqs.get(k, [])
    check(got == v, "%s: %d events%s, expected %d" %
          (k, len(got), "" if len(got) != len(v) else " (wrong values or order)", len(v)))
extra = set(seqs) - set(want)
check(not extra, "unexpected events: %s" % extra)
c.clean(out)
c.finish()
