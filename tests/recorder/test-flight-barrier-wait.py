#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-flight-barrier-wait.py PROG OUTDIR - a snapshot waits for a late writer.

With the signal fall-back of the barrier (FDR_SECTION_BARRIER=signal),
tests/recorder/progs/flight-barrier-wait.c holds one writer in its barrier
signal handler until the controller has passed its deadline and counted a
retry (fdr__section_barrier_retries; see the program's head comment): the
wait-past-deadline path, taken on every machine, without depending on its
speed. Checks: fdr_snapshot returned 0, the writer was held once and at
least one retry was counted, and the snapshot reads cleanly with the
newest events of both writers (wait:held and wait:free, up to i = 999 each,
in order: a ring starts small, so the oldest may have been overwritten).
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
    # Each writer's newest events, in order, up to its last (999): a
    # thread starts with the smallest ring and grows when it can
    # (docs/environment.md, FDR_MEMORY), so the oldest may be overwritten,
    # counted; the last ones, the barrier's business, never are.
    for ev in ("wait:held", "wait:free"):
        got = [e.fields["i"] for e in t.events if e.name == ev]
        c.check(len(got) >= 100 and got == list(range(N - len(got), N)),
                "%s: the newest i up to %d in order, at least 100 (%d events: %s...)"
                % (ev, N - 1, len(got), got[:5]))
    c.check(t.discarded == 0, "no event discarded (%d)" % t.discarded)
c.finish()
