#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-flight-barrier-wait.py PROG OUTDIR - a snapshot waits for a late writer.

With the signal fall-back of the barrier (FDR_SECTION_BARRIER=signal),
tests/recorder/progs/flight-barrier-wait.c holds one writer in its barrier
signal handler until the controller has passed its deadline and counted a
retry (fdr__section_barrier_retries; see the program's head comment): the
wait-past-deadline path, taken on every machine, without depending on its
speed. Checks: fdr_snapshot returned 0, the writer was held once and at
least one retry was counted, and the snapshot reads cleanly with every
event of both writers (wait:held and wait:free, i = 0..999 each, in order).
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402

PROG, OUT = sys.argv[1], sys.argv[2]
N = 1000
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
snap = os.path.join(OUT, "snap")
p = c.run([PROG, snap], env={"FDR_SECTION_BARRIER": "signal"}, timeout=300)
sys.stdout.write(p.stdout)
words = p.stdout.split()
if len(words) != 6 or words[0] != "snapshot":
    c.fail("no result line from the program: %r\n%s" % (p.stdout, p.stderr))
rc, retries, held = int(words[1]), int(words[3]), int(words[5])
c.check(held == 1, "the writer was held in its barrier handler once (%d)" % held)
c.check(retries > 0, "the controller waited past its deadline (%d retries)" % retries)
c.check(rc == 0, "fdr_snapshot returned %d, not 0, for a writer that answered late\n%s"
        % (rc, p.stderr))
if rc == 0:
    c.clean(snap, overwritten=True)
    t = c.read(snap, overwritten=True)
    for ev in ("wait:held", "wait:free"):
        got = [e.fields["i"] for e in t.events if e.name == ev]
        c.check(got == list(range(N)), "%s: i = 0..%d in order (%d events: %s...)"
                % (ev, N - 1, len(got), got[:5]))
    c.check(t.discarded == 0, "no event discarded (%d)" % t.discarded)
c.finish()
