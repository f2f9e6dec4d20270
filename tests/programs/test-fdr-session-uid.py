# SPDX-License-Identifier: MIT
"""test-fdr-session-uid.py - a client of another uid is refused. fdrd runs
as us; a raw client runs as `nobody` (setpriv --reuid=nobody
--regid=nogroup --clear-groups). For the refusal to be exercised, the
test (and only the test) opens the way: run dir 0711, socket 0666. The
client connects, sends a well-formed STATUS request and must get nothing
back (end of stream); fdrd logs "refused connection from uid 65534 pid P"
with the client's pid and keeps no connection of it. `fdr list` as nobody
refuses on its own side: the socket is not its user's. Skipped (77) when
not run as root or when nobody cannot reach the build tree. Args: fdr
fdrd session-client workdir."""
import subprocess
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)

if os.geteuid() != 0:
    print("skipped: setpriv --reuid needs root")
    sys.exit(77)
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
if subprocess.run(NOBODY + ["test", "-x", s.fdr_bin]).returncode != 0:
    print("skipped: nobody cannot reach %s" % s.fdr_bin)
    sys.exit(77)

pid = s.start()
s.fdr("create", "mine")
os.chmod(s.rundir, 0o711)
os.chmod(s.sock, 0o666)

CLIENT = r'''
import socket, struct, sys
k = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
k.connect(sys.argv[1])
try:
    k.send(struct.pack("=IHHII", 16, int(sys.argv[2]), 24, 1, 0))  # STATUS
    data = k.recv(65536)
    print("got %d bytes" % len(data))
except (BrokenPipeError, ConnectionResetError) as e:
    print("got nothing: " + type(e).__name__)
'''
p = subprocess.Popen(NOBODY + [sys.executable, "-c", CLIENT, s.sock, str(h.proto_version())], env=s.env,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
out, err = p.communicate(timeout=120)
c.check(p.returncode == 0, "nobody's client ran: %r" % err)
c.check(out in ("got 0 bytes\n", "got nothing: BrokenPipeError\n", "got nothing: ConnectionResetError\n"),
        "nobody got nothing: %r" % out)
# fdrd writes its line before it closes the connection, and the client saw
# the close: the line is there now.
line = "refused connection from uid 65534 pid %d" % p.pid
c.check(line in s.log_text(), "log line: " + line)

# fdr itself, as nobody, refuses a socket that is not its user's.
p = s.run(["list"], prefix=NOBODY)
c.check(p.returncode == 1 and p.stderr ==
        "fdr list: %s belongs to uid 0, not to you (uid 65534): refused\n" % s.sock,
        "fdr as nobody: %d %r" % (p.returncode, p.stderr))
c.check(p.stdout == "", "fdr as nobody printed nothing")

# Our own user is served, and no connection of nobody's was kept.
os.chmod(s.sock, 0o600)
os.chmod(s.rundir, 0o700)
# (earlier `fdr` connections may still be closing: wait for that state)
h.wait_for(lambda: s.json("status", "--json")["clients"] == 1, "only our own connection")
c.check(s.json("status", "--json")["pid"] == pid, "the same fdrd")
c.check(list(s.traces()) == ["mine"], "traces untouched")
s.stop()
c.finish()
