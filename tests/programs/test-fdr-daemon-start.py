#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-fdr-daemon-start.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG - a
program started under fdrd takes fdrd's measure of its counter (issue 29):
it does not sleep at its start to measure it, and every clock of its trace
is that one.

libfdr measured its counter's frequency at registration, sleeping 1 ms when
less than 200 us had passed since it started, and got ~1e-4 at best; it
measured it twice there (the metadata's clock, the class file's line
clock), ~500 Hz apart in 2 GHz, so that `fdr print` and babeltrace2 timed
events apart. Now fdrd measures the counter over its life and keeps the
measure in <rundir>/counter (common/counter.h), and a program whose
counter fits it adopts it (libfdr's clock.c). So, where the counter is
measured (x86, riscv64: the file exists; elsewhere the frequency is exact
and there is no file, checked too):

  - under strace (nanosleep, clock_nanosleep and write; --seccomp-bpf, so
    that other calls run at full speed), the main thread of `session-prog
    quick 50 0` does not sleep before it writes "recorded" (its 50 events
    done; the 0 ms sleep it then makes is its own), but for the 100 us
    sleeps of a wait for a change of routes under way (writer.c, reserve);
  - the trace (bt2) has the 50 events, none discarded;
  - the metadata's clock frequency is the class file's line clock
    frequency, and it is the one the program says it took from fdrd's
    file (FDR_DEBUG), within 1e-4 of what the file said just before and
    just after the program ran (fdrd rewrites it as its measure
    lengthens, maybe more than once while a slow program runs);
  - in a run directory of the test's own, with no fdrd (the program
    writes its own trace, FDR_OUTPUT): a copy of fdrd's file is taken as
    it is; one 1% off (as a file from before a reboot, or of another
    counter, would be) is not, FDR_DEBUG says so, and the program measures
    the counter itself; nor one behind a symlink, nor bytes that are not
    its line (garbage, no newline, too long, 0 Hz, binary, empty): the
    program records all its events and measures.

No bound on any duration: only which calls were made, and what the files
say."""
import os
import re
import shutil
import signal
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
import emulator  # noqa: E402  (tests/lib, on the path now)
import tracecheck  # noqa: E402
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
N = 50

if not shutil.which("strace"):
    c.fail("no strace (scripts/deps.sh cross installs it)")
s.start()

counter = os.path.join(s.rundir, "counter")
measured = os.path.exists(counter)
# fdrd's machine (ELF e_machine, class): x86-64, i386 and riscv64 measure
# the counter (TSC, time CSR), the others read an exact frequency.
with open(s.fdrd_bin, "rb") as f:
    elf = f.read(20)
arch = int.from_bytes(elf[18:20], "little" if elf[5] == 1 else "big")
c.check(measured == (arch in (62, 3) or (arch == 243 and elf[4] == 2)),
        "fdrd's counter file %s (fdrd's ELF machine %d): exists %s" % (
            counter, arch, measured))


def file_freq():
    with open(counter) as f:
        return int(f.read().split()[4])


def clocks(proc, tag, same=True):
    """(the metadata's clock frequency, the class file's line clock's) of
    process directory proc; checked equal (readers would time events
    apart), unless not `same`."""
    with open(os.path.join(proc, "metadata")) as f:
        m = re.search(r"clock \{.*?\bfreq = (\d+);", f.read(), re.S)
    if not m:
        c.fail("%s: no clock frequency in the metadata of %s" % (tag, proc))
    with open(os.path.join(proc, ".fdr-classes"), "rb") as f:
        head = f.read(32)
    if len(head) != 32:
        c.fail("%s: the class file of %s is cut short" % (tag, proc))
    line_freq = struct.unpack("=QQ", head[16:32])[1]
    c.check(not same or int(m.group(1)) == line_freq,
            "%s: metadata clock %s Hz, line clock %d Hz: readers would time events "
            "apart" % (tag, m.group(1), line_freq))
    return int(m.group(1)), line_freq


def run(tag):
    """session-prog quick N 0 under strace into trace t; its clocks:
    (metadata freq, line freq). Checks its sleeps and events."""
    out = os.path.join(s.work, "out-" + tag)
    s.fdr("create", "t" + tag, "-o", out)
    s.fdr("enable", "t" + tag, "ses:*")
    s.fdr("start", "t" + tag)
    log = os.path.join(s.work, "strace-%s.log" % tag)
    argv = [prog, "quick", str(N), "0"]
    if emulator.foreign(prog):
        argv = emulator._EMULATOR + argv
    # LeakSanitizer cannot run under ptrace (ASan build): it would fail the exit.
    asan = os.environ.get("ASAN_OPTIONS", "")
    e = dict(s.env, ASAN_OPTIONS=(asan + ":" if asan else "") + "detect_leaks=0",
             FDR_DEBUG="1")
    r = subprocess.run(["strace", "-f", "-qq", "--seccomp-bpf", "-e",
                        "trace=nanosleep,clock_nanosleep,write", "-o", log] + argv,
                       env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300)
    c.check(r.returncode == 0 and r.stdout == "recorded\n",
            "%s: session-prog quick: exit %d, stdout %r, stderr %r" % (
                tag, r.returncode, r.stdout, r.stderr[-500:]))
    # The main thread's calls only (its pid: the first line's): the
    # sanitizers' own threads sleep (TSan's background thread, 100 ms at a
    # time), and a sleep elsewhere is no wait of the program's start.
    sleeps, main = [], None
    with open(log) as f:
        for line in f:
            pid = line.split(None, 1)[0]
            main = main or pid
            if pid != main:
                continue
            if re.search(r'write\(1, "recorded', line):
                break
            # The wait for a change of routes under way (writer.c,
            # reserve: 100 yields, then sleeps of 100 us until fdr's thread
            # has made it; fdrd's routes come as these events are recorded)
            # is no measure of the counter (clock.c sleeps 1 ms): a busy
            # TSan build took longer than 100 yields once (CI at -j3).
            if re.search(r"\b(clock_)?nanosleep\(", line) and \
                    "{tv_sec=0, tv_nsec=100000}" not in line:
                sleeps.append(line.strip())
    s.fdr("stop", "t" + tag)
    dirs = [d for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))]
    if len(dirs) != 1:
        c.fail("%s: one process directory in %s, not %s" % (tag, out, dirs))
    proc = os.path.join(out, dirs[0])
    t = tracecheck.read(out)
    ticks = [ev for ev in t.events if ev.name == "ses:tick"]
    c.check(len(ticks) == N and t.discarded == 0,
            "%s: %d ses:tick events, %d discarded; wanted %d and 0" % (
                tag, len(ticks), t.discarded, N))
    mf, line_freq = clocks(proc, tag)
    c.clean(proc)
    took = re.search(r"fdrd's measure of the counter taken: (\d+) Hz", r.stderr)
    return sleeps, line_freq, int(took.group(1)) if took else None


if measured:
    # fdrd rewrites the file as its measure lengthens (at 100 ms, 1 s,
    # 10 s... of its life), maybe more than once while a slow program runs
    # (TSan build: 5 ms, 100 ms and 1 s measures in one run): the program
    # says which it took (FDR_DEBUG), and that is a measure of fdrd's, one
    # that agrees with the file before and after it within 1e-4.
    before = file_freq()
    sleeps, freq, took = run("fits")
    after = file_freq()
    if c.check(not sleeps, "the program slept before its events were recorded: %s"
               % sleeps[:3]):
        print("no sleep in the main thread before the %d events (strace)" % N)
    if c.check(took is not None and freq == took and
               all(abs(took - f) < f * 1e-4 for f in (before, after)),
               "the trace's clock is %d Hz, the program says it took %s Hz; fdrd's "
               "file said %d, then %d" % (freq, took, before, after)):
        print("%d events, clock %d Hz in the metadata and the class file: fdrd's" % (
            N, freq))
    # fdrd's file in a run directory of the test's own (no fdrd there: the
    # program records alone, into a trace of its own, FDR_OUTPUT): taken
    # as it is; 1% off (a file from before a reboot, or of another
    # counter), not taken, said under FDR_DEBUG.
    fake = os.path.join(s.work, "fake-run")
    os.mkdir(fake, 0o700)
    with open(counter) as f:
        good = f.read().split()
    f_ok = int(good[4])
    line_ok = " ".join(good[:4] + [str(f_ok)]) + "\n"
    # (tag, the file's bytes, a symlink to them instead, taken)
    cases = [("copy", line_ok, False, True),
             ("off", " ".join(good[:4] + [str(f_ok * 101 // 100)]) + "\n", False, False),
             ("symlink", line_ok, True, False),
             ("garbage", "fdr-counter 1 x y z\n", False, False),
             ("no newline", line_ok[:-1], False, False),
             ("huge", line_ok[:-1] + " " + "9" * 400 + "\n", False, False),
             ("zero Hz", " ".join(good[:4] + ["0"]) + "\n", False, False),
             ("binary", "\0\xff" * 60, False, False),
             ("empty", "", False, False)]
    path = os.path.join(fake, "counter")
    for tag, text, link, taken in cases:
        for p_ in (path, path + ".real"):
            if os.path.lexists(p_):
                os.unlink(p_)
        with open(path + ".real" if link else path, "w", encoding="latin-1") as f:
            f.write(text)
        if link:
            os.symlink(path + ".real", path)
        own = os.path.join(s.work, "own-" + tag.replace(" ", "-"))
        e = dict(s.env, FDR_RUNDIR=fake, FDR_DEBUG="1", FDR_OUTPUT=own)
        r = subprocess.run([prog, "quick", str(N), "0"], env=e,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=300)
        c.check(r.returncode == 0 and r.stdout == "recorded\n",
                "%s: session-prog quick with FDR_OUTPUT: exit %d, stdout %r, stderr %r"
                % (tag, r.returncode, r.stdout, r.stderr[-500:]))
        said = "does not fit this process's" in r.stderr
        took = "fdrd's measure of the counter taken: %d Hz" % f_ok in r.stderr
        dirs = [d for d in os.listdir(own) if os.path.isdir(os.path.join(own, d))]
        if len(dirs) != 1:
            c.fail("%s: one process directory in %s, not %s" % (tag, own, dirs))
        n = len([ev for ev in tracecheck.read(own).events if ev.name == "ses:tick"])
        c.check(n == N, "%s: %d ses:tick events in the program's own trace, not %d" % (
            tag, n, N))
        # A program alone measures its own, the metadata's again at each
        # write and the line clock's once: those two may differ then.
        mf, lf = clocks(os.path.join(own, dirs[0]), tag, taken)
        if taken:
            c.check(mf == lf == f_ok and took and not said,
                    "fdrd's measure in a file of its form: clocks %d and %d Hz, file %d; "
                    "said taken: %s, not fitting: %s" % (mf, lf, f_ok, took, said))
        else:
            # Only a well-formed line is checked against the counter (and
            # said not to fit); the others are not read as one. (The
            # clocks are the program's own measure then, which may come
            # within a hertz of fdrd's: FDR_DEBUG says which it took.)
            c.check(not took and said == (tag == "off"),
                    "%s: clocks %d and %d Hz (fdrd's %d); said taken: %s, not fitting: %s"
                    % (tag, mf, lf, f_ok, took, said))
    print("a counter file of fdrd's form taken; one 1%% off, behind a symlink or not "
          "a line of its form (%d kinds) measured again instead" % (len(cases) - 2))
else:
    sleeps, freq, took = run("exact")
    c.check(took is None, "a counter file taken where there is none: %s Hz" % took)
    print("no counter file (ELF machine %d): the clock's %d Hz is the platform's" % (
        arch, freq))
c.finish()
