#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-time.py PROG OUTDIR - timestamps.

The wall-clock time babeltrace2 gives an event (ns_from_origin, from the
clock class frequency and offset fdr writes) must be within 1 ms of the
CLOCK_REALTIME the program read just before recording it: the very first
event of the process, one 20 ms later and one ~250 ms later (a wrong
frequency shows there). If the program was preempted between its clock
read and the event (its read after the event is late too), the timestamp
must lie between the two reads instead. Within each stream, packet beginnings, events and
packet ends must never go back in time, in clock cycles and in ns."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check
bt2 = c.bt2

prog, out = sys.argv[1], sys.argv[2]
# Small packets: many packet boundaries inside each stream.
c.run([prog], out, env={"FDR_PACKET_SIZE": "4K"})

walls = {}
last = {}      # stream id -> (cycles, ns, what)
ticks = {}     # thread index -> count
packets = 0
for msg in bt2.TraceCollectionMessageIterator(out):
    t = type(msg)
    if t is bt2._EventMessageConst:
        stream, what = msg.event.stream, msg.event.name
        p = msg.event.payload_field
        if what == "clk:tick":
            ticks[int(p["thread"])] = ticks.get(int(p["thread"]), 0) + 1
        else:
            walls[what] = (int(p["rt"]), msg.default_clock_snapshot.ns_from_origin)
    elif t in (bt2._PacketBeginningMessageConst, bt2._PacketEndMessageConst):
        stream, what = msg.packet.stream, t.__name__
        packets += t is bt2._PacketBeginningMessageConst
    else:
        continue
    snap = msg.default_clock_snapshot
    prev = last.get(stream.id)
    if prev is not None:
        check(snap.value >= prev[0] and snap.ns_from_origin >= prev[1],
              "stream %d: %s at %d cycles / %d ns after %s at %d / %d" %
              (stream.id, what, snap.value, snap.ns_from_origin, prev[2], prev[0], prev[1]))
    last[stream.id] = (snap.value, snap.ns_from_origin, what)

check(ticks == {0: 5000, 1: 5000, 2: 5000}, "clk:tick per thread: %s" % ticks)
# clk:tick is 14 bytes: the 6-byte header (fastpath.h) and two u32 fields.
check(packets >= 3 * 5000 * 14 // 4096, "only %d packets" % packets)
for what in ("clk:first", "clk:later", "clk:last"):
    if not check(what in walls and what + "_after" in walls, what + " missing"):
        continue
    rt, ts = walls[what]
    after = walls[what + "_after"][0]
    d = ts - rt
    print("%s: trace time - CLOCK_REALTIME before = %+d ns (after: %+d ns)" %
          (what, d, after - rt))
    if abs(d) <= 1000000:
        continue
    # Preempted between the clock read and the event (the time after it
    # is late too): the timestamp must still lie between the two reads.
    preempted = after - rt > 1000000 and rt - 100000 <= ts <= after + 100000
    check(preempted, "%s: trace time is %+.3f ms from the CLOCK_REALTIME read before it" %
          (what, d / 1e6))
c.clean(out)
c.finish()
