# SPDX-License-Identifier: MIT
"""test-fdr-session-hostile.py - fdrd against hostile clients. Each bad
message comes on a connection of its own: garbage bytes, a truncated
header, a size field that lies, a message over 64 KiB, a bad version, an
unknown type, an unterminated string, malformed pattern items, a message
that only fdrd sends, a well-formed message with fds it does not carry,
more fds than any message carries. Each time fdrd logs "client N (pid P):
bad message (REASON); dropped" (or the wrong-direction line), closes that
connection (the client reads end of stream), closes every fd that came
(its /proc/PID/fd count returns to what it was), and serves a well-behaved
`fdr list` right after. Then 1,000 idle connections: accepted and held,
`fdr list` still served, VmRSS grows by less than 16 MiB; and at
FDRD_CLIENTS_MAX (4096) connections the next one is refused with a log
line. A class table fdrd cannot trust (sent before registering,
unsealed, too small): dropped with one log line each, its fd closed. A
count of lost events (LOST) for a route the client does not have:
dropped, logged, written nowhere.
Args: fdr fdrd session-client workdir."""
import resource
import socket
import struct
import fcntl
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)

want = 8400
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft < want:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
s.env  # fdrd -d inherits our raised limit and raises its own as it can

pid = s.start()
s.fdr("create", "keep")


def fd_links(p):
    out = []
    for f in os.listdir("/proc/%d/fd" % p):
        try:
            out.append(os.readlink("/proc/%d/fd/%s" % (p, f)))
        except FileNotFoundError:
            pass
    return out


def settled(p, total):
    """No client connection left open in fdrd (one socket: the listening
    one) and, when total is given, exactly that many fds."""
    links = fd_links(p)
    return sum(x.startswith("socket:") for x in links) == 1 and (total is None or len(links) == total)


VERSION = h.proto_version()


def hdr(size, typ, ver=VERSION, seq=1, status=0):
    return struct.pack("=IHHII", size, ver, typ, seq, status)


def name(n, cap=72):
    return n.encode() + b"\0" * (cap - len(n))


START = 20
good_start = hdr(88, START) + name("keep")
items = b"a\0b\0"
CASES = [
    ("garbage", os.urandom(100), None, "size field "),
    ("truncated header", hdr(16, 24)[:10], None, "10 bytes, shorter than a header (16)"),
    ("lying size field", hdr(0x7fffffff, 24), None, "size field 2147483647 but 16 bytes came"),
    ("oversized", hdr(70000, 17) + b"x" * (70000 - 16), None, "longer than 64 KiB"),
    ("bad version", hdr(88, START, ver=7) + name("keep"), None, "version 7 (this is version %d)" % VERSION),
    ("unknown type", hdr(16, 999), None, "unknown type 999"),
    ("unterminated", hdr(88, START) + b"k" * 72, None,
     "start: string at offset 16 not terminated in its 72 bytes"),
    ("bad items", hdr(96 + 4, 17) + name("keep") + struct.pack("=II", 3, 4) + items, None,
     "enable: item 2 not terminated"),
    ("short fixed part", hdr(40, START) + b"\0" * 24, None, "start of 40 bytes (it has 88)"),
    ("short lost", hdr(24, 13) + b"\0" * 8, None, "lost of 24 bytes (it has 40)"),
    ("unexpected fds", good_start, 2, "start with 2 fds (it carries 0)"),
    ("too many fds", good_start, 6, "unexpected control data or fds"),
]
h.wait_for(lambda: settled(pid, None), "no connection left")
base = len(fd_links(pid))
for what, data, nf, reason in CASES:
    k = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    k.connect(s.sock)
    if nf:
        r, w = os.pipe()
        socket.send_fds(k, [data], [r, w] * (nf // 2))
        os.close(r)
        os.close(w)
    else:
        k.send(data)
    k.settimeout(120)
    try:
        got = k.recv(65536)
    except ConnectionResetError:
        got = b""
    c.check(got == b"", "%s: fdrd closed the connection without an answer (got %d bytes)" % (what, len(got)))
    k.close()
    # logged before the close the client just saw
    line = "bad message (%s" % reason
    c.check(line in s.log_text(), what + ": log line " + line)
    # every fd of that client closed (a leak keeps this waiting: TIMEOUT)
    print("%s: waiting for fdrd's fds to return to %d" % (what, base), flush=True)
    h.wait_for(lambda: settled(pid, base), "fds closed")
    c.check(list(s.traces()) == ["keep"], what + ": fdr list served after it")
    c.check(s.traces()["keep"]["active"] is False, what + ": the bad message did nothing")

# A class table fdrd cannot trust: sent before registering, or unsealed (the
# client could shrink it under fdrd's mapping), or too small. Dropped with
# one log line, its fd closed, nothing mapped.
CLASSES = 5
REGISTER = 1
register = hdr(120, REGISTER) + struct.pack("=8I", os.getpid(), 0, 4, 8, 8, 8, 0, 0) + name("hostile")
for what, first, size, sealed in [("classes before registering", False, 1 << 26, True),
                                  ("unsealed classes", True, 1 << 26, False),
                                  ("classes too small", True, 4096, True)]:
    k = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    k.connect(s.sock)
    if first:
        k.send(register)
        k.recv(65536)  # its REPLY
    m = os.memfd_create("hostile", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(m, size)
    if sealed:
        fcntl.fcntl(m, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
    socket.send_fds(k, [hdr(80, CLASSES) + struct.pack("=QQqQQQ", size, 1, 0, 0, 0, 1)
                        + b"\0" * 16], [m])
    os.close(m)
    k.settimeout(120)
    c.check(k.recv(65536) == b"", what + ": dropped")
    k.close()
    h.wait_for(lambda: settled(pid, base), what + ": fds closed")
    c.check(s.log_text().count("a class table fdrd cannot use") >= 1, what + ": logged")
    c.check(list(s.traces()) == ["keep"], what + ": fdr list served after it")

# A count of lost events (LOST) for a route the client does not have (it
# sent no class table: no route at all): not written into any trace,
# logged, and the client dropped.
k = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
k.connect(s.sock)
k.send(register)
k.recv(65536)  # its REPLY
k.send(hdr(40, 13) + struct.pack("=IIQQ", 7, 1, 100, 0))
k.settimeout(120)
c.check(k.recv(65536) == b"", "lost of a route not its own: dropped")
k.close()
h.wait_for(lambda: settled(pid, base), "lost of a route not its own: fds closed")
c.check("lost to route 7, which it does not have" in s.log_text(),
        "lost of a route not its own: logged")
c.check(list(s.traces()) == ["keep"], "lost of a route not its own: fdr list served after it")
c.check(s.log_text().count("a class table fdrd cannot use") == 3, "each logged once")

# A message only fdrd sends, from a client.
k = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
k.connect(s.sock)
k.send(hdr(280, 64) + b"\0" * 264)
c.check(k.recv(100) == b"", "reply from a client: dropped")
k.close()
c.check("sent a reply message, which only fdrd sends; dropped" in s.log_text(), "wrong direction logged")
# An empty message reads as a hang-up: closed, no log line needed.
k = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
k.connect(s.sock)
k.send(b"")
c.check(k.recv(100) == b"", "empty message: closed")
k.close()
# A client that never reads its replies: many LIST requests, never read.
k = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
k.connect(s.sock)
k.setblocking(False)
sent = 0
try:
    for i in range(20000):
        k.send(hdr(24, 23, seq=i) + struct.pack("=II", 0, 0))
        sent += 1
except BlockingIOError:
    pass
c.check(list(s.traces()) == ["keep"], "served while a client does not read (%d sent)" % sent)
k.close()
h.wait_for(lambda: s.json("status", "--json")["clients"] == 1, "non-reader gone")

# 1,000 idle connections.
rss0 = h.vmrss_kib(pid)
idle = []
for i in range(1000):
    k = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    k.connect(s.sock)
    idle.append(k)
h.wait_for(lambda: s.json("status", "--json")["clients"] == 1001, "1000 idle accepted")
c.check(list(s.traces()) == ["keep"], "fdr list served with 1000 idle connections")
rss1 = h.vmrss_kib(pid)
print("VmRSS %d KiB, with 1000 idle connections %d KiB" % (rss0, rss1))
c.check(rss1 - rss0 < 16 * 1024, "VmRSS grew by %d KiB with 1000 idle clients (bound 16 MiB)" % (rss1 - rss0))

# The bound: FDRD_CLIENTS_MAX connections, the next refused with a line.
maxc = s.json("status", "--json")["max_clients"]
if maxc == 4096 and soft >= want:
    # Only our 1000 idle connections held (the `fdr` runs above have hung
    # up and fdrd has closed them): then the next 3096 fill it exactly.
    h.wait_for(lambda: sum(x.startswith("socket:") for x in fd_links(pid)) == 1 + len(idle),
               "only the idle connections")
    while len(idle) < maxc:
        k = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        k.connect(s.sock)
        idle.append(k)
    extra = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    extra.connect(s.sock)
    line = "refused connection from pid %d: too many clients (4096)" % os.getpid()
    extra.settimeout(120)
    c.check(extra.recv(100) == b"", "the 4097th connection is closed")
    c.check(line in s.log_text(), "log line: " + line)
    extra.close()
    rss2 = h.vmrss_kib(pid)
    print("VmRSS with 4096 idle connections: %d KiB" % rss2)
    c.check(rss2 - rss0 < 32 * 1024, "VmRSS grew by %d KiB with 4096 clients (bound 32 MiB)" % (rss2 - rss0))
    idle.pop().close()  # room for one: once fdrd has seen the hang-up, fdr is served
    h.wait_for(lambda: sum(x.startswith("socket:") for x in fd_links(pid)) == 1 + len(idle),
               "fdrd closed the connection that hung up")
    c.check(list(s.traces()) == ["keep"], "fdr list served after one idle left")
else:
    print("client bound not exercised: fdrd holds %d clients, RLIMIT_NOFILE %d" % (maxc, soft))
for k in idle:
    k.close()
h.wait_for(lambda: s.json("status", "--json")["clients"] == 1, "idle clients gone")
h.wait_for(lambda: settled(pid, base), "fds of idle clients closed")
c.check(h.pid_alive(pid) and s.daemon_pid() == pid, "the same fdrd all along")
s.stop()
c.finish()
