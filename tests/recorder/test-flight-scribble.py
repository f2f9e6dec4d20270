#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-flight-scribble.py PROG OUTDIR RACE - memory fdr does not own is not trusted.

tests/recorder/progs/flight-scribble.c records scr:ev i=0..1999, writes
garbage over its own ring header and two packet headers, then takes a
snapshot, crashes (abort), or flushes. For each: the process ends as it
should (exit 0, or SIGABRT for the crash), stderr says how many corrupt
packets and ring headers were skipped (2 and 1), and the trace written
reads with babeltrace2: the events left are in order, and what is missing
is one run of consecutive events (the two skipped packets), not the rest.

Headers that claim more bytes than their slot ("bounds": packet 2 claims
its events and copies of its last one written over the rest of its slot
and the next, every byte parsing as events in order; its packet size and
content size larger than a slot, or its content size larger than its
packet size), for every reader of a ring in the process: snapshot, crash
snapshot, flush and exit (the consumer's drain), the drain helper after a
SIGKILL: packets 2 and 3 are skipped (and counted where the reader says
so), the trace reads, one run of events is missing and no event is there
twice. The crash dump too: an ended thread's newest packet lies, the dump
skips it (1 corrupt packet) and prints no event twice.

RACE (progs/flight-scribble-race.c) writes over every packet of its ring
right after the consumer checked a batch and before it writes it: the
trace still reads, and every packet in it is whole (what is written is
the consumer's checked copy).
"""
import os
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tracecheck  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scribble_run  # noqa: E402  (tests/recorder/scribble_run.py)
from fdrtest import check, finish  # noqa: E402

PROG, OUT, RACE = sys.argv[1], sys.argv[2], sys.argv[3]
N = 2000
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)


def run(args, **env):
    e = dict(os.environ)
    for k in ("FDR_OUTPUT", "FDR_MODE", "FDR_CRASH_DIR"):
        e.pop(k, None)
    e.update(FDR_PACKET_SIZE="4096", FDR_BUFFER_SIZE="64K")
    e["ASAN_OPTIONS"] = (e.get("ASAN_OPTIONS", "") + ":handle_abort=0").lstrip(":")
    e["TSAN_OPTIONS"] = (e.get("TSAN_OPTIONS", "") + ":handle_abort=0").lstrip(":")
    e.update(env)
    return subprocess.run([PROG] + args, env=e, capture_output=True, text=True,
                          timeout=120)


def check_trace(what, path):
    ok, err = tracecheck.clean(path)
    check(ok, "%s: babeltrace2 reads %s cleanly (%s)" % (what, path, err.strip()))
    values = [ev.fields["i"] for ev in tracecheck.read(path).events if ev.name == "scr:ev"]
    check(values == sorted(values) and len(set(values)) == len(values),
          "%s: events in order, none twice" % what)
    missing = sorted(set(range(N)) - set(values))
    check(values and values[0] == 0 and values[-1] == N - 1,
          "%s: first and last events kept (%s..%s)" %
          (what, values[0] if values else None, values[-1] if values else None))
    runs = sum(1 for k, v in enumerate(missing) if k == 0 or missing[k - 1] != v - 1)
    check(0 < len(missing) < N // 2 and runs == 1,
          "%s: one run of events missing, the skipped packets (%d missing, %d runs)"
          % (what, len(missing), runs))


COUNTS = "2 corrupt packets skipped, 1 corrupt ring headers"

# fdr_snapshot
snap = os.path.join(OUT, "snap")
p = run(["snapshot", snap])
check(p.returncode == 0 and "snapshot 0" in p.stdout,
      "snapshot: returns 0 (rc %d, %s)" % (p.returncode, p.stderr.strip()))
check(COUNTS in p.stderr, "snapshot: counts on stderr (%r)" % p.stderr)
if p.returncode == 0:
    check_trace("snapshot", snap)

# crash dump and crash snapshot
crash = os.path.join(OUT, "crash")
p = run(["crash"], FDR_CRASH_DIR=crash)
check(p.returncode == -signal.SIGABRT, "crash: dies of SIGABRT (rc %d)" % p.returncode)
check("fdr: end of last events" in p.stderr and "scr:ev i=1999" in p.stderr,
      "crash: dump printed with the last event (%r)" % p.stderr[-400:])
check("crash snapshot skipped 2 corrupt packets and 1 corrupt ring headers" in p.stderr,
      "crash: snapshot counts on stderr")
check("crash dump skipped 0 corrupt packets and 1 corrupt ring headers" in p.stderr,
      "crash: dump counts the ring header (it reads the newest packets only)")
dirs = [d for d in os.listdir(crash)] if os.path.isdir(crash) else []
check(len(dirs) == 1, "crash: one crash snapshot (%s)" % dirs)
if len(dirs) == 1:
    check_trace("crash", os.path.join(crash, dirs[0]))

# fdr_flush, overwrite mode
flush = os.path.join(OUT, "flush")
p = run(["flush"], FDR_OUTPUT=flush, FDR_MODE="overwrite")
check(p.returncode == 0 and "flush 0" in p.stdout,
      "flush: returns 0 (rc %d, %s)" % (p.returncode, p.stderr.strip()))
check("2 corrupt packets skipped, 1 corrupt ring headers" in p.stderr,
      "flush: counts on stderr (%r)" % p.stderr)
if p.returncode == 0:
    check_trace("flush", flush)

# Headers that claim more bytes than their slot, at every reader
for kind in ("packet", "content"):
    # Overwrite mode (no consumer thread: nothing reads the ring before the
    # lie is written): flush and exit drain it in the program, a SIGKILL
    # leaves it to the drain helper.
    for end in ("snapshot", "crash", "flush", "exit", "kill"):
        what = "bounds %s %s" % (kind, end)
        out = os.path.join(OUT, "bounds-%s-%s" % (kind, end))
        rc, stdout, stderr = scribble_run.run([PROG, "bounds", kind, end], end, out, what,
                                              FDR_MODE="overwrite")
        want = {"crash": -signal.SIGABRT, "kill": -signal.SIGKILL}.get(end, 0)
        check(rc == want and "claims " in stdout,
              "%s: exit status %s, not %d: %s %s" % (what, rc, want, stdout,
                                                     stderr.strip()[-600:]))
        found = sorted(d for d, _, files in os.walk(out) if "metadata" in files)
        check(len(found) == 1, "%s: one trace (%s)" % (what, found))
        for t in found:
            check_trace(what, t)
        said = {"snapshot": "2 corrupt packets skipped, 0 corrupt ring headers",
                "crash": "crash snapshot skipped 2 corrupt packets",
                "flush": "2 corrupt packets skipped, 0 corrupt ring headers"}.get(end)
        check(not said or said in stderr, "%s: stderr says %r: %r" % (what, said, stderr[-300:]))
    # The crash dump: the newest packet of an ended thread's ring lies
    # (the dump reads newest first and stops at the first bad packet).
    p = run(["bounds", kind, "dump"], FDR_MODE="overwrite")
    what = "bounds %s dump" % kind
    dumped = [int(ln.rsplit("i=", 1)[1]) for ln in p.stderr.splitlines()
              if " scr:ev i=" in ln]
    check(p.returncode == -signal.SIGABRT and "claims " in p.stdout,
          "%s: dies of SIGABRT after the lie (rc %d, %s)" % (what, p.returncode, p.stdout))
    check(len(dumped) == len(set(dumped)),
          "%s: no event dumped twice (%d lines, %d values: the packet's copies taken)"
          % (what, len(dumped), len(set(dumped))))
    check("crash dump skipped 1 corrupt packets and 0 corrupt ring headers" in p.stderr and
          "fdr: end of last events" in p.stderr,
          "%s: the dump skips and counts the packet: %r" % (what, p.stderr[-400:]))

# A stray write between the consumer's check and its write
race = os.path.join(OUT, "race")
e = dict(os.environ)
for k in [k for k in e if k.startswith("FDR_")]:
    del e[k]
e.update(FDR_PACKET_SIZE="4096", FDR_BUFFER_SIZE="64K", FDR_OUTPUT=race)
p = subprocess.run([RACE], env=e, capture_output=True, text=True, timeout=120)
check(p.returncode == 0 and "flush 0 scribbled 1" in p.stdout,
      "race: flush returns 0 after the scribble (rc %d, %s %s)" %
      (p.returncode, p.stdout.strip(), p.stderr.strip()))
found = [d for d, _, files in os.walk(race) if "metadata" in files]
check(len(found) == 1, "race: one trace (%s)" % found)
for t in found:
    ok, err = tracecheck.clean(t)
    check(ok, "race: babeltrace2 reads %s cleanly: %s" % (t, err.strip()[-600:]))
    if ok:
        values = [ev.fields["i"] for ev in tracecheck.read(t).events
                  if ev.name == "scr:ev"]
        # The batch being written when the scribble landed is whole; the
        # packets still waiting were written over and are skipped.
        check(values == sorted(set(values)), "race: events in order, none twice")
        check(values and values[0] == 0, "race: the batch checked first is written "
              "whole (first event %s)" % (values[0] if values else None))

finish()
