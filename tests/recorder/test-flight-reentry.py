#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-flight-reentry.py PROG OUTDIR - events from a signal handler.

Runs tests/recorder/progs/flight-reentry.c (10 kHz SIGALRM recording from its
handler while main records) writing a trace, then checks with bt2:
  - every event read back is intact: seq increasing by one within each
    side except where events were discarded, neg == -seq, s == prefix+seq;
  - exact accounting: events read + discarded (babeltrace2's discarded
    events count) == events emitted (printed by the program);
  - the handler really interrupted events in progress: some signal events
    are missing (counted as discarded), and many were recorded.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest  # noqa: E402
import tracecheck  # noqa: E402

PROG, OUT = sys.argv[1], sys.argv[2]
check = fdrtest.check

shutil.rmtree(OUT, ignore_errors=True)
e = dict(os.environ)
e.update(FDR_OUTPUT=OUT, FDR_MODE="discard", FDR_BUFFER_SIZE="16M")
p = subprocess.run([PROG, "1"], env=e, capture_output=True, text=True, timeout=120)
check(p.returncode == 0, "exit %d %s" % (p.returncode, p.stderr))
main_n, sig_n = map(int, p.stdout.split()[1:3])
ok, err = tracecheck.clean(OUT)
check(ok, "babeltrace2 reads the trace\n" + err)
t = tracecheck.read(OUT)
sides = {"main:ev": ("m", []), "sig:ev": ("s", [])}
bad = 0
for ev in t.events:
    prefix, seqs = sides[ev.name]
    f = ev.fields
    if f["neg"] != -f["seq"] or f["s"] != prefix + str(f["seq"]) or \
            f.get("pad", "x" * 240) != "x" * 240:
        bad += 1
    seqs.append(f["seq"])
check(bad == 0, "%d events corrupt" % bad)
for name, (prefix, seqs) in sides.items():
    check(seqs == sorted(set(seqs)), name + ": each seq once, in order")
read_main, read_sig = len(sides["main:ev"][1]), len(sides["sig:ev"][1])
print("emitted main=%d sig=%d; read main=%d sig=%d; discarded=%d"
      % (main_n, sig_n, read_main, read_sig, t.discarded))
check(read_main + read_sig + t.discarded == main_n + sig_n,
      "read + discarded == emitted: %d + %d != %d"
      % (read_main + read_sig, t.discarded, main_n + sig_n))
check(sig_n > 1000, "the timer fired (%d)" % sig_n)
check(read_sig < sig_n, "some handler events were nested and discarded")
check(read_sig > sig_n // 4, "most handler events recorded (%d of %d)" % (read_sig, sig_n))
check(sides["main:ev"][1] == list(range(main_n)), "main's events are all there")
fdrtest.finish()
