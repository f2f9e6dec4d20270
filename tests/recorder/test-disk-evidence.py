#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-disk-evidence.py PROG OUTDIR - traces on disk are evidence (issue 25).

  restart   a service (disk-prog segv N) crashes with SIGSEGV and is
            restarted 3 times into one FDR_OUTPUT: the 4 traces stay, each
            read by babeltrace2 alone with its N events, and the directory
            whole reads cleanly (4 N events).
  aside     a trace directory left at the name a new process takes (the
            same name and pid: disk-prog pause execs itself) is set aside as
            <name>-<pid>.1, not emptied: both traces are read.
  keep      FDR_OUTPUT_KEEP=2: the oldest earlier traces go, one line each
            on stderr naming it, the 2 newest and the new run's stay.
  kill      overwrite mode (the flight recorder) with FDR_OUTPUT, 4 threads
            recording without end, SIGKILL: the drain helper writes each
            ring's newest packets and its open packet. babeltrace2 reads the
            trace; each thread's events are consecutive and end at its last
            committed event (the count it published, or one more); the
            packets overwritten before are reported as discarded packets
            (an anchor packet 0). The same with _exit.
  crashdir  the same two with FDR_CRASH_DIR alone (no FDR_OUTPUT): the
            helper writes FDR_CRASH_DIR/crash-<pid>; a program that exits
            normally leaves nothing there; one that execs leaves nothing of
            the image before the exec, and its crash (SIGSEGV after the
            exec) is the crash handler's one crash-<pid>.
"""
import os
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
env = c.fresh(base)
# Sanitizers would take the SIGSEGV from fdr's crash handler.
for k in ("ASAN_OPTIONS", "TSAN_OPTIONS"):
    env[k] = (env.get(k, "") + ":handle_segv=0").lstrip(":")
N = 1000
THREADS = 4


def wait_helpers(helpers, what):
    for h in helpers:
        check(c.wait_fd(h, 120), "%s: the drain helper did not end within 120 s" % what)
        os.close(h)


def start(args, e, stdin=None):
    p = subprocess.Popen([prog] + args, env=e, stdin=stdin, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    return p


def crash_once(out, extra=None):
    """One run of the crashing service; returns its trace directory and
    stderr."""
    e = dict(env, FDR_OUTPUT=out, FDR_CRASH_EVENTS="1", **(extra or {}))
    # The helper is found through the program's children while it runs:
    # the program waits for a line first (pause), then execs as segv.
    p = start(["segv", str(N)], e)
    _, err = p.communicate(timeout=120)
    check(p.returncode == -signal.SIGSEGV, "segv: exit status %d" % p.returncode)
    name = "disk-prog-%d" % p.pid
    # The helper is the dead program's clone: it may still be writing.
    # Wait until the trace holds N events (babeltrace2 reads it).
    deadline = time.time() + 120
    got = -1
    while time.time() < deadline:
        d = os.path.join(out, name)
        if os.path.exists(os.path.join(d, "metadata")):
            ok, _ = tracecheck.clean(d)
            if ok:
                got = len(tracecheck.read(d).events)
                if got == N:
                    break
        time.sleep(0.2)
    check(got == N, "%s: %d events read after 120 s, %d expected" % (name, got, N))
    return name, err


def events_of(path):
    t = tracecheck.read(path)
    return [(e.name, e.fields.get("n")) for e in t.events]


# ---- restart ----------------------------------------------------------------
out = os.path.join(base, "restart")
names = []
for i in range(4):
    name, _ = crash_once(out)
    names.append(name)
    time.sleep(0.02)  # distinct modification times for "keep" below
left = sorted(d for d in os.listdir(out))
check(left == sorted(names), "after 4 crashes: %s, expected %s" % (left, sorted(names)))
for name in names:
    got = events_of(os.path.join(out, name))
    check(got == [("disk:victim", n) for n in range(N)],
          "%s: %d events, not 0..%d" % (name, len(got), N - 1))
c.clean(out)
check(len(tracecheck.read(out).events) == 4 * N, "the whole directory: not 4 x %d events" % N)

# ---- keep -------------------------------------------------------------------
name, err = crash_once(out, {"FDR_OUTPUT_KEEP": "2"})
removed = [l for l in err.splitlines() if "FDR_OUTPUT_KEEP" in l]
check(len(removed) == 2 and names[0] in removed[0] and names[1] in removed[1],
      "FDR_OUTPUT_KEEP=2: one line per removed trace, oldest first: %r" % removed)
left = sorted(os.listdir(out))
check(left == sorted(names[2:] + [name]), "FDR_OUTPUT_KEEP=2 left %s" % left)
p = start(["segv", "1"], dict(env, FDR_OUTPUT=out, FDR_OUTPUT_KEEP="x"))
_, err = p.communicate(timeout=120)
check('FDR_OUTPUT_KEEP="x" is not valid' in err, "a bad FDR_OUTPUT_KEEP: %r" % err)
check(len(os.listdir(out)) == 4, "a bad FDR_OUTPUT_KEEP removed traces")

# ---- aside ------------------------------------------------------------------
out = os.path.join(base, "aside")
crash = os.path.join(base, "aside-crash")
first, _ = crash_once(out)
p = start(["pause"], dict(env, DISK_OUTPUT=out, DISK_CRASH_DIR=crash,
                          DISK_SNAPSHOT=os.path.join(base, "aside-snap")),
          stdin=subprocess.PIPE)
pid = int(p.stdout.readline())
same = os.path.join(out, "disk-prog-%d" % pid)
shutil.copytree(os.path.join(out, first), same)
p.stdin.write("go\n")
p.stdin.flush()
p.communicate(timeout=120)
aside = same + ".1"
check(events_of(aside) == [("disk:victim", n) for n in range(N)],
      "the earlier trace at the same name was not kept as %s" % aside)
deadline = time.time() + 120
got = -1
while time.time() < deadline and got != 1000:
    if tracecheck.clean(same)[0]:
        got = len(events_of(same))
    time.sleep(0.2)
check(got == 1000, "the new trace at %s: %d events of 1000" % (same, got))
c.clean(out)

# ---- kill -------------------------------------------------------------------


def flight(how, var="FDR_OUTPUT"):
    out = os.path.join(base, "flight-%s-%s" % (how, var))
    counts = os.path.join(base, "counts")
    with open(counts, "wb") as f:
        f.write(bytes(64 * 8))
    e = dict(env, FDR_MODE="overwrite", FDR_BUFFER_SIZE="16K", FDR_PACKET_SIZE="4096")
    e[var] = out
    p = start([how, counts, str(THREADS)], e)
    check(p.stdout.readline() == "started\n", "%s: did not start" % how)
    helpers = c.drain_helpers(p.pid)
    check(len(helpers) == 1, "%s: %d drain helpers in overwrite mode" % (how, len(helpers)))
    if how == "run":
        # Until every thread has filled its ring several times over.
        deadline = time.time() + 120
        while time.time() < deadline:
            with open(counts, "rb") as f:
                if min(struct.unpack("64Q", f.read())[:THREADS]) >= 20000:
                    break
            time.sleep(0.05)
        p.send_signal(signal.SIGKILL)
    p.communicate(timeout=120)
    wait_helpers(helpers, how)
    with open(counts, "rb") as f:
        published = struct.unpack("64Q", f.read())[:THREADS]
    if var == "FDR_CRASH_DIR":
        check(os.listdir(out) == ["crash-%d" % p.pid],
              "%s: FDR_CRASH_DIR holds %s, not crash-%d" % (how, os.listdir(out), p.pid))
    ok, err = tracecheck.clean(out)
    check(ok, "%s: babeltrace2: %s" % (how, err[-400:]))
    t = tracecheck.read(out)
    per = {}
    for ev in t.events:
        per.setdefault(ev.fields["thread"], []).append(ev.fields["n"])
    check(sorted(per) == list(range(THREADS)), "%s: threads read: %s" % (how, sorted(per)))
    for th, ns in sorted(per.items()):
        check(ns == list(range(ns[0], ns[0] + len(ns))),
              "%s: thread %d's events are not consecutive" % (how, th))
        check(published[th] - 1 <= ns[-1] <= published[th],
              "%s: thread %d's last event read is %d, it had committed %d" %
              (how, th, ns[-1], published[th]))
    overwritten = [th for th, ns in per.items() if ns[0] > 0]
    check(t.discarded_packets > 0 and overwritten,
          "%s: overwritten packets not reported (%d discarded packets; threads whose "
          "oldest events were overwritten: %s)" % (how, t.discarded_packets, overwritten))
    check(t.discarded == 0, "%s: %d events discarded" % (how, t.discarded))
    # The helper names the program in the metadata it writes (crash-<pid>
    # is all its own): the main thread's name, frozen before its clone.
    check(t.env.get("procname") == "disk-prog",
          "%s: the trace names the program %r" % (how, t.env.get("procname")))
    print("%s: %d events of the newest, %d packets overwritten" %
          (how, len(t.events), t.discarded_packets))


flight("run")
flight("_exit")
flight("run", "FDR_CRASH_DIR")
flight("_exit", "FDR_CRASH_DIR")

# ---- FDR_CRASH_DIR alone: an exit or an exec is no crash ----------------------
out = os.path.join(base, "crashdir-exit")
p = start(["fill", "100", "100"], dict(env, FDR_CRASH_DIR=out), stdin=subprocess.PIPE)
check(p.stdout.readline().startswith("flush1="), "fill: did not start")
helpers = c.drain_helpers(p.pid)
check(len(helpers) == 1, "FDR_CRASH_DIR alone: %d drain helpers" % len(helpers))
p.communicate("go\n", timeout=120)
check(p.returncode == 0, "fill: exit status %d" % p.returncode)
wait_helpers(helpers, "exit")
check(not os.path.exists(out) or not os.listdir(out),
      "FDR_CRASH_DIR alone, a normal exit: %s written" % (os.path.exists(out) and os.listdir(out)))

out = os.path.join(base, "crashdir-exec")
p = start(["pause"], dict(env, FDR_CRASH_DIR=out, DISK_OUTPUT="", DISK_CRASH_DIR=out,
                          DISK_SNAPSHOT=os.path.join(base, "crashdir-snap")),
          stdin=subprocess.PIPE)
pid = int(p.stdout.readline())
helpers = c.drain_helpers(pid)
check(len(helpers) == 1, "pause: %d drain helpers" % len(helpers))
p.stdin.write("go\n")
p.stdin.flush()
p.communicate(timeout=120)
check(p.returncode == -signal.SIGSEGV, "victim: exit status %d" % p.returncode)
wait_helpers(helpers, "exec")  # the image before the exec: ended, nothing written
deadline = time.time() + 120
got = -1
while time.time() < deadline and got != 1000:
    d = os.path.join(out, "crash-%d" % pid)
    if os.path.exists(os.path.join(d, "metadata")) and tracecheck.clean(d)[0]:
        got = len(events_of(d))
    time.sleep(0.2)
check(os.listdir(out) == ["crash-%d" % pid], "after the exec and the crash: %s" % os.listdir(out))
check(got == 1000, "crash-%d: %d events of the victim's 1000" % (pid, got))
c.finish()
