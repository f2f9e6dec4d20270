#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-disk-kill.py PROG OUTDIR [KILLS] - SIGKILL and _exit while 4 threads
record to disk.

disk-prog run: 4 threads record disk:ev without end and publish, in a shared
file, how many fdr_trace calls returned. It is SIGKILLed at KILLS (100)
random moments, and once more ends by _exit from main. After each end, and
after the drain helper (found in /proc as the program's child) has exited:
babeltrace2 reads the trace with no error (stream files hold whole
packets), no event is read twice, and recorded + discarded equals what the
program committed: the helper writes each thread's open packet too, up to
its last committed event (the committed position in the packet's tail).
A thread may have committed one event more than it had counted when it
was killed, so up to one event per thread more may be read, never fewer.
The consumer thread is made to sleep (FDR_FLUSH_MS=60000), so nearly all
of the trace is written by the helper after the end. With FDR_DRAIN=off no
helper process is started."""
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check
tracecheck = c.tracecheck

prog, base = sys.argv[1], sys.argv[2]
kills = int(sys.argv[3]) if len(sys.argv) > 3 else 100
THREADS = 4
PACKET = 4096

shutil.rmtree(base, ignore_errors=True)
os.makedirs(base)
env = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
env.update(FDR_BUFFER_SIZE="1M", FDR_PACKET_SIZE=str(PACKET), FDR_FLUSH_MS="60000")
rng = random.Random(11)


def helpers_of(pid):
    kids = []
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
            kids += [int(k) for k in f.read().split()]
    return kids


def one(i, how, drain=True):
    out = os.path.join(base, "%03d" % i)
    counts = os.path.join(base, "counts")
    with open(counts, "wb") as f:
        f.write(bytes(64 * 8))
    e = dict(env, FDR_OUTPUT=out)
    if not drain:
        e["FDR_DRAIN"] = "off"
    p = subprocess.Popen([prog, how, counts, str(THREADS)], env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    check(p.stdout.readline() == b"started\n", "%d: did not start" % i)
    helpers = [os.pidfd_open(k) for k in helpers_of(p.pid)]
    check(len(helpers) == (1 if drain else 0), "%d: %d helper processes" % (i, len(helpers)))
    if how == "run":
        time.sleep(rng.uniform(0, 0.1))
        p.send_signal(signal.SIGKILL)
    p.wait(timeout=120)
    for h in helpers:
        check(c.wait_fd(h, 120), "the drain helper ended within 120 s")
        os.close(h)
    with open(counts, "rb") as f:
        committed = sum(struct.unpack("64Q", f.read()))
    has_trace = any("metadata" in files for _, _, files in os.walk(out))
    got = 0
    if has_trace:
        ok, err = tracecheck.clean(out)
        if not check(ok, "%d (%s): babeltrace2: %s" % (i, how, err[-400:])):
            return
        t = tracecheck.read(out)
        seen = set()
        for ev in t.events:
            seen.add((ev.fields["thread"], ev.fields["n"]))
        check(len(seen) == len(t.events),
              "%d: %d events read twice" % (i, len(t.events) - len(seen)))
        got = len(t.events) + t.discarded
    else:
        check(committed == 0, "%d (%s): no trace written, %d events committed" %
              (i, how, committed))
    missing = committed - got
    check(-THREADS <= missing <= 0,
          "%d (%s): committed %d, recorded + discarded %d (%d missing)" %
          (i, how, committed, got, missing))
    return missing


worst = 0
for i in range(kills):
    m = one(i, "run")
    worst = max(worst, m or -THREADS)
    shutil.rmtree(os.path.join(base, "%03d" % i), ignore_errors=True)
one(kills, "_exit")
# FDR_DRAIN=off: no helper process is started, and the program records and
# ends as before (what its consumer thread had not written is then lost).
out = os.path.join(base, "nodrain")
counts = os.path.join(base, "counts")
with open(counts, "wb") as f:
    f.write(bytes(64 * 8))
p = subprocess.Popen([prog, "_exit", counts, str(THREADS)],
                     env=dict(env, FDR_OUTPUT=out, FDR_DRAIN="off"), stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
check(p.stdout.readline() == b"started\n", "nodrain: did not start")
check(helpers_of(p.pid) == [], "FDR_DRAIN=off: a helper process was started")
p.wait(timeout=120)
check(p.returncode == 0, "FDR_DRAIN=off: exit %d" % p.returncode)
print("most missing: %d events (<= 0: none)" % worst)
c.finish()
