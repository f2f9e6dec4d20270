#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""startup-bench.py BENCH_BUILD FDR [RUNS] - the start-up fdrd adds to a
program when a trace is started (docs/performance.md; issue 24: under
1 ms), the measure of fdr-bench's `daemon` section, alone and with as
many runs as asked (default 101).

Runs, interleaved so that the machine's load falls on all alike, the
bench's `fdr-bench-load-none startup` (no tracer), `fdr-bench-load-fdr
startup` with no fdrd, and the same with a running fdrd (BENCH_BUILD's,
started by FDR's `create`) holding a started trace of every bench event:
from just before the fork to the program's first event (its first
statement, recorded), as the program reports it. Prints the medians,
first quartiles and minima, the medians' differences and the load
average, and stops its fdrd. On a busy machine run it under `chrt -f 20`
(as root): the wait for a CPU otherwise dwarfs what is measured. A
measure, not a test: nothing here passes or fails."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

build, cli = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 101
tmp = tempfile.mkdtemp(prefix="fdr-startup-bench-")
rundir = os.path.join(tmp, "run")
os.mkdir(rundir, 0o700)
alone = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
alone["FDR_RUNDIR"] = os.path.join(tmp, "no-fdrd")
routed = dict(alone, FDR_RUNDIR=rundir)


def verb(*args):
    subprocess.run([cli] + list(args), check=True, stdout=subprocess.DEVNULL,
                   env=dict(routed, FDR_FDRD=os.path.join(build, "daemon", "fdrd")))


verb("create", "bench", "-o", os.path.join(tmp, "out"))
try:
    verb("enable", "bench", "bench:*")
    verb("start", "bench")
    load = os.path.join(build, "bench", "fdr-bench-load-")
    cases = [("no tracer", load + "none", alone), ("fdr alone", load + "fdr", alone),
             ("fdr, fdrd", load + "fdr", routed)]
    ms = {name: [] for name, _, _ in cases}
    for _ in range(runs):
        for name, exe, env in cases:
            t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            out = subprocess.run([exe, "startup"], env=env, stdout=subprocess.PIPE,
                                 text=True, timeout=60).stdout
            ms[name].append((int(out.split("first_ns ")[1].split()[0]) - t0) / 1e6)
finally:
    with open(os.path.join(rundir, "fdrd.pid")) as f:
        pid = int(f.read())
    os.kill(pid, 15)
    while os.path.exists(os.path.join(rundir, "fdrd.pid")):
        time.sleep(0.1)
    shutil.rmtree(tmp, ignore_errors=True)
med = {name: statistics.median(v) for name, v in ms.items()}
for name, v in ms.items():
    print("%-10s median %.3f ms, first quartile %.3f, min %.3f (%d runs)" %
          (name, med[name], statistics.quantiles(v, n=4)[0], min(v), len(v)))
print("added by fdrd with a started trace: %.3f ms (medians); by libfdr alone: %.3f ms" %
      (med["fdr, fdrd"] - med["fdr alone"], med["fdr alone"] - med["no tracer"]))
print("load average: %.1f %.1f %.1f" % os.getloadavg())
