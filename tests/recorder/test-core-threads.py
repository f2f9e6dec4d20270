#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-threads.py PROG OUTDIR - 10,000 short-lived threads.

Created and joined 8 at a time, each records thr:begin, thr:middle and
thr:end with its number. Every event must be in the trace exactly once
(nothing discarded with the default buffer, so read == emitted), each
thread's three in order in one stream; the buffers of exited threads must
be reused: at most 16 stream files, every stream's packets numbered
without a gap, and the memory high-water mark may
not grow by more than a few MB between the 200th thread and the end."""
import collections
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check

prog, out = sys.argv[1], sys.argv[2]
THREADS = 10000
# Under ASan, freed memory sits in a quarantine (256 MB by default), which
# would be counted as our growth: it is turned off for this process (the
# variable means nothing to other builds).
asan = os.environ.get("ASAN_OPTIONS", "")
asan = (asan + ":" if asan else "") + "quarantine_size_mb=0"
p = c.run([prog, str(THREADS), "8"], out, timeout=200, env={"ASAN_OPTIONS": asan})
status = dict(l.split("=", 1) for l in p.stdout.split())
print(status)

streams = glob.glob(os.path.join(out, "*", "stream_*"))  # out/<name>-<pid>/
check(1 <= len(streams) <= 16, "%d stream files for 8 threads at a time" % len(streams))

seen = collections.defaultdict(list)  # thread number -> [(event, stream, tid)]
mains = 0
# c.read also checks that every stream's packet_seq_num is consecutive:
# nothing is overwritten here, so a gap would be a packet lost unseen.
trace = c.read(out)
for ev in trace.events:
    if ev.name == "thr:main":
        mains += 1
        continue
    seen[ev.fields["n"]].append((ev.name, ev.stream, ev.tid))
discarded = trace.discarded

events = sum(len(v) for v in seen.values()) + mains
print("read %d, discarded %d, emitted %d" % (events, discarded, 3 * THREADS + 1))
check(discarded == 0, "%d events discarded with the default buffer" % discarded)
check(events + discarded == 3 * THREADS + 1, "read %d + discarded %d != %d" %
      (events, discarded, 3 * THREADS + 1))
check(mains == 1, "thr:main %d times" % mains)
check(sorted(seen) == list(range(THREADS)), "thread numbers missing or extra: %d seen" %
      len(seen))
bad = [n for n, v in seen.items()
       if [e[0] for e in v] != ["thr:begin", "thr:middle", "thr:end"]
       or len({(e[1], e[2]) for e in v}) != 1]
check(not bad, "%d threads with wrong events, e.g. %s" %
      (len(bad), [(n, seen[n]) for n in bad[:3]]))
tids = {v[0][2] for v in seen.values() if v}
check(len(tids) > 100, "only %d distinct tids for %d threads" % (len(tids), THREADS))

grow = int(status["end.VmHWM"]) - int(status["early.VmHWM"])
limit = int(os.environ.get("FDR_TEST_HWM_GROWTH_KB", "8192"))
check(grow <= limit, "VmHWM grew by %d kB from thread 200 to thread %d (limit %d kB)" %
      (grow, THREADS, limit))
check(int(status["end.Threads"]) <= 3, "%s threads left at the end" % status["end.Threads"])
c.clean(out)
c.finish()
