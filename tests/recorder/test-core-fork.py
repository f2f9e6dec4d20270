#!/usr/bin/python3
"""test-core-fork.py PROG OUTDIR - after fork(), the parent's trace holds
exactly the parent's events (2000 from main, 1000 from two workers that
used the same pooled ring), in order, and none of the child's."""
import importlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
c = importlib.import_module("test-core-common")
bt2 = c.bt2

prog, out = sys.argv[1], sys.argv[2]
c.run([prog], out, timeout=60)
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
c.finish()
