# SPDX-License-Identifier: MIT
"""test-fdr-session-errors.py - every session verb's error lines: exactly
one line "fdr VERB: ..." on stderr, nothing on stdout, exit 2 for a usage
error (missing or extra argument, unknown option, a name, size or mask
that does not parse) and 1 for what fdrd refuses (unknown trace, duplicate,
bad pattern, size out of range, already started/stopped) or an fdrd that
cannot be reached or started. Args: fdr fdrd session-client workdir."""
import subprocess
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)

E = s.fdr_err
NAME_RULE = "only letters, digits, '_', '.' and '-' are allowed"

# fdrd cannot be started: FDR_FDRD names nothing; nothing runs afterwards.
p = s.run(["create", "t1"], env={"FDR_FDRD": "/nonexistent/fdrd"})
c.check(p.returncode == 1 and p.stderr ==
        "fdr create: cannot start fdrd: /nonexistent/fdrd: No such file or directory\n",
        "unstartable fdrd: %d %r" % (p.returncode, p.stderr))
p = s.run(["start", "t1"], env={"FDR_FDRD": "/bin/false"})
c.check(p.returncode == 1 and p.stderr == "fdr start: cannot start fdrd (/bin/false -d failed)\n",
        "failing fdrd: %d %r" % (p.returncode, p.stderr))
# unreachable: the run directory's path is too long for a socket
p = s.run(["create", "t1"], env={"FDR_RUNDIR": "/" + "d" * 120})
c.check(p.returncode == 1 and p.stderr ==
        "fdr create: the run directory's path is too long for a socket\n",
        "long run dir: %d %r" % (p.returncode, p.stderr))
# unreachable: something else listens there (a stream socket)
import socket
os.makedirs(s.rundir, mode=0o700)
other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
other.bind(s.sock)
other.listen(1)
E(["list"], "fdr list: cannot reach fdrd at %s: Protocol wrong type for socket" % s.sock, 1)
E(["create", "t"], "fdr create: cannot reach fdrd at %s: Protocol wrong type for socket" % s.sock, 1)
other.close()
os.unlink(s.sock)
# a stale socket (nobody listens) is "not running" for list, and replaced
# by the fdrd a verb starts (fdr-session-daemon)
with open(s.sock, "w"):
    pass
c.check(s.fdr("list").stdout == "no fdrd running (%s)\n" % s.rundir, "stale socket: not running")
os.unlink(s.sock)
c.check(s.daemon_pid() == 0, "no fdrd so far")

# Usage errors need no fdrd and start none (exit 2).
for verb in ("create", "start", "stop", "destroy"):
    E([verb], "fdr %s: missing trace name (fdr help %s)" % (verb, verb), 2)
    E([verb, "a/b"], "fdr %s: bad trace name 'a/b': %s" % (verb, NAME_RULE), 2)
for verb in ("start", "stop", "destroy"):
    E([verb, "a", "b"], "fdr %s: unexpected argument 'b' (fdr help %s)" % (verb, verb), 2)
E(["create", "a", "b"], "fdr create: unexpected argument 'b' (fdr help create)", 2)
E(["create", ".."], "fdr create: bad trace name '..': starts with '.' or '-'", 2)
E(["create", "--", "-x"], "fdr create: bad trace name '-x': starts with '.' or '-'", 2)
E(["create", "x" * 65], "fdr create: bad trace name '%s': longer than 64 bytes" % ("x" * 65), 2)
E(["create", ""], "fdr create: bad trace name '': empty", 2)
E(["create", "a\nb"], "fdr create: bad trace name 'a\\x0ab': %s" % NAME_RULE, 2)
E(["create", "t", "--bogus"], "fdr create: unknown option '--bogus' (fdr help create)", 2)
E(["create", "t", "-o"], "fdr create: -o needs a value", 2)
E(["create", "t", "-o", ""], "fdr create: -o needs a directory", 2)
E(["create", "t", "--overwrite", "--snapshot"],
  "fdr create: --overwrite and --snapshot exclude each other", 2)
SIZE = "a number of bytes above 0, with an optional K, M or G suffix"
for bad in ("", "abc", "12Q", "1.5M", "-4K", "0", "4 K", "99999999999999999999"):
    E(["create", "t", "--buffer-size", bad], "fdr create: bad --buffer-size '%s': %s" % (bad, SIZE), 2)
E(["create", "t", "--packet-size", "4KB"], "fdr create: bad --packet-size '4KB': %s" % SIZE, 2)
E(["create", "t", "--memory", "lots"], "fdr create: bad --memory 'lots': %s" % SIZE, 2)
E(["snapshot"], "fdr snapshot: missing trace name (fdr help snapshot)", 2)
E(["snapshot", "a/b"], "fdr snapshot: bad trace name 'a/b': %s" % NAME_RULE, 2)
E(["snapshot", "a", "b"], "fdr snapshot: unexpected argument 'b' (fdr help snapshot)", 2)
E(["snapshot", "a", "-x"], "fdr snapshot: unknown option '-x' (fdr help snapshot)", 2)
E(["snapshot", "a", "-o"], "fdr snapshot: -o needs a value", 2)
E(["snapshot", "a", "-o", ""], "fdr snapshot: -o needs a directory", 2)
for verb in ("enable", "disable"):
    E([verb], "fdr %s: missing trace name (fdr help %s)" % (verb, verb), 2)
    E([verb, "t"], "fdr %s: missing PATTERN (fdr help %s)" % (verb, verb), 2)
    E([verb, "t/x", "a"], "fdr %s: bad trace name 't/x': %s" % (verb, NAME_RULE), 2)
    E([verb, "t", ""], "fdr %s: bad pattern '': 1 to 255 bytes" % verb, 2)
E(["filter"], "fdr filter: missing trace name (fdr help filter)", 2)
E(["filter", "t"], "fdr filter: missing MASK (fdr help filter)", 2)
E(["filter", "t", "1", "2"], "fdr filter: unexpected argument '2' (fdr help filter)", 2)
MASK = "0x and 1 to 8 hex digits, or a decimal number below 2^32"
for bad in ("", "0x", "0x123456789", "4294967296", "-1", "+1", "0xg", "1e3", " 1", "0b1", "12a"):
    E(["filter", "t", bad], "fdr filter: bad mask '%s': %s" % (bad, MASK), 2)
E(["list", "things"], "fdr list: cannot list 'things': traces, processes, providers or events", 2)
E(["list", "traces", "more"], "fdr list: unexpected argument 'more' (fdr help list)", 2)
E(["status", "x"], "fdr status: unexpected argument 'x' (fdr help status)", 2)
c.check(s.daemon_pid() == 0, "usage errors started no fdrd")

# What fdrd refuses (exit 1); the first verb starts it.
for verb in ("start", "stop", "destroy"):
    E([verb, "nope"], "fdr %s: no trace named 'nope' (fdr list traces shows them)" % verb, 1)
E(["enable", "nope", "a"], "fdr enable: no trace named 'nope' (fdr list traces shows them)", 1)
E(["disable", "nope", "a"], "fdr disable: no trace named 'nope' (fdr list traces shows them)", 1)
E(["filter", "nope", "1"], "fdr filter: no trace named 'nope' (fdr list traces shows them)", 1)
E(["snapshot", "nope"], "fdr snapshot: no trace named 'nope' (fdr list traces shows them)", 1)
s.fdr("create", "t")
E(["create", "t"], "fdr create: a trace named 't' exists already", 1)
E(["create", "u", "--packet-size", "3K"],
  "fdr create: bad packet size 3072: a power of two from 4 KiB to 16 MiB (4096 to 16777216)", 1)
E(["create", "u", "--packet-size", "32M"],
  "fdr create: bad packet size 33554432: a power of two from 4 KiB to 16 MiB (4096 to 16777216)", 1)
E(["create", "u", "--packet-size", "2K"],
  "fdr create: bad packet size 2048: a power of two from 4 KiB to 16 MiB (4096 to 16777216)", 1)
E(["create", "u", "--buffer-size", "64K", "--packet-size", "64K"],
  "fdr create: bad buffer size 65536: a whole number of packets (65536 bytes), at least 2", 1)
E(["create", "u", "--buffer-size", "100K", "--packet-size", "8K"],
  "fdr create: bad buffer size 102400: a whole number of packets (8192 bytes), at least 2", 1)
E(["create", "u", "--buffer-size", "2G"],
  "fdr create: bad buffer size 2147483648: at most 1 GiB (1073741824)", 1)
E(["create", "u", "--memory", "2048G"],
  "fdr create: bad memory budget 2199023255552: at most 1 TiB", 1)
E(["snapshot", "t"], "fdr snapshot: trace t holds no events (no process records into it)", 1)
E(["snapshot", "t", "-o", "/proc/no/such"],
  "fdr snapshot: trace t holds no events (no process records into it)", 1)
E(["enable", "t", "net:[rx"], "fdr enable: bad pattern: malformed item \"net:[rx\": unterminated '['", 1)
E(["enable", "t", "a:b:c"], "fdr enable: bad pattern: malformed item \"a:b:c\": cannot split into provider:event items", 1)
E(["enable", "t", "ok", "bad$"], "fdr enable: bad pattern: malformed item \"bad$\": invalid character '$'", 1)
E(["enable", "t", "help"], "fdr enable: bad pattern: \"help\" names no event", 1)
E(["enable", "t", "ring_kb=4"], "fdr enable: bad pattern: \"ring_kb=4\" names no event", 1)
E(["disable", "t", "@/etc/passwd"], "fdr disable: bad pattern: \"@/etc/passwd\": files are not read here", 1)
c.check(s.traces()["t"]["events"] == [], "refused patterns added nothing (not even 'ok')")
E(["stop", "t"], "fdr stop: trace 't' is stopped already", 1)
s.fdr("start", "t")
E(["start", "t"], "fdr start: trace 't' is started already", 1)
c.check(list(s.traces()) == ["t"], "no trace made by a refused create")

# A daemon that accepts and then dies mid-request: a clear line, exit 1.
pid = s.stop()
c.check(not os.path.exists(s.sock), "socket removed by SIGTERM")
p = s.run(["list", "--json"])
c.check(p.returncode == 0 and p.stdout == '{"running": false, "traces": []}\n', "list --json after stop")
c.finish()
