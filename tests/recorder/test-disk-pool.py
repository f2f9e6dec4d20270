#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-disk-pool.py PROG OUTDIR rss|no-rss - memory that follows activity
writing to disk (FDR_OUTPUT, discard mode, issue 29; lib/recorder/buffer.c):
every thread starts with a small ring, a busy one grows to FDR_BUFFER_SIZE
(8 MiB) within FDR_MEMORY (32 MiB), the idle ones keep theirs.

1,000 threads (flight-pool disk): 997 idle record one event each, then 3
busy ones, one after the other, record 100,000 events each (1.4 MB, more
than a small ring holds by far, less than the ring each grows to: the
first two get 8 MiB, the third 4 MiB, the 1,000 small rings taking 12 MiB
of the budget), so that none of theirs is discarded however slow the
consumer. Checked: exactly 3 rings larger than a small one (the busy
threads grew, no idle one did); all the rings within the budget; the RSS
added over the same program recording nothing (FDR_EVENTS=-*) within the
budget (not under sanitizers: their shadow memory counts); in the trace
(bt2), every event of each busy thread, in order, most of them in a stream
other than its first (its grown ring), each idle thread's event, and
nothing discarded. Before, rings to disk were made at 8 MiB each while a
256 MiB budget had room: the first idle threads took them, and the busy
ones, later, had small rings that discarded.
"""
import collections
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import bt2  # noqa: E402
import fdrtest as c  # noqa: E402

prog, out, rss_checked = sys.argv[1], sys.argv[2], sys.argv[3] == "rss"
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
THREADS, BUSY, N = 1000, 3, 100000
BUDGET = 32 << 20


def fields(text):
    f = {}
    for ln in text.splitlines():
        w = ln.split()
        if len(w) == 2 and w[0] in ("rss_kb", "rings_kb", "big"):
            f[w[0]] = int(w[1])
    return f


trace = os.path.join(out, "trace")
p = c.run([prog, "disk", str(THREADS), str(BUSY), str(N)], outdir=trace, timeout=600)
got = fields(p.stdout)
base = c.run([prog, "disk", str(THREADS), str(BUSY), str(N)],
             outdir=os.path.join(out, "none"), env={"FDR_EVENTS": "-*"}, timeout=600)
rss0 = fields(base.stdout).get("rss_kb", 0) * 1024
rss, rings = got.get("rss_kb", 0) * 1024, got.get("rings_kb", 0) * 1024
added = rss - rss0
print("RSS %.1f MiB with fdr, %.1f MiB recording nothing: %.1f MiB added; rings %.1f MiB "
      "(budget %d MiB), %s larger than a small one"
      % (rss / 2**20, rss0 / 2**20, added / 2**20, rings / 2**20, BUDGET >> 20,
         got.get("big")))
c.check(got.get("big") == BUSY, "%s rings larger than a small one, expected the %d busy "
        "threads' (idle threads keep small rings, busy ones grow)" % (got.get("big"), BUSY))
c.check(0 < rings <= BUDGET, "rings %d bytes, over the %d MiB budget" % (rings, BUDGET >> 20))
c.check(not rss_checked or added <= BUDGET,
        "RSS added %.1f MiB, over the %d MiB budget" % (added / 2**20, BUDGET >> 20))

seqs = collections.defaultdict(list)
streams = collections.defaultdict(collections.Counter)
quiet = set()
lost = 0
for m in bt2.TraceCollectionMessageIterator(trace):
    if type(m) is bt2._EventMessageConst:
        who = int(m.event.payload_field["who"])
        if m.event.name == "pool:busy":
            seqs[who].append(int(m.event.payload_field["seq"]))
            streams[who][m.event.packet.stream.id] += 1
        else:
            quiet.add(who)
    elif type(m) is bt2._DiscardedEventsMessageConst:
        lost += m.count or 0
c.check(lost == 0, "%d events discarded: the busy threads' rings did not hold them" % lost)
for who in range(BUSY):
    s = seqs.get(who, [])
    c.check(s == list(range(N)), "busy thread %d: %d of its %d events in the trace, in order: "
            "%s" % (who, len(s), N, s == sorted(s)))
    most = streams[who].most_common(1)[0] if streams[who] else (None, 0)
    print("busy thread %d: %d events, per stream %s" % (who, len(s), dict(streams[who])))
    c.check(len(streams[who]) == 2 and most[1] > N // 2,
            "busy thread %d: its events should be in two streams, most in the grown "
            "ring's: %s" % (who, dict(streams[who])))
missing = sorted(set(range(BUSY, THREADS)) - quiet)
c.check(not missing, "idle threads with no event in the trace: %s" % missing[:10])
c.finish()
