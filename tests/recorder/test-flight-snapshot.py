#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-flight-snapshot.py PROG OUTDIR - snapshots read by babeltrace2.

With tests/recorder/progs/flight-snapshot.c, in overwrite mode with small rings
(64 KiB of 4 KiB packets per thread):
  - both snapshots are read by the babeltrace2 CLI without complaint;
  - snapshot 1: the newest event recorded before it (main:last) is there;
    each writer's events are its newest ones, contiguous up to its last
    seq, with correct values and strings (complete, not torn); the
    overwritten packets are reported as discarded packets; the thread that
    exited before the snapshot is there whole; the events recorded while
    tracing was disabled are not;
  - snapshot 2 holds every event of snapshot 1 plus the newer ones;
  - FDR_SNAPSHOT_SIGNAL=USR2: the signal makes a snapshot in
    FDR_SNAPSHOT_DIR/snapshot-<pid>-1 with the events recorded before it;
  - bad FDR_SNAPSHOT_SIGNAL: one warning line;
  - the cost of a snapshot of 8 threads x 1 MiB is printed.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest  # noqa: E402
import tracecheck  # noqa: E402

PROG, OUT = sys.argv[1], sys.argv[2]
check = fdrtest.check

def env(**kw):
    e = dict(os.environ)
    for k in ("FDR_OUTPUT", "FDR_MODE", "FDR_SNAPSHOT_SIGNAL", "FDR_SNAPSHOT_DIR"):
        e.pop(k, None)
    e.update(FDR_BUFFER_SIZE="64K", FDR_PACKET_SIZE="4K")
    e.update(kw)
    return e


shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
d1, d2 = os.path.join(OUT, "snap1"), os.path.join(OUT, "snap2")
p = subprocess.run([PROG, "snap", d1, d2], env=env(), capture_output=True, text=True,
                   timeout=60)
check(p.returncode == 0, "snap: exit %d\n%s" % (p.returncode, p.stderr))
info = dict(l.split() for l in p.stdout.splitlines() if l)
n = int(info.get("N", "0"))

for d in (d1, d2):
    ok, err = tracecheck.clean(d)
    check(ok, "babeltrace2 reads %s\n%s" % (d, err))

t1, t2 = tracecheck.read(d1), tracecheck.read(d2)

# The overwritten packets read as what they are: one notice per wrapped
# stream, between two real and different times (the library's start and
# the oldest packet kept), never "between [T] and [T]".
bt = subprocess.run(["babeltrace2", d1], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    text=True, timeout=120)
gaps = re.findall(r"discarded \d+ packets between \[([^\]]*)\] and \[([^\]]*)\]",
                  bt.stderr)
check(gaps, "snap1: babeltrace2 reports the overwritten packets\n" + bt.stderr)
check(all(a != b for a, b in gaps),
      "snap1: a discarded-packets notice with the same time twice\n" + bt.stderr)


def by_name(t, name):
    return [e for e in t.events if e.name == name]


# the newest event before the snapshot
last = by_name(t1, "main:last")
check(len(last) == 1 and last[0].fields == {"v": 777}, "snap1 has main:last v=777")
check(t1.events and t1.events[-1].name == "main:last", "main:last is the newest event")
# the API part: disabled events are absent, the others present
names1 = [e.name for e in t1.events]
check("api:before" in names1 and "api:on" in names1, "api:before and api:on recorded")
check("api:off" not in names1 and "api:thread_off" not in names1,
      "events recorded while tracing was disabled are absent")
check("api:off_after_snap" not in names1,
      "a thread disabled before a snapshot and a flush stays disabled after them")
# the writers: newest events, contiguous, intact
for who in ("wa", "wb"):
    ev = [e for e in by_name(t1, "load:ev") if e.fields["who"] == who]
    seqs = [e.fields["seq"] for e in ev]
    check(seqs and seqs[-1] == n - 1, "%s: newest seq %d present (got %r)"
          % (who, n - 1, seqs[-1:]))
    check(seqs == list(range(seqs[0], n)) if seqs else False,
          "%s: contiguous newest events" % who)
    check(all(e.fields["sq"] == e.fields["seq"] ** 2 and e.thread_name == who for e in ev),
          "%s: values intact" % who)
    check(0 < len(seqs) < n, "%s: ring wrapped (kept %d of %d)" % (who, len(seqs), n))
check(t1.discarded_packets > 0, "overwritten packets reported as discarded packets (%d)"
      % t1.discarded_packets)
check(t1.discarded == 0, "no events discarded (%d)" % t1.discarded)
gone = by_name(t1, "gone:ev")
check([e.fields["k"] for e in gone] == list(range(50)) and
      all(e.thread_name == "gone" for e in gone), "the exited thread's events are kept")

# snapshot 2: a superset plus newer
key = lambda e: (e.name, e.tid, e.cycles, tuple(sorted(e.fields.items())))
s1, s2 = {key(e) for e in t1.events}, {key(e) for e in t2.events}
check(s1 <= s2, "snap2 holds every event of snap1 (%d missing)" % len(s1 - s2))
newer = [e for e in t2.events if key(e) not in s1]
want_newer = sorted(["main:more"] * 5 + ["main:after"])
check(sorted(e.name for e in newer) == want_newer,
      "snap2 adds exactly the newer events: %r" % sorted(e.name for e in newer))
check([e.fields["i"] for e in by_name(t2, "main:more")] == list(range(5)) and
      t2.events[-1].name == "main:after", "snap2: newer events in order")

# the signal trigger
sd = os.path.join(OUT, "bysignal")
w = subprocess.Popen([PROG, "wait"], env=env(FDR_SNAPSHOT_SIGNAL="USR2", FDR_SNAPSHOT_DIR=sd),
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True)
check(w.stdout.readline().strip() == "ready", "wait: ready")
w.send_signal(signal.SIGUSR2)
line = w.stderr.readline()
w.stdin.close()
rest = w.stderr.read()
w.wait(timeout=30)
want = os.path.join(sd, "snapshot-%d-1" % w.pid)
check(line.strip() == "fdr: snapshot written to " + want, "signal: %r" % line)
check(w.returncode == 0, "wait: exit %d %s" % (w.returncode, rest))
if os.path.isdir(want):
    ok, err = tracecheck.clean(want)
    check(ok, "signal snapshot clean\n" + err)
    t = tracecheck.read(want)
    check([e.fields["i"] for e in t.events if e.name == "sig:ev"] == list(range(100)),
          "signal snapshot holds sig:ev 0..99")

# a bad signal name: one line, the program runs
p = subprocess.run([PROG, "wait"], env=env(FDR_SNAPSHOT_SIGNAL="NOPE"), input="",
                   capture_output=True, text=True, timeout=30)
lines = [l for l in p.stderr.splitlines() if "FDR_SNAPSHOT_SIGNAL" in l]
check(p.returncode == 0 and len(lines) == 1 and "is not a signal" in lines[0],
      "bad FDR_SNAPSHOT_SIGNAL: %r" % p.stderr)

# cost of one snapshot of 8 threads x 1 MiB (for the benchmark; loose bound)
p = subprocess.run([PROG, "cost", "8"], env=env(FDR_BUFFER_SIZE="1M", FDR_PACKET_SIZE="64K"),
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 0, "cost: exit %d %s" % (p.returncode, p.stderr))
print(p.stdout.strip())
for l in p.stdout.splitlines():
    if l.startswith("dir "):
        d = l.split(" ", 1)[1]
        size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)
                   if f.startswith("stream_"))
        check(size > 8 * 900 * 1024, "cost: %d bytes of streams for 8 x 1 MiB" % size)
        shutil.rmtree(d, ignore_errors=True)

fdrtest.finish()
