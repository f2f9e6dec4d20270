#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-disk-share.py PROG OUTDIR - processes that share FDR_OUTPUT.

disk-prog spawn KIND records, runs an instrumented child (system(),
fork+exec, vfork+exec) that inherits FDR_OUTPUT, waits for it and records
again. Each process must get its own DIR/disk-prog-<pid>/ trace, complete
(every event, none discarded), babeltrace2 must read DIR whole (both traces
merged, no error), and a file of the user's left in DIR is kept."""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check
tracecheck = c.tracecheck

prog, base = sys.argv[1], sys.argv[2]
N = 5000
for kind in ("system", "fork", "vfork"):
    out = os.path.join(base, kind)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with open(os.path.join(out, "notes.txt"), "w") as f:
        f.write("mine\n")
    c.run([prog, "spawn", kind, str(N)], env={"FDR_OUTPUT": out})
    with open(os.path.join(out, "notes.txt")) as f:
        check(f.read() == "mine\n", kind + ": the user's file was changed")
    subs = sorted(d for d in os.listdir(out) if d != "notes.txt")
    check(len(subs) == 2 and all(re.fullmatch(r"disk-prog-\d+", d) for d in subs),
          "%s: one directory per process expected, got %s" % (kind, subs))
    names = {}
    for d in subs:
        t = tracecheck.read(os.path.join(out, d))
        kinds = {e.name for e in t.events}
        pids = {e.pid for e in t.events}
        check(len(kinds) == 1 and len(pids) == 1 and "%d" % pids.pop() == d.split("-")[-1],
              "%s: %s holds %s from several processes" % (kind, d, kinds))
        ns = sorted(e.fields["n"] for e in t.events)
        names[kinds.pop() if kinds else "?"] = (ns, t.discarded)
    want = {"disk:parent": (list(range(2 * N)), 0), "disk:child": (list(range(N)), 0)}
    for k, (ns, disc) in want.items():
        got = names.get(k)
        check(got is not None and got[0] == ns and got[1] == disc,
              "%s: %s: %s events (%s discarded), expected %d, none discarded"
              % (kind, k, len(got[0]) if got else None, got[1] if got else None, len(ns)))
    ok, err = tracecheck.clean(out)
    check(ok, "%s: babeltrace2 %s: %s" % (kind, out, err[-500:]))
    whole = tracecheck.read(out)
    check(len(whole.events) == 3 * N, "%s: %d events in DIR, expected %d"
          % (kind, len(whole.events), 3 * N))
c.finish()
