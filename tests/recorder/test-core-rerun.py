#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-rerun.py PROG OUTDIR - a second run into the same FDR_OUTPUT.

Runs tests/recorder/progs/core-threads.c twice into one directory: first
with 64 threads, 16 at a time (many buffers, many stream files), then with
one thread. babeltrace2 reading OUTDIR (whatever the layout inside it) must
find the second run's events only: thr:main threads=1 and one thread's
three events. A file left by the first run would either be read as part of
the trace or make babeltrace2 fail on it."""
import collections
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402

prog, out = sys.argv[1], sys.argv[2]
shutil.rmtree(out, ignore_errors=True)
c.run([prog, "64", "16"], env={"FDR_OUTPUT": out})
first = c.read(out)
c.check(len(first.events) == 3 * 64 + 1, "first run: %d events" % len(first.events))
c.run([prog, "1", "1"], env={"FDR_OUTPUT": out})
if not c.clean(out):
    c.fail("babeltrace2 cannot read the directory after the second run")
t = c.read(out)
got = collections.Counter((e.name, tuple(sorted(e.fields.items()))) for e in t.events)
want = collections.Counter([("thr:main", (("threads", 1),)), ("thr:begin", (("n", 0),)),
                            ("thr:middle", (("n", 0), ("name", "worker"))),
                            ("thr:end", (("n", 0),))])
c.check(got == want, "only the second run's events: got %d events %s" %
        (len(t.events), sorted(got.items())[:6]))
c.finish()
