# SPDX-License-Identifier: MIT
"""test-fdr-session-libfdr.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
instrumented programs (libfdr, tests/programs/progs/session-prog.c) find a
real fdrd and register, and are never harmed by it.

  - Providers: four programs register provider "prov": two the same, one
    with another checksum, one with another sizeof_long. `fdr list
    providers --json` shows three entries, the shared one with refcount 2,
    and `fdr list processes --json` the four programs (kernel pids). The
    references go when a program unregisters, is SIGKILLed, exits; every
    entry is freed at zero.
  - fdrd SIGKILLed while four programs record in two threads each: each
    goes on and exits 0 with its events counted; a program still running
    registers again with a new fdrd.
  - A "daemon" that accepts and never answers (a socket of the test's own):
    the program's main runs and it exits 0; its registration arrived.
  - A hostile one answering garbage, a header whose size lies, a ring
    whose memfd is smaller than it says and a route in slot 40, an unknown
    version, an fd nobody asked for: each ends the connection, the program
    connects again, keeps no stray descriptor and exits 0 silently.
  - No fdrd: FDR_DEBUG=1 says so in one line; nothing else changes."""
import os
import socket
import signal
import struct
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]


def start(*args, env=None):
    e = dict(s.env)
    e.update(env or {})
    p = subprocess.Popen([prog] + list(args), env=e, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    c.check(line == "ready\n", "%s: %r" % (args, line))
    return p


def procs():
    return {p["pid"]: p for p in s.json("list", "processes", "--json")["processes"]}


def provs():
    return [p for p in s.providers() if p["name"] == "prov"]


# ---- providers shared by handle, counted per process ------------------------
s.start()
a = start("hold", "prov", "7", "8")
b = start("hold", "prov", "7", "8")
k = start("hold", "prov", "8", "8")      # another checksum
l4 = start("hold", "prov", "7", "4")     # another sizeof_long
pids = {a.pid, b.pid, k.pid, l4.pid}
h.wait_for(lambda: pids <= set(procs()), "four processes registered")
got = procs()
c.check(all(got[p]["name"] == "session-prog" for p in pids), "process names: %r" % got)
h.wait_for(lambda: sum(p["refcount"] for p in provs()) == 4, "four references")
t = provs()
shared = [p for p in t if p["checksum"] == 7 and p["sizeof_long"] == 8]
c.check(len(t) == 3 and len(shared) == 1 and shared[0]["refcount"] == 2,
        "three entries, the shared one counted twice: %r" % t)
c.check(sorted((p["checksum"], p["sizeof_long"]) for p in t) == [(7, 4), (7, 8), (8, 8)],
        "checksum and long_size make other handles: %r" % t)
handle = shared[0]["handle"] if shared else -1
a.stdin.write("unregister\n")
a.stdin.flush()
c.check(a.stdout.readline() == "unregistered\n", "unregister")
h.wait_for(lambda: [p["refcount"] for p in provs() if p["handle"] == handle] == [1],
           "unregister drops one reference")
b.kill()  # SIGKILL: fdrd sees the connection end
b.wait()
h.wait_for(lambda: handle not in [p["handle"] for p in provs()], "freed at zero (SIGKILL)")
for p in (a, k, l4):
    p.stdin.close()
    c.check(p.wait(timeout=120) == 0, "hold exits 0")
h.wait_for(lambda: provs() == [], "every provider freed")
h.wait_for(lambda: not (pids & set(procs())), "processes gone")

# ---- fdrd killed while programs record; registered again with a new one ------
spins = [start("spin") for _ in range(4)]
h.wait_for(lambda: {p.pid for p in spins} <= set(procs()), "spinners registered")
pid = s.daemon_pid()
os.kill(pid, signal.SIGKILL)
h.wait_for(lambda: not h.pid_alive(pid), "fdrd gone")
last = spins.pop()
for p in spins:
    out, err = p.communicate("", timeout=120)
    c.check(p.returncode == 0 and out.startswith("events ") and int(out.split()[1]) > 0,
            "spinner after fdrd's SIGKILL: exit %d, %r %r" % (p.returncode, out, err))
os.unlink(s.sock)  # what a killed fdrd leaves; a new one replaces it anyway
s.start()
h.wait_for(lambda: last.pid in procs(), "registered again with a new fdrd")
out, err = last.communicate("", timeout=120)
c.check(last.returncode == 0 and out.startswith("events "), "last spinner: %r" % out)
s.stop()

# ---- a "daemon" that accepts and never answers ---------------------------------
fake_dir = os.path.join(s.work, "fake")
os.makedirs(fake_dir, mode=0o700)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
srv.bind(os.path.join(fake_dir, "fdrd.sock"))
srv.listen(8)
got_msgs = []


def silent():
    conn, _ = srv.accept()
    got_msgs.append(conn.recv(65536))  # read, never answer
    threading.Event().wait()           # keep the connection open


threading.Thread(target=silent, daemon=True).start()
p = subprocess.Popen([prog, "start"], env=dict(s.env, FDR_RUNDIR=fake_dir),
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
out, err = p.communicate(timeout=120)
c.check(p.returncode == 0 and out == "main\n" and err == "",
        "with a silent daemon: exit %d, %r %r" % (p.returncode, out, err))
p = start("hold", "prov", "7", "8", env={"FDR_RUNDIR": fake_dir})
h.wait_for(lambda: got_msgs, "the registration reached the silent daemon")
if got_msgs:
    size, version, mtype = struct.unpack_from("=IHH", got_msgs[0])
    c.check(mtype == 1 and size == len(got_msgs[0]), "REGISTER_PROCESS first: type %d" % mtype)
p.stdin.close()
c.check(p.wait(timeout=120) == 0, "a program beside a silent daemon exits 0")

# ---- a hostile "daemon": garbage, a lying header, an unexpected fd -------------
bad_dir = os.path.join(s.work, "hostile")
os.makedirs(bad_dir, mode=0o700)
bad = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
bad.bind(os.path.join(bad_dir, "fdrd.sock"))
bad.listen(8)
accepts = []
PROTO = h.proto_version()  # only the unknown-version answer differs
junk = [b"\xff" * 37,                                        # garbage
        struct.pack("=IHHII", 65535, PROTO, 64, 1, 0) + b"x" * 8,  # size says more than came
        struct.pack("=IHHII", 280, 99, 64, 1, 0) + bytes(264)]  # unknown version


def hostile():
    while len(accepts) < 5:
        conn, _ = bad.accept()
        conn.recv(65536)  # the registration
        n = len(accepts)
        if n < len(junk):
            conn.send(junk[n])
        elif n == len(junk):
            # a ring whose size lies (its memfd is one page), then a route
            # in slot 40 of 32: the ring refused, the route ends the talk
            m = os.memfd_create("lie")
            os.ftruncate(m, 4096)
            conn.sendmsg([struct.pack("=IHHIIIIQII", 40, PROTO, 4, 0, 0, 1, 0, 1 << 20, 1, 0)],
                         [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", m))])
            os.close(m)
            conn.send(struct.pack("=IHHII10I", 56, PROTO, 6, 0, 0, 1, 1, 1, 0, 40, 0, 0, 0, 0, 0))
        else:  # a reply carrying an fd nobody asked for
            r, w = os.pipe()
            conn.sendmsg([struct.pack("=IHHII", 280, PROTO, 64, 1, 0) + bytes(264)],
                         [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", r))])
            os.close(r)
            os.close(w)
        accepts.append(conn)


threading.Thread(target=hostile, daemon=True).start()
p = start("hold", "prov", "7", "8", env={"FDR_RUNDIR": bad_dir})
# each bad answer ends the connection, and the program connects again
h.wait_for(lambda: len(accepts) >= 5, "the program reconnected after each bad answer")
fds = len(os.listdir("/proc/%d/fd" % p.pid))
p.stdin.close()
c.check(p.wait(timeout=120) == 0 and p.stderr.read() == "",
        "a program beside a hostile daemon exits 0, silent")
c.check(fds < 16, "descriptors of the program: %d (a received fd was kept?)" % fds)

# ---- no fdrd ---------------------------------------------------------------------
p = subprocess.run([prog, "start"], env=dict(s.env, FDR_DEBUG="1"), capture_output=True,
                   text=True, timeout=120)
c.check(p.returncode == 0 and p.stdout == "main\n" and len(p.stderr.splitlines()) == 1
        and "no fdrd running" in p.stderr, "FDR_DEBUG=1, no fdrd: %r" % p.stderr)
p = subprocess.run([prog, "start"], env=s.env, capture_output=True, text=True, timeout=120)
c.check(p.returncode == 0 and p.stderr == "", "no fdrd, no FDR_DEBUG: %r" % p.stderr)
c.finish()
