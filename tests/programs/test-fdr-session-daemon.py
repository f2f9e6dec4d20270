# SPDX-License-Identifier: MIT
"""test-fdr-session-daemon.py - fdrd's run directory and life cycle:
the directory is created 0700, the socket, pid file and log 0600 (os.stat);
an unsafe run directory (group/other bits, a symlink, another owner, a
file) is refused with one line and exit 1, and `fdr create` relays that
line; a second fdrd (-d or -f) is refused "fdrd: already running (pid N)
in DIR" with exit 1 while the first keeps serving; SIGTERM and SIGINT stop
it cleanly (exit 0 in the foreground, socket and pid file removed); a stale
socket left by a killed fdrd is replaced; a client that hangs up before
reading its reply does not kill it (SIGPIPE). Args: fdr fdrd session-client
workdir."""
import json
import signal
import socket
import stat
import subprocess
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def fdrd(*args, env=None):
    e = dict(s.env)
    e.update(env or {})
    return subprocess.run([s.fdrd_bin] + list(args), env=e, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120)


# Usage.
p = fdrd()
c.check(p.returncode == 2 and p.stderr.startswith("usage: fdrd -f | -d\n"), "no mode: usage")
p = fdrd("-f", "-d")
c.check(p.returncode == 2, "both modes: usage")

# Modes of what fdrd creates.
pid = s.start()
st = os.lstat(s.rundir)
c.check(stat.S_ISDIR(st.st_mode) and mode(s.rundir) == 0o700 and st.st_uid == os.geteuid(),
        "run dir 0700: %o" % mode(s.rundir))
st = os.lstat(s.sock)
c.check(stat.S_ISSOCK(st.st_mode) and mode(s.sock) == 0o600, "socket 0600: %o" % mode(s.sock))
c.check(stat.S_ISREG(os.lstat(s.pidfile).st_mode) and mode(s.pidfile) == 0o600, "pid file 0600")
c.check(mode(s.log) == 0o600, "log 0600: %o" % mode(s.log))
with open(s.pidfile) as f:
    c.check(f.read() == "%d\n" % pid, "pid file holds the daemon's pid")
c.check("listening on %s (pid %d" % (s.sock, pid) in s.log_text(), "log: listening")
# -d returned only once listening: a raw connect works at once.
k = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
k.connect(s.sock)
k.close()

# A second fdrd for the same directory is refused; the first keeps serving.
ino = os.lstat(s.sock).st_ino
for m in ("-d", "-f"):
    p = fdrd(m)
    c.check(p.returncode == 1, "second fdrd %s: exit %d" % (m, p.returncode))
    c.check(p.stderr == "fdrd: already running (pid %d) in %s\n" % (pid, s.rundir),
            "second fdrd %s: %r" % (m, p.stderr))
c.check(os.lstat(s.sock).st_ino == ino and h.pid_alive(pid), "first fdrd untouched")
s.fdr("create", "t")
c.check(list(s.traces()) == ["t"], "first fdrd serves")

# A client that sends a request and hangs up before the reply: no SIGPIPE.
for i in range(20):
    k = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    k.connect(s.sock)
    k.send(bytes.fromhex("10000000 0100 1800 01000000 00000000".replace(" ", "")))  # STATUS
    k.close()
c.check(s.json("status", "--json")["pid"] == pid, "alive after hang-ups")

# SIGTERM: clean stop, socket and pid file removed.
s.stop()
c.check(not os.path.exists(s.sock) and not os.path.exists(s.pidfile), "SIGTERM removed socket and pid file")
c.check("signal 15: stopping" in s.log_text() and s.log_text().endswith("stopped\n"), "log: stopped")
c.check(os.path.isdir(s.rundir) and os.path.exists(s.log), "run dir and log kept")

# Foreground: logs to stderr, SIGINT and SIGTERM give exit 0 and clean up.
for sig in (signal.SIGINT, signal.SIGTERM):
    errf = open(os.path.join(s.work, "fg-%d.err" % sig), "w+")
    fg = subprocess.Popen([s.fdrd_bin, "-f"], env=s.env, stdout=subprocess.DEVNULL, stderr=errf)
    s.pids.add(fg.pid)
    h.wait_for(lambda: "listening on" in open(errf.name).read() or fg.poll() is not None, "fg listens")
    c.check(fg.poll() is None, "fdrd -f runs")
    c.check(s.fdr("status").stdout.startswith("fdrd running, pid %d" % fg.pid), "fdrd -f serves")
    fg.send_signal(sig)
    c.check(fg.wait(timeout=120) == 0, "fdrd -f exit status 0 after signal %d" % sig)
    c.check(not os.path.exists(s.sock) and not os.path.exists(s.pidfile), "fg: cleaned up")
    out = open(errf.name).read()
    c.check("signal %d: stopping" % sig in out and out.endswith("stopped\n"), "fg log on stderr: %r" % out)

# A stale socket (its fdrd was SIGKILLed) is replaced by the next fdrd.
pid = s.start()
os.kill(pid, signal.SIGKILL)
h.wait_for(lambda: not h.pid_alive(pid), "killed")
c.check(os.path.exists(s.sock) and os.path.exists(s.pidfile), "SIGKILL leaves socket and pid file")
p = s.fdr("list")
c.check(p.stdout == "no fdrd running (%s)\n" % s.rundir, "stale socket: not running")
s.fdr("create", "again")  # starts a new fdrd: the lock died with the old one
pid2 = s.daemon_pid()
c.check(pid2 != pid and h.pid_alive(pid2), "new fdrd after a stale socket")
c.check(list(s.traces()) == ["again"], "new fdrd serves")
s.stop()

# A relative FDR_RUNDIR is made absolute (fdrd -d runs in "/"): status
# shows the absolute path and SIGTERM removes the right files.
rel = subprocess.run([s.fdrd_bin, "-d"], env=dict(s.env, FDR_RUNDIR="rel"), cwd=s.work,
                     stderr=subprocess.PIPE, text=True, timeout=120)
c.check(rel.returncode == 0, "relative run dir: %r" % rel.stderr)
reldir = os.path.join(s.work, "rel")
with open(os.path.join(reldir, "fdrd.pid")) as f:
    rpid = int(f.read())
s.pids.add(rpid)
p = subprocess.run([s.fdr_bin, "status", "--json"], env=dict(s.env, FDR_RUNDIR="rel"), cwd=s.work,
                   stdout=subprocess.PIPE, text=True, timeout=120)
c.check(p.returncode == 0 and json.loads(p.stdout)["rundir"] == reldir, "relative: %r" % p.stdout)
os.kill(rpid, signal.SIGTERM)
h.wait_for(lambda: not h.pid_alive(rpid), "relative fdrd stops")
c.check(sorted(os.listdir(reldir)) == ["fdrd.log"], "relative: cleaned up: %r" % os.listdir(reldir))

# Eight verbs at once with no fdrd: one fdrd wins, every verb succeeds.
race_env = dict(s.env, FDR_RUNDIR=os.path.join(s.work, "race"))
procs = [subprocess.Popen([s.fdr_bin, "create", "r%d" % i], env=race_env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) for i in range(8)]
for i, p in enumerate(procs):
    out, err = p.communicate(timeout=120)
    c.check(p.returncode == 0 and out == "trace r%d created\n" % i and err == "",
            "racing create r%d: %d %r %r" % (i, p.returncode, out, err))
with open(os.path.join(s.work, "race", "fdrd.pid")) as f:
    race_pid = int(f.read())
s.pids.add(race_pid)
p = subprocess.run([s.fdr_bin, "list", "--json"], env=race_env, stdout=subprocess.PIPE, text=True,
                   timeout=120)
c.check(sorted(t["name"] for t in json.loads(p.stdout)["traces"]) == ["r%d" % i for i in range(8)],
        "one fdrd holds the 8 traces: %r" % p.stdout)
fdrds = [d for d in os.listdir("/proc") if d.isdigit() and h.pid_alive(int(d))
         and os.path.exists("/proc/%s/exe" % d) and os.path.realpath("/proc/%s/exe" % d) == os.path.realpath(s.fdrd_bin)
         and ("FDR_RUNDIR=" + race_env["FDR_RUNDIR"]) in
         open("/proc/%s/environ" % d, "rb").read().decode("latin-1").split("\0")]
c.check(fdrds == [str(race_pid)], "one fdrd for the race dir: %r" % fdrds)
os.kill(race_pid, signal.SIGTERM)
h.wait_for(lambda: not h.pid_alive(race_pid), "race fdrd stops")

# Unsafe run directories are refused, with fdrd's own line relayed by fdr.
bad = os.path.join(s.work, "bad")
good = os.path.join(s.work, "good")
os.makedirs(good, mode=0o700)
cases = []
os.makedirs(bad + "-mode", mode=0o700)
os.chmod(bad + "-mode", 0o755)
cases.append((bad + "-mode", "%s has owner uid %d and mode 0755; it must be yours (uid %d) with mode 0700: refused"
              % (bad + "-mode", os.geteuid(), os.geteuid())))
os.makedirs(bad + "-owner", mode=0o700)
os.chown(bad + "-owner", 65534, -1)
cases.append((bad + "-owner", "%s has owner uid 65534 and mode 0700; it must be yours (uid %d) with mode 0700: refused"
              % (bad + "-owner", os.geteuid())))
os.symlink(good, bad + "-link")
cases.append((bad + "-link", "%s is not a directory (a symlink or a file): refused" % (bad + "-link")))
open(bad + "-file", "w").close()
cases.append((bad + "-file", "%s is not a directory (a symlink or a file): refused" % (bad + "-file")))
cases.append((bad + "-missing/sub", "cannot create %s: No such file or directory" % (bad + "-missing/sub")))
for d, why in cases:
    p = fdrd("-d", env={"FDR_RUNDIR": d})
    c.check(p.returncode == 1 and p.stderr == "fdrd: " + why + "\n", "fdrd in %s: %d %r" % (d, p.returncode, p.stderr))
    p = s.run(["create", "t"], env={"FDR_RUNDIR": d})
    if d.endswith("-file"):  # fdr itself cannot connect through a file
        why = "cannot reach fdrd at %s/fdrd.sock: Not a directory" % d
    else:
        why = "cannot start fdrd: " + why
    c.check(p.returncode == 1 and p.stderr == "fdr create: " + why + "\n",
            "fdr create in %s: %d %r" % (d, p.returncode, p.stderr))
    c.check(not os.path.exists(os.path.join(good, "fdrd.sock")), "nothing made through the symlink")
# A fresh directory is created 0700 whatever the umask.
old = os.umask(0)
fresh = os.path.join(s.work, "fresh")
p = fdrd("-d", env={"FDR_RUNDIR": fresh})
os.umask(old)
c.check(p.returncode == 0 and mode(fresh) == 0o700 and mode(os.path.join(fresh, "fdrd.sock")) == 0o600,
        "fresh run dir 0700, socket 0600 under umask 0")
with open(os.path.join(fresh, "fdrd.pid")) as f:
    fpid = int(f.read())
s.pids.add(fpid)
os.kill(fpid, signal.SIGTERM)
h.wait_for(lambda: not h.pid_alive(fpid), "fresh fdrd stops")
c.finish()
