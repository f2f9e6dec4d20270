#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-fork.py PROG OUTDIR - after fork(), the parent's trace holds
exactly the parent's events (2000 from main, 1000 from two workers that
used the same pooled ring), in order, and none of the child's. The child's
snapshot (OUTDIR.child) holds its 5000 events, and its packets' pid and its
metadata's vpid are the child's, not the parent's."""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
bt2 = c.bt2

prog, out = sys.argv[1], sys.argv[2]
snap = out + ".child"
shutil.rmtree(snap, ignore_errors=True)
p = c.run([prog, snap], out, timeout=60)
child = int(dict(l.split("=", 1) for l in p.stdout.split())["child"])
seqs, work, others, discarded = [], [], [], 0
for msg in bt2.TraceCollectionMessageIterator(out):
    if type(msg) is bt2._EventMessageConst:
        if msg.event.name == "fork:parent":
            seqs.append(int(msg.event.payload_field["seq"]))
        elif msg.event.name == "fork:worker":
            work.append(int(msg.event.payload_field["seq"]))
        else:
            others.append(msg.event.name)
    elif type(msg) is bt2._DiscardedEventsMessageConst:
        discarded += msg.count or 0
c.check(seqs == list(range(2000)), "parent events 0..1999 in order (got %d)" % len(seqs))
c.check(work == list(range(1000)), "worker events 0..999 in order (got %d)" % len(work))
c.check(not others, "no child event in the parent's trace (got %d)" % len(others))
c.check(discarded == 0, "nothing discarded (got %d)" % discarded)
c.clean(out)

# The child's snapshot: its own events, its own pid. Overwrite mode (the
# child's rings are in memory), so packets may have been overwritten.
t = c.read(snap, overwritten=True)
kids = [e.fields["seq"] for e in t.events if e.name == "fork:child"]
c.check(kids and kids == list(range(kids[0], 5000)),
        "the child's snapshot holds its newest fork:child events, in order")
pids = {e.pid for e in t.events}
c.check(pids == {child}, "child's packets carry pid %s, expected %d (parent %d)"
        % (sorted(pids), child, os.getpid()))
c.check(t.env.get("vpid") == child, "child's metadata vpid %r, expected %d"
        % (t.env.get("vpid"), child))
c.clean(snap, overwritten=True)
c.finish()
