#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scope-replay-bench.py SCOPE_PROG FDR [FDR...] [--runs N] [--dir D] -
how long `fdr scope DIR` takes to show the first chart of a big trace
(docs/performance.md, the scope; issue 28: 10 M events within 2 s).

Makes (once, in D, default /tmp/fdr-scope-bench) the trace of
`scope-prog --square 25000 --count 10000000 --rate 4000000` (10 M events
of one field, 134 MB), then runs each FDR in turn, N times (interleaved,
so that the machine's load falls on all alike): from the start of `fdr
scope DIR` to the answer of /api/events (the page's first request for
data: it waits for the end of the reading) and then of /api/range of the
busiest field over the whole trace at 1,200 pixels (the first chart's
data), and the CPU `fdr scope` used until then. Prints each run and the
medians, with the load average. A measure, not a test: nothing here
passes or fails."""
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

args = sys.argv[1:]
runs, d = 5, "/tmp/fdr-scope-bench"
if "--runs" in args:
    i = args.index("--runs")
    runs = int(args[i + 1])
    del args[i:i + 2]
if "--dir" in args:
    i = args.index("--dir")
    d = args[i + 1]
    del args[i:i + 2]
if len(args) < 2:
    sys.exit(__doc__)
prog, fdrs = args[0], args[1:]
trace = os.path.join(d, "trace")
if not os.path.isdir(trace):
    os.makedirs(d, exist_ok=True)
    subprocess.run([prog, "--square", "25000", "--count", "10000000", "--rate", "4000000"],
                   env=dict(os.environ, FDR_OUTPUT=trace), stdout=subprocess.DEVNULL,
                   check=True)


def once(fdr):
    t0 = time.monotonic()
    p = subprocess.Popen([fdr, "scope", trace], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        base, tok = p.stdout.readline().strip().split("/?token=")

        def get(path):
            sep = "&" if "?" in path else "?"
            with urllib.request.urlopen(base + path + sep + "token=" + tok, timeout=600) as r:
                return json.load(r)
        ev = get("/api/events")
        t_ev = time.monotonic() - t0
        best = max((e for e in ev["events"] if any(f["numeric"] for f in e["fields"])),
                   key=lambda e: e["count"])
        key = best["id"] + "." + next(f["name"] for f in best["fields"] if f["numeric"])
        get("/api/range?key=%s&from=0&to=1e11&width=1200" % key)
        t_r = time.monotonic() - t0
        st = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
        cpu = (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")
        return t_ev, t_r, cpu
    finally:
        p.send_signal(signal.SIGINT)
        p.wait()


res = {f: [] for f in fdrs}
for n in range(runs):
    for f in fdrs:
        r = once(f)
        res[f].append(r)
        print("%s run %d: events %.2f s, first chart's range %.2f s, CPU %.2f s, load %.1f"
              % (f, n + 1, r[0], r[1], r[2], os.getloadavg()[0]), flush=True)
for f in fdrs:
    print("%s: median of %d: first chart's data %.2f s after the start, CPU %.2f s"
          % (f, runs, statistics.median(r[1] for r in res[f]),
             statistics.median(r[2] for r in res[f])))
