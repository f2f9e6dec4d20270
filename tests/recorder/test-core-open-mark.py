#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-open-mark.py STRESS FDR OUTDIR - a trace written with FDR_OUTPUT
says whether its process finished it, so that a kill nothing can count is
never silent.

A kill of a whole cgroup (`systemctl kill -s KILL`, a container stopped by
force) ends the program and its drain helper together: what the consumer
had not written is lost, and the trace alone could not show it. So the
trace directory holds a mark (.fdr-open, common/tracedir.h) from its
start until every event is written or counted: by the exit handler, or by
the drain helper after a kill. `fdr print` and `fdr stats` then say, in one
line, when the mark outlives its process; `fdr stats --json` gives each
process's "trace": "finished", "writing" or "cut".

  running   while the program runs: the mark holds its pid, "writing", no
            warning
  exit      the program exits: no mark, "finished", every event
  term      SIGTERM, the helper writes: no mark once it ended, "finished",
            every event, no warning
  cut       SIGKILL to the helper and the program at once (what a cgroup's
            kill does; through cgroup.kill where a cgroup v2 of our own can
            be made): the mark stays, "cut" already while the program is a
            zombie, and the warning line from `fdr print` and `fdr stats`
  nodrain   FDR_DRAIN=off, SIGKILL: "cut", the warning
  held      a mark whose directory's lock a process holds: "writing"; the
            lock free, its pid alive (a pid taken again): "cut"
  empty     a directory holding only a mark, its lock free (killed before
            the consumer wrote anything): one line says the loss; the lock
            held: only "no trace here"
  budget    FDR_OUTPUT_KEEP=0 keeps a trace whose mark's lock is held (a
            helper still writing it, a writer in another PID namespace),
            and removes it once the lock is free
  bad       marks that are no empty file (text, bytes, a directory): one line
            naming the directory, exit status 1, the trace read as if
            unmarked
"""
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check

stress, fdr, base = sys.argv[1], sys.argv[2], sys.argv[3]
env = c.fresh(base)
MARK = ".fdr-open"
WARN = re.compile(r"^fdr (print|stats): (\S+): warning: process (\d+) ended before "
                  r"finishing this trace \(killed with its drain helper, or without one\): "
                  r"the events it had not written yet are lost, and no count says how many$")


def pidfd_pid(pidfd):
    with open("/proc/self/fdinfo/%d" % pidfd) as f:
        return int(re.search(r"^Pid:\s*(-?\d+)", f.read(), re.M).group(1))


def wait_until(cond, seconds, what):
    """Waits for cond() (polls); a failure names what it waited for."""
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            return check(False, "waited %d s for %s" % (seconds, what))
        time.sleep(0.01)
    return True


def trace_dir(out):
    dirs = [d for d in os.listdir(out) if d.startswith("core-stress-")]
    check(len(dirs) == 1, "%s: trace directories %s, expected one" % (out, dirs))
    return os.path.join(out, dirs[0]) if dirs else out


def state(how, d):
    """(the "trace" of its one process in fdr stats --json, the warning lines
    of fdr stats and fdr print, the events fdr print printed plus those the
    trace counts as discarded: emitted, when nothing vanished)"""
    s = subprocess.run([fdr, "stats", "--json", d], capture_output=True, text=True)
    p = subprocess.run([fdr, "print", d], capture_output=True, text=True)
    check(s.returncode == 0 and p.returncode == 0,
          "%s: fdr stats / print exited with %d / %d: %s %s"
          % (how, s.returncode, p.returncode, s.stderr.strip(), p.stderr.strip()))
    try:
        procs = json.loads(s.stdout)["processes"]
    except (ValueError, KeyError):
        procs = []
    check(len(procs) == 1, "%s: fdr stats --json gave %d processes" % (how, len(procs)))
    warned = [ln for ln in (s.stderr + p.stderr).splitlines() if ln.strip()]
    for ln in warned:
        check(WARN.match(ln), "%s: unexpected line: %s" % (how, ln))
    discarded = procs[0].get("discarded", 0) if procs else 0
    return ((procs[0].get("trace") if procs else None), warned,
            len(p.stdout.splitlines()) + discarded)


def stats_trace(d):
    """The "trace" of fdr stats --json for the one process in d, or None."""
    r = subprocess.run([fdr, "stats", "--json", d], capture_output=True, text=True)
    try:
        return json.loads(r.stdout)["processes"][0].get("trace")
    except (ValueError, KeyError, IndexError):
        return None


def hold(how, e, threads=2, events=100):
    p = subprocess.Popen([stress, "hold", str(threads), str(events)], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ready = c.wait_fd(p.stdout.fileno(), 120) and p.stdout.readline() == b"ready\n"
    check(ready, "%s: the threads had not recorded their events within 120 s" % how)
    return p


def end(p):
    if p.poll() is None:
        p.kill()
    p.wait()
    err = p.stderr.read().decode(errors="replace")
    p.stdout.close()
    p.stderr.close()
    return err


def mark_of(d):
    try:
        with open(os.path.join(d, MARK)) as f:
            return f.read()
    except FileNotFoundError:
        return None


def running_then_term():
    out = os.path.join(base, "term")
    p = hold("running", dict(env, FDR_OUTPUT=out, FDR_FLUSH_MS="60000"))
    try:
        d = trace_dir(out)
        m = mark_of(d)
        check(m == "", "running: the mark is %r, not an empty file" % m)
        st, warned, _ = state("running", d)
        check(st == "writing" and not warned,
              "running: fdr stats says %r, warnings %s (expected 'writing', none)"
              % (st, warned))
        helpers = c.drain_helpers(p.pid)
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=120)
        for h in helpers:
            check(c.wait_fd(h, 120), "term: the drain helper did not end within 120 s")
            os.close(h)
        check(len(helpers) == 1, "term: %d drain helpers, not 1" % len(helpers))
    finally:
        err = end(p)
    check(err == "", "term: the program said: %s" % err.strip())
    check(mark_of(d) is None, "term: the mark outlived the helper's work: %r" % mark_of(d))
    st, warned, n = state("term", d)
    check(st == "finished" and not warned and n == 200,
          "term: fdr stats says %r, %d events printed or counted (expected "
          "'finished', 200), warnings %s" % (st, n, warned))
    print("running: marked, 'writing'; term: unmarked by the helper, %d events" % n)


def exited():
    out = os.path.join(base, "exit")
    r = subprocess.run([stress, "run", "2", "50", "1", os.path.join(base, "snap")],
                       env=dict(env, FDR_OUTPUT=out), capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 0, "exit: core-stress exited with %d: %s"
          % (r.returncode, r.stderr.strip()))
    d = trace_dir(out)
    # The helper may still be at its (empty) work; the exit removed the mark.
    check(mark_of(d) is None, "exit: the mark outlived the exit: %r" % mark_of(d))
    st, warned, n = state("exit", d)
    # (a flush of core-stress may pause a thread's first event: counted)
    check(st == "finished" and not warned and n == 100,
          "exit: fdr stats says %r, %d events printed or counted (expected "
          "'finished', 100), warnings %s" % (st, n, warned))
    print("exit: unmarked, %d events" % n)


def cgroup_v2():
    """A cgroup v2 directory of our own with cgroup.kill, or None."""
    for top in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
        if not os.path.exists(os.path.join(top, "cgroup.procs")):
            continue
        g = os.path.join(top, "fdr-test-open-mark-%d" % os.getpid())
        try:
            os.mkdir(g)
        except OSError:
            continue
        if os.path.exists(os.path.join(g, "cgroup.kill")):
            return g
        os.rmdir(g)
    return None


def cut(how):
    out = os.path.join(base, how)
    e = dict(env, FDR_OUTPUT=out, FDR_FLUSH_MS="60000")
    if how == "nodrain":
        e["FDR_DRAIN"] = "off"
    p = hold(how, e)
    group = None
    try:
        d = trace_dir(out)
        # The consumer thread writes the class file at its start: once it
        # has, the trace can be read (killed before that: see empty()).
        wait_until(lambda: os.path.exists(os.path.join(d, ".fdr-classes")), 120,
                   "%s: the class file of the trace" % how)
        helpers = c.drain_helpers(p.pid)
        check(len(helpers) == (0 if how == "nodrain" else 1),
              "%s: %d drain helpers" % (how, len(helpers)))
        pids = [pidfd_pid(h) for h in helpers]
        group = cgroup_v2() if how == "cut" else None
        if group:
            # Into the cgroup, then the kernel kills all of it at once.
            for pid in [p.pid] + pids:
                with open(os.path.join(group, "cgroup.procs"), "w") as f:
                    f.write(str(pid))
            with open(os.path.join(group, "cgroup.kill"), "w") as f:
                f.write("1")
        else:
            for pid in pids + [p.pid]:
                os.kill(pid, signal.SIGKILL)
        for h in helpers:
            check(c.wait_fd(h, 120), "%s: the drain helper did not end within 120 s" % how)
            os.close(h)
        # Not reaped yet: a zombie has ended too, once its last thread has
        # (the leader is a zombie first, the files still open a moment).
        wait_until(lambda: state_of(p.pid) in ("Z", None), 120,
                   "%s: the program to die" % how)
        wait_until(lambda: stats_trace(d) == "cut", 120,
                   "%s: fdr stats to say 'cut' of the unreaped program" % how)
        st, warned, n = state(how + " (zombie)", d)
        check(st == "cut" and len(warned) == 2,
              "%s: with the program a zombie, fdr stats says %r and %d warning lines "
              "(expected 'cut', 2)" % (how, st, len(warned)))
    finally:
        err = end(p)
        if group:
            wait_until(lambda: not open(os.path.join(group, "cgroup.procs")).read(), 60,
                       "the test's cgroup to empty")
            os.rmdir(group)
    check(p.returncode == -signal.SIGKILL, "%s: exit status %d" % (how, p.returncode))
    check(mark_of(d) is not None, "%s: the mark is gone" % how)
    st, warned, n = state(how, d)
    check(st == "cut" and len(warned) == 2 and
          all(WARN.match(w).group(3) == str(p.pid) for w in warned),
          "%s: fdr stats says %r, warnings %s (expected 'cut' and the pid %d)"
          % (how, st, warned, p.pid))
    check(err == "", "%s: the program said: %s" % (how, err.strip()))
    print("%s%s: the mark stayed, 'cut', the warning said (%d events were written)"
          % (how, " (cgroup.kill)" if group else "", n))


def state_of(pid):
    """The state letter of process pid in /proc, None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def held():
    """Whether a mark's writers live is the directory's lock (its process and
    helper hold it, shared), not the pid: a mark whose lock some process
    holds is "writing", whatever its pid; once free, "cut"."""
    src = trace_dir(os.path.join(base, "exit"))
    d = os.path.join(base, "held", os.path.basename(src))
    shutil.copytree(src, d)
    open(os.path.join(d, MARK), "w").close()
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    st, warned, _ = state("held", d)
    check(st == "writing" and not warned,
          "held: a mark whose lock is held says %r, %d warnings; expected 'writing'"
          % (st, len(warned)))
    os.close(fd)
    st, warned, _ = state("held", d)
    check(st == "cut" and len(warned) == 2,
          "held: a mark whose lock is free (its pid %d alive) says %r, %d warnings; "
          "expected 'cut'" % (os.getpid(), st, len(warned)))
    print("held: a held lock is 'writing', a free one 'cut' (the pid alive)")


def budget():
    """FDR_OUTPUT_KEEP removes the traces of ended processes, never one still
    being written: its open mark's lock held (by the drain helper of a
    process that ended, or by a process of another PID namespace, whose pid
    means nothing here). Once the lock is free, the trace goes as any."""
    out = os.path.join(base, "budget")
    src = trace_dir(os.path.join(base, "exit"))
    pid = 4194303  # above any pid_max: no process has it
    d = os.path.join(out, "core-stress-%d" % pid)
    shutil.copytree(src, d)
    open(os.path.join(d, MARK), "w").close()
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    e = dict(env, FDR_OUTPUT=out, FDR_OUTPUT_KEEP="0")
    argv = [stress, "run", "1", "10", "1", os.path.join(base, "snap")]
    r = subprocess.run(argv, env=e, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and os.path.isdir(d),
          "budget: FDR_OUTPUT_KEEP=0 removed a trace whose mark is held (exit %d: %s)"
          % (r.returncode, r.stderr.strip()))
    os.close(fd)
    r = subprocess.run(argv, env=e, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and not os.path.exists(d) and
          "removed the trace" in r.stderr and os.path.basename(d) in r.stderr,
          "budget: with the lock free, FDR_OUTPUT_KEEP=0 left %s (exit %d: %s)"
          % (d, r.returncode, r.stderr.strip()))
    print("budget: a held trace kept, then removed once free")


def empty():
    """Killed before anything of the trace was written (the consumer had
    not begun): the directory holds only the mark. Said in one line, not
    "no trace here" alone; while its lock is held, nothing is said."""
    d = os.path.join(base, "empty", "core-stress-4194303")
    os.makedirs(d)
    open(os.path.join(d, MARK), "w").close()
    for verb in ("print", "stats"):
        r = subprocess.run([fdr, verb, d], capture_output=True, text=True, timeout=60)
        lines = r.stderr.splitlines()
        want = ("fdr %s: %s: offset 0: process 4194303 ended before writing any of this "
                "trace (killed with its drain helper, or without one): the events it "
                "recorded are lost, and no count says how many" % (verb, d))
        check(r.returncode == 1 and len(lines) == 2 and lines[0] == want and
              "no trace here" in lines[1],
              "empty: fdr %s exited %d, said %s; expected 1 and %r, then no trace"
              % (verb, r.returncode, lines, want))
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    r = subprocess.run([fdr, "print", d], capture_output=True, text=True, timeout=60)
    os.close(fd)
    check(r.returncode == 1 and r.stderr.count("\n") == 1 and "no trace here" in r.stderr,
          "empty, its lock held: fdr print exited %d, said %r; expected no trace only"
          % (r.returncode, r.stderr))
    print("empty: the loss said; held: only 'no trace here'")


def bad_marks():
    """A mark is read like the rest of the trace, untrusted: one that is no
    empty file is one line (a problem of the input: exit status 1), and the
    trace is read as if it had none."""
    src = trace_dir(os.path.join(base, "exit"))
    events = len(subprocess.run([fdr, "print", src], capture_output=True,
                                text=True).stdout.splitlines())
    for i, content in enumerate([b"hello\n", b"12\n", b"\xff" * 40, None]):
        d = os.path.join(base, "bad", str(i), os.path.basename(src))
        shutil.copytree(src, d)
        if content is None:
            os.mkdir(os.path.join(d, MARK))  # a directory by that name
        else:
            with open(os.path.join(d, MARK), "wb") as f:
                f.write(content)
        for verb in ("print", "stats"):
            r = subprocess.run([fdr, verb, d], capture_output=True, text=True, timeout=60)
            want = ("fdr %s: %s: offset 0: its open mark (%s) is not an empty file: "
                    "ignored\n" % (verb, d, MARK))
            check(r.returncode == 1 and r.stderr == want,
                  "bad mark %r: fdr %s exited %d, stderr %r; expected 1 and %r"
                  % (content, verb, r.returncode, r.stderr, want))
            if verb == "print":
                check(len(r.stdout.splitlines()) == events,
                      "bad mark %r: fdr print printed %d events, not %d"
                      % (content, len(r.stdout.splitlines()), events))
    print("bad marks: one line each, the trace read")


running_then_term()
exited()
cut("cut")
cut("nodrain")
held()
empty()
budget()
bad_marks()
c.finish()
