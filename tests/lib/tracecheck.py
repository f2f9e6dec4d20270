#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tracecheck.py - read an fdr trace with babeltrace2's own reader (bt2).

Tests import it (sys.path) or run it:

    tracecheck.py clean DIR        babeltrace2 CLI reads DIR, no error/warning
    tracecheck.py count DIR        prints "<events> <discarded>"
    tracecheck.py dump DIR         one JSON object per event

DIR may be an FDR_OUTPUT directory: it holds one trace per process
(DIR/<name>-<pid>/), and babeltrace2 (CLI or bt2) finds them all and
merges them; give DIR/<name>-<pid> for one process's trace.

read(DIR) returns a Trace with:
    events      list of Event(name, ts_ns, stream, tid, pid, thread_name,
                cycles, fields); cycles is the raw clock value in the order babeltrace2 delivers them (by time)
    discarded   sum of the counts of discarded-events messages
    discarded_packets  sum of discarded-packets message counts
    packets     (stream, tid, packet_seq_num) per packet, in order
    seq_gaps    (stream, previous, next) wherever a stream's packet_seq_num
                is not the previous one + 1 (the first must be 0)
    env         the trace environment (dict)
"""
import collections
import json
import math
import os
import resource
import subprocess
import sys

import bt2

# babeltrace2 2.0's CTF source keeps each trace's metadata file open after
# its iterator is gone: a test reading a thousand traces (the fuzz build's
# scribble seeds) ran past 1,024 descriptors. Up to 16,384 (or the hard
# limit): this script's children inherit it.
_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
_want = 16384 if _hard == resource.RLIM_INFINITY else min(16384, _hard)
if _soft != resource.RLIM_INFINITY and _soft < _want:
    resource.setrlimit(resource.RLIMIT_NOFILE, (_want, _hard))

Event = collections.namedtuple(
    "Event", "name ts_ns stream tid pid thread_name cycles fields"
)


class Trace:
    def __init__(self):
        self.events = []
        self.discarded = 0
        self.discarded_packets = 0
        self.env = {}
        self.packets = []  # (stream, tid, seq) per packet, in order
        self.seq_gaps = []


def _value(f):
    """A bt2 field as a plain Python value."""
    if isinstance(f, bt2._StringFieldConst):
        return str(f)
    if isinstance(f, (bt2._BoolFieldConst,)):
        return bool(f)
    if isinstance(f, (bt2._SignedIntegerFieldConst, bt2._UnsignedIntegerFieldConst)):
        return int(f)
    if isinstance(f, bt2._RealFieldConst):
        return float(f)
    if isinstance(f, bt2._StructureFieldConst):
        return {k: _value(v) for k, v in f.items()}
    if isinstance(f, bt2._ArrayFieldConst):
        return [_value(v) for v in f]
    return f


def _thread_name(pc):
    name = pc.get("thread_name")
    if name is None:
        return ""
    if isinstance(name, bt2._StringFieldConst):
        return str(name)
    return bytes(int(c) for c in name).split(b"\0")[0].decode("utf-8", "replace")


def read(path):
    t = Trace()
    it = bt2.TraceCollectionMessageIterator(path)
    last_seq = {}
    for msg in it:
        if type(msg) is bt2._EventMessageConst:
            ev = msg.event
            pc = ev.packet.context_field if ev.packet else {}
            stream = ev.stream
            t.events.append(
                Event(
                    ev.name,
                    msg.default_clock_snapshot.ns_from_origin,
                    stream.id if stream else None,
                    int(pc["tid"]) if "tid" in pc else None,
                    int(pc["pid"]) if "pid" in pc else None,
                    _thread_name(pc),
                    msg.default_clock_snapshot.value,
                    _value(ev.payload_field) if ev.payload_field is not None else {},
                )
            )
        elif type(msg) is bt2._DiscardedEventsMessageConst:
            t.discarded += msg.count or 0
        elif type(msg) is bt2._DiscardedPacketsMessageConst:
            t.discarded_packets += msg.count or 0
        elif type(msg) is bt2._StreamBeginningMessageConst:
            tr = msg.stream.trace
            for k, v in tr.environment.items():
                t.env[k] = _value(v)
        elif type(msg) is bt2._PacketBeginningMessageConst:
            pc = msg.packet.context_field
            seq = int(pc["packet_seq_num"]) if "packet_seq_num" in pc else None
            t.packets.append((msg.packet.stream.id, int(pc["tid"]), seq))
            # A stream is known by its trace too: a directory may hold
            # one trace per process.
            key = (str(msg.packet.stream.trace.uuid), msg.packet.stream.id)
            prev = last_seq.get(key, -1)
            if seq is not None and seq != prev + 1:
                t.seq_gaps.append((msg.packet.stream.id, prev, seq))
            last_seq[key] = seq
    return t


def clean(path):
    """Runs the babeltrace2 CLI; returns (ok, stderr). ok means exit 0 and no
    line on stderr other than discarded-events/packets notices."""
    p = subprocess.run(
        ["babeltrace2", "--log-level=WARNING", path],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    bad = [
        l
        for l in p.stderr.splitlines()
        if l.strip()
        and "discarded" not in l.lower()
        and "Tracer may have" not in l
        and "trace " not in l.lower()
        and not l.startswith(("WARNING:  Tracer discarded", "  ", "WARNING: Tracer"))
    ]
    return p.returncode == 0 and not bad, p.stderr


def main(argv):
    if len(argv) != 3 or argv[1] not in ("clean", "count", "dump"):
        print(__doc__, file=sys.stderr)
        return 2
    cmd, path = argv[1], argv[2]
    if cmd == "clean":
        ok, err = clean(path)
        if not ok:
            sys.stderr.write(err)
            print("tracecheck: babeltrace2 complained about " + path, file=sys.stderr)
            return 1
        return 0
    t = read(path)
    if cmd == "count":
        print(len(t.events), t.discarded)
        return 0
    for e in t.events:
        d = e._asdict()
        for k, v in d["fields"].items():
            if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
                d["fields"][k] = repr(v)
        print(json.dumps(d))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
