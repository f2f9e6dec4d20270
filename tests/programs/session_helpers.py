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
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402


def pid_alive(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def wait_for(cond, what, limit=None):
    """Polls cond() until true; the test's TIMEOUT bounds a runaway. After
    30 s it says on stderr what it still waits for (once), so that a test
    ended by its TIMEOUT names the wait that never ended. With limit (s),
    a wait that long is a failure: for what takes fdrd a few milliseconds
    (a minute is no bet on the machine's speed), so that a bug fails the
    test instead of hanging it."""
    t0 = time.monotonic()
    said = False
    while not cond():
        waited = time.monotonic() - t0
        if limit is not None and waited > limit:
            c.fail("gave up after %d s waiting for: %s" % (limit, what))
        if not said and waited > 30:
            print("still waiting for: %s" % what, file=sys.stderr, flush=True)
            said = True
        time.sleep(0.01)
    return True


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
        self.pids = set()
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
        self.note_daemon()
        for pid in self.pids:
            if pid_alive(pid):
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


def vmrss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


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


def bt_total(path):
    """Events + discarded events of the trace at path as bt2 reads it now,
    or None while it does not read: a reader racing its writer (relayd
    writes what it received after `fdr destroy` returned) waits for this
    to reach the count it knows."""
    import glob
    import bt2
    if not glob.glob(os.path.join(path, "stream_*")):
        return None
    n = 0
    try:
        for m in bt2.TraceCollectionMessageIterator(path):
            if type(m) is bt2._EventMessageConst:
                n += 1
            elif type(m) is bt2._DiscardedEventsMessageConst:
                n += m.count or 0
    except Exception:
        return None
    return n
