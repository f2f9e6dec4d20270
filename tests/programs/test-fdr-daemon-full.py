#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-fdr-daemon-full.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
fdrd's output disk fills up, then has room again.

A 2 MiB tmpfs (mounted here; root only, else skipped with 77) holds a 1 MiB
file of the user's and the trace's directory. One trace (4 KiB packets,
64 KiB rings, discard mode: fdrd writes packets in batches as they come,
common/drain.h) records a program whose 2 threads record bursts of 100
ses:tick every millisecond (session-prog pace) until the disk is full.
fdrd stays up and says so in one log line. The file is then deleted and
the program stopped at once (what its rings still hold fits in the room
made): the trace reads with babeltrace2 without an error, and each
thread is exact (recorded + discarded == emitted, its last event there):
what fdrd could not write was counted, whether a whole batch or a packet
written again alone failed, and the count reached the disk once it had
room."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c

mnt = os.path.join(sys.argv[4], "mnt")
c.unmount(mnt)
s = h.Session(sys.argv)
prog = sys.argv[5]
filler = c.full_disk(mnt)
try:
    out = os.path.join(mnt, "out")
    s.start()
    s.fdr("create", "S", "-o", out, "--packet-size", "4K", "--buffer-size", "64K")
    s.fdr("enable", "S", "ses:tick")
    s.fdr("start", "S")
    THREADS = 2
    p = subprocess.Popen([prog, "pace", str(THREADS)], env=s.env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    c.check(h.line(p) == "ready\n", "not ready")
    h.wait_for(lambda: "No space left on device" in s.log_text(), "fdrd meets the full disk",
               limit=60)
    c.check(s.daemon_pid() != 0, "fdrd is up after the disk filled")
    os.unlink(filler)
    rest, _ = p.communicate("", timeout=300)
    c.check(p.returncode == 0, "exit status %d" % p.returncode)
    emitted = sorted(int(l.split()[2]) for l in rest.splitlines() if l.startswith("events "))
    h.wait_for(lambda: not s.json("list", "processes", "--json")["processes"],
               "fdrd saw the program go")
    s.fdr("destroy", "S")
    log = s.log_text()
    lines = [l for l in log.splitlines() if "No space left on device" in l]
    c.check(len(lines) == 1, "one log line about the full disk: %s" % log[-800:])
    d = os.path.join(out, "session-prog-%d" % p.pid)
    r = subprocess.run(["babeltrace2", d], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    c.check(r.returncode == 0, "babeltrace2 %d: %s" % (r.returncode, r.stderr[-500:]))
    ns, lost = h.per_thread(d)
    c.check(len(ns) == THREADS, "%d threads" % len(ns))
    for (tid, _), v in ns.items():
        c.check(v == sorted(set(v)) and v and len(v) + lost[tid] == v[-1] + 1,
                "tid %d: %d recorded + %d discarded, last %d"
                % (tid, len(v), lost[tid], v[-1] if v else -1))
    got = sorted(len(v) + lost[tid] for (tid, _), v in ns.items())
    c.check(got == emitted, "recorded + discarded %s, emitted %s" % (got, emitted))
    c.check(sum(lost.values()) > 0, "nothing counted as lost on a full disk")
finally:
    s.kill_all()
    c.unmount(mnt)
c.finish()
