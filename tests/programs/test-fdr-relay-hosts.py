# SPDX-License-Identifier: MIT
"""test-fdr-relay-hosts.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
two "hosts" stream to one lttng-relayd (issue 16).

Three network namespaces of the test's own (`ip netns`): a relay host
running a real /usr/bin/lttng-relayd, and hosts A and B, each joined to it
by a veth pair (10.77.1.0/24 and 10.77.2.0/24; every address lives inside
these namespaces), each running its own fdrd in a UTS namespace of its own
(hostnames fdrhosta, fdrhostb) and a program recording in paced bursts
(progs/session-prog.c "pace", which counts what each thread emitted).
Skipped (exit 77, with the reason) where the namespaces cannot be made.

  - each host streams a live trace T to relayd; babeltrace2's lttng-live
    source lists both hosts' sessions, and follows each host's T, printing
    its events while its program still runs;
  - host A's fdrd is SIGKILLed mid-trace: host B's stream goes on (more
    packets reach relayd) and, read with bt2 after its destroy, holds per
    thread received + discarded == emitted exactly; what host A sent is
    readable (per thread some events, n strictly increasing, no more than
    its thread emitted)."""
import atexit
import glob
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
RELAYD = "/usr/bin/lttng-relayd"
BT = "/usr/bin/babeltrace2"
tag = "fdr%d" % (os.getpid() % 100000)
NS = {"relay": tag + "r", "a": tag + "a", "b": tag + "b"}
HOSTS = {"a": "fdrhosta", "b": "fdrhostb"}
NET = {"a": "10.77.1", "b": "10.77.2"}


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


if not os.access(RELAYD, os.X_OK):
    skip("no %s (Debian's lttng-relayd)" % RELAYD)


def ip(*args):
    return subprocess.run(["ip"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=60)


def cleanup():
    for n in NS.values():
        p = ip("netns", "pids", n)
        for pid in p.stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        ip("netns", "del", n)


def setup():
    if os.geteuid() != 0:
        skip("network namespaces need root here")
    for n in NS.values():
        p = ip("netns", "add", n)
        if p.returncode != 0:
            skip("cannot make a network namespace: " + p.stderr.strip())
    atexit.register(cleanup)
    run = lambda *a: c.check(ip(*a).returncode == 0, "ip " + " ".join(a))  # noqa: E731
    for k in ("a", "b"):
        mine, theirs = tag + k + "0", tag + k + "1"
        run("link", "add", mine, "type", "veth", "peer", "name", theirs)
        run("link", "set", mine, "netns", NS[k])
        run("link", "set", theirs, "netns", NS["relay"])
        run("-n", NS[k], "addr", "add", NET[k] + ".2/24", "dev", mine)
        run("-n", NS["relay"], "addr", "add", NET[k] + ".1/24", "dev", theirs)
        run("-n", NS[k], "link", "set", mine, "up")
        run("-n", NS[k], "link", "set", "lo", "up")
        run("-n", NS["relay"], "link", "set", theirs, "up")
    run("-n", NS["relay"], "link", "set", "lo", "up")


def in_ns(k, argv, hostname=None):
    pre = ["ip", "netns", "exec", NS[k]]
    if hostname:
        pre += ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', hostname]
    return pre + list(argv)


class Host:
    def __init__(self, k):
        self.k = k
        self.rundir = os.path.join(s.work, "run-" + k)
        self.env = dict(s.env, FDR_RUNDIR=self.rundir)
        self.local = os.path.join(s.work, "local-" + k)

    def start(self):
        p = subprocess.run(in_ns(self.k, [s.fdrd_bin, "-d"], HOSTS[self.k]), env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=120)
        c.check(p.returncode == 0, "host %s: fdrd -d: %s" % (self.k, p.stderr))
        with open(os.path.join(self.rundir, "fdrd.pid")) as f:
            self.pid = int(f.read())
        s.pids.add(self.pid)

    def fdr(self, *args):
        p = subprocess.run([s.fdr_bin] + list(args), env=self.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        c.check(p.returncode == 0, "host %s: fdr %s: %s" % (self.k, " ".join(args),
                                                           p.stderr.strip()))
        return p.stdout

    def relay_status(self):
        import json
        st = json.loads(self.fdr("status", "--json"))["relayd"]
        return st[0]["relayd"] if st else {}

    def pace(self):
        e = dict(self.env, FDR_DEBUG="1")
        p = subprocess.Popen(in_ns(self.k, [prog, "pace", "2"]), env=e,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        s.pids.add(p.pid)
        h.wait_route(p)
        threading.Thread(target=lambda: p.stderr.read(), daemon=True).start()
        c.check(h.line(p) == "ready\n", "pace: not ready")
        self.prog = p
        self.prog_pid = p.pid  # `ip netns exec` execs the program itself
        return p

    def end(self):
        self.prog.stdin.close()
        out = self.prog.stdout.read()
        c.check(self.prog.wait(timeout=120) == 0, "host %s: pace exits 0" % self.k)
        return sorted(int(w.split()[2]) for w in out.splitlines() if w.startswith("events"))


def live_events(host, port=5344):
    """lttng-live on host's T prints events (inside the relay namespace)."""
    err = os.path.join(s.work, "lttng-live-%s.err" % host)
    v = subprocess.Popen(in_ns("relay", [BT, "--input-format=lttng-live",
                                         "net://127.0.0.1:%d/host/%s/T" % (port, host)]),
                         stdout=subprocess.PIPE, stderr=open(err, "w"), text=True)
    s.pids.add(v.pid)
    got = 0
    while got < 10:
        line = h.line(v)
        c.check(line != "", "lttng-live of %s ended early (%s)" % (host, err))
        if line == "":
            break
        got += "ses:tick" in line and host in line
    v.kill()
    v.wait()
    return got


setup()
out = os.path.join(s.work, "relay-out")
relayd = subprocess.Popen(in_ns("relay", [RELAYD, "-C", "tcp://0.0.0.0:5342", "-D",
                                          "tcp://0.0.0.0:5343", "-L", "tcp://127.0.0.1:5344",
                                          "-o", out]),
                          env=dict(os.environ, LTTNG_HOME=s.work),
                          stdout=subprocess.DEVNULL,
                          stderr=open(os.path.join(s.work, "relayd.log"), "w"))
s.pids.add(relayd.pid)


def relayd_up():
    c.check(relayd.poll() is None, "relayd runs")
    if relayd.poll() is not None:
        c.finish()
    q = subprocess.run(in_ns("relay", [sys.executable, "-c",
                                       "import socket; socket.create_connection("
                                       "('127.0.0.1', 5344), timeout=5)"]),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return q.returncode == 0


h.wait_for(relayd_up, "relayd listens")
hosts = {k: Host(k) for k in ("a", "b")}
for k, x in hosts.items():
    x.start()
    x.fdr("create", "T", "-o", x.local, "--relayd", NET[k] + ".1", "--live")
    x.fdr("enable", "T", "ses:tick")
    x.fdr("start", "T")
    x.pace()
for x in hosts.values():
    h.wait_for(lambda: glob.glob(os.path.join(x.local, "*", "stream_*")), "stream files")
    sent = x.relay_status().get("packets_sent", 0)
    h.wait_for(lambda: x.relay_status().get("packets_sent", 0) >= sent + 2,
               "host %s: packets reach relayd" % x.k)

q = subprocess.run(in_ns("relay", [BT, "query", "src.ctf.lttng-live", "sessions", "-p",
                                   'url="net://127.0.0.1:5344"']),
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
for host in HOSTS.values():
    c.check(host in q.stdout, "lttng-live lists %s's session: %s %s"
            % (host, q.stdout, q.stderr))
for host in HOSTS.values():
    c.check(live_events(host) == 10, "lttng-live prints %s's events while it runs" % host)

# Host A's fdrd dies; host B goes on. First, both of host a's threads have
# data at relayd (on a loaded machine one stream can lag the other).
a, b = hosts["a"], hosts["b"]


def relayd_streams(x):
    files = glob.glob(os.path.join(out, HOSTS[x.k], "T-*", "session-prog-%d" % x.prog_pid,
                                   "stream_*"))
    return [f for f in files if os.path.getsize(f) > 0]


h.wait_for(lambda: len(relayd_streams(a)) >= 2, "host a: both threads' streams at relayd")
os.kill(a.pid, signal.SIGKILL)
h.wait_for(lambda: not h.pid_alive(a.pid), "host a's fdrd is gone")
sent = b.relay_status()["packets_sent"]
h.wait_for(lambda: b.relay_status()["packets_sent"] >= sent + 4,
           "host b streams on after host a's fdrd died")
emitted_b = b.end()
b.fdr("destroy", "T")
emitted_a = a.end()


# relayd may still be writing what host b's fdrd sent before the destroy
b_dirs = lambda: glob.glob(os.path.join(out, HOSTS["b"], "T-*", "session-prog-%d" % b.prog_pid))
h.wait_for(lambda: len(b_dirs()) == 1 and h.bt_total(b_dirs()[0]) == sum(emitted_b),
           "relayd wrote all of host b's trace")

for x, emitted in ((a, emitted_a), (b, emitted_b)):
    dirs = glob.glob(os.path.join(out, HOSTS[x.k], "T-*", "session-prog-%d" % x.prog_pid))
    c.check(len(dirs) == 1, "host %s: relayd stored its trace: %s" % (x.k, dirs))
    if not dirs:
        continue
    # host a's fdrd was killed while it may have been sending a packet:
    # the whole ones are read
    whole = h.whole_packets(dirs[0]) if x is a else dirs[0]
    ns, lost = h.per_thread(whole)
    if x is a:
        shutil.rmtree(whole)
    per = {}
    for (tid, _), v in ns.items():
        per[tid] = len(v) + lost.get(tid, 0)
        c.check(all(p < q for p, q in zip(v, v[1:])),
                "host %s tid %d: n strictly increasing" % (x.k, tid))
    if x is b:
        c.check(sorted(per.values()) == emitted,
                "host b intact: per thread received + discarded %s == emitted %s"
                % (sorted(per.values()), emitted))
    else:
        c.check(len(per) == 2 and all(0 < n for n in per.values()) and
                max(per.values()) <= max(emitted),
                "host a: what it sent is readable: %s (emitted %s)" % (per, emitted))
b.fdr("create", "U", "--relayd", NET["b"] + ".1")  # alive when fdrd stops
os.kill(b.pid, signal.SIGTERM)
h.wait_for(lambda: not h.pid_alive(b.pid), "host b's fdrd stops")
log = open(os.path.join(b.rundir, "fdrd.log")).read()
c.check("Sanitizer" not in log and "runtime error" not in log,
        "host b's fdrd log is clean: " + log[-3000:])
c.finish()
