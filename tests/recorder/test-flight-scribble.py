#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-flight-scribble.py PROG OUTDIR - memory fdr does not own is not trusted.

tests/recorder/progs/flight-scribble.c records scr:ev i=0..1999, writes
garbage over its own ring header and two packet headers, then takes a
snapshot, crashes (abort), or flushes. For each: the process ends as it
should (exit 0, or SIGABRT for the crash), stderr says how many corrupt
packets and ring headers were skipped (2 and 1), and the trace written
reads with babeltrace2: the events left are in order, and what is missing
is one run of consecutive events (the two skipped packets), not the rest.
"""
import os
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tracecheck  # noqa: E402
from fdrtest import check, finish  # noqa: E402

PROG, OUT = sys.argv[1], sys.argv[2]
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

finish()
