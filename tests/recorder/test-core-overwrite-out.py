#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-overwrite-out.py PROG OUTDIR - overwrite mode with FDR_OUTPUT
says what it overwrote.

4 threads x 100,000 events "acct:ev" (core-accounting) in overwrite mode
with a 64 KiB ring of 4 KiB packets: nothing is written while the program
runs, so each writer laps its ring hundreds of times and at exit only the
newest packets are there. Per thread, bt2 must read:
  - consecutive sequence numbers ending at the thread's last event (the
    newest events, none twice, none missing among them);
  - before them, discarded packets covering the events not there: with
    an empty packet 0 first, babeltrace2 reports packets 1 .. first - 1 as
    discarded; that many plus packet 0, full, hold at least the events
    before the first one read. Without the anchor babeltrace2 reported
    no loss at all: 14,044 of 4,000,000 events read, 0 discarded.
    Summed over the threads: a thread starts in a small ring and moves
    to a larger one (lib/recorder/buffer.c), and the small ring goes on
    with a thread that starts later, so a stream's overwritten packets
    may be another thread's than the one its kept packets name.
The warning says the packets were overwritten, not corrupt."""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import bt2  # noqa: E402
import fdrtest as c  # noqa: E402
check = c.check

prog, out = sys.argv[1], sys.argv[2]
THREADS, EVENTS = 4, 100000

p = c.run([prog, str(THREADS), str(EVENTS)], out, timeout=200,
          env={"FDR_MODE": "overwrite", "FDR_BUFFER_SIZE": "64K", "FDR_PACKET_SIZE": "4K"})
check("packets overwritten before they were written (FDR_MODE=overwrite)" in p.stderr,
      "the warning says the packets were overwritten: " + p.stderr.strip())
check("corrupt" not in p.stderr, "nothing was corrupt: " + p.stderr.strip())
c.clean(out, overwritten=True)

seqs = collections.defaultdict(list)     # thread index -> sequence numbers read
per_packet = collections.Counter()       # (stream key, packet number) -> events
pending = collections.Counter()          # stream key -> discarded packets
packet_no = collections.Counter()
for m in bt2.TraceCollectionMessageIterator(out):
    if type(m) is bt2._PacketBeginningMessageConst:
        packet_no[m.packet.stream.addr] += 1
    elif type(m) is bt2._DiscardedPacketsMessageConst:
        pending[m.stream.addr] += m.count or 0
    elif type(m) is bt2._DiscardedEventsMessageConst:
        check(False, "discarded events reported in overwrite mode: %s" % m.count)
    elif type(m) is bt2._EventMessageConst:
        key = m.event.stream.addr
        idx = int(m.event.payload_field["thread"])
        seqs[idx].append(int(m.event.payload_field["seq"]))
        per_packet[(key, packet_no[key])] += 1
# Each stream's empty packet 0 stands for its first packet overwritten.
overwritten = sum(pending.values()) + sum(1 for key in packet_no if per_packet[(key, 1)] == 0)
full = max(per_packet.values())

check(sorted(seqs) == list(range(THREADS)), "threads read: %s" % sorted(seqs))
for idx in range(THREADS):
    s = seqs[idx]
    check(s == list(range(s[0], s[0] + len(s))), "thread %d: sequence numbers not consecutive" % idx)
    check(s[-1] == EVENTS - 1, "thread %d: the last event read is %d, not %d" % (idx, s[-1], EVENTS - 1))
    check(s[0] > 0, "thread %d: the ring was not lapped (first event %d): the test proves nothing"
          % (idx, s[0]))
    print("thread %d: %d newest events read (from %d)" % (idx, len(s), s[0]))
missing = sum(seqs[idx][0] for idx in range(THREADS))
check(overwritten * full >= missing,
      "events not there: %d, babeltrace2 reports %d overwritten packets (at most %d events "
      "each)" % (missing, overwritten, full))
print("%d packets reported overwritten" % overwritten)
c.finish()
