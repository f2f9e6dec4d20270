#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-config.py PROG OUTDIR CASE - a bad configuration value gives
one clear line on stderr, naming the variable and the value, and the
program goes on and exits 0.

CASE is buffer-size (FDR_BUFFER_SIZE=abc), packet-size (FDR_PACKET_SIZE=1000,
not a power of two), mode (FDR_MODE=bogus), drain (FDR_DRAIN=maybe), daemon (FDR_DAEMON=perhaps), debug (FDR_DEBUG=loud),
rundir (FDR_RUNDIR longer than a socket path allows), test-daemon-delay,
test-sndbuf, test-kill-handing, test-no-rings, test-reuse-wait,
test-move-hold (the
test-only knobs, malformed): the defaults are used and the
trace holds all 20 events; output-missing (FDR_OUTPUT in a directory that
does not exist), output-readonly (on a read-only file system: /proc, which
even root cannot write), output-file (FDR_OUTPUT is a regular file): no
trace, one line."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check

prog, out, case = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(os.path.dirname(out), exist_ok=True)
afile = out + ".file"
cases = {
    "buffer-size": ("FDR_BUFFER_SIZE", "abc", True),
    "packet-size": ("FDR_PACKET_SIZE", "1000", True),
    "mode": ("FDR_MODE", "bogus", True),
    "drain": ("FDR_DRAIN", "maybe", True),
    "daemon": ("FDR_DAEMON", "perhaps", True),
    "debug": ("FDR_DEBUG", "loud", True),
    "rundir": ("FDR_RUNDIR", "/tmp/" + "r" * 200, True),
    # The knobs of the tests (docs/environment.md) are checked the same way.
    "test-daemon-delay": ("FDR_TEST_DAEMON_DELAY", "soon", True),
    "test-sndbuf": ("FDR_TEST_SNDBUF", "-5", True),
    "test-kill-handing": ("FDR_TEST_KILL_HANDING", "3x", True),
    "test-no-rings": ("FDR_TEST_NO_RINGS", "4", True),
    "test-reuse-wait": ("FDR_TEST_REUSE_WAIT", "yes", True),
    "test-move-hold": ("FDR_TEST_MOVE_HOLD", "on", True),
    "output-missing": ("FDR_OUTPUT", out + "/no/such/dir", False),
    "output-readonly": ("FDR_OUTPUT", "/proc/fdr-test-trace", False),
    "output-file": ("FDR_OUTPUT", afile, False),
}
var, value, writes = cases[case]
with open(afile, "w") as f:
    f.write("not a directory\n")

p = c.run([prog], out, env={var: value}, timeout=60)
check(p.stdout == "continued\n", "the program did not go on: stdout %r" % p.stdout)
lines = [l for l in p.stderr.splitlines() if l.strip()]
print("stderr: %r" % lines)
check(len(lines) == 1, "%d lines on stderr, expected 1: %r" % (len(lines), lines))
if lines:
    check(lines[0].startswith("fdr: "), "the line does not say it comes from fdr")
    check(var in lines[0], "the line does not name %s" % var)
    check(value in lines[0], "the line does not show the value %r" % value)
if writes:
    events = c.typed_events(out)
    names = sorted(e[0] for e in events)
    check(names == ["cfg:main"] * 10 + ["cfg:thread"] * 10,
          "with defaults, the trace should hold 20 events: %d" % len(names))
    c.clean(out)
else:
    check(not os.path.exists(value) or not os.path.isdir(value) or not os.listdir(value),
          "something was written in " + value)
with open(afile) as f:
    check(f.read() == "not a directory\n", "the regular file was changed")
c.finish()
