#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-rerun.py PROG OUTDIR - a second run into the same FDR_OUTPUT.

Runs tests/recorder/progs/core-accounting.c twice into one directory:
first with 8 threads, alive at once (its start barrier), so 8 buffers and
8 streams, then with one thread. Traces on disk are evidence (issue 25):
the second run keeps the first's. babeltrace2 reads OUTDIR with both runs'
events (800 + 10) and each run's directory alone with its own. A third run
with FDR_OUTPUT_KEEP=0 removes both earlier traces, one line on stderr for
each, and leaves its own: 10 events of thread 0."""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402

prog, out = sys.argv[1], sys.argv[2]
shutil.rmtree(out, ignore_errors=True)
c.run([prog, "8", "100"], env={"FDR_OUTPUT": out})
first = c.read(out)
c.check(len(first.events) == 800 and len({e.tid for e in first.events}) == 8,
        "first run: %d events from %d threads" % (len(first.events),
                                                  len({e.tid for e in first.events})))
c.check(len({e.stream for e in first.events}) == 8,
        "first run: 8 streams (the threads are alive at once)")
runs = os.listdir(out)
p2 = c.run([prog, "1", "10"], env={"FDR_OUTPUT": out})
second = [d for d in os.listdir(out) if d not in runs]
c.check(len(runs) == 1 and len(second) == 1, "one directory per run: %s then %s" %
        (runs, second))
if not c.clean(out):
    c.fail("babeltrace2 cannot read the directory after the second run")
both = c.read(out)
c.check(len(both.events) == 810, "both runs' events: got %d of 800 + 10" % len(both.events))
want = [("acct:ev", {"thread": 0, "seq": i}) for i in range(10)]


def alone(path):
    return [(e.name, e.fields) for e in c.read(path).events]


c.check(alone(os.path.join(out, second[0])) == want, "the second run's directory alone")
c.check(len(alone(os.path.join(out, runs[0]))) == 800, "the first run's directory alone")
p3 = c.run([prog, "1", "10"], env={"FDR_OUTPUT": out, "FDR_OUTPUT_KEEP": "0"})
said = [l for l in p3.stderr.splitlines() if "removed the trace" in l]
c.check(len(said) == 2 and runs[0] in said[0] and second[0] in said[1],
        "FDR_OUTPUT_KEEP=0: one line per trace removed, oldest first: %r" % said)
c.check(len(os.listdir(out)) == 1, "FDR_OUTPUT_KEEP=0 left %s" % os.listdir(out))
got = [(e.name, e.fields) for e in c.read(out).events]
c.check(got == want, "only the third run's events: got %d events, e.g. %s" %
        (len(got), got[:3]))
c.finish()
