#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-drain.py STRESS NOCLONE OUTDIR FDREXE - a program killed by SIGTERM
keeps every event its threads recorded, wherever its drain helper could
be made (issue 30: under qemu-arm, two threads' streams of three were lost
after SIGTERM, uncounted: qemu-user refuses a clone with no exit signal,
and the program went on without its helper, saying nothing).

`core-stress hold 3 EVENTS`: three threads record EVENTS events each and
wait, their last packets open, the consumer thread asleep (FDR_FLUSH_MS
at its 60 s maximum): only the drain helper can write them once SIGTERM
has killed the process. Three ways:

  plain      as the program runs (under qemu-user, in a cross build, the
             emulator itself refuses the clone: this is its case)
  signal0    no-clone signal0: clone() with no exit signal fails with
             EINVAL, as under qemu-user; the helper must still be made
  fork       no-clone fork: no process can be made at all; the program
             must say, in one line, that a kill loses its events

plain and signal0: once every drain helper of the program has ended, the
trace holds each thread's EVENTS events, numbered 0..EVENTS-1, nothing
discarded (under qemu-user, events the recording discarded, counted, are
allowed: recorded + discarded == emitted). fork: the line is on stderr. The native runs only: a seccomp
filter inside qemu-user would see qemu's system calls; and only where
no-clone was built (NOCLONE "-": not with musl-gcc, whose include path
has no kernel headers).

The helper is the executable fdr-drain (FDREXE), started with vfork +
exec (issue 29: a clone of the program copied its page tables and made
its pages copy-on-write); where that executable is not found, a clone of
the program, saying nothing:

  plain      the helper's /proc/PID/exe is FDREXE, its nice 19 (it must not
             take the CPU from the program's start; so in every way)
  noexe      FDR_DRAIN_EXE names no file: the helper is a clone (its exe
             the program's), stderr empty, every event kept
  planted    FDR_DRAIN_EXE names a copy of FDREXE that others may write (as
             one another user could put where the library's build-tree path
             points): not run, the helper is a clone, every event kept

And the whole process group killed (SIGKILL to the group, as `timeout -s
KILL`, `kill -9 -PGID` and a shell's `kill -9 %1` do): the helper, in a
session of its own, outlives it and keeps every event (before, it died
with the program: 1,296 events of 3,000 lost, uncounted):

  group          fdr-drain
  group-clone    FDR_DRAIN_EXE names no file: a clone of the program
  group-signal0  the same, no-clone signal0: the clone made through a
                 child that exits at once, as under qemu-user (natively)

The helper is out of the program's process group by the time the program
says "ready": a clone of the program made its own session only when it
was first scheduled, after the setpriority the test waits for, and under
qemu-arm at load the group's SIGKILL came first (568 of 1,000 events per
thread kept, the rest lost uncounted).

pid1: the program as PID 1 of a PID namespace of its own (unshare, as
root): no helper is made (the namespace's end would kill it with the
program), and one line says so."""
import shutil
import collections
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check

stress, noclone, base, fdrexe = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
THREADS, EVENTS = 3, 1000
EMULATED = bool(os.environ.get("FDR_TEST_EMULATOR"))
env = c.fresh(base)
LINE = re.compile(r" stress:ev: \{ \d+, (\d+), \"[^\"]*\" \}, \{ (\d+), (\d+) \}$")


def helper_pid(pidfd):
    with open("/proc/self/fdinfo/%d" % pidfd) as f:
        return re.search(r"^Pid:\s*(\d+)", f.read(), re.M).group(1)


def helper_exe(pidfd):
    """The executable of the process of pidfd."""
    return os.path.realpath("/proc/%s/exe" % helper_pid(pidfd))


def pgid(pid):
    """The process group of pid."""
    with open("/proc/%s/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[2])


def helper_nice(pidfd):
    """The nice value of the process of pidfd (its threads': one)."""
    with open("/proc/%s/stat" % helper_pid(pidfd)) as f:
        return int(f.read().rsplit(")", 1)[1].split()[16])


def run(how):
    out = os.path.join(base, how)
    e = dict(env, FDR_OUTPUT=out, FDR_FLUSH_MS="60000")
    if how == "noexe":
        e["FDR_DRAIN_EXE"] = os.path.join(base, "no-such-fdr-drain")
    if how == "planted":
        e["FDR_DRAIN_EXE"] = os.path.join(base, "planted-fdr-drain")
        shutil.copy(fdrexe, e["FDR_DRAIN_EXE"])
        os.chmod(e["FDR_DRAIN_EXE"], 0o777)
    argv = [stress, "hold", str(THREADS), str(EVENTS)]
    if how in ("signal0", "fork", "group-signal0"):
        argv = [noclone, how.replace("group-", "")] + argv
    if how in ("group-clone", "group-signal0"):
        e["FDR_DRAIN_EXE"] = os.path.join(base, "no-such-fdr-drain")
    group = how.startswith("group")
    p = subprocess.Popen(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=group)
    try:
        ready = c.wait_fd(p.stdout.fileno(), 120) and p.stdout.readline() == b"ready\n"
        check(ready, "%s: the threads had not recorded their events within 120 s" % how)
        helpers = c.drain_helpers(p.pid)
        exes = [helper_exe(h) for h in helpers]
        # Not waited for: out of the group before the program went on.
        groups = [pgid(helper_pid(h)) for h in helpers]
        check(not group or (groups and p.pid not in groups),
              "%s: the drain helper is in process group %s, the program's is %d"
              % (how, groups, p.pid))
        # A clone of the program sets its own nice when it first runs
        # (drainer.c), which a loaded machine may delay: waited for, bounded.
        deadline = time.monotonic() + 120
        nices = [helper_nice(h) for h in helpers]
        while nices != [19] * len(helpers) and time.monotonic() < deadline:
            time.sleep(0.01)
            nices = [helper_nice(h) for h in helpers]
        if group:
            os.killpg(p.pid, signal.SIGKILL)
        else:
            p.send_signal(signal.SIGTERM)
        p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    sig = signal.SIGKILL if group else signal.SIGTERM
    check(p.returncode == -sig, "%s: exit status %d, not -%s"
          % (how, p.returncode, sig.name))
    for h in helpers:
        check(c.wait_fd(h, 120), "%s: the drain helper did not end within 120 s" % how)
        os.close(h)
    err = p.stderr.read().decode(errors="replace")
    p.stdout.close()
    p.stderr.close()
    if how == "fork":
        check(re.search(r"^fdr: no drain helper \(Invalid argument\): if this process is "
                        r"killed, the events its consumer has not written yet are lost",
                        err, re.M),
              "fork: no line says that the events are lost without a helper; stderr: %r"
              % err)
        return
    check(len(helpers) == 1, "%s: %d drain helpers found, not 1" % (how, len(helpers)))
    # Under qemu-user every process's /proc/PID/exe is the emulator: which
    # executable the helper runs is checked natively only.
    want = None if EMULATED else {"plain": fdrexe, "noexe": stress, "planted": stress,
                                  "group": fdrexe, "group-clone": stress,
                                  "group-signal0": stress}.get(how)
    check(want is None or exes == [os.path.realpath(want)],
          "%s: the drain helper runs %s, not %s" % (how, exes, want))
    # The helper must not take the CPU from the program's start (drainer.h,
    # FDR__DRAIN_NICE), as fdr-drain and as a clone alike.
    check(nices == [19], "%s: the drain helper's nice is %s, not 19 (after up to 120 s)"
          % (how, nices))
    check(err == "", "%s: the program said: %s" % (how, err.strip()))
    r = subprocess.run(["babeltrace2", "--names=none", out], capture_output=True, text=True)
    # Under qemu-user a thread whose first (small) ring filled while another
    # held the lock it needs to grow discarded an event, counted (riscv64,
    # once): there the recording may discard, counted, and the drain must
    # still keep every event recorded (recorded + discarded == emitted).
    # Natively nothing is discarded.
    warn = re.compile(r"^WARNING: Tracer discarded (\d+) events? ")
    lines = r.stderr.splitlines()
    discarded = sum(int(warn.match(ln).group(1)) for ln in lines if warn.match(ln))
    other = [ln for ln in lines if not warn.match(ln) and ln.strip()]
    check(r.returncode == 0 and not other and (EMULATED or not discarded),
          "%s: babeltrace2 exited with %d: %s" % (how, r.returncode, r.stderr.strip()))
    seqs = collections.defaultdict(list)
    for line in r.stdout.splitlines():
        m = LINE.search(line)
        if check(m, "%s: unexpected line: %s" % (how, line)):
            seqs[int(m.group(2))].append(int(m.group(3)))
    got = {t: len(s) for t, s in sorted(seqs.items())}
    print("%s: events per thread %s, %d helper(s)" % (how, got, len(helpers)))
    for t in range(THREADS):
        s = seqs.get(t, [])
        check(s == list(range(EVENTS)) or
              (discarded and s == sorted(set(s)) and set(s) <= set(range(EVENTS))),
              "%s: thread %d: %d events in the trace, not 0..%d in order "
              "(recorded before %s, lost uncounted)"
              % (how, t, len(s), EVENTS - 1, sig.name))
    kept = sum(len(v) for v in seqs.values())
    check(kept + discarded == THREADS * EVENTS,
          "%s: %d events in the trace + %d discarded != %d emitted"
          % (how, kept, discarded, THREADS * EVENTS))


def pid1():
    """A PID namespace's init (a container's first process): its death kills
    every process of the namespace at once, a helper too, so none is made
    and one line says that a kill loses what the consumer had not written
    (a helper that cannot help is no promise)."""
    out = os.path.join(base, "pid1")
    e = dict(env, FDR_OUTPUT=out, FDR_FLUSH_MS="60000")
    p = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", stress, "hold",
                          "1", "10"], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        ready = c.wait_fd(p.stdout.fileno(), 120) and p.stdout.readline() == b"ready\n"
        check(ready, "pid1: the program had not recorded its events within 120 s")
        inner = []  # the program, PID 1 inside: unshare's child
        with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
            inner = [int(k) for k in f.read().split()]
        check(len(inner) == 1, "pid1: unshare has children %s, expected 1" % inner)
        helpers = c.drain_helpers(inner[0]) if inner else []
        for h in helpers:
            os.close(h)
        check(not helpers, "pid1: %d drain helper(s) made, expected none" % len(helpers))
    finally:
        p.kill()  # --kill-child: the program with it
        p.wait()
    err = p.stderr.read().decode(errors="replace")
    p.stdout.close()
    p.stderr.close()
    check(re.search(r"^fdr: no drain helper \(this process is PID 1 of its PID namespace, "
                    r"whose death kills the helper too\): if this process is killed, the "
                    r"events its consumer has not written yet are lost", err, re.M),
          "pid1: no line says that a kill loses the events; stderr: %r" % err)
    print("pid1: no helper, the line said")


run("plain")
run("noexe")
run("planted")
run("group")
run("group-clone")
# NOCLONE is "-" where no-clone could not be built (musl-gcc: no kernel
# headers)
if not EMULATED and noclone != "-":
    run("signal0")
    run("group-signal0")
    run("fork")
# A PID namespace of its own needs root (CI runs as root; test-disk-full's
# tmpfs too); natively only (qemu-user's own process would be PID 1).
if not EMULATED and os.geteuid() == 0:
    pid1()
c.finish()
