#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-disk-fds.py PROG OUTDIR - a program that takes fdr's descriptors.

disk-prog fds: after fdr started and wrote its first event (trace
directory, stream file, ring and drain helper's socket open), the program
makes every descriptor from 3 to 63 a file of its own, either by closing
them all first (closefrom(3), "close") or by dup2 over them ("dup2");
then 4 threads record 10,000 events each, the program writes 6,100
bytes 'P' through those descriptors and records one event more. fdr checks what a descriptor names
before using it (device and inode), so:
  - the program's file holds its 6,100 bytes 'P' and nothing of fdr's;
  - the trace is whole: babeltrace2 reads all 40,002 events (fdr opened
    the directory and the stream file again by their paths), each thread's
    0..9,999, recorded + discarded = emitted;
  - what could not be kept is said once: the drain helper's socket cannot
    be opened again, so one line says that threads started from then on
    are not finished by it if the process is killed.
The same with FDR_TRACE_FILE (printing every event to a file): the printed
file is opened again, said once, and the program's file stays its own.
Before (issue 25): "close" kept 1 event of 40,002 (1 of 200,002 with
50,000 per thread), and fdr's metadata went into the program's file."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check
tracecheck = c.tracecheck

prog, base = sys.argv[1], sys.argv[2]
env = c.fresh(base)
T, N, BYTES = 4, 10000, 6100


def one(how, printed=False):
    out = os.path.join(base, how + ("-printed" if printed else ""))
    own = out + ".file"
    e = dict(env, FDR_OUTPUT=out)
    if printed:
        e.update(FDR_TRACES="disk:fdmain", FDR_TRACE_FILE=out + ".printed")
    p = subprocess.run([prog, "fds", how, str(T), str(N), own], env=e, capture_output=True,
                       text=True, timeout=300)
    check(p.returncode == 0 and p.stdout == "done\n",
          "%s: exit %d, %r %r" % (how, p.returncode, p.stdout, p.stderr[-300:]))
    with open(own, "rb") as f:
        data = f.read()
    check(data == b"P" * BYTES, "%s: the program's file holds %d bytes, %d of them not its "
          "own: fdr wrote into a descriptor that was the program's" %
          (how, len(data), len(data) - data.count(b"P")))
    ok, err = tracecheck.clean(out)
    check(ok, "%s: babeltrace2: %s" % (how, err[-400:]))
    t = tracecheck.read(out)
    per = {}
    for ev in t.events:
        if ev.name == "disk:fdthr":
            per.setdefault(ev.fields["thread"], []).append(ev.fields["n"])
    main = sum(1 for ev in t.events if ev.name == "disk:fdmain")
    print("%s%s: %d of %d events read, %d discarded" %
          (how, " (printed)" if printed else "", len(t.events), T * N + 2, t.discarded))
    check(len(t.events) + t.discarded == T * N + 2,
          "%s: recorded %d + discarded %d != emitted %d" %
          (how, len(t.events), t.discarded, T * N + 2))
    check(main == 2 and t.discarded == 0 and
          all(per.get(k) == list(range(N)) for k in range(T)),
          "%s: not every event of every thread: main %d, threads %s" %
          (how, main, {k: len(v) for k, v in per.items()}))
    lines = [l for l in p.stderr.splitlines() if l.startswith("fdr:")]
    want = ["the drain helper's socket"] + (["FDR_TRACE_FILE"] if printed else [])
    check(len(lines) == len(want) and all(w in l for w, l in zip(want, sorted(lines))),
          "%s: what was lost is said once, nothing else: %r" % (how, lines))
    if printed:
        with open(out + ".printed") as f:
            check(f.read().count("disk:fdmain") == 2, "%s: the 2 printed events" % how)


one("close")
one("dup2")
one("close", printed=True)
c.finish()
