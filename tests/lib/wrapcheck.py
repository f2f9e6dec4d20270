# SPDX-License-Identifier: MIT
"""wrapcheck.py - the check of tests/recorder/progs/core-wrap.c's traces
(test-core-wrap.py, test-fdr-daemon-wrap.py): each wrap:ev carries the
clock read just before it, so bt2's time of it must lie between that and
the next event's (a time rebuilt wrong from the 32 bits an event header
keeps is off by a multiple of 2^32 ticks); every event emitted is there."""
import fdrtest as c

bt2 = c.bt2


def check_times(path, emitted, what):
    """bt2's timestamps of wrap:ev against their clock reads; returns
    the number of packets whose time spans a multiple of 2^32."""
    evs, wraps, lost = [], 0, 0
    for msg in bt2.TraceCollectionMessageIterator(path):
        t = type(msg)
        if t is bt2._EventMessageConst:
            p = msg.event.payload_field
            evs.append((msg.event.name, int(p["before"]), msg.default_clock_snapshot.value))
        elif t is bt2._PacketBeginningMessageConst:
            begin = msg.default_clock_snapshot.value
        elif t is bt2._PacketEndMessageConst:
            wraps += begin >> 32 != msg.default_clock_snapshot.value >> 32
        elif t is bt2._DiscardedEventsMessageConst:
            lost += msg.count or 0
    n = sum(1 for e in evs if e[0] == "wrap:ev")
    c.check(n == emitted and lost == 0, "%s: %d wrap:ev and %d discarded, emitted %d" %
            (what, n, lost, emitted))
    c.check(evs and evs[-1][0] == "wrap:end", "%s: wrap:end is not last" % what)
    bad = 0
    for k, (name, before, ts) in enumerate(evs):
        after = evs[k + 1][1] if k + 1 < len(evs) else None
        if ts < before or (after is not None and ts > after):
            bad += 1
            if bad <= 5:
                c.check(False, "%s: event %d (%s) at %d, its clock reads were %d and %s "
                        "(off by %+.3f x 2^32)" % (what, k, name, ts, before, after,
                                                   (ts - before) / 2**32))
    print("%s: %d events, every time within its clock reads: %s; %d packets "
          "span a multiple of 2^32" % (what, len(evs), bad == 0, wraps))
    return wraps
