#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-wait.py STRESS OUTDIR - the consumer thread sleeps FDR_FLUSH_MS
between its passes, as asked, on every target (issue 30's 32-bit review:
where time_t is 64-bit on a 32-bit machine, Debian 13's armhf, musl 1.2,
glibc's _TIME_BITS=64, the C library's struct timespec handed to
SYS_futex read 100 ms as 0 s, and the consumer never slept: 5,456 waits
of 0 s in 2 s under qemu-arm).

`core-stress hold 1 10` with FDR_OUTPUT and FDR_FLUSH_MS=100 runs under
strace (futex calls only; in a cross build strace follows qemu-user,
whose futex calls carry the program's timeouts): the consumer thread's
FUTEX_WAITs must all time out after 0.1 s, never 0 s, and there must be
at least three. No bound on how long a wait took: only what was asked."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
import emulator  # noqa: E402
check = c.check

stress, base = sys.argv[1], sys.argv[2]
env = c.fresh(base)
log = os.path.join(base, "futex.log")
if not shutil.which("strace"):
    c.fail("no strace (scripts/deps.sh cross installs it)")
argv = [stress, "hold", "1", "10"]
if emulator.foreign(stress):
    argv = emulator._EMULATOR + argv
e = dict(env, FDR_OUTPUT=os.path.join(base, "trace"), FDR_FLUSH_MS="100")
p = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=futex", "-o", log] + argv, env=e,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
# The value compared is 1 in the program's byte order: qemu-user hands the
# kernel a big-endian target's word as it is in memory (16777216 for s390x).
WAIT = re.compile(r"^(\d+) +futex\(0x[0-9a-f]+, FUTEX_WAIT_PRIVATE, (?:1|16777216), "
                  r"\{tv_sec=(\d+), tv_nsec=(\d+)\}")


def waits():
    """(sec, nsec) of each timed FUTEX_WAIT of the consumer thread so far."""
    tids = set()
    for prog in os.listdir("/proc/%d/task" % p.pid) if p.poll() is None else []:
        try:
            with open("/proc/%d/task/%s/children" % (p.pid, prog)) as f:
                kids = f.read().split()
        except OSError:
            continue
        for k in kids:
            try:
                for t in os.listdir("/proc/%s/task" % k):
                    with open("/proc/%s/task/%s/comm" % (k, t)) as f:
                        if f.read() == "fdr-consumer\n":
                            tids.add(t)
            except OSError:
                pass
    got = []
    with open(log) as f:
        for line in f:
            m = WAIT.match(line)
            if m and (m.group(1) in tids or not tids):
                got.append((int(m.group(2)), int(m.group(3))))
    return got, tids


try:
    ready = c.wait_fd(p.stdout.fileno(), 120) and p.stdout.readline() == b"ready\n"
    check(ready, "the program did not say ready within 120 s under strace")
    deadline = time.monotonic() + 120
    got, tids = waits()
    while ready and len(got) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
        got, tids = waits()
    check(tids, "no thread named fdr-consumer in the program")
    print("consumer thread(s) %s: %d timed waits, %s" % (sorted(tids), len(got),
                                                         sorted(set(got))))
    check(len(got) >= 3, "after 120 s, %d timed waits of the consumer, not 3" % len(got))
    check(all(w == (0, 100000000) for w in got),
          "the consumer asked to wait %s, not 0.1 s (FDR_FLUSH_MS=100)" % sorted(set(got)))
finally:
    for k in open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split() \
            if p.poll() is None else []:
        os.kill(int(k), signal.SIGKILL)
    try:
        p.wait(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        check(False, "strace did not end within 120 s of the program's SIGKILL")
    p.stdout.close()
    p.stderr.close()
c.finish()
