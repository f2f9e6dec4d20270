#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-cxx.py PROG OUTDIR - fdr_trace and fdr_enabled from C++17.

tests/recorder/progs/core-cxx.cpp goes through the C++ side of
include/fdr/internal/args.h (templates, not _Generic). Every field's
name, field class and value is checked as for C, enumerations included
(an enum takes its underlying type, signed or not); cxx:off is disabled
by FDR_EVENTS, so its guard must skip the argument's evaluation."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check

prog, out = sys.argv[1], sys.argv[2]
p = c.run([prog], out, env={"FDR_EVENTS": "*,-cxx:off"})
side = dict(l.split("=", 1) for l in p.stdout.split())
check(side.get("calls") == "1", "guarded argument evaluated %s times, expected 1" %
      side.get("calls"))

S = "string"
expected = {
    "cxx:ints": [("b", "unsigned8", 1), ("c", "signed8", 90), ("sc", "signed8", -128),
                 ("uc", "unsigned8", 255), ("s", "signed16", -32768),
                 ("us", "unsigned16", 65535), ("i", "signed32", -2**31),
                 ("u", "unsigned32", 2**32 - 1), ("l", "signed64", -2**63),
                 ("ul", "unsigned64", 2**64 - 1), ("ll", "signed64", -2**63),
                 ("ull", "unsigned64", 2**64 - 1)],
    "cxx:fixed": [("i8", "signed8", -1), ("u16", "unsigned16", 2), ("i32", "signed32", -3),
                  ("u64", "unsigned64", 4)],
    "cxx:reals": [("f", "real32", -0.0), ("d", "real64", float("nan")),
                  ("inf", "real64", float("-inf")), ("max", "real64", 1.7976931348623157e308)],
    "cxx:strings": [("str", S, "std::string \u2713"), ("lit", S, "literal"),
                    ("null", S, "(null)"), ("arr", S, "arr"), ("empty", S, "")],
    "cxx:ptrs": [("pi", "hex64", int(side["pi"])), ("pv", "hex64", 0)],
    "cxx:enums": [("plain", "unsigned32", 3), ("neg", "signed32", -3), ("lo", "signed32", -100),
                  ("hi", "signed32", 100), ("big", "unsigned64", 2**64 - 1)],
    "cxx:enums_raw": [("neg", "signed32", -3), ("plain", "unsigned32", 3)],
    "cxx:none": [],
    "cxx:named": [("x", "signed32", 1), ("y", "signed32", 2)],
    "cxx:guarded": [("v", "signed32", 1)],
    "cxx:thread": [("from", S, "std::thread")],
}


seen = {}
for name, fields in c.typed_events(out):
    seen.setdefault(name, []).append(fields)
for name, want in expected.items():
    if not check(name in seen, "event %s is missing" % name):
        continue
    check(len(seen[name]) == 1, "%s: %d events" % (name, len(seen[name])))
    got = seen[name][0]
    check([f[0] for f in got] == [w[0] for w in want],
          "%s: field names %s" % (name, [f[0] for f in got]))
    for (gn, gk, gv), (wn, wk, wv) in zip(got, want):
        check(gk == wk, "%s.%s: field class %s, expected %s" % (name, wn, gk, wk))
        check(c.same(gv, wv), "%s.%s: value %r, expected %r" % (name, wn, gv, wv))
check("cxx:off" not in seen, "cxx:off recorded although disabled")
extra = set(seen) - set(expected)
check(not extra, "unexpected events %s" % sorted(extra))
c.clean(out)
c.finish()
