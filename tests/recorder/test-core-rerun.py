#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-rerun.py PROG OUTDIR - a second run into the same FDR_OUTPUT.

Runs tests/recorder/progs/core-accounting.c twice into one directory:
first with 8 threads, alive at once (its start barrier), so 8 buffers and
8 streams, then with one thread. babeltrace2 reading OUTDIR (whatever the
layout inside it) must find the second run's events only: 10 events of
thread 0. A file left by the first run would either be read as part of
the trace or make babeltrace2 fail on it."""
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
c.run([prog, "1", "10"], env={"FDR_OUTPUT": out})
if not c.clean(out):
    c.fail("babeltrace2 cannot read the directory after the second run")
t = c.read(out)
got = [(e.name, e.fields) for e in t.events]
want = [("acct:ev", {"thread": 0, "seq": i}) for i in range(10)]
c.check(got == want, "only the second run's events: got %d events, e.g. %s" %
        (len(got), got[:3]))
c.finish()
