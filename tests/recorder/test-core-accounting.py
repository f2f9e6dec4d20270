#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-accounting.py PROG OUTDIR [_exit] - nothing is lost silently.

4 threads x 1,000,000 events "acct:ev" (thread index, sequence number) with
a ring far too small for the consumer to keep up (FDR_BUFFER_SIZE=128K,
FDR_PACKET_SIZE=16K, discard mode). The babeltrace2 CLI reads the trace;
the events it prints plus the discarded events it reports (computed by
babeltrace2 from the events_discarded counts of the packet contexts) must
be exactly 4,000,000, and some must have been discarded, or the test
proves nothing. Within a stream (one thread here) the sequence numbers
must strictly increase: no duplicate, no reordering.

With _exit: 2 threads x 100,000 events into a 16 KiB ring drop events,
exit, and the process then ends with _exit() once the consumer has written
every packet (the driver waits until the stream files stop growing): no
exit handler runs, so read + discarded == 200,000 holds only if each
thread's exit reported its last discards in a packet of its own.

The CLI's text is parsed rather than iterating messages in Python: bt2's
Python iteration costs ~10 us per event, too slow for a million."""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check

prog, out = sys.argv[1], sys.argv[2]
EXIT = sys.argv[3:] == ["_exit"]
THREADS, EVENTS = (2, 100000) if EXIT else (4, 1000000)
SIZES = [("16K", "4K"), ("8K", "4K")] if EXIT else [("128K", "16K"), ("16K", "4K"),
                                                     ("8K", "4K")]


def trace_size(d):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)


def run_exit(env):
    """Runs PROG ... _exit; once it says "joined", waits until the trace
    stops growing (5 s without a change: the consumer is done), then lets
    it _exit. Waits for a state, never for a fixed time."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
    e.update(env, FDR_OUTPUT=out, FDR_MODE="discard")
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.Popen([prog, str(THREADS), str(EVENTS), "_exit"], env=e, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    lines = iter(p.stdout.readline, "")
    check(any(l.startswith("joined") for l in lines), "the program ran to its _exit")
    size, since = -1, time.monotonic()
    while time.monotonic() - since < 5:
        time.sleep(0.2)
        now = trace_size(out)
        if now != size:
            size, since = now, time.monotonic()
    p.stdin.close()
    p.wait(timeout=60)
    check(p.returncode == 0, "exit status %d" % p.returncode)


def count(out):
    """(read, discarded, per_thread, thread_of, bad_line, bad_order, rc) as
    the babeltrace2 CLI reports them."""
    # stderr (one line per discarded range, easily more than a pipe holds)
    # goes to a file, so that reading stdout cannot deadlock.
    errf = tempfile.TemporaryFile(mode="w+")
    p = subprocess.Popen(["babeltrace2", "--names=none", out], stdout=subprocess.PIPE,
                         stderr=errf, text=True)
    # [ts] (+delta) host:proc:(pid) acct:ev: { pid, tid, "name" }, { thread, seq }
    line_re = re.compile(r" acct:ev: \{ (\d+), (\d+), \"[^\"]*\" \}, \{ (\d+), (\d+) \}$")
    read = 0
    last = {}           # tid -> last sequence number
    thread_of = {}      # tid -> thread index
    per_thread = collections.Counter()
    bad_order = bad_line = 0
    for line in p.stdout:
        m = line_re.search(line.rstrip("\n"))
        if not m:
            bad_line += 1
            if bad_line < 5:
                print("unexpected line: " + line.rstrip(), file=sys.stderr)
            continue
        tid, idx, seq = int(m.group(2)), int(m.group(3)), int(m.group(4))
        read += 1
        per_thread[idx] += 1
        if thread_of.setdefault(tid, idx) != idx:
            bad_order += 1
        if seq <= last.get(tid, -1) or seq >= EVENTS:
            bad_order += 1
            if bad_order < 5:
                print("out of order: tid %d seq %d after %d" % (tid, seq, last.get(tid, -1)),
                      file=sys.stderr)
        last[tid] = seq
    p.wait()
    errf.seek(0)
    err = errf.read()
    discarded = 0
    for l in err.splitlines():
        m = re.search(r"[Tt]racer discarded (\d+) events?\b", l)
        if m:
            discarded += int(m.group(1))
        elif l.strip() and not l.startswith(" "):
            check(False, "babeltrace2 said: " + l)
    return read, discarded, per_thread, thread_of, bad_line, bad_order, p.returncode


for buf, pkt in SIZES:
    if EXIT:
        run_exit({"FDR_BUFFER_SIZE": buf, "FDR_PACKET_SIZE": pkt})
    else:
        c.run([prog, str(THREADS), str(EVENTS)], out, timeout=200,
              env={"FDR_BUFFER_SIZE": buf, "FDR_PACKET_SIZE": pkt})
    read, discarded, per_thread, thread_of, bad_line, bad_order, rc = count(out)
    check(rc == 0, "babeltrace2 exited with %d" % rc)
    print("buffer %s packet %s: read %d + discarded %d = %d (per thread %s)" %
          (buf, pkt, read, discarded, read + discarded, dict(per_thread)))
    if discarded > 0:
        break
    print("nothing discarded with this buffer (slow build?), trying a smaller one")

check(discarded > 0, "no event was discarded: the accounting was not exercised")
check(read > 0, "no event read")
check(read + discarded == THREADS * EVENTS,
      "read %d + discarded %d = %d, emitted %d" % (read, discarded, read + discarded,
                                                  THREADS * EVENTS))
check(bad_line == 0, "%d lines not understood" % bad_line)
check(bad_order == 0, "%d events duplicated or out of order" % bad_order)
check(sorted(set(thread_of.values())) == list(range(THREADS)),
      "threads seen: %s" % sorted(set(thread_of.values())))
check(len(thread_of) == THREADS, "%d tids for %d threads" % (len(thread_of), THREADS))
c.finish()
