#!/usr/bin/python3
"""test-core-accounting.py PROG OUTDIR - nothing is lost silently.

4 threads x 1,000,000 events "acct:ev" (thread index, sequence number) with
a ring far too small for the consumer to keep up (FDR_BUFFER_SIZE=128K,
FDR_PACKET_SIZE=16K, discard mode). The babeltrace2 CLI reads the trace;
the events it prints plus the discarded events it reports (computed by
babeltrace2 from the events_discarded counts of the packet contexts) must
be exactly 4,000,000, and some must have been discarded, or the test
proves nothing. Within a stream (one thread here) the sequence numbers
must strictly increase: no duplicate, no reordering.

The CLI's text is parsed rather than iterating messages in Python: bt2's
Python iteration costs ~10 us per event, too slow for a million."""
import collections
import importlib
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
c = importlib.import_module("test-core-common")
check = c.check

prog, out = sys.argv[1], sys.argv[2]
THREADS, EVENTS = 4, 1000000
SIZES = [("128K", "16K"), ("16K", "4K"), ("8K", "4K")]

for buf, pkt in SIZES:
    c.run([prog, str(THREADS), str(EVENTS)], out, timeout=200,
          env={"FDR_BUFFER_SIZE": buf, "FDR_PACKET_SIZE": pkt})
    # stderr (one line per discarded range, easily more than a pipe holds)
    # goes to a file, so that reading stdout cannot deadlock.
    errf = tempfile.TemporaryFile(mode="w+")
    p = subprocess.Popen(["babeltrace2", "--names=none", out], stdout=subprocess.PIPE,
                         stderr=errf, text=True)
    # [ts] (+delta) host:proc:(pid) acct:ev: { pid, tid, "name" }, { thread, seq }
    line_re = re.compile(r" acct:ev: \{ (\d+), (\d+), \"[^\"]*\" \}, \{ (\d+), (\d+) \}$")
    read = 0
    last = {}           # tid -> last sequence number
    thread_of = {}      # tid -> thread index
    per_thread = collections.Counter()
    bad_order = bad_line = 0
    for line in p.stdout:
        m = line_re.search(line.rstrip("\n"))
        if not m:
            bad_line += 1
            if bad_line < 5:
                print("unexpected line: " + line.rstrip(), file=sys.stderr)
            continue
        tid, idx, seq = int(m.group(2)), int(m.group(3)), int(m.group(4))
        read += 1
        per_thread[idx] += 1
        if thread_of.setdefault(tid, idx) != idx:
            bad_order += 1
        if seq <= last.get(tid, -1) or seq >= EVENTS:
            bad_order += 1
            if bad_order < 5:
                print("out of order: tid %d seq %d after %d" % (tid, seq, last.get(tid, -1)),
                      file=sys.stderr)
        last[tid] = seq
    p.wait()
    errf.seek(0)
    err = errf.read()
    discarded = 0
    for l in err.splitlines():
        m = re.search(r"[Tt]racer discarded (\d+) events?\b", l)
        if m:
            discarded += int(m.group(1))
        elif l.strip() and not l.startswith(" "):
            check(False, "babeltrace2 said: " + l)
    check(p.returncode == 0, "babeltrace2 exited with %d" % p.returncode)
    print("buffer %s packet %s: read %d + discarded %d = %d (per thread %s)" %
          (buf, pkt, read, discarded, read + discarded, dict(per_thread)))
    if discarded > 0:
        break
    print("nothing discarded with this buffer (slow build?), trying a smaller one")

check(discarded > 0, "no event was discarded: the accounting was not exercised")
check(read > 0, "no event read")
check(read + discarded == THREADS * EVENTS,
      "read %d + discarded %d = %d, emitted %d" % (read, discarded, read + discarded,
                                                  THREADS * EVENTS))
check(bad_line == 0, "%d lines not understood" % bad_line)
check(bad_order == 0, "%d events duplicated or out of order" % bad_order)
check(sorted(set(thread_of.values())) == list(range(THREADS)),
      "threads seen: %s" % sorted(set(thread_of.values())))
check(len(thread_of) == THREADS, "%d tids for %d threads" % (len(thread_of), THREADS))
c.finish()
