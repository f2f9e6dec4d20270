#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-core-types.py PROG OUTDIR [STRING_MAX] - every supported field type,
read back by bt2.

Runs tests/recorder/progs/core-types.c (or its C++ twin: same events) and checks,
for each event, the field names in order, the field class babeltrace2
built from our metadata (signed/unsigned integer and its width, hex
pointers, single/double real, string) and every value, edge values
included: INT64_MIN, UINT64_MAX, NaN, infinities, -0.0, empty, UTF-8,
NULL and truncated strings (a string of exactly FDR_STRING_MAX bytes of
2-byte characters is whole), 0 to 12 fields, one provider:event recorded
from two sites with other argument types (two classes). Then the
babeltrace2 CLI must read the trace without a warning.

With STRING_MAX, the program runs with FDR_STRING_MAX=STRING_MAX and every
expected string is cut as the library must cut it (cut() below)."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check

prog, out = sys.argv[1], sys.argv[2]
MAX = int(sys.argv[3]) if len(sys.argv) > 3 else 256
p = c.run([prog], out, env={"FDR_STRING_MAX": str(MAX)} if len(sys.argv) > 3 else None)
side = dict(l.split("=", 1) for l in p.stdout.split())


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


NAN = float("nan")
INF = float("inf")
ELL = "\u2026"
U64 = 2**64 - 1
S = "string"

# The program's own widths (a cross build's target may differ from this
# machine): plain char is unsigned on arm, s390x and riscv64, pointers and
# long are 32 bits on armhf and i686. Each is read back as the program had it.
CHAR = "signed8" if side["char_signed"] == "1" else "unsigned8"
PB, LB, ZB = int(side["ptr_bits"]), int(side["long_bits"]), int(side["size_bits"])
PTR = "hex%d" % PB

expected = {
    "types:ints_min": [
        ("b", "unsigned8", 0), ("c", CHAR, -1 if CHAR == "signed8" else 255), ("i8", "signed8", -128),
        ("i16", "signed16", -32768), ("i32", "signed32", -2**31),
        ("i64", "signed64", -2**63), ("u8", "unsigned8", 0), ("u16", "unsigned16", 0),
        ("u32", "unsigned32", 0), ("u64", "unsigned64", 0)],
    "types:ints_max": [
        ("b", "unsigned8", 1), ("c", CHAR, 65), ("i8", "signed8", 127),
        ("i16", "signed16", 32767), ("i32", "signed32", 2**31 - 1),
        ("i64", "signed64", 2**63 - 1), ("u8", "unsigned8", 255),
        ("u16", "unsigned16", 65535), ("u32", "unsigned32", 2**32 - 1),
        ("u64", "unsigned64", U64)],
    "types:spellings": [
        ("l", "signed%d" % LB, -2**(LB - 1)), ("ull", "unsigned64", U64),
        ("sz", "unsigned%d" % ZB, 12345),
        ("sh", "signed16", -2), ("sc", "signed8", -128)],
    "types:floats": [
        ("nan", "real32", NAN), ("inf", "real32", INF), ("min", "real32", f32(1.17549435e-38)),
        ("max", "real32", f32(3.40282347e+38)), ("neg0", "real32", -0.0)],
    "types:doubles": [
        ("nan", "real64", NAN), ("pinf", "real64", INF), ("ninf", "real64", -INF),
        ("neg0", "real64", -0.0), ("max", "real64", 1.7976931348623157e308),
        ("min", "real64", 2.2250738585072014e-308), ("tmin", "real64", 5e-324),
        ("third", "real64", 1.0 / 3.0)],
    "types:ptrs": [
        ("pi", PTR, int(side["pi"])), ("pnull", PTR, 0),
        ("pcv", PTR, int(side["pcv"])), ("puc", PTR, int(side["puc"])),
        ("pmax", PTR, 2**PB - 1)],
    "types:ptrs_raw": [
        ("pi", PTR, int(side["pi"])), ("pcv", PTR, int(side["pcv"])),
        ("puc", PTR, int(side["puc"]))],
    "types:strings": [
        ("empty", S, ""), ("utf8", S, "h\u00e9llo w\u00f6rld \u2713 \u65e5\u672c \U0001f642"),
        ("lit", S, "literal"), ("arr", S, "array"), ("carr", S, "const array")],
    "types:nulls": [("cnull", S, "(null)"), ("mnull", S, "(null)")],
    "types:long_strings": [
        ("a300", S, "a" * 253 + ELL), ("u2", S, "\u00e9" * 126 + ELL),
        ("u3", S, "\u65e5" * 84 + ELL), ("u4", S, "\U0001f642" * 63 + ELL),
        ("s256", S, "b" * 256), ("s257", S, "c" * 253 + ELL), ("e128", S, "\u00e9" * 128)],
    "types:enums": [("es", "unsigned32", 7), ("en", "signed32", -3)],
    "nargs:n0": [],
    "nargs:n0b": [],
    "names:mixed": [("a", "signed32", 1), ("arg1", "signed32", 2), ("b", "signed32", 3),
                    ("c", "signed32", 4)],
    "names:dup": [("a", "signed32", 1), ("arg1", "signed32", 2)],
    "names:keywords": [("string", S, "s"), ("align", "signed32", 1),
                       ("integer", "signed32", 2), ("event", "signed32", 3)],
    "names:explicit": [("alpha", "signed32", 1), ("beta", "signed32", 2),
                       ("gamma", "signed32", 3)],
    "names:partial": [("one", "signed32", 1), ("arg1", "signed32", 2)],
}


def cut(v):
    """v as stored with FDR_STRING_MAX=MAX: whole if it fits, else its first
    MAX-3 bytes, back to a UTF-8 boundary, then U+2026. (The expected
    values above are for 256; cutting them again at a smaller MAX gives
    what cutting the original gives, their first 253 bytes being equal.)"""
    b = v.encode()
    if len(b) <= MAX:
        return v
    n = MAX - 3
    while n > 0 and (b[n] & 0xC0) == 0x80:
        n -= 1
    return b[:n].decode() + ELL


if MAX != 256:
    expected = {k: [(n, t, cut(v) if t == S else v) for n, t, v in f]
                for k, f in expected.items()}
for n in range(1, 13):
    f = [("arg%d" % i, "signed32", i + 1) for i in range(n)]
    if n == 12:
        f[11] = ("arg11", S, cut("twelve"))
    expected["nargs:n%d" % n] = f


events = c.typed_events(out)
seen = {}
for name, fields in events:
    seen.setdefault(name, []).append(fields)

# Two sites, two classes: each value read back with its own type.
two = seen.pop("types:two_sites", [])
check(two == [[("v", "signed16", -2)], [("v", "signed32", 100000)]],
      "types:two_sites: %r" % two)

for name, want in expected.items():
    if not check(name in seen, "event %s is missing" % name):
        continue
    check(len(seen[name]) == 1, "%s: %d events, expected 1" % (name, len(seen[name])))
    got = seen[name][0]
    check([f[0] for f in got] == [w[0] for w in want],
          "%s: field names %s, expected %s" % (name, [f[0] for f in got], [w[0] for w in want]))
    for (gn, gk, gv), (wn, wk, wv) in zip(got, want):
        check(gk == wk, "%s.%s: field class %s, expected %s" % (name, wn, gk, wk))
        check(c.same(gv, wv), "%s.%s: value %r, expected %r" % (name, wn, gv, wv))
        if gk == S:
            check(len(gv.encode()) <= MAX, "%s.%s: %d bytes > FDR_STRING_MAX" %
                  (name, wn, len(gv.encode())))

loops = seen.get("names:loop", [])
check([l[0][2] for l in loops] == [0, 1, 2], "names:loop: values %r" % loops)
extra = set(seen) - set(expected) - {"names:loop"}
check(not extra, "unexpected events %s" % sorted(extra))
c.clean(out)
c.finish()
