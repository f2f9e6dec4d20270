# SPDX-License-Identifier: MIT
"""test-fdr-offline-stats.py - `fdr stats` counts what babeltrace2 reads.

    test-fdr-offline-stats.py FDR OFFLINE_PROG OUTDIR

On a two-process, four-threads-each trace (offline-prog parent), the
--json document must be valid JSON whose events per class, per thread and
per process, totals and first/last times agree with bt2. On a trace with
discards (offline-prog burst: three rounds, 4 KiB packets, 8 KiB rings,
so that a stream's cumulative events_discarded grows over its packets),
the discarded count must be positive, equal to bt2's discarded-events total,
and events + discarded == emitted. In overwrite mode, packets_lost (gaps
in packet_seq_num) equals bt2's discarded packets. The text table lists
every process, thread and class with the same counts."""
import collections
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402

fdr, prog, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)


def stats(path, json_=True):
    p = subprocess.run([fdr, "stats", path] + (["--json"] if json_ else []),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    c.check(p.returncode == 0 and p.stderr == b"", "fdr stats %s: exit %d, %r"
            % (path, p.returncode, p.stderr))
    if not json_:
        return p.stdout.decode()
    try:
        return json.loads(p.stdout.decode("utf-8"))
    except ValueError as e:
        c.fail("fdr stats --json: not JSON (%s): %r" % (e, p.stdout[:400]))


trace = os.path.join(out, "trace")
N = 30
c.run([prog, "parent", str(N)], trace)
t = c.read(trace)
s = stats(trace)
c.check(s["events"] == len(t.events) == 2 * (2 + 4 * 5 * N),
        "events: stats %d, bt2 %d" % (s["events"], len(t.events)))
c.check(s["discarded"] == t.discarded == 0, "discarded: stats %d, bt2 %d"
        % (s["discarded"], t.discarded))
c.check(s["errors"] == 0, "errors: %d" % s["errors"])
by_class = collections.Counter(e.name for e in t.events)
got = {x["name"]: x["events"] for x in s["classes"]}
c.check(got == dict(by_class), "per class: stats %s, bt2 %s" % (got, dict(by_class)))
by_thread = collections.Counter((e.pid, e.tid) for e in t.events)
got = {(x["pid"], x["tid"]): x["events"] for x in s["threads"]}
c.check(got == dict(by_thread), "per thread: stats %s, bt2 %s" % (got, dict(by_thread)))
names = {(e.pid, e.tid): e.thread_name for e in t.events}
c.check(all(x["name"] == names[(x["pid"], x["tid"])] for x in s["threads"]),
        "thread names differ from bt2's")
by_proc = collections.Counter(e.pid for e in t.events)
got = {x["pid"]: x["events"] for x in s["processes"]}
c.check(got == dict(by_proc), "per process: stats %s, bt2 %s" % (got, dict(by_proc)))
c.check(sorted(x["name"] + "-%d" % x["pid"] for x in s["processes"]) == sorted(os.listdir(trace)),
        "process names: %s" % s["processes"])
c.check(all(x["streams"] == len([f for f in os.listdir(os.path.join(trace, "%s-%d" % (x["name"], x["pid"])))
                                 if f.startswith("stream_")]) for x in s["processes"]),
        "stream counts: %s" % s["processes"])

# First and last times: the line times of bt2's first and last events.
clocks = {}
for p in os.listdir(trace):
    with open(os.path.join(trace, p, ".fdr-classes"), "rb") as f:
        clocks[int(p.rsplit("-", 1)[1])] = struct.unpack_from("<QQ", f.read(32), 16)
ref = min(st for st, _ in clocks.values())
ns = [int(float(e.cycles - ref) * 1e9 / float(clocks[e.pid][1])) for e in t.events]
c.check(s["first_ns"] == min(ns) and s["last_ns"] == max(ns) and
        s["span_ns"] == max(ns) - min(ns), "first/last: stats %s %s, bt2 %d %d"
        % (s["first_ns"], s["last_ns"], min(ns), max(ns)))
span = (max(ns) - min(ns)) / 1e9
c.check(abs(s["rate"] - len(t.events) / span) <= 0.001 + 1e-9 * s["rate"],
        "rate %s, want %s" % (s["rate"], len(t.events) / span))

# The table: one row per process, thread and class, with their counts.
text = stats(trace, json_=False)
rows = [ln.split() for ln in text.splitlines()]
for x in s["processes"]:
    c.check([x["name"], str(x["pid"])] + [str(x["streams"]), str(x["events"])] in
            [r[:4] for r in rows], "no table row for process %s" % x)
for x in s["threads"]:
    c.check([str(x["pid"]), str(x["tid"])] in [r[:2] for r in rows] and
            any(r[:2] == [str(x["pid"]), str(x["tid"])] and str(x["events"]) in r for r in rows),
            "no table row for thread %s" % x)
for x in s["classes"]:
    c.check([x["name"], str(x["events"])] in [r[:2] for r in rows],
            "no table row for class %s" % x)
c.check(text.splitlines()[0].startswith("trace %s: %d events, 0 discarded, 2 process(es)"
                                        % (trace, s["events"])), "table head: %r" % text[:200])

# Discards: tiny rings and a burst.
burst = os.path.join(out, "burst")
p = c.run([prog, "burst", "50000", "3"], burst,
          {"FDR_PACKET_SIZE": "4096", "FDR_BUFFER_SIZE": "8192"})
emitted = int(p.stdout.split()[1])
t = c.read(burst)
s = stats(burst)
c.check(s["discarded"] > 0, "no event discarded: the test needs discards")


def discarded_per_packet(path):
    with open(path, "rb") as f:
        b = f.read()
    out, off = [], 0
    while off + 100 <= len(b):
        out.append(struct.unpack_from("<Q", b, off + 68)[0])
        off += struct.unpack_from("<Q", b, off + 52)[0] // 8
    return out


# events_discarded is cumulative: the count is the last packet's, which
# only differs from the first non-zero one if discards came in rounds.
rising = 0
for root, _, files in os.walk(burst):
    for f in files:
        if f.startswith("stream_"):
            rising += len({d for d in discarded_per_packet(os.path.join(root, f)) if d}) >= 2
c.check(rising > 0, "no stream whose discarded count grows over several packets")
c.check(s["discarded"] == t.discarded, "discarded: stats %d, bt2 %d" % (s["discarded"], t.discarded))
c.check(s["events"] == len(t.events), "events: stats %d, bt2 %d" % (s["events"], len(t.events)))
c.check(s["events"] + s["discarded"] == emitted, "read %d + discarded %d != emitted %d"
        % (s["events"], s["discarded"], emitted))
c.check(sum(x["discarded"] for x in s["processes"]) == s["discarded"],
        "per-process discarded do not add up")

# Overwrite mode: packets overwritten in the rings are gaps in
# packet_seq_num, counted as packets_lost, as bt2 counts discarded packets.
ovw = os.path.join(out, "overwrite")
c.run([prog, "burst", "50000", "3"], ovw,
      {"FDR_MODE": "overwrite", "FDR_PACKET_SIZE": "4096", "FDR_BUFFER_SIZE": "16384"})
t = c.read(ovw, overwritten=True)
s = stats(ovw)
c.check(s["packets_lost"] > 0 and s["packets_lost"] == t.discarded_packets,
        "overwrite: packets_lost %d, bt2 discarded packets %d" % (s["packets_lost"],
                                                                  t.discarded_packets))
c.check(s["events"] == len(t.events), "overwrite: events %d, bt2 %d" % (s["events"], len(t.events)))
c.check(sum(x["packets_lost"] for x in s["processes"]) == s["packets_lost"],
        "per-process packets_lost do not add up")
c.finish()
