# SPDX-License-Identifier: MIT
"""test-fdr-daemon-early.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
what a program records before fdrd's route reaches it is in the trace, or
counted as discarded there: processes and threads that end, or go quiet,
first (issue 24).

Every program here records at once, without waiting for a route (no
FDR_EVENTS: its own flight recorder takes the events until the route
comes). The trace (`fdr enable T ses:tick`, started before the programs)
is read with bt2, per process and thread: recorded + discarded == emitted
(each thread records N events with one field t of its own).

  brood    a parent of two threads forks K children that record N each
           and exit: K + 1 processes, each child exactly its N (or the
           shortfall counted as discarded in its own streams); each child
           says when it has recorded ("rec PID"): every one that did is in
           the trace, and only one that hung in the sanitizer runtime
           before (GCC 12's, forked while a parent thread held its
           allocator's lock) may be missing
  short    SHORT programs (one event each, then exit): SHORT processes
           (FDR_TEST_SHORT, fewer in the sanitizer builds: the CMake says)
  idle     10 programs record 5 events, idle 1.2 s and exit: all arrive
  output   4 programs with FDR_OUTPUT (discard) record 20,000 events at
           once, more than their 64 KiB rings hold: per thread, fdrd's
           trace and each program's own give recorded + discarded ==
           emitted (the consumer must not free a slot whose events the
           route has not taken yet: recorder/buffer.h, held); and 2 more
           while fdrd is stopped until they have exited (their exit
           writes their own traces without fdrd's answer)
  flush    2 programs with FDR_OUTPUT record 10,000 events, call
           fdr_flush and record 10,000 more while fdrd is stopped: per
           thread, fdrd's trace and each program's own give recorded +
           discarded == emitted (the flush writes the held rings out but
           leaves their slots to the writer: recorder/consumer.c); one
           exits after fdrd is back, one while it is still stopped
  lanes    3 programs with FDR_OUTPUT (discard) of 100 threads x 2,000
           events, most of them waiting for their ring of the trace (fdrd
           sends 16 at a time) and then handed it by fdr's thread: per
           thread, in fdrd's trace and the program's own, recorded +
           discarded == emitted, each event once (before: 227k to 313k
           for 200k, events both handed over and counted)
  kept     fdrd stopped while 2 programs with FDR_OUTPUT (discard) of 8
           threads x 2,000 record; no ring of the trace ever comes
           (FDR_TEST_NO_RINGS=1): each thread leaves its own ring to fdrd,
           and the exit's packet carrying the ring's discards takes the
           slot of its first packet, whose events are counted for fdrd
           (before: 5 of 8 threads lost 221 events each, uncounted)
  paused   2 programs with FDR_OUTPUT of 8 threads x 20,000 events call
           fdr_flush over and over meanwhile; an event that comes while
           a flush pauses the writers is lost, and counted in fdrd's trace
           as in the program's own, per thread (before: in the own only)
  nested   flight-reentry (tests/recorder) with FDR_OUTPUT: a 10 kHz
           timer's handler records inside main's events; those lost are
           counted in fdrd's trace as in the program's own (before: in the
           own only)
  wanting  flight-reentry into two traces, the second's rings refused
           (FDR_TEST_NO_RINGS=3): main's slot of it waits for a ring
           all along; a handler's event lost inside main's is counted
           there too (before: in the first trace only)
  exiting  as kept, but the rings come: the threads are told to end while
           fdr's thread holds the writers to move them to their rings
           (FDR_TEST_MOVE_HOLD=1: 2 s); each waits for the move (before: a
           thread ended unmoved, and its first packet was lost)
  window   fdrd stopped, 2 threads record without pause into their full
           own rings, held at the opening of their next packet
           (FDR_TEST_REUSE_WAIT) when fdrd is let go: the window's end turns
           the rings to overwrite under them; per thread recorded +
           discarded == emitted (before: each thread's first packet, n 0-220,
           neither in the trace nor counted, 3 runs of 3)
  held     2 threads with FDR_OUTPUT record without pause while fdr's
           thread holds the writers 10 s to move the idle main thread
           (FDR_TEST_MOVE_HOLD=long): a writer waits ~3 s for a hold,
           then counts its event; per thread recorded + discarded ==
           emitted in the own trace, and in fdrd's none short and at most
           8 over (an event waited out before the move is counted by the
           hand-over too; before: not at all, counted in the own only)
  spawn    fork + exec and system(): the exec'd image and the command
           system() runs each arrive under their own process directory

brood and spawn are left out with FDR_TEST_FORKS=0 (the TSan build: a
registered program's forked child starts a thread, which TSan does not
support after a multi-threaded fork).
  kill     a program that recorded 5 events and then sleeps is SIGKILLed
           once its FDR_DEBUG line says its threads are on fdrd's route
           (its idle main thread moved by fdr): its 5 events arrive

Break it (fdr__writers_move a no-op, or fdr__daemon_settle returning at
once) and brood, short and idle fail with the processes that are missing."""
import collections
import os
import re
import signal
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]

K, N = 200, 1000
SHORT = int(os.environ.get("FDR_TEST_SHORT", "1000"))
FORKS = os.environ.get("FDR_TEST_FORKS", "1") == "1"
ONLY = os.environ.get("FDR_TEST_ONLY", "")  # phases, comma-separated: those only


def want(phase):
    return not ONLY or phase in ONLY.split(",")


env = {k: v for k, v in s.env.items() if k not in ("FDR_EVENTS", "FDR_TRACES")}


def gone():
    h.early_gone(s)


read, check_proc = h.early_read, h.early_check


def trace(name):
    return h.early_trace(s, name)


def finish(name, out):
    return h.early_finish(s, name, out)


s.start()
summary = []

# ---- brood: a two-thread parent forks K children of N events --------------------
def brood():
    out = trace("BR")
    p = subprocess.Popen([prog, "brood", str(K), str(N)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    o, e = p.communicate(timeout=600)
    # A child hung inside the sanitizer runtime (its stack says so) is not
    # fdr's; its events are still checked below. Any other failure is.
    failed = {int(m) for m in re.findall(r"^child (\d+): ", e, re.M)}
    runtime = h.sanitizer_hangs(e) & failed
    rec = {int(m) for m in re.findall(r"^rec (\d+)$", o, re.M)}
    c.check(re.sub(r"^rec \d+\n", "", o, flags=re.M) == "done %d\n" % len(failed) and
            failed == runtime,
            "brood: %d %r %r" % (p.returncode, o[-300:], "\n".join(
                l for l in e.splitlines() if "False leaks" not in l)[-3000:]))
    if runtime:
        print("brood: %d children hung inside the sanitizer runtime (%d of them after "
              "recording; stacks above)" % (len(runtime), len(runtime & rec)))
        print("\n".join(l for l in e.splitlines() if "False leaks" not in l)[-3000:])
    ev, lost, dirs = finish("BR", out)
    children = [pid for pid in set(ev) | set(lost) if pid != p.pid]
    full = sum(check_proc("brood", ev, lost, pid, {0: N}, t_any=True) == N for pid in children)
    # Every child that said it recorded is in the trace; the only ones
    # that may be missing hung in the sanitizer runtime before recording.
    c.check(rec <= set(children), "brood: children that recorded but are not in the "
            "trace: %s" % sorted(rec - set(children)))
    c.check(len(children) == K - len(runtime - rec),
            "brood: %d of %d children in the trace (%d hung in the sanitizer runtime "
            "before recording)" % (len(children), K, len(runtime - rec)))
    nums = [{t for es in ev.get(pid, {}).values() for t, _ in es} for pid in children]
    flat = sorted(t for ts in nums for t in ts)
    c.check(all(len(ts) == 1 for ts in nums) and len(set(flat)) == len(flat) and
            set(flat) <= set(range(1, K + 1)) and (runtime - rec or len(flat) == K),
            "brood: each child's number once: %s" % flat[:20])
    check_proc("brood parent", ev, lost, p.pid, {0: N, 100000: N})
    summary.append("brood: %d of %d children in the trace, %d with all %d events, "
                   "%d discarded" % (len(children), K, full, N,
                                     sum(sum(lost[pid].values()) for pid in children)))


if FORKS and want("brood"):
    brood()

# ---- short programs: one event each ---------------------------------------------
if want("short"):
    out = trace("SH")
    running, pids = [], []
    for i in range(SHORT):
        if len(running) >= 8:
            running.pop(0).wait()
        q = subprocess.Popen([prog, "quick", "1", "0", str(i)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        s.pids.add(q.pid)
        running.append(q)
        pids.append(q.pid)
    for r in running:
        r.wait()
    ev, lost, dirs = finish("SH", out)
    have = 0
    for i, pid in enumerate(pids):
        c.check(pid in ev or pid in lost, "short: program %d (pid %d) in the trace" % (i, pid))
        have += check_proc("short", ev, lost, pid, {i: 1}) == 1
    c.check(have == SHORT, "short: %d of %d programs with their event" % (have, SHORT))
    summary.append("short: %d of %d programs with their event" % (have, SHORT))


# ---- idle: 5 events, 1.2 s of nothing, exit ---------------------------------------
def quick(what, k, n, ms, penv):
    """k programs "quick n ms i" at once, each waited for."""
    qs = [subprocess.Popen([prog, "quick", str(n), str(ms), str(i)], env=penv,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
          for i in range(k)]
    for q in qs:
        s.pids.add(q.pid)
    for q in qs:
        o, e = q.communicate(timeout=120)
        c.check(q.returncode == 0 and o == "recorded\n",
                "%s: %d %r %r" % (what, q.returncode, o, e))
    return qs


if want("idle"):
    out = trace("ID")
    qs = quick("idle", 10, 5, 1200, env)
    ev, lost, dirs = finish("ID", out)
    idle = sum(check_proc("idle", ev, lost, q.pid, {i: 5}) == 5 for i, q in enumerate(qs))
    c.check(idle == 10, "idle: %d of 10 programs with their 5 events" % idle)
    summary.append("idle: %d of 10 programs with their 5 events" % idle)


# ---- output: programs that write a trace of their own too -------------------------
# FDR_OUTPUT in discard mode: the program's own consumer writes its packets
# to its own trace and frees their slots as it goes. Each records OUT_N
# events at once, more than its 64 KiB ring holds, before fdrd's route can
# come: what the ring no longer holds when the route comes must be in
# fdrd's trace or counted there, and the program's own trace keeps all.
if want("output"):
    OUT_N = 20000
    out = trace("OU")
    own = os.path.join(s.work, "own")
    qs = quick("output", 4, OUT_N, 0, dict(env, FDR_OUTPUT=own, FDR_MODE="discard",
                                            FDR_BUFFER_SIZE="64K", FDR_PACKET_SIZE="4096"))
    ev, lost, dirs = finish("OU", out)
    kept = sum(check_proc("output", ev, lost, q.pid, {i: OUT_N}) for i, q in enumerate(qs))
    oev, olost, odirs = read(own)
    for i, q in enumerate(qs):
        check_proc("output (own trace)", oev, olost, q.pid, {i: OUT_N})
    summary.append("output: %d of %d events in fdrd's trace, the rest counted" %
                   (kept, 4 * OUT_N))

    # The same with fdrd stopped until the programs have exited: their exit
    # waits 3 s for the registration's answer, then writes their own traces
    # out, freeing the slots of rings fdrd holds; the packet carrying the
    # discards then took the first packet's slot, and those events vanished
    # from fdrd's copy uncounted (n 0-220 of each program, stop 35's CI under
    # ASan at load: fdrd answered late). Now counted in the ledger.
    out = trace("OS")
    os.kill(s.daemon_pid(), signal.SIGSTOP)
    try:
        qs = quick("output, fdrd stopped", 2, OUT_N, 0,
                   dict(env, FDR_OUTPUT=own + "-stopped", FDR_MODE="discard",
                        FDR_BUFFER_SIZE="64K", FDR_PACKET_SIZE="4096"))
    finally:
        os.kill(s.daemon_pid(), signal.SIGCONT)
    ev, lost, dirs = finish("OS", out)
    kept = sum(check_proc("output, fdrd stopped", ev, lost, q.pid, {i: OUT_N})
               for i, q in enumerate(qs))
    oev, olost, odirs = read(own + "-stopped")
    for i, q in enumerate(qs):
        check_proc("output, fdrd stopped (own trace)", oev, olost, q.pid, {i: OUT_N})
    summary.append("output, fdrd stopped: %d of %d events in fdrd's trace, the rest counted" %
                   (kept, 2 * OUT_N))

    # The same with fdrd running but no ring of the trace ever coming
    # (FDR_TEST_NO_RINGS=1: fdrd out of rings): fdrd copies each program's
    # own ring when it ends. The packet carrying the discards at exit took
    # the first packet's slot, counted only in the thread's memory
    # (want_lost), which a main thread ending by exit() never reports: 221
    # to 14,586 events of each program neither in fdrd's trace nor
    # counted, every run. Now counted where fdrd reads it (writer.c,
    # copied_slots). The registration waits 200 ms (FDR_TEST_DAEMON_DELAY),
    # so that the rings are made in its window and fdrd holds them.
    out = trace("ON")
    qs = quick("output, no ring", 2, OUT_N, 0,
               dict(env, FDR_OUTPUT=own + "-noring", FDR_MODE="discard",
                    FDR_BUFFER_SIZE="64K", FDR_PACKET_SIZE="4096", FDR_TEST_NO_RINGS="1",
                    FDR_TEST_DAEMON_DELAY="200"))
    ev, lost, dirs = finish("ON", out)
    kept = sum(check_proc("output, no ring", ev, lost, q.pid, {i: OUT_N})
               for i, q in enumerate(qs))
    c.check(kept > 0, "output, no ring: fdrd copied the own rings")
    oev, olost, odirs = read(own + "-noring")
    for i, q in enumerate(qs):
        check_proc("output, no ring (own trace)", oev, olost, q.pid, {i: OUT_N})
    summary.append("output, no ring: %d of %d events in fdrd's trace (copied), the rest "
                   "counted" % (kept, 2 * OUT_N))


# ---- flush: fdr_flush while fdrd is stopped -------------------------------------
# fdrd stopped (SIGSTOP): the programs' rings stay held (the registration
# unanswered). Each records FL_N events, more than its 64 KiB ring holds,
# calls fdr_flush, and records FL_N more. The flush writes the held rings
# to the program's own trace, but must not free their slots: before, it
# did (after waiting 3 s for the registration), the events after it went
# into the freed slots, and the route that came later found only the last
# of them: of 20,000, about 17,600 neither in fdrd's trace nor counted.
# One program exits once fdrd is back (routed: its past handed over), the
# other while fdrd is still stopped (fdrd copies its own ring).
if want("flush"):
    FL_N = 10000
    out = trace("FL")
    own = os.path.join(s.work, "own-flush")
    fdrd = s.daemon_pid()
    os.kill(fdrd, signal.SIGSTOP)
    try:
        fl = [subprocess.Popen([prog, "flush", str(FL_N), str(i)],
                               env=dict(env, FDR_OUTPUT=own, FDR_MODE="discard",
                                        FDR_BUFFER_SIZE="64K", FDR_PACKET_SIZE="4096"),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for i in range(2)]
        for q in fl:
            s.pids.add(q.pid)
            c.check(q.stdout.readline() == "flushed\n", "flush: program %d flushed" % q.pid)
        o, e = fl[1].communicate("", timeout=120)
        c.check(fl[1].returncode == 0, "flush: %d %r" % (fl[1].returncode, e))
    finally:
        os.kill(fdrd, signal.SIGCONT)
    o, e = fl[0].communicate("", timeout=120)
    c.check(fl[0].returncode == 0, "flush: %d %r" % (fl[0].returncode, e))
    ev, lost, dirs = finish("FL", out)
    kept = [check_proc("flush", ev, lost, q.pid, {i: 2 * FL_N}) for i, q in enumerate(fl)]
    oev, olost, odirs = read(own)
    for i, q in enumerate(fl):
        check_proc("flush (own trace)", oev, olost, q.pid, {i: 2 * FL_N})
    summary.append("flush: 2 programs of %d events, fdr_flush while fdrd was stopped: %s in "
                   "fdrd's trace, the rest counted" % (2 * FL_N, kept))


# ---- lanes: FDR_OUTPUT, 100 threads waiting for their rings of the trace ----------
# With FDR_OUTPUT the program's own ring stays the fast path's, and the
# trace is a lane of each thread. fdrd sends rings 16 at a time: most of
# the 100 threads wait for theirs, recording into their own rings
# meanwhile, and are moved to it (their past with it) once it comes, by
# fdr's thread when they are idle, or at their end. Before: each such
# thread's events were both handed over from its own ring and counted as
# discarded (227k to 313k recorded + discarded for 200k emitted), and the
# counts of threads that took a used ring at their end were reported on
# another thread. The threads end as soon as they have recorded, many
# still waiting: per thread, recorded + discarded == emitted, each event
# once, in fdrd's trace and in the program's own.
LN_T, LN_N = 100, 2000


exact_threads = h.early_exact_threads


def many_output(what, rep, nt, n, stop_fdrd=False, before_end=None, how=None, second=False,
                **more):
    """`session-prog many nt n [how]` with FDR_OUTPUT (discard, and the variables
    of `more`) into a trace of its own, started before it (fdrd stopped
    until its threads have recorded, with stop_fdrd), that program ended
    (after before_end(process), if given; its stderr is then a pipe):
    per thread, recorded + discarded == emitted in fdrd's trace and in the
    program's own (exact_threads); with `second`, in a second fdrd trace
    as well, started after the first. Returns (pid, fdrd's trace's events
    and discards, the own trace's, the events recorded in fdrd's, the
    second's events and discards)."""
    name = "%s%d" % (what, rep)
    out = trace(name)
    out2 = trace(name + "b") if second else None
    own = os.path.join(s.work, "own-%s%d" % (what, rep))
    fdrd = s.daemon_pid()
    if stop_fdrd:
        os.kill(fdrd, signal.SIGSTOP)
    try:
        q = subprocess.Popen([prog, "many", str(nt), str(n)] + ([how] if how else []),
                             env=dict(env, FDR_OUTPUT=own, FDR_MODE="discard", **more),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             stderr=subprocess.PIPE if before_end else None)
        s.pids.add(q.pid)
        c.check(h.line(q) == "done\n", "%s: %d threads recorded" % (what, nt))
    finally:
        if stop_fdrd:
            os.kill(fdrd, signal.SIGCONT)
    if before_end:
        before_end(q)
    q.stdin.close()
    c.check(q.wait(timeout=120) == 0, "%s: exit %d" % (what, q.returncode))
    ev, lost, dirs = finish(name, out)
    kept = check_proc(what, ev, lost, q.pid, {t: n for t in range(nt)}, moved=True)
    exact_threads(what, ev, lost, q.pid, nt, n)
    ev2 = lost2 = None
    if second:
        s.fdr("destroy", name + "b")
        ev2, lost2, _ = read(out2)
        check_proc("%s (second trace)" % what, ev2, lost2, q.pid, {t: n for t in range(nt)},
                   moved=True)
        exact_threads("%s (second trace)" % what, ev2, lost2, q.pid, nt, n)
    oev, olost, odirs = read(own)
    check_proc("%s (own trace)" % what, oev, olost, q.pid, {t: n for t in range(nt)})
    exact_threads("%s (own trace)" % what, oev, olost, q.pid, nt, n)
    return q.pid, (ev, lost), (oev, olost), kept, (ev2, lost2)


if want("lanes"):
    lanes = []
    for rep in range(3):
        lanes.append(many_output("lanes", rep, LN_T, LN_N)[3])
    summary.append("lanes: 3 programs of %d threads x %d events with FDR_OUTPUT: %s in fdrd's "
                   "trace, the rest counted, per thread" % (LN_T, LN_N, lanes))


# ---- kept: no ring of the trace ever comes; fdrd copies the own rings ----------
# fdrd stopped while a program with FDR_OUTPUT (discard) starts 8 threads
# of 2,000 events: their own rings (2 packets each at first) stay held for
# the trace, which wants their past, and count what they cannot take. No
# ring of the trace reaches them (FDR_TEST_NO_RINGS=1: libfdr closes each
# fdrd sends), so at their end each leaves its ring to fdrd, which copies
# it when the process ends (writer.c, want_at_exit; collect.c, early_out).
# The exit's flush then writes each ring's discards into a packet of its
# own trace, in the slot of the ring's first packet: counted for fdrd
# (writer.c, early_gone). Before: the threads whose discards were carried
# so lost 221 events each from fdrd's trace, uncounted (5 of 8, 3 runs of
# 3).
if want("kept"):
    kept_in = []
    for rep in range(2):
        kept = many_output("kept", rep, 8, 2000, stop_fdrd=True, FDR_TEST_NO_RINGS="1")[3]
        c.check(kept > 0, "kept: fdrd copied events from the own rings")
        kept_in.append(kept)
    summary.append("kept: 2 programs of 8 threads x 2,000 events whose trace's rings never "
                   "came: %s copied by fdrd, the rest counted" % kept_in)

# ---- kept2: as "kept", with two traces, only the first's rings come ------------
# Both traces want the past (started before the program, fdrd stopped
# while its 8 threads record 2,000 events each into 2-packet own rings).
# FDR_TEST_NO_RINGS=3 takes the first trace's rings alone: once fdrd goes
# on, the idle threads hand their past over to the first, and at their
# end leave their own rings to fdrd for the second, which copies them
# when the process ends. The exit's packet that carries a ring's discards
# takes the slot of its first packet, handed over to the first trace and
# not to the second: counted for the second alone (writer.c, early_gone,
# an entry of the ledger marked with the first's slot). Before: counted
# for neither, 221 events short in the second trace on each of the 5
# threads whose ring had filled, every run.
if want("kept2"):
    kept_in = []
    for rep in range(2):
        pid, _, _, kept, (ev2, lost2) = many_output(
            "kepttwo", rep, 8, 2000, stop_fdrd=True, second=True, FDR_TEST_NO_RINGS="3")
        copied = sum(len(e) for e in ev2.get(pid, {}).values())
        counted = sum(lost2.get(pid, {}).values())
        c.check(kept > copied > 0 and counted > 0,
                "kept2: the first trace got rings (%d events), the second only fdrd's copy "
                "of the own rings (%d), with events counted (%d)" % (kept, copied, counted))
        kept_in.append((kept, copied))
    summary.append("kept2: 2 programs of 8 threads x 2,000 events into two traces, only the "
                   "first's rings came: (in the first, copied into the second) %s, the rest "
                   "counted, per thread" % kept_in)

# ---- paused: events lost to fdr_flush's pauses, counted in fdrd's trace too ----
# A program with FDR_OUTPUT (its own trace; fdrd's is then a copy the
# slow path makes, a lane) calls fdr_flush() over and over while 8 threads
# record 20,000 events each: each flush pauses the writers, and an event
# that comes meanwhile is lost. It was counted in the thread's own ring
# only, and lost to fdrd's trace uncounted (writer.c, count_paused). The
# same path counted so the event of a thread preempted while a move of
# the idle threads resumed the writers ("lanes", TSan, CI: 1 event).
if want("paused"):
    paused = []
    for rep in range(2):
        pid, _, own_trace, kept, _ = many_output("paused", rep, 8, 20000, how="flush")
        lost = sum(own_trace[1].get(pid, {}).values())
        c.check(lost > 0, "paused: no event lost to a flush's pause (nothing tested)")
        paused.append((kept, lost))
    summary.append("paused: 2 programs of 8 threads x 20,000 events, fdr_flush over and "
                   "over: (in fdrd's trace, lost to the pauses) %s, the rest counted in both "
                   "traces, per thread" % paused)

# ---- nested: a signal handler's events inside the thread's own -----------------
# tests/recorder/progs/flight-reentry.c (FDR_OUTPUT) records main:ev while
# a 10 kHz timer's handler records sig:ev: a handler's event that comes
# inside one of main's is lost, and counted in fdrd's trace (a copy, a
# lane) as in the program's own: events + discarded == emitted in both
# (in fdrd's, perhaps more: below). Before, the lane did not count it
# (writer.c, nested_lanes): 357 of 4,295 sig:ev neither in fdrd's trace
# nor counted. And a handler whose event moved main to the trace's route,
# between main's read of its site's state and its event, let that event
# go on the state from before, into the own trace only (ASan, 1 main:ev
# of 92,736, 1 run in ~8; then, with the next event sent to the slow path,
# 1 run in ~20 still, when a second handler's event raised `end` before
# main's went on: the fast path now reads the state inside the section,
# include/fdr/internal/fastpath.h).
# Under TSan, where handlers run at odd moments, 1 event in 1 run of ~10
# also went missing while the own ring grew (writer.c, grow) and while a
# change of routes had given the ring but not yet the state (reserve).
def names_read(path):
    """Events per name and discarded events in the traces under path (bt2)."""
    import collections
    import bt2
    n, lost = collections.Counter(), 0
    for d in sorted(os.listdir(path)) if os.path.isdir(path) else []:
        for m in bt2.TraceCollectionMessageIterator(os.path.join(path, d)):
            if type(m) is bt2._EventMessageConst:
                n[m.event.name] += 1
            elif type(m) is bt2._DiscardedEventsMessageConst:
                lost += m.count or 0
    return n, lost


if want("nested"):
    reentry = os.path.join(os.path.dirname(prog), "..", "recorder", "flight-reentry")
    out = os.path.join(s.work, "nested")
    s.fdr("create", "nested", "-o", out)
    s.fdr("enable", "nested", "main:ev")
    s.fdr("enable", "nested", "sig:ev")
    s.fdr("start", "nested")
    own = os.path.join(s.work, "own-nested")
    r = subprocess.run([reentry, "1"], env=dict(env, FDR_OUTPUT=own, FDR_MODE="discard",
                                                FDR_BUFFER_SIZE="16M"),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    c.check(r.returncode == 0, "nested: exit %d %s" % (r.returncode, r.stderr[-2000:]))
    main_n, sig_n = map(int, r.stdout.split()[1:3])
    gone()
    s.fdr("destroy", "nested")
    got = {}
    for what, path in (("own trace", own), ("fdrd's trace", out)):
        n, lost = names_read(path)
        got[what] = (n["main:ev"], n["sig:ev"], lost)
        # The own trace: exact. fdrd's: a handler's event that came while
        # the thread changed its rings is counted in each of them (of
        # every class, as backfill does), perhaps twice: never less, and
        # not more than the handler lost.
        over = sig_n - got["own trace"][1] if what == "fdrd's trace" else 0
        c.check(main_n + sig_n <= sum(got[what]) <= main_n + sig_n + over,
                "nested, %s: main:ev %d of %d, sig:ev %d of %d, %d discarded (more by "
                "at most %d)" % (what, n["main:ev"], main_n, n["sig:ev"], sig_n, lost, over))
    c.check(got["own trace"][1] < sig_n, "nested: no handler's event lost (nothing "
            "tested): %s" % got)
    summary.append("nested: main:ev %d, sig:ev %d from a timer's handler: (main, sig, "
                   "discarded) %s" % (main_n, sig_n, got))

# ---- wanting: a handler's events while a trace waits for its ring ---------------
# flight-reentry again, without FDR_OUTPUT and into two traces, of which
# only the first's rings are taken (FDR_TEST_NO_RINGS=3): main records
# into the first trace's ring (its primary), and its slot of the second
# waits for a ring all along, so each event is counted there instead
# (writer.c, want_count: at the end as discarded). A handler's event that
# came inside one of main's was counted in the primary only: the second
# trace lost it uncounted (writer.c, nested_lanes, which now keeps it for
# the thread's next slow path). Both traces: recorded + discarded ==
# emitted, the second perhaps more (as in "nested").
if want("wanting"):
    reentry = os.path.join(os.path.dirname(prog), "..", "recorder", "flight-reentry")
    outs = [os.path.join(s.work, "wanting-" + x) for x in "ab"]
    for name, out in zip(("wanting-a", "wanting-b"), outs):
        s.fdr("create", name, "-o", out)
        s.fdr("enable", name, "main:ev")
        s.fdr("enable", name, "sig:ev")
        s.fdr("start", name)
    r = subprocess.run([reentry, "1"], env=dict(env, FDR_TEST_NO_RINGS="3"),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    c.check(r.returncode == 0, "wanting: exit %d %s" % (r.returncode, r.stderr[-2000:]))
    main_n, sig_n = map(int, r.stdout.split()[1:3])
    gone()
    s.fdr("destroy", "wanting-a")
    s.fdr("destroy", "wanting-b")
    (a, a_lost), (b, b_lost) = [names_read(out) for out in outs]
    emitted = main_n + sig_n
    # (the second trace may hold a few: what fdrd copies from the own ring)
    c.check(a["main:ev"] > 0 and sum(b.values()) * 2 < sum(a.values()),
            "wanting: the first trace's rings only (the hook): recorded %s and %s" %
            (dict(a), dict(b)))
    c.check(0 < sig_n - a["sig:ev"] <= a_lost, "wanting: handler's events lost inside "
            "main's (nothing tested if none): %d of %d, %d discarded" %
            (sig_n - a["sig:ev"], sig_n, a_lost))
    over = sig_n - a["sig:ev"]
    c.check(a["main:ev"] + a["sig:ev"] + a_lost == emitted,
            "wanting, the first trace: main:ev %d, sig:ev %d, %d discarded, for %d + %d "
            "emitted" % (a["main:ev"], a["sig:ev"], a_lost, main_n, sig_n))
    b_n = sum(b.values())
    c.check(emitted <= b_n + b_lost <= emitted + over,
            "wanting, the trace with no ring: %d recorded, %d discarded, for %d + %d "
            "emitted (more by at most %d)" % (b_n, b_lost, main_n, sig_n, over))
    summary.append("wanting: main:ev %d, sig:ev %d from a timer's handler, %d inside "
                   "main's: first trace %d recorded, %d discarded; the other %d and %d" %
                   (main_n, sig_n, over, a["main:ev"] + a["sig:ev"], a_lost, b_n, b_lost))

# ---- exiting: threads that end while fdr's thread moves them -------------------
# As "kept", but the trace's rings come: fdr's thread moves the idle
# threads to them, their past with them. It holds the writers first, then
# takes their lock; FDR_TEST_MOVE_HOLD=1 makes that hold last 2 s, and the
# threads are told to end meanwhile. Each must wait for the move, not end
# with its past unmoved in its own ring: that ring went back to the pool,
# the exit's packet carrying its discards took the slot of its first
# packet, and fdrd's copy of it at the process's end lacked it, uncounted
# (writer.c, hold_gone; before: 221 events of a thread, in "lanes" on a
# loaded machine, 1 run in ~15).
def told_to_end_in_hold(q):
    holding = threading.Event()

    def watch():
        for line in iter(q.stderr.readline, ""):
            if "FDR_TEST_MOVE_HOLD: holding" in line:
                holding.set()
    threading.Thread(target=watch, daemon=True).start()
    h.wait_for(holding.is_set, "fdr's thread to hold the writers to move the threads "
               "(its FDR_TEST_MOVE_HOLD line on stderr)")


if want("exiting"):
    moved = []
    for rep in range(2):
        moved.append(many_output("exiting", rep, 8, 2000, stop_fdrd=True,
                                 before_end=told_to_end_in_hold, FDR_TEST_MOVE_HOLD="1")[3])
    summary.append("exiting: 2 programs of 8 threads x 2,000 events that end while fdr's "
                   "thread moves them: %s in fdrd's trace, the rest counted" % moved)

def storm_end(q, nt, what):
    """Ends `session-prog storm nt tick`: {t: events it recorded}."""
    q.stdin.close()
    counts = {}
    for _ in range(nt):
        t, n = h.line(q).split()
        counts[int(t)] = int(n)
    c.check(q.wait(timeout=120) == 0, "%s: exit %d" % (what, q.returncode))
    return counts


# ---- window: the window's end under threads that record -----------------------
# fdrd stopped (SIGSTOP): 2 threads record ses:tick without pause (storm ...
# tick) into their own 64 KiB rings, held for the trace that wants their
# past; full, they count what they cannot take. When fdrd answers, the
# routes change and the registration window's end turns the rings to
# overwrite: a thread between its look at the routes and the opening of
# its next packet wrote over its ring's oldest packet, which its hand-over
# then missed, uncounted (n 0-4671 of one thread in fdr-bench's 8 programs
# through fdrd). FDR_TEST_REUSE_WAIT holds each thread whose ring is full
# at that point until the window ends: fdrd is let go once both wait.
if want("window"):
    out = trace("WI")
    fdrd = s.daemon_pid()
    os.kill(fdrd, signal.SIGSTOP)
    try:
        q = subprocess.Popen([prog, "storm", "2", "tick"],
                             env=dict(env, FDR_BUFFER_SIZE="64K", FDR_PACKET_SIZE="4096",
                                      FDR_TEST_REUSE_WAIT="1", FDR_DEBUG="1"),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        s.pids.add(q.pid)
        c.check(h.line(q) == "ready\n", "window: the threads run")
        waiting = 0
        while waiting < 2:
            got = h.line(q, q.stderr)
            if got == "":
                c.fail("window: stderr ended with %d of 2 threads waiting" % waiting)
            waiting += "FDR_TEST_REUSE_WAIT: waiting" in got
    finally:
        os.kill(fdrd, signal.SIGCONT)
    h.wait_route(q)
    counts = storm_end(q, 2, "window")
    ev, lost, dirs = finish("WI", out)
    kept = check_proc("window", ev, lost, q.pid, counts)
    summary.append("window: 2 threads, %d events: %d in fdrd's trace, the rest counted" %
                   (sum(counts.values()), kept))


# ---- held: a hold longer than a writer waits for ---------------------------------
# The main thread records once and goes quiet; 2 threads record without
# pause (storm 2 tick idle). fdr's thread moves main to the new routes
# (the trace's, or a second trace's started after) on its behalf, holding
# every writer first; FDR_TEST_MOVE_HOLD=long makes
# that hold last 10 s. A writer that meets it waits ~3 s, then counts its
# event as discarded and goes on. It was counted in the primary ring (the
# program's own trace) alone, and lost to fdrd's trace uncounted
# (writer.c, reserve: now kept for the lanes until the move is over).
if want("held"):
    out = trace("HE")
    own = os.path.join(s.work, "own-held")
    q = subprocess.Popen([prog, "storm", "2", "tick", "idle"],
                         env=dict(env, FDR_OUTPUT=own, FDR_MODE="discard",
                                  FDR_TEST_MOVE_HOLD="long"),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    s.pids.add(q.pid)
    c.check(h.line(q) == "ready\n", "held: the threads run")
    # A second trace, started now, changes the routes after main's event:
    # main is then behind, for fdr's thread to move, whether or not the
    # first trace's route came before main recorded (under TSan it did).
    s.fdr("create", "HE2", "-o", os.path.join(s.work, "HE2"))
    s.fdr("enable", "HE2", "ses:rare")
    s.fdr("start", "HE2")
    said = []
    for want_line in ("FDR_TEST_MOVE_HOLD: holding", "FDR_TEST_MOVE_HOLD: held"):
        got = h.line(q, q.stderr)
        said.append(got)
        c.check(want_line in got, "held: stderr %r, waited for %r" % (said, want_line))
    counts = storm_end(q, 2, "held")
    counts[2] = 1  # main's one event
    s.fdr("destroy", "HE2")
    ev, lost, dirs = finish("HE", out)
    # fdrd's trace: no thread short. A thread that waited out the hold
    # before the move gave it its lane has that event counted twice there:
    # in its own ring, whose count the hand-over of its past brings, and
    # in the lanes' count kept for after the move (writer.c: over, never
    # under; CI at load 15: one thread over by 1). At most one such event
    # per ~3 s wait of a 10 s hold: 4 per thread.
    got = collections.Counter()
    for tid, es in ev.get(q.pid, {}).items():
        got[es[0][0]] += len(es) + lost[q.pid][tid]
    orphan = sum(v for tid, v in lost[q.pid].items() if tid not in ev.get(q.pid, {}))
    short = {t: (got[t], n) for t, n in counts.items() if got[t] < n}
    over = sum(got.values()) + orphan - sum(counts.values())
    c.check(not short and 0 <= over <= 4 * 2 and set(got) <= set(counts),
            "held pid %d: per t recorded + discarded %s (+%d on no thread's events), emitted "
            "%s: short %s, over by %d (at most 8)" % (q.pid, dict(got), orphan, counts, short,
                                                      over))
    kept = sum(len(es) for es in ev.get(q.pid, {}).values())
    oev, olost, odirs = read(own)
    check_proc("held (own trace)", oev, olost, q.pid, counts)
    summary.append("held: 2 threads, %d events through a 10 s hold: %d in fdrd's trace, the "
                   "rest counted" % (sum(counts.values()), kept))


# ---- fork + exec, system() --------------------------------------------------------
def spawn():
    out = trace("SP")
    p = subprocess.Popen([prog, "spawn", "50"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    o, e = p.communicate(timeout=120)
    c.check(p.returncode == 0 and o.endswith("done 0 0\n"), "spawn: %d %r %r" % (p.returncode, o, e))
    ev, lost, dirs = finish("SP", out)
    check_proc("spawn parent", ev, lost, p.pid, {0: 50})
    others = {ev[pid][next(iter(ev[pid]))][0][0]: pid for pid in ev if pid != p.pid}
    c.check(sorted(others) == [2, 3], "spawn: the exec'd image (t 2) and system()'s (t 3): %s"
            % sorted(others))
    for t, pid in others.items():
        check_proc("spawn t %d" % t, ev, lost, pid, {t: 50})


if FORKS and want("spawn"):
    spawn()

# ---- SIGKILL once routed --------------------------------------------------------
if want("kill"):
    out = trace("KL")
    err = os.path.join(s.work, "kill.err")
    outf = os.path.join(s.work, "kill.out")
    with open(err, "w") as f, open(outf, "w") as fo:
        q = subprocess.Popen([prog, "quick", "5", "600000"], env=dict(env, FDR_DEBUG="1"),
                             stdout=fo, stderr=f)
    s.pids.add(q.pid)
    h.wait_for(lambda: "recorded" in open(outf).read() and
               "every thread on fdrd's routes" in open(err).read(),
               "the program's 5 events and its FDR_DEBUG line saying its threads are on "
               "the route")
    q.kill()
    q.wait()
    ev, lost, dirs = finish("KL", out)
    c.check(check_proc("kill", ev, lost, q.pid, {0: 5}) == 5, "kill: the 5 events arrived")


for line in summary:
    print(line)
c.finish()
