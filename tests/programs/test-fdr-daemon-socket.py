# SPDX-License-Identifier: MIT
"""test-fdr-daemon-socket.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
fdrd on a socket passed by a service manager (socket activation, the
LISTEN_FDS protocol of dist/systemd/fdrd.socket), without systemd.

The test does what systemd does: it makes the run directory (0700) and
binds and listens on RUNDIR/fdrd.sock (0600) itself, then starts fdrd -f
with that socket as fd 3, LISTEN_FDS=1 and LISTEN_PID = fdrd's pid.

  - refused, one line and exit 1, before serving: a socket bound to another
    path, a socket that is not listening SOCK_SEQPACKET, the right socket
    with mode 0666, LISTEN_FDS=2;
  - served: fdrd logs that the socket was passed and keeps the very socket
    (same inode, nothing rebound); `fdr create/enable/start` make a trace,
    a real instrumented program (session-prog go) records into it, and
    bt2 reads per thread n = 0..N-1, recorded + discarded == N;
  - SIGTERM: exit 0, the pid file removed but the socket left to its owner;
    a client that connects while no fdrd runs waits in the socket's queue
    and is answered by the next fdrd started on the same socket."""
import os
import signal
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
THREADS, N = 2, 20000

os.mkdir(s.rundir, 0o700)


def bound(path, kind=socket.SOCK_SEQPACKET, listen=True):
    """A socket bound to path (0600 from its first instant), as systemd's
    ListenSequentialPacket= with SocketMode=0600 makes it."""
    sk = socket.socket(socket.AF_UNIX, kind)
    old = os.umask(0o177)
    try:
        sk.bind(path)
    finally:
        os.umask(old)
    if listen:
        sk.listen(128)
    return sk


def fdrd(sk, fds="1"):
    """fdrd -f with sk as fd 3 and LISTEN_PID its own pid (sh execs it)."""
    n = sk.fileno()
    script = 'exec 3<&%d %d<&-; LISTEN_PID=$$ LISTEN_FDS=%s exec "$0" -f' % (n, n, fds)
    if n == 3:
        script = 'LISTEN_PID=$$ LISTEN_FDS=%s exec "$0" -f' % fds
    p = subprocess.Popen(["sh", "-c", script, s.fdrd_bin], pass_fds=(n,), env=s.env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    return p


def refused(sk, want, fds="1"):
    p = fdrd(sk, fds)
    try:
        err = p.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        p.kill()
        c.fail("fdrd with %s still runs after 60 s: it should refuse %r" % (sk, want))
    rc = p.returncode
    c.check(rc == 1 and err == "fdrd: %s\n" % want,
            "fdrd with %s: exit %d, stderr %r, wanted 1 and %r" % (sk, rc, err, want))


# ---- what fdrd refuses ------------------------------------------------------
other = os.path.join(s.work, "other.sock")
with bound(other) as sk:
    refused(sk, "the passed socket is bound to '%s', not %s: refused" % (other, s.sock))
with bound(os.path.join(s.work, "stream.sock"), socket.SOCK_STREAM) as sk:
    refused(sk, "the passed descriptor 3 is not a listening AF_UNIX SOCK_SEQPACKET "
            "socket: refused")
with bound(os.path.join(s.work, "idle.sock"), listen=False) as sk:
    refused(sk, "the passed descriptor 3 is not a listening AF_UNIX SOCK_SEQPACKET "
            "socket: refused")
sk = bound(s.sock)
os.chmod(s.sock, 0o666)
refused(sk, "the passed socket %s is not a socket of yours with mode 0600 "
        "(SocketMode=0600): refused" % s.sock)
os.chmod(s.sock, 0o600)
refused(sk, "LISTEN_FDS=2: fdrd takes exactly one socket", fds="2")
c.check(not os.path.exists(s.pidfile) or s.daemon_pid() == 0,
        "a refused fdrd left a pid")

# ---- served on the passed socket --------------------------------------------
inode = os.stat(s.sock).st_ino
d = fdrd(sk)
line = d.stderr.readline()
c.check("socket passed by the service manager" in line and s.sock in line,
        "fdrd's first log line: %r" % line)
c.check(s.daemon_pid() == d.pid, "pid file holds %d, fdrd is %d" % (s.daemon_pid(), d.pid))

out = os.path.join(s.work, "out")
s.fdr("create", "A", "-o", out)
s.fdr("enable", "A", "ses:tick")
s.fdr("start", "A")
c.check(s.daemon_pid() == d.pid, "a verb started another fdrd")
p = s.routed([prog, "go", str(THREADS), str(N)])
p.stdin.write("go\n")
p.stdin.flush()
c.check(p.stdout.readline() == "done\n", "session-prog: not done")
p.stdin.close()
c.check(p.wait(timeout=120) == 0, "session-prog's exit status")
h.wait_for(lambda: not s.json("list", "processes", "--json")["processes"],
           "fdrd saw session-prog go")
s.fdr("destroy", "A")
ns, lost = h.per_thread(os.path.join(out, "session-prog-%d" % p.pid))
c.check(len(ns) == THREADS, "%d threads with events, wanted %d" % (len(ns), THREADS))
for (tid, _), v in ns.items():
    c.check(v == sorted(set(v)), "tid %d: n not strictly increasing" % tid)
    c.check(len(v) + lost[tid] == N, "tid %d: %d recorded + %d discarded, emitted %d"
            % (tid, len(v), lost[tid], N))
c.check(os.stat(s.sock).st_ino == inode, "fdrd replaced the passed socket")

# ---- a clean stop leaves the socket; the next fdrd serves what queued -------
d.send_signal(signal.SIGTERM)
d.stderr.read()
c.check(d.wait(timeout=120) == 0, "fdrd's exit status after SIGTERM")
c.check(os.path.exists(s.sock) and os.stat(s.sock).st_ino == inode,
        "the passed socket was removed at exit")
c.check(not os.path.exists(s.pidfile), "pid file left")
q = subprocess.Popen([s.fdr_bin, "list", "--json"], env=s.env, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True)
s.pids.add(q.pid)
d2 = fdrd(sk)
qout, qerr = q.communicate(timeout=120)
c.check(q.returncode == 0 and '"running": true' in qout and qerr == "",
        "fdr list queued before the second fdrd: exit %d, %r %r"
        % (q.returncode, qout, qerr))
c.check(s.daemon_pid() == d2.pid, "the queued client started another fdrd")
d2.send_signal(signal.SIGTERM)
d2.stderr.read()
c.check(d2.wait(timeout=120) == 0, "the second fdrd's exit status")
sk.close()
c.finish()
