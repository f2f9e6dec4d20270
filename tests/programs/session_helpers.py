# SPDX-License-Identifier: MIT
"""session_helpers.py - what the fdr-session-* drivers share (not a
test itself; loaded with load()): a run directory of the test's own under
the build tree, `fdr` runs with exact error checks, fdrd started and always
killed at the end (atexit), and waits for states, never for times.

    h = load()                         # this module
    s = h.Session(sys.argv)            # argv: fdr fdrd session-client workdir
    s.fdr("create", "t1")              # exit 0 expected; CompletedProcess
    s.fdr_err(["start", "nope"], "fdr start: no trace named ...", 1)
    s.json("list", "--json")           # json.loads of stdout
"""
import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402


def proto_version():
    """FDR_PROTO_VERSION, read from lib/proto/proto.h: the tests that speak
    fdrd's protocol by hand follow a version bump without an edit."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib",
                        "proto", "proto.h")
    with open(path) as f:
        m = re.search(r"^#define FDR_PROTO_VERSION\s+(\d+)", f.read(), re.M)
    if not m:
        c.fail("no FDR_PROTO_VERSION in " + path)
    return int(m.group(1))


def proc_start(pid):
    """When process pid started (clock ticks since boot, /proc/PID/stat), or
    None when there is none: with the pid, who it is."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


class Pids:
    """The processes a test started, each known by its pid and its start
    time: at the end only those still the same process are killed. pids
    wrap at 32768 here, and a kill of a pid noted long ago (a program that
    had ended, an fdrd whose pid file stayed) SIGKILLed another test's
    process that had taken it (CI's ASan stage: safety-fork "Subprocess
    killed" at 55 s, beside the session tests)."""

    def __init__(self):
        self.start = {}

    def add(self, pid):
        if pid and pid not in self.start:
            self.start[pid] = proc_start(pid)

    def __len__(self):
        return len(self.start)

    def __iter__(self):
        return iter(list(self.start))

    def same(self, pid):
        """pid is still the process noted (not one that took its pid)."""
        s = self.start.get(pid)
        return s is not None and proc_start(pid) == s


def pid_alive(pid):
    """True while any thread of process pid exists and is not a zombie. A
    killed process's first thread can be a zombie while the others still
    tear down the memory (TSan's shadow: long) and hold its files: its
    listening socket still took connections, which the end of the process
    then reset ("fdr list: fdrd closed the connection", fdr-daemon-death
    under TSan at load 9)."""
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except (FileNotFoundError, ProcessLookupError):
        return False
    for tid in tasks:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if state not in ("Z", "X"):
            return True
    return False


def wait_for(cond, what, limit=120):
    """Polls cond() until true. A wait longer than limit (s) is a failure
    that says what it still waited for: every wait of the suite is bounded
    by a minute or more (no bet on the machine's speed: what it waits for
    takes fdrd milliseconds), so that a bug fails the test with a message
    instead of hanging it until its TIMEOUT. what is a string, or a
    function returning one (called at the failure: the state reached, for
    example the count a trace holds against the one expected). After 30 s
    it says on stderr, once, that it still waits."""
    assert limit >= 60, "a wait bounded by less than a minute bets on speed"
    t0 = time.monotonic()
    said = False
    while not cond():
        waited = time.monotonic() - t0
        if waited > limit:
            c.fail("gave up after %d s waiting for: %s"
                   % (limit, what() if callable(what) else what))
        if not said and waited > 30:
            print("still waiting for: %s" % (what() if callable(what) else what),
                  file=sys.stderr, flush=True)
            said = True
        time.sleep(0.01)
    return True


def line(p, stream=None, limit=120):
    """The next line of p's stdout (or stream, one of p's pipes), bounded:
    a program silent for limit s is killed (its pipe then ends: '') and
    the test fails saying which program it waited for, instead of
    blocking until the test's TIMEOUT."""
    gave_up = []

    def expire():
        gave_up.append(True)
        p.kill()
    timer = threading.Timer(limit, expire)
    timer.start()
    try:
        got = (stream or p.stdout).readline()
    finally:
        timer.cancel()
    if gave_up:
        c.fail("gave up after %d s waiting for a line from pid %d (%s)"
               % (limit, p.pid, " ".join(map(str, p.args)) if isinstance(p.args, list)
                  else p.args))
    return got


def wait_route(p, routes=1):
    """Reads p's stderr (FDR_DEBUG=1) until fdrd routed it into `routes`
    traces ("recording into an fdrd trace", once per route); a program
    that ends or stays silent 120 s first fails the test, saying so."""
    while routes:
        got = line(p, p.stderr)
        if got == "":
            c.fail("pid %d: no route from fdrd (its stderr ended)" % p.pid)
        routes -= "recording into an fdrd trace" in got


def kill_leftovers(work):
    """An earlier run of this test killed by its TIMEOUT could not stop the
    fdrd it had started (-d: no longer its child): kill every fdrd whose
    pid file is under work."""
    for root, dirs, files in os.walk(work):
        if "fdrd.pid" not in files:
            continue
        try:
            with open(os.path.join(root, "fdrd.pid")) as f:
                pid = int(f.read().strip() or 0)
            if pid > 0 and pid_alive(pid) and \
                    os.path.basename(os.readlink("/proc/%d/exe" % pid)) == "fdrd":
                os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            pass


class Session:
    def __init__(self, argv):
        self.fdr_bin, self.fdrd_bin, self.client_bin, self.work = argv[1:5]
        kill_leftovers(self.work)
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.rundir = os.path.join(self.work, "run")
        self.home = os.path.join(self.work, "home")
        os.makedirs(self.home)
        self.sock = os.path.join(self.rundir, "fdrd.sock")
        self.pidfile = os.path.join(self.rundir, "fdrd.pid")
        self.log = os.path.join(self.rundir, "fdrd.log")
        env = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
        env.update(FDR_RUNDIR=self.rundir, FDR_FDRD=self.fdrd_bin, HOME=self.home,
                   LC_ALL="C")
        env.pop("XDG_RUNTIME_DIR", None)
        self.env = env
        self.pids = Pids()
        atexit.register(self.kill_all)
        # a TIMEOUT that sends SIGTERM first still runs the atexit handler
        signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(1))

    # -- fdrd ----------------------------------------------------------------
    def daemon_pid(self):
        try:
            with open(self.pidfile) as f:
                return int(f.read().strip() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def start(self):
        """fdrd -d; returns its pid (it listens once this returns)."""
        p = subprocess.run([self.fdrd_bin, "-d"], env=self.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        c.check(p.returncode == 0, "fdrd -d exited %d: %s" % (p.returncode, p.stderr))
        pid = self.daemon_pid()
        c.check(pid > 0, "fdrd -d wrote no pid file")
        self.pids.add(pid)
        return pid

    def note_daemon(self):
        pid = self.daemon_pid()
        if pid:
            self.pids.add(pid)
        return pid

    def stop(self):
        """SIGTERM to the running fdrd, then wait until it is gone."""
        pid = self.daemon_pid()
        if pid:
            os.kill(pid, signal.SIGTERM)
            wait_for(lambda: not pid_alive(pid), "fdrd exits")
        return pid

    def kill_all(self):
        # the pid file's fdrd only if it is still this build's fdrd: the
        # file outlives the daemon, and its pid may be another's now
        pid = self.daemon_pid()
        try:
            if pid and os.readlink("/proc/%d/exe" % pid) == os.path.realpath(self.fdrd_bin):
                self.pids.add(pid)
        except OSError:
            pass
        for pid in self.pids:
            if self.pids.same(pid) and pid_alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def log_text(self):
        try:
            with open(self.log) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def wait_log(self, text):
        wait_for(lambda: text in self.log_text(), "log line " + text)

    def routed(self, argv):
        """Starts an instrumented program (pipes on stdin, stdout, stderr;
        FDR_DEBUG=1) and returns it once fdrd routed it into a started
        trace (its debug line): from then on its events are the trace's."""
        p = subprocess.Popen(argv, env=dict(self.env, FDR_DEBUG="1"), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.pids.add(p.pid)
        while True:
            line = p.stderr.readline()
            c.check(line != "", "pid %d: no route from fdrd" % p.pid)
            if line == "" or "recording into an fdrd trace" in line:
                return p

    # -- fdr -----------------------------------------------------------------
    def run(self, args, env=None, prefix=()):
        e = dict(self.env)
        e.update(env or {})
        p = subprocess.run(list(prefix) + [self.fdr_bin] + list(args), env=e,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=120)
        self.note_daemon()
        return p

    def fdr(self, *args, rc=0):
        p = self.run(args)
        c.check(p.returncode == rc, "fdr %s: exit %d, expected %d; stderr: %s"
                % (" ".join(args), p.returncode, rc, p.stderr.strip()))
        if rc == 0:
            c.check(p.stderr == "", "fdr %s: stderr %r" % (" ".join(args), p.stderr))
        return p

    def fdr_err(self, args, line, rc):
        """fdr ARGS fails with exactly one line on stderr and nothing on stdout."""
        p = self.run(args)
        c.check(p.returncode == rc, "fdr %s: exit %d, expected %d"
                % (" ".join(args), p.returncode, rc))
        c.check(p.stderr == line + "\n", "fdr %s:\n  stderr %r\n  wanted %r"
                % (" ".join(args), p.stderr, line + "\n"))
        c.check(p.stdout == "", "fdr %s: stdout %r" % (" ".join(args), p.stdout))
        return p

    def json(self, *args):
        p = self.fdr(*args)
        try:
            return json.loads(p.stdout)
        except ValueError as e:
            c.fail("fdr %s: not JSON (%s): %r" % (" ".join(args), e, p.stdout))

    def traces(self):
        return {t["name"]: t for t in self.json("list", "traces", "--json")["traces"]}

    def providers(self):
        return self.json("list", "providers", "--json")["providers"]


def perfetto_read(s, pf):
    """The Perfetto trace in file pf, parsed with the Python classes protoc
    makes (in the work directory) from programs/fdr/perfetto.proto."""
    proto = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "programs",
                         "fdr", "perfetto.proto")
    py = os.path.join(s.work, "py")
    os.makedirs(py, exist_ok=True)
    subprocess.run(["protoc", "-I", os.path.dirname(proto), "--python_out=" + py, proto],
                   check=True)
    if py not in sys.path:
        sys.path.insert(0, py)
    import perfetto_pb2
    tr = perfetto_pb2.Trace()
    with open(pf, "rb") as f:
        tr.ParseFromString(f.read())
    return tr


def vmrss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def scribble_trace(s, out):
    """fdrd started, trace S (4 KiB packets, 64 KiB rings, discard) taking
    ses:tick into out, started; returns the environment of a scribbler
    (session-prog scribble: its own events off, no crash handler)."""
    s.start()
    s.fdr("create", "S", "-o", out, "--packet-size", "4K", "--buffer-size", "64K")
    s.fdr("enable", "S", "ses:tick")
    s.fdr("start", "S")
    return dict(s.env, FDR_EVENTS="-ses:*", FDR_CRASH="0")


def per_thread(path):
    """A trace written by fdrd, read with bt2: ({(tid, event name): [field n
    of each event, in order]}, {tid: discarded events}). A ring may pass
    from a thread that exits to a new one; its discarded count is reported
    by the next packet of the thread that lost the events (its exit closes
    one), so a discarded-events message belongs to the thread of its
    stream's next packet."""
    import collections
    import bt2
    ns = collections.defaultdict(list)
    lost = collections.Counter()
    pending = collections.Counter()
    for m in bt2.TraceCollectionMessageIterator(path):
        if type(m) is bt2._PacketBeginningMessageConst:
            key = (int(m.packet.stream.trace.environment["vpid"]), m.packet.stream.id)
            lost[int(m.packet.context_field["tid"])] += pending.pop(key, 0)
        elif type(m) is bt2._EventMessageConst:
            tid = int(m.event.packet.context_field["tid"])
            ns[(tid, m.event.name)].append(int(m.event.payload_field["n"]))
        elif type(m) is bt2._DiscardedEventsMessageConst:
            key = (int(m.stream.trace.environment["vpid"]), m.stream.id)
            pending[key] += m.count or 0
    c.check(not pending, "%s: discarded events no packet reports" % path)
    return ns, lost


def resume_emitted(procs):
    """Ends session-prog "resume" programs (end of input) and returns what
    each thread says it emitted: {(pid, t, tid): events}; each must exit 0."""
    emitted = {}
    for p in procs:
        o, e = p.communicate(timeout=120)
        c.check(p.returncode == 0, "pid %d exit %d: %s" % (p.pid, p.returncode, e))
        for ln in o.splitlines():
            if ln.startswith("events "):
                _, t, n, tid = ln.split()
                emitted[(p.pid, int(t), int(tid))] = int(n)
    return emitted


def resume_exact(emitted, ns, lost):
    """Per thread of resume_emitted, against per_thread's (ns, lost): its
    ses:tick n strictly increasing (in order, none twice), below what it
    emitted, and recorded + discarded == emitted; nothing of a thread that
    did not emit. Returns the events discarded in all."""
    c.check(set(lost) <= {k[2] for k in emitted}, "discards of threads that did not emit")
    c.check({k[0] for k in ns} <= {k[2] for k in emitted},
            "events of threads that did not emit")
    total_lost = 0
    for (pid, t, tid), n in sorted(emitted.items()):
        v = ns.get((tid, "ses:tick"), [])
        what = "pid %d thread %d (tid %d)" % (pid, t, tid)
        c.check(all(a < b for a, b in zip(v, v[1:])), "%s: not in order, or an event twice"
                % what)
        c.check(not v or v[-1] < n, "%s: n %d >= emitted %d" % (what, v[-1] if v else 0, n))
        c.check(len(v) + lost[tid] == n, "%s: emitted %d, recorded %d + discarded %d"
                % (what, n, len(v), lost[tid]))
        total_lost += lost[tid]
    return total_lost


def whole_packets(trace):
    """A copy of trace (a process directory at relayd, little-endian)
    holding only the whole packets of its stream files, without relayd's
    index: relayd killed while it wrote a packet, or a sender killed while
    it sent one (relayd writes what it receives as it comes), leaves that
    packet cut, which no reader opens (babeltrace2: "Failed to index CTF
    stream file"). The copy lives beside the test's other output; the
    caller removes it."""
    import glob
    import shutil
    import struct
    copy = trace + ".whole"
    shutil.rmtree(copy, ignore_errors=True)
    os.mkdir(copy)
    shutil.copy(os.path.join(trace, "metadata"), copy)
    for f in glob.glob(os.path.join(trace, "stream_*")):
        with open(f, "rb") as k:
            data = k.read()
        off = 0
        while off + 100 <= len(data):
            magic, _, _, _, _, ps, _, _ = struct.unpack_from("<I16xQQQQQQQ", data, off)
            if magic != 0xC1FC1FC1 or ps < 800 or ps % 8 or off + ps // 8 > len(data):
                break
            off += ps // 8
        with open(os.path.join(copy, os.path.basename(f)), "wb") as k:
            k.write(data[:off])
    return copy


_bt_totals = {}  # path: (its files' sizes and times, the total read then)


def bt_total(path):
    """Events + discarded events of the trace at path as bt2 reads it now,
    or None while it does not read: a reader racing its writer (relayd
    writes what it received after `fdr destroy` returned) waits for this
    to reach the count it knows. Read again only when a file of the trace
    changed since the last read: a wait for millions of events read them
    all at every poll, which at load took longer than the test's bound
    (fdr-relay-full, 3.4 M events, ASan beside another suite). The files
    are looked at before the read: a change during it is seen next time."""
    import bt2
    try:
        files = tuple(sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns)
                             for e in os.scandir(path) if e.is_file()))
    except OSError:
        return None
    if not any(f[0].startswith("stream_") for f in files):
        return None
    if path in _bt_totals and _bt_totals[path][0] == files:
        return _bt_totals[path][1]
    n = 0
    try:
        for m in bt2.TraceCollectionMessageIterator(path):
            if type(m) is bt2._EventMessageConst:
                n += 1
            elif type(m) is bt2._DiscardedEventsMessageConst:
                n += m.count or 0
    except Exception:
        n = None
    _bt_totals[path] = (files, n)
    return n


def early_read(path):
    """(tests/programs/test-fdr-daemon-early*.py)
    {vpid: {tid: [recorded t values...]}}, {vpid: {tid: discarded}},
    {vpid: directory} over every process directory under path. A
    discarded-events message belongs to the thread of its stream's next
    packet (per_thread)."""
    import collections
    import bt2
    ev = collections.defaultdict(lambda: collections.defaultdict(list))
    lost = collections.defaultdict(collections.Counter)
    dirs = {}
    for d in sorted(os.listdir(path)) if os.path.isdir(path) else []:
        pending = collections.Counter()
        for m in bt2.TraceCollectionMessageIterator(os.path.join(path, d)):
            if type(m) is bt2._PacketBeginningMessageConst:
                pid = int(m.packet.stream.trace.environment["vpid"])
                tid = int(m.packet.context_field["tid"])
                lost[pid][tid] += pending.pop(m.packet.stream.id, 0)
            elif type(m) is bt2._EventMessageConst:
                pid = int(m.event.packet.stream.trace.environment["vpid"])
                dirs.setdefault(pid, d)
                c.check(m.event.name == "ses:tick", "%s: %s in a trace of ses:tick only"
                        % (d, m.event.name))
                ev[pid][int(m.event.packet.context_field["tid"])].append(
                    (int(m.event.payload_field["t"]), int(m.event.payload_field["n"])))
            elif type(m) is bt2._DiscardedEventsMessageConst:
                pending[m.stream.id] += m.count or 0
        c.check(not pending, "%s: discarded events no packet reports" % d)
    return ev, lost, dirs


def discarded_packets(path):
    """{vpid: discarded-packets messages} over every process directory
    under path, read with bt2 (gaps in a stream's packet numbers)."""
    import collections
    import bt2
    n = collections.Counter()
    for d in sorted(os.listdir(path)) if os.path.isdir(path) else []:
        for m in bt2.TraceCollectionMessageIterator(os.path.join(path, d)):
            if type(m) is bt2._DiscardedPacketsMessageConst:
                n[int(m.stream.trace.environment["vpid"])] += 1
    return n


def early_check(what, ev, lost, pid, want, t_any=False, moved=False):
    """Process pid's threads: want = {t: N emitted} (t_any: one thread of
    any t, N = want's one value). Each thread that has events records one
    t; recorded + discarded == emitted per thread (with `moved`, per
    process only: a count may be reported in another thread's packet),
    n in order and once each; discards counted on a thread with no events
    go to the process's total. Returns the events recorded."""
    got = {}
    for tid, es in ev.get(pid, {}).items():
        ts = {t for t, _ in es}
        c.check(len(ts) == 1, "%s pid %d tid %d: one t per thread, not %s" % (what, pid, tid, ts))
        t = ts.pop()
        ns = [n for _, n in es]
        c.check(ns == sorted(ns) and len(set(ns)) == len(ns),
                "%s pid %d t %d: n in order, once each" % (what, pid, t))
        got[t] = len(es) + lost[pid][tid]
    if t_any and len(got) == 1:
        want = {next(iter(got)): next(iter(want.values()))}
    orphan = sum(v for tid, v in lost[pid].items() if tid not in ev.get(pid, {}))
    missing = {t: sorted(set(range(want.get(t, 0))) -
                         {n for tid, es in ev.get(pid, {}).items() for tt, n in es
                          if tt == t})[:5] for t in want}
    c.check(sum(got.values()) + orphan == sum(want.values()) and
            (moved or all(got.get(t, 0) <= n for t, n in want.items())) and
            set(got) <= set(want),
            "%s pid %d: recorded + discarded per t %s (+%d) == emitted %s (first "
            "missing n per t: %s)" % (what, pid, got, orphan, want, missing))
    return sum(len(es) for es in ev.get(pid, {}).values())


def early_exact_threads(what, ev, lost, pid, nt, n):
    """(tests/programs/test-fdr-daemon-early.py, -ended.py, over early_read's
    output) Every one of pid's nt threads: its n events, or counted, on it (a
    thread whose every event was counted has none to say its t). Or, for
    a thread with neither events nor a count of its own, its n counted in
    another thread's packet: what a thread recorded while no ring of the
    route was free is counted in the next ring of it taken (docs/daemon.md:
    exact per process, not per thread). So no thread short, and what
    threads have beyond n is the n of those that have nothing."""
    per = {}
    for tid, es in ev.get(pid, {}).items():
        per[es[0][0]] = len(es) + lost[pid][tid]
    bare = sorted(v for tid, v in lost[pid].items() if v and tid not in ev.get(pid, {}))
    short = sorted((t, k) for t, k in per.items() if k < n) + [v for v in bare if v < n]
    absent = nt - len(per) - len(bare)
    beyond = sum(k - n for k in list(per.values()) + bare if k > n)
    c.check(not short and absent >= 0 and beyond == absent * n,
            "%s pid %d: %d threads with events, %d with a count only, %d with neither: "
            "short of %d %s; beyond %d: %d" % (what, pid, len(per), len(bare), absent, n,
                                                short[:8], n, beyond))


def sanitizer_hangs(stderr):
    """The pids of forked children whose safety net (session-prog.c,
    child_alarm) printed a stack inside the sanitizer runtime: after the
    signal's return (libc), the first frame outside libc an unnamed
    address of libasan or libtsan. GCC 12's runtimes take no locks around
    fork(): a child forked while a parent thread held one of the
    allocator's waits forever (seen at its exit, in LeakSanitizer's check:
    test-safety-fork.c has a 20-line reproduction). Any other stack is
    fdr's, and not in this set."""
    import re
    hung, pid, past, verdict = set(), None, False, None

    def close():
        if pid is not None and verdict:
            hung.add(pid)
    for line in stderr.splitlines():
        m = re.match(r"child (\d+) hung; its stack:$", line)
        if m:
            close()
            pid, past, verdict = int(m.group(1)), False, None
            continue
        if pid is None or verdict is not None or not re.search(r"\[0x[0-9a-f]+\]$", line):
            continue
        libc = "libc.so" in line
        past = past or libc
        if past and not libc:
            verdict = ("libasan" in line or "libtsan" in line) and "(+0x" in line
    close()
    return hung


def early_gone(s):
    """Until fdrd lists no process (every one it saw has gone)."""
    wait_for(lambda: not s.json("list", "processes", "--json")["processes"],
             "fdrd saw every process go", limit=300)


def early_trace(s, name):
    """A trace NAME of ses:tick in WORK/NAME, started: its directory."""
    out = os.path.join(s.work, name)
    s.fdr("create", name, "-o", out)
    s.fdr("enable", name, "ses:tick")
    s.fdr("start", name)
    return out


def early_finish(s, name, out):
    """Once every process has gone, the trace destroyed and read (early_read)."""
    early_gone(s)
    s.fdr("destroy", name)
    return early_read(out)
