#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-wrap.py PROG OUTDIR - timestamps rebuilt from 32-bit headers.

An event header keeps the clock's low 32 bits (fastpath.h); a reader
rebuilds the rest from the packet's timestamp_begin. progs/core-wrap.c
records events that carry the clock read just before each: bt2's time of
every event must lie between its own `before` and the next event's (a
time rebuilt wrong is off by a multiple of 2^32 ticks), across a packet
whose low bits wrap and a thread idle for more than 2^32 ticks. Every
event emitted is there (no discards at this rate). Three ways out: the
trace FDR_OUTPUT writes, an fdr_snapshot of the in-memory flight
recorder, and the crash dump's snapshot (FDR_CRASH_DIR)."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
from wrapcheck import check_times  # noqa: E402


prog, out = sys.argv[1], sys.argv[2]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)

# The three at once: each mostly waits for the clock.
env = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
runs = {
    "output": ([prog, "run"], {"FDR_OUTPUT": os.path.join(out, "output")}, 0),
    "snapshot": ([prog, "snapshot", os.path.join(out, "snapshot")], {}, 0),
    "crash": ([prog, "crash"], {"FDR_CRASH_DIR": os.path.join(out, "crash")}, -6),
}
procs = {}
for name, (argv, extra, rc) in runs.items():
    procs[name] = subprocess.Popen(argv, env=dict(env, **extra), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
emitted = {}
for name, p in procs.items():
    o, e = p.communicate(timeout=240)
    if not c.check(p.returncode == runs[name][2],
                   "%s: exit status %d, expected %d: %s" % (name, p.returncode,
                                                            runs[name][2], e[-2000:])):
        continue
    emitted[name] = int(o.split()[1])

paths = {"output": os.path.join(out, "output"), "snapshot": os.path.join(out, "snapshot")}
crash = os.path.join(out, "crash")
if os.path.isdir(crash) and os.listdir(crash):
    paths["crash"] = os.path.join(crash, os.listdir(crash)[0])
c.check(set(paths) == set(runs), "traces written: %s" % sorted(paths))
wraps = 0
for name, path in paths.items():
    if name in emitted:
        wraps += check_times(path, emitted[name], name)
        c.clean(path)
# The program's phase 1 keeps a packet open across a multiple of 2^32
# unless something closed it early: seen at least once of three.
c.check(wraps > 0, "no packet spans a multiple of 2^32: the wrap was not exercised")
c.finish()
