# SPDX-License-Identifier: MIT
"""test-fdr-daemon-ended.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
a process that ends without exit handlers before fdrd's route reaches it
loses nothing uncounted (issue 24): fdrd copies its early events from the
rings it handed over at registration (OWN_RING; docs/daemon.md, "Events
before the route").

Every program records at once into a trace started before it (`fdr
enable T ses:tick`), without waiting for a route, and ends at once
(session-prog die N HOW T):

  kill    KILL programs raise(SIGKILL) right after their N events
  exit    EXIT programs _exit(0) right after them
  segv    3 programs die of a real SIGSEGV right after them
  full    3 programs record 20,000 into 64 KiB own rings and raise(SIGKILL),
          fdrd stopped meanwhile: what the full rings lost is counted
  queue   2 programs whose 300 threads, alive at once, each make a ring
          and record N while fdrd is stopped, then raise(SIGKILL): past
          the 256 own rings fdrd keeps ("cap"), or once the socket's
          buffer is full (FDR_TEST_SNDBUF=8192, "eagain"), a thread's ring
          cannot reach fdrd; it records nothing meanwhile and counts its
          events in the ledger of a ring fdrd holds, per thread (127
          a ledger, then those of the next rings)
  late    2 programs record N, make 30 threads that record N, then, fdrd
          stopped meanwhile for longer than the registration's first 3 s,
          record 20,000 more into 64 KiB rings, N more per thread, and N
          on a 31st thread made then, and raise(SIGKILL): their own rings
          keep the first events and count the rest, the late ring is
          handed over too; one with FDR_TEST_SNDBUF=8192, so that fdrd's
          socket is full for those seconds (the rings it lacks counted in
          the ledger, the connection kept)
  resume  a program makes 100 rings while fdrd is stopped, its socket
          small (FDR_TEST_SNDBUF=8192); SIGCONT, and fdrd answers while
          the program still waits to send them; it exits: exact per
          thread, or a thread's count on another with none of its own
          (a thread that ends waiting for a ring of the route leaves its
          past to fdrd's copy)
  exec    5 programs fork a child that records N and execs /bin/true
  two     10 programs whose second thread records N into a ring it makes
          after the registration, then raise(SIGKILL), their fdr-daemon
          thread held asleep meanwhile (FDR_TEST_DAEMON_DELAY): that ring
          reached fdrd only if the thread that made it handed it over
          (daemon.c, own_now); and 10 more with no delay
  handing 10 programs record N, then are SIGKILLed in the middle of their
          hand-over of that past to the route (FDR_TEST_KILL_HANDING: 5
          after the copy's first event, 5 after the whole copy, before its
          mark): fdrd drops the route's ring the copy went into and copies
          from the own ring: each event once, none lost
  scribble 10 programs write over their own rings, then raise(SIGKILL):
          fdrd stays up, the trace reads, no more events than recorded,
          and a program with no events in the trace has them counted or
          a gap in its packets (babeltrace2's discarded packets)
  traces  5 programs record 20,000 while the routes of 3 traces started
          before them come, then are SIGKILLed: exact in each trace (the
          routes are applied together at fdrd's answer)
  random  RANDOM programs SIGKILLed from outside at a random moment
          (0-30 ms after they start): each wrote a byte after each event,
          so it recorded as many as the test read, or one more

Read with bt2, per process and thread: recorded + discarded == emitted
(the random ones: the bytes read, or one more), each n once, in order;
and nothing but ses:tick (each program records a ses:rare before every
10th of its first 100 ticks, which fdrd's copy must leave out).

Break it (libfdr's send_own_rings sending nothing, or fdrd's early_all
copying nothing) and kill, exit, segv and exec fail with the processes
missing from the trace, as before the change; own_now sending nothing
(the ring left to the fdr-daemon thread) and "two" held loses the second
thread's 50; early_cut doing nothing and "handing" has 51 and 100 events
(the copied ones twice); writer.c's unheld() saying no (the threads record
into rings fdrd does not have, as before the ledger) and "queue" loses 45
threads' 50 events per program (cap) and 281 threads' (eagain), uncounted;
daemon.c's set_route applying each route as it comes and "traces" loses 1
to 2,346 events of a program in tb and tc, uncounted (2 runs of 2)."""
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]

N, FULL = 50, 20000
DIE = 300  # session-prog die ... threads: DIE_THREADS
KILL = int(os.environ.get("FDR_TEST_KILL", "40"))
EXIT, RANDOM = KILL // 2, KILL
FORKS = os.environ.get("FDR_TEST_FORKS", "1") == "1"
env = {k: v for k, v in s.env.items() if k not in ("FDR_EVENTS", "FDR_TRACES")}
env["FDR_CRASH"] = "0"  # the segv ones: no crash dump, the default action


def trace(name):
    return h.early_trace(s, name)


def finish(name, out):
    return h.early_finish(s, name, out)


def run(how, k, at_once=8, env=env):
    """k programs "die N how i", at most at_once at a time: [(i, pid, stdout)]."""
    done, running = [], []
    for i in range(k):
        if len(running) >= at_once:
            done.append(running.pop(0))
        p = subprocess.Popen([prog, "die", str(N), how, str(i)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        s.pids.add(p.pid)
        running.append((i, p))
    done += running
    return [(i, p.pid, p.communicate(timeout=120)[0].decode()) for i, p in done]


def said(what, ev, lost, ran):
    """Each program (i, pid, stdout) recorded as many events as the bytes it
    wrote, or one more (killed at an event), each n once, in order, from 0,
    with its t = i: [(recorded + discarded, bytes)]."""
    out = []
    for i, pid, o in ran:
        k = len(o)
        es = [n for tid in ev.get(pid, {}) for t, n in ev[pid][tid]]
        got = len(es) + sum(lost[pid].values())
        c.check(all(t == i for tid in ev.get(pid, {}) for t, _ in ev[pid][tid]) and
                es == list(range(len(es))),
                "%s %d (pid %d): n once each, in order, from 0: %s" % (what, i, pid, es))
        c.check(got in (k, k + 1) and got <= N,
                "%s %d (pid %d): recorded %d + discarded %d == emitted (%d or %d)"
                % (what, i, pid, len(es), got - len(es), k, min(k + 1, N)))
        out.append((got, k))
    return out


s.start()
summary = []

for how, k in (("kill", KILL), ("exit", EXIT), ("segv", 3)):
    out = trace(how)
    ran = run(how, k)
    ev, lost, dirs = finish(how, out)
    full = 0
    for i, pid, o in ran:
        c.check(o == "." * N, "%s: program %d wrote %r" % (how, i, o))
        full += h.early_check(how, ev, lost, pid, {i: N}) == N
    summary.append("%s: %d of %d programs with all %d events" % (how, full, k, N))

# ---- two: a second thread's ring, made in the registration window ----------------
for delay in ("60000", ""):
    out = trace("two" + delay)
    ran = run("two", 10, env=dict(env, FDR_TEST_DAEMON_DELAY=delay))
    ev, lost, dirs = finish("two" + delay, out)
    full = 0
    for i, pid, o in ran:
        c.check(o == "." * N, "two: program %d wrote %r" % (i, o))
        full += h.early_check("two", ev, lost, pid, {i: N, i + 100000: N}) == 2 * N
    summary.append("two%s: %d of 10 programs with all %d events of both threads" %
                   (" (fdr-daemon held)" if delay else "", full, N))

# ---- handing: SIGKILL in the middle of the hand-over -------------------------------
# The fdr-daemon thread waits 1 s (FDR_TEST_DAEMON_DELAY) so that the route
# comes after the N events, then moves the idle main thread with its past;
# the kill comes inside that copy. A program whose route came first anyway
# (a loaded machine) is killed at its first event: recorded as many as it
# said, or one more.
out = trace("handing")
ran = []
for kill_at in ("1", "1000000"):
    ran += run("wait", 5, env=dict(env, FDR_TEST_DAEMON_DELAY="1000",
                                   FDR_TEST_KILL_HANDING=kill_at))
ev, lost, dirs = finish("handing", out)
full = sum(got == N for got, k in said("handing", ev, lost, ran))
summary.append("handing: %d of 10 programs killed in their hand-over with all %d events, "
               "once each" % (full, N))

# ---- full: more than the own ring holds, then SIGKILL ---------------------------
# fdrd stopped (SIGSTOP) while the programs register, record and die, so
# that none is routed first: their 64 KiB own rings (discard mode in the
# registration window) keep the first events and count the rest, and
# fdrd's copy must count them too (an empty packet after the last one).
out = trace("full")
e_full = dict(env, FDR_BUFFER_SIZE="64K", FDR_PACKET_SIZE="4K")
fdrd = s.daemon_pid()
os.kill(fdrd, signal.SIGSTOP)
try:
    ran = []
    for i in range(3):
        p = subprocess.Popen([prog, "die", str(FULL), "kill", str(i)], env=e_full,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        s.pids.add(p.pid)
        ran.append((i, p.pid, p.communicate(timeout=120)[0].decode()))
finally:
    os.kill(fdrd, signal.SIGCONT)
ev, lost, dirs = finish("full", out)
for i, pid, o in ran:
    c.check(o == "." * FULL, "full: program %d wrote %d bytes" % (i, len(o)))
    got = h.early_check("full", ev, lost, pid, {i: FULL})
    c.check(0 < got < FULL, "full: program %d: %d of %d events recorded, the rest counted "
            "(its ring full)" % (i, got, FULL))
summary.append("full: 3 programs with %d events in 64 KiB rings: %s recorded" %
               (FULL, [sum(len(v) for v in ev.get(pid, {}).values()) for _, pid, _ in ran]))

# ---- late: fdrd stopped for longer than the registration's first seconds --------
# Before, the registration window ended 3 s after the start without
# fdrd's answer: the rings went back to overwrite (main's first events
# written over, uncounted) and a ring made after it was never handed to
# fdrd (the 31st thread's, lost); and a socket full for a second was
# given up (the rings fdrd lacked, and their ledger, left behind). The
# window now lasts until fdrd answers or is gone. The 4 s wait only
# passes the old bounds: nothing here depends on it.
out = trace("late")
fdrd = s.daemon_pid()
os.kill(fdrd, signal.SIGSTOP)
try:
    late = []
    for i, extra in enumerate(({}, {"FDR_TEST_SNDBUF": "8192"})):
        p = subprocess.Popen([prog, "die", str(N), "late", str(i)],
                             env=dict(e_full, **extra), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        s.pids.add(p.pid)
        late.append((i, p))
    for i, p in late:
        o = p.stdout.read(N + 1)
        c.check(o == b"." * N + b"r", "late: program %d wrote %r" % (i, o))
    time.sleep(4)
    for i, p in late:
        p.stdin.write(b"go\n")
        p.stdin.flush()
    for i, p in late:
        p.wait(timeout=120)
finally:
    os.kill(fdrd, signal.SIGCONT)
ev, lost, dirs = finish("late", out)
for i, p in late:
    want = {i + 100000 * j: 2 * N for j in range(1, 31)}
    want.update({i: N + 20000, i + 100000 * 31: N})
    h.early_check("late %d" % i, ev, lost, p.pid, want)
summary.append("late: 2 programs, fdrd stopped 4 s, 20,000 + 31 x 100 events: %s recorded, "
               "the rest counted" %
               [sum(len(v) for v in ev.get(p.pid, {}).values()) for _, p in late])

# ---- resume: fdrd answers while the program still waits to send ---------------------
# fdrd stopped, a program with FDR_TEST_SNDBUF=8192 makes 100 rings (100
# threads record N and wait): its fdr-daemon thread waits for room with
# most of them unsent. SIGCONT: fdrd answers (routes, replies) while that
# thread still sends, which keeps those answers for later (daemon.c,
# stash) and routes the program, which then ends (exit). Per thread recorded
# + discarded == emitted, none twice.
out = trace("resume")
fdrd = s.daemon_pid()
os.kill(fdrd, signal.SIGSTOP)
try:
    p = subprocess.Popen([prog, "many", "100", str(N)],
                         env=dict(env, FDR_TEST_SNDBUF="8192", FDR_DEBUG="1"),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    s.pids.add(p.pid)
    o = p.stdout.readline()
    c.check(o == b"done\n", "resume: the program said %r" % o)
finally:
    os.kill(fdrd, signal.SIGCONT)
err = p.communicate(b"", timeout=120)[1].decode()
c.check(p.returncode == 0, "resume: exit status %s" % p.returncode)
# Routed at fdrd's answer, though it came while the thread waited to send
# (a stashed message lost: no route, the events copied from the own rings).
c.check("recording into an fdrd trace" in err, "resume: never routed: %s" % err[-300:])
ev, lost, dirs = finish("resume", out)
h.early_check("resume", ev, lost, p.pid, {t: N for t in range(100)})
# Per thread: each has its events or its count on its own tid, or, for a
# thread with neither, its N counted in another thread's packet (a thread
# that recorded while no ring of the route was free: docs/daemon.md, exact
# per process, not per thread; README's make test at load 15: 4 threads'
# counts on 4 others). A thread that ended waiting for a ring of the
# route, its events in its own ring, counted them in another thread's
# stream while fdrd copied them too (1 run in 5: 50 to 400 of 5,000
# counted twice): an excess no absent thread explains, which fails here.
c.check(not lost[p.pid][0], "resume: a count on no thread: %d" % lost[p.pid][0])
h.early_exact_threads("resume", ev, lost, p.pid, 100, N)
summary.append("resume: 100 threads x %d events, fdrd answering while the program "
               "waits to send: %d recorded, the rest counted" %
               (N, sum(len(v) for v in ev.get(p.pid, {}).values())))

# ---- queue: more rings than reach fdrd, then SIGKILL -------------------------------
# fdrd stopped (SIGSTOP) while the programs register, make 301 rings and
# die. Its socket takes ~280 small messages (the sender's buffer, 212,992
# bytes; a connected SOCK_SEQPACKET has no count limit) and it keeps 256
# own rings of a process: past those, a ring never reaches it ("cap").
# With FDR_TEST_SNDBUF=8192 the socket's buffer holds ~20 messages: the
# later rings' OWN_RING get EAGAIN, and the program is killed before its
# fdr-daemon thread could send them ("eagain"). Either way such a thread
# records nothing meanwhile and counts its events in the ledger of a ring
# fdrd holds (docs/daemon.md).
# The fdr-daemon thread is held asleep (FDR_TEST_DAEMON_DELAY), so that
# only the rings' makers send them ("late" has it awake: it waits for room
# then, keeping the connection and the window).
for how, extra in (("cap", {}), ("eagain", {"FDR_TEST_SNDBUF": "8192"})):
    extra["FDR_TEST_DAEMON_DELAY"] = "60000"
    out = trace("queue" + how)
    fdrd = s.daemon_pid()
    os.kill(fdrd, signal.SIGSTOP)
    try:
        ran = []
        for i in range(2):
            p = subprocess.Popen([prog, "die", str(N), "threads", str(i)],
                                 env=dict(env, **extra), stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
            s.pids.add(p.pid)
            ran.append((i, p.pid, p.communicate(timeout=120)[0].decode()))
    finally:
        os.kill(fdrd, signal.SIGCONT)
    ev, lost, dirs = finish("queue" + how, out)
    kept = []
    for i, pid, o in ran:
        c.check(o == "." * N, "queue %s: program %d wrote %r" % (how, i, o))
        h.early_check("queue " + how, ev, lost, pid,
                      {i + 100000 * j: N for j in range(DIE + 1)})
        # Per thread, past the 127 threads one ledger holds too: each of
        # the DIE + 1 has its events or its count on its own tid.
        tids = set(ev.get(pid, {})) | {tid for tid, n in lost[pid].items() if n}
        c.check(not lost[pid][0] and len(tids - {0}) == DIE + 1,
                 "queue %s: program %d: %d threads with their events or count, %d "
                 "events counted on no thread" % (how, i, len(tids - {0}), lost[pid][0]))
        kept.append(len(ev.get(pid, {})))
    summary.append("queue %s: 2 programs of %d threads x %d events, fdrd stopped: "
                   "threads with their events %s, the others' counted" %
                   (how, DIE + 1, N, kept))

if FORKS:
    out = trace("exec")
    ran = run("exec", 5)
    ev, lost, dirs = finish("exec", out)
    full = 0
    for i, pid, o in ran:
        c.check(o.startswith("child "), "exec: program %d wrote %r" % (i, o))
        child = int(o.split()[1])
        full += h.early_check("exec", ev, lost, child, {i: N}) == N
    summary.append("exec: %d of 5 forked children that exec'd with all %d events" %
                   (full, N))

# ---- scribble: rings written over, then SIGKILL ------------------------------------
# fdrd reads them as untrusted: it stays up, the trace reads (bt2), and it
# took no more events of a program than it recorded (their values may be
# scribbled too, and so may the counts of what the rings lost).
out = trace("scribble")
ran = run("scribble", 10)
ev, lost, dirs = finish("scribble", out)
c.check(s.json("list", "processes", "--json") is not None, "scribble: fdrd still answers")
taken = 0
gaps = h.discarded_packets(out)
for i, pid, o in ran:
    es = [n for tid in ev.get(pid, {}) for t, n in ev[pid][tid]]
    c.check(len(es) <= N, "scribble %d (pid %d): %d events, more than emitted: %s"
            % (i, pid, len(es), es))
    # A packet fdrd could not take is a gap babeltrace2 reports: a program
    # with nothing in the trace has its loss said. (One whose packet's
    # content size was scribbled smaller but still valid loses the rest
    # of that packet silently: nobody can tell.)
    c.check(es or sum(lost[pid].values()) or gaps[pid],
            "scribble %d (pid %d): none of its %d events, none counted, no packet "
            "reported discarded" % (i, pid, N))
    taken += len(es)
summary.append("scribble: 10 programs scribbled over their rings: the trace reads, "
               "%d of %d events taken" % (taken, 10 * N))

# ---- traces: three traces that want the past, SIGKILL ------------------------------
# fdrd sends the routes of the traces started before a program one message
# each, before its answer. A thread recording while they come (main records
# M ticks, its fdr-daemon thread held 10 ms so that they come meanwhile)
# must move to all of them at once: moved to the first alone, what it
# recorded there before moving to the next was neither in that trace (its
# past is read from the own ring) nor counted, killed or not.
M = 20000
outs = {}
for name, extra in (("ta", []), ("tb", ["--overwrite"]), ("tc", [])):
    outs[name] = os.path.join(s.work, name)
    s.fdr("create", name, "-o", outs[name], *extra)
    s.fdr("enable", name, "ses:tick")
    s.fdr("start", name)
ran = []
for i in range(5):
    p = subprocess.Popen([prog, "die", str(M), "wait", str(i)],
                         env=dict(env, FDR_TEST_DAEMON_DELAY="10"), stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    s.pids.add(p.pid)
    got = b""
    while len(got) < M:  # all recorded: then killed
        k = p.stdout.read(M - len(got))
        c.check(k, "traces: program %d ended after %d events" % (i, len(got)))
        got += k
    p.kill()
    p.wait(timeout=120)
    ran.append((i, p.pid))
h.early_gone(s)
for name, out in outs.items():
    s.fdr("destroy", name)
    ev, lost, dirs = h.early_read(out)
    for i, pid in ran:
        h.early_check("traces " + name, ev, lost, pid, {i: M})
summary.append("traces: 5 programs of %d events under 3 traces that want their past, "
               "killed: exact in each" % M)

# ---- random: SIGKILL from outside at any moment -----------------------------------
out = trace("random")
rng = random.Random(int(os.environ.get("FDR_TEST_SEED", str(os.getpid()))))
ran = []
for i in range(RANDOM):
    p = subprocess.Popen([prog, "die", str(N), "wait", str(i)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    s.pids.add(p.pid)
    time.sleep(rng.uniform(0, 0.03))
    p.kill()
    ran.append((i, p.pid, p.communicate(timeout=120)[0].decode()))
ev, lost, dirs = finish("random", out)
exact = sum(got == k for got, k in said("random", ev, lost, ran))
summary.append("random: %d programs killed after 0 to %d events each; recorded + "
               "discarded == emitted for all (%d of them the bytes read exactly)" %
               (RANDOM, max(len(o) for _, _, o in ran), exact))

for line in summary:
    print(line)
c.finish()
