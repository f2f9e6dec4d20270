# SPDX-License-Identifier: MIT
"""test-fdr-session-limits.py - fdrd holds 32 traces at once and refuses the
33rd with its message (and nothing changes); after one is destroyed, one
more can be created. Pattern items are bounded per trace (256 items, 16
KiB): the request that would pass the bound is refused whole. Args: fdr
fdrd session-client workdir."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)

s.start()
for i in range(32):
    s.fdr("create", "t%02d" % i, "--buffer-size", "8K", "--packet-size", "4K")
ts = s.traces()
c.check(len(ts) == 32 and list(ts) == ["t%02d" % i for i in range(32)], "32 traces: %d" % len(ts))
for i in range(0, 32, 2):
    s.fdr("start", "t%02d" % i)
st = s.json("status", "--json")
c.check(st["traces"] == 32 and st["active"] == 16, "status: %r" % st)
s.fdr_err(["create", "t32"],
          "fdr create: 32 traces exist already, the most fdrd holds (fdr destroy one)", 1)
s.fdr_err(["create", "t00"], "fdr create: a trace named 't00' exists already", 1)
c.check(len(s.traces()) == 32 and "t32" not in s.traces(), "still 32, no t32")
s.fdr("destroy", "t05")
s.fdr("create", "t32")
ts = s.traces()
c.check(len(ts) == 32 and "t32" in ts and "t05" not in ts, "one destroyed, one created")
s.fdr_err(["create", "t33"],
          "fdr create: 32 traces exist already, the most fdrd holds (fdr destroy one)", 1)

# Pattern items: 256 per trace at most; a request crossing the bound adds nothing.
s.fdr("enable", "t01", *["e%03d" % i for i in range(200)])
s.fdr_err(["enable", "t01"] + ["f%03d" % i for i in range(57)],
          "fdr enable: too many pattern items for trace 't01' (at most 256, 16384 bytes)", 1)
c.check(len(s.traces()["t01"]["events"]) == 200, "refused request added nothing")
s.fdr("disable", "t01", *["f%03d" % i for i in range(56)])
ev = s.traces()["t01"]["events"]
c.check(len(ev) == 256 and ev[-1] == "-f055", "256 items: %d" % len(ev))
# bytes: 64 items of 255 bytes and their NULs fill the 16 KiB area exactly
long_items = [("x%03d" % i) + "y" * 251 for i in range(64)]
s.fdr("enable", "t02", *long_items)
s.fdr_err(["enable", "t02", "z"],
          "fdr enable: too many pattern items for trace 't02' (at most 256, 16384 bytes)", 1)
c.check(len(s.traces()["t02"]["events"]) == 64, "byte bound")
# the client's own bound on one request
s.fdr_err(["enable", "t03"] + ["g%d" % i for i in range(257)],
          "fdr enable: too many patterns (at most 256, 16384 bytes)", 2)
s.fdr_err(["enable", "t03", "a" * 256], "fdr enable: bad pattern '%s...': 1 to 255 bytes" % ("a" * 40), 2)
s.stop()
c.finish()
