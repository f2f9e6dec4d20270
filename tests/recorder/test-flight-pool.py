#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-flight-pool.py PROG OUTDIR rss|no-rss - memory that follows activity
(lib/recorder/buffer.c): in the flight recorder every thread starts with a
small ring, a busy one grows to FDR_BUFFER_SIZE within FDR_MEMORY.

memory: 1,000 threads, 10 busy and 990 recording once a second, in
  overwrite mode (the flight recorder, the default 32 MiB budget, 256 KiB
  rings: the default 1 MiB would give bt2 four times the events to read,
  ~2 minutes at load 16). Once each busy thread wrapped its ring and each
  quiet one recorded twice, all stop and the program reads its VmRSS:
  what it adds over the same program recording nothing (FDR_EVENTS=-*)
  is within the budget, and so are its rings (the fdr-buffer memfds it
  maps: 1,000 small ones of 12 KiB, 10 grown; before, the first threads
  took the budget in full rings, whether busy or not). Its snapshot holds
  each busy thread's newest events (its last seq, the ones before it
  consecutive, more than a small ring holds) and each quiet thread's last
  event. Read with bt2 (the babeltrace2 CLI on 1,000 streams adds a
  minute under load). no-rss (sanitizer builds): RSS is printed, not
  checked (it counts their shadow memory).
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
THREADS, BUSY = 1000, 10
BUDGET = 32 << 20
SMALL_EVENTS = 2 * 4096 // 14  # two-u32 events a small ring holds, at most


def fields(text):
    rss, last, snap = None, {}, None
    for ln in text.splitlines():
        w = ln.split()
        if w[0] == "rss_kb":
            rss = int(w[1]) * 1024
        elif w[0] == "rings_kb":
            last["rings"] = int(w[1]) * 1024
        elif w[0] == "last":
            last[int(w[1])] = int(w[2])
        elif w[0] == "snapshot":
            snap = int(w[1])
    return rss, last, snap


# ---- memory: 1,000 threads, overwrite mode ----------------------------------
snap = os.path.join(out, "snap")
p = c.run([prog, "memory", str(THREADS), str(BUSY), snap], env={"FDR_BUFFER_SIZE": "256K"},
          timeout=300)
rss, last, r = fields(p.stdout)
rings = last.pop("rings", None)
c.check(r == 0, "the snapshot was taken (%s)" % r)
c.check(rings is not None and rings <= BUDGET, "rings %s bytes, over the %d MiB budget"
        % (rings, BUDGET >> 20))
base = c.run([prog, "memory", str(THREADS), str(BUSY), os.path.join(out, "none")],
             env={"FDR_BUFFER_SIZE": "256K", "FDR_EVENTS": "-*"}, timeout=300)
rss0 = fields(base.stdout)[0]
added = rss - rss0
print("RSS %.1f MiB with fdr, %.1f MiB recording nothing: %.1f MiB added; rings %.1f MiB "
      "(budget %d MiB)" % (rss / 2**20, rss0 / 2**20, added / 2**20, (rings or 0) / 2**20,
                          BUDGET >> 20))
c.check(not rss_checked or added <= BUDGET, "RSS added %.1f MiB, over the %d MiB budget"
        % (added / 2**20, BUDGET >> 20))

seqs = collections.defaultdict(list)
for m in bt2.TraceCollectionMessageIterator(snap):
    if type(m) is bt2._EventMessageConst:
        seqs[int(m.event.payload_field["who"])].append(int(m.event.payload_field["seq"]))
for who in range(THREADS):
    s, want = seqs.get(who, []), last.get(who)
    if who < BUSY:
        c.check(s and s[-1] == want - 1, "busy thread %d: last event %s, emitted up to %s"
                % (who, s[-1:] or None, want - 1 if want else None))
        c.check(s == list(range(s[0], s[0] + len(s))) if s else False,
                "busy thread %d: its newest events not consecutive" % who)
        c.check(len(s) > SMALL_EVENTS, "busy thread %d: %d events kept, no more than a "
                "small ring holds (it did not grow)" % (who, len(s)))
        print("busy thread %d: newest %d events kept (from %d of %d)"
              % (who, len(s), s[0] if s else -1, want))
    else:
        c.check(s and s[-1] == want - 1, "quiet thread %d: last event %s, emitted up to %s"
                % (who, s[-1:] or None, want - 1 if want else None))

c.finish()
