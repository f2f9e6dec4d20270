#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-stress.py PROG OUTDIR - many threads, flushes, snapshots and
SIGTERM, every wait bounded (issue 30: a 3-thread program hung on i686,
its trace empty, and SIGTERM did not end it). Run natively and by the
cross stage under qemu-user (i686 and armhf: 32-bit).

run: core-stress run 6 threads x EVENTS events x 3 rounds (threads
exit, new ones take their rings) into a 16 KiB ring, with main flushing
and snapshotting all along, in discard and overwrite mode. The program
has a watchdog (120 s without progress: it says what it still waits for
and exits 3); the driver gives it 300 s more and then says which threads
are left and where they wait. In discard mode read + discarded ==
emitted, every thread's numbers increase, every thread is there; in
overwrite mode the trace reads clean and the last round is there (a ring
a thread left is overwritten by the next thread that takes it).

term: core-stress term 3 records without end in 3 threads; SIGTERM at
moments before and after each thread's first event must end the process
(status -SIGTERM) within 60 s, and once the drain helper is done the
trace holds events of every thread that had recorded (under qemu-user
too: there the drain helper is made through a child, consumer.c)."""
import collections
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check

prog, base = sys.argv[1], sys.argv[2]
THREADS, ROUNDS = 6, 3
EVENTS = int(os.environ.get("FDR_TEST_STRESS_EVENTS", "20000"))
TERMS = 6
rng = random.Random(30)
env = c.fresh(base)


def tasks(pid):
    """What each thread of pid is doing, for a message."""
    out = []
    try:
        for tid in sorted(os.listdir("/proc/%d/task" % pid)):
            d = "/proc/%d/task/%s/" % (pid, tid)
            with open(d + "comm") as f:
                name = f.read().strip()
            with open(d + "stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open(d + "wchan") as f:
                wchan = f.read().strip()
            out.append("%s %s %s %s" % (tid, name, state, wchan))
    except OSError:
        pass
    return "; ".join(out) or "(gone)"


def count(out, overwritten=False):
    """(events per thread as lists of seq, discarded) from the babeltrace2 CLI;
    packets overwritten (overwrite mode) are reported by it, not counted."""
    errf = tempfile.TemporaryFile(mode="w+")
    p = subprocess.Popen(["babeltrace2", "--names=none", out], stdout=subprocess.PIPE,
                         stderr=errf, text=True)
    line_re = re.compile(r" stress:ev: \{ \d+, (\d+), \"[^\"]*\" \}, \{ (\d+), (\d+) \}$")
    seqs = collections.defaultdict(list)
    for line in p.stdout:
        m = line_re.search(line.rstrip("\n"))
        if check(m, "unexpected line: " + line.rstrip()):
            seqs[int(m.group(2))].append(int(m.group(3)))
    p.wait()
    check(p.returncode == 0, "babeltrace2 exited with %d" % p.returncode)
    errf.seek(0)
    discarded = 0
    for l in errf.read().splitlines():
        m = re.search(r"[Tt]racer discarded (\d+) events?\b", l)
        if m:
            discarded += int(m.group(1))
        elif overwritten and re.search(r"[Tt]racer (discarded \d+ packets?|may have "
                                       r"discarded events)\b", l):
            pass
        elif l.strip() and not l.startswith(" "):
            check(False, "babeltrace2 said: " + l)
    return seqs, discarded


def run(mode):
    out, snap = os.path.join(base, mode), os.path.join(base, mode + "-snap")
    e = dict(env, FDR_OUTPUT=out, FDR_MODE=mode, FDR_BUFFER_SIZE="16K",
             FDR_PACKET_SIZE="4K")
    p = subprocess.Popen([prog, "run", str(THREADS), str(EVENTS), str(ROUNDS), snap], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        so, se = p.communicate(timeout=420)
    except subprocess.TimeoutExpired:
        what = tasks(p.pid)
        p.kill()
        p.communicate()
        c.fail("%s: core-stress still running after 420 s (its own watchdog did not end "
               "it either); its threads: %s" % (mode, what))
    sys.stderr.write(se)
    if not check(p.returncode == 0 and so.endswith("done\n"),
                 "%s: core-stress exited with %d: %s" % (mode, p.returncode, se.strip())):
        return
    emitted = {int(a): int(b) for a, b in re.findall(r"^emitted (\d+) (\d+)$", so, re.M)}
    check(len(emitted) == THREADS * ROUNDS, "%s: %d threads said what they emitted"
          % (mode, len(emitted)))
    seqs, discarded = count(out, mode == "overwrite")
    read = sum(len(s) for s in seqs.values())
    print("%s: read %d + discarded %d, emitted %d, threads %d" %
          (mode, read, discarded, sum(emitted.values()), len(seqs)))
    for t, s in seqs.items():
        check(all(a < b for a, b in zip(s, s[1:])) and s[-1] < EVENTS,
              "%s: thread %d's numbers do not increase" % (mode, t))
    if mode == "discard":
        check(set(seqs) == set(emitted), "%s: threads read %s, emitted %s" %
              (mode, sorted(seqs), sorted(emitted)))
        check(read + discarded == sum(emitted.values()),
              "%s: read %d + discarded %d = %d, emitted %d" %
              (mode, read, discarded, read + discarded, sum(emitted.values())))
        check(discarded > 0, "discard: nothing was discarded: the test proves nothing")
    else:
        # A ring freed by a thread that ended is taken by the next one, which
        # overwrites it: only the newest packets are left (babeltrace2
        # reports the others as discarded packets).
        last = set(range((ROUNDS - 1) * THREADS, ROUNDS * THREADS))
        check(last & set(seqs), "%s: no thread of the last round in the trace (%s)" %
              (mode, sorted(seqs)))
        c.clean(out, overwritten=True)
    check(os.path.isdir(snap) and c.clean(snap, overwritten=True),
          "%s: no readable snapshot in %s" % (mode, snap))


def term(i, after_ready):
    out = os.path.join(base, "term-%d" % i)
    e = dict(env, FDR_OUTPUT=out, FDR_BUFFER_SIZE="16K", FDR_PACKET_SIZE="4K")
    p = subprocess.Popen([prog, "term", "3"], env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    if after_ready:
        ready = c.wait_fd(p.stdout.fileno(), 120) and p.stdout.readline() == b"ready\n"
        check(ready, "term %d: no thread recorded within 120 s (threads: %s)"
              % (i, tasks(p.pid)))
    time.sleep(rng.uniform(0, 0.3))
    helpers = c.drain_helpers(p.pid)
    where = tasks(p.pid)
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        what = tasks(p.pid)
        p.kill()
        p.wait()
        c.fail("term %d: SIGTERM did not end the program in 60 s; its threads then: %s "
               "(when the signal was sent: %s)" % (i, what, where))
    check(p.returncode == -signal.SIGTERM, "term %d: exit status %d, not -SIGTERM"
          % (i, p.returncode))
    for h in helpers:
        check(c.wait_fd(h, 120), "term %d: the drain helper did not end within 120 s" % i)
        os.close(h)
    err = p.stderr.read().decode(errors="replace").strip()
    if after_ready:
        seqs, _ = count(out)
        check(len(seqs) == 3,
              "term %d: events of %d threads in the trace, not 3 (%d drain helper(s) "
              "found; the program said: %s)" % (i, len(seqs), len(helpers), err or "nothing"))


for mode in ("discard", "overwrite"):
    run(mode)
for i in range(TERMS):
    term(i, i % 3 != 0)
c.finish()
