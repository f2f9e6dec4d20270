#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""check-run.py PROG OUTDIR [--qemu] - runs a program built on the header fdr-gen made
from tests/programs/gen/ok/syntax.trace-events + second.trace-events
(tests/programs/progs/gen-run.c, as C or C++) with FDR_OUTPUT=OUTDIR, then
reads the trace with babeltrace2 (bt2, through tests/lib/tracecheck.py) and
checks every event's name, field names in order and values, the display base
of each integer field (16 for %x, 8 for %o), that the disabled events are
absent and did not evaluate their arguments, that the enabled checks answered
right, and that the babeltrace2 CLI reads the trace without a complaint."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import fdrtest  # noqa: E402
import tracecheck  # noqa: E402
import bt2  # noqa: E402

prog, out = sys.argv[1], sys.argv[2]
# --qemu: the header comes from contrib/qemu/fdr.py in QEMU's shape
# (contrib/qemu/test/tracetool-h.py), where trace_foo() of a `disable`d
# event is still a function: its arguments are evaluated, once more.
qemu = sys.argv[3:] == ["--qemu"]
shutil.rmtree(out, ignore_errors=True)
env = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
env["FDR_OUTPUT"] = out
p = subprocess.run([prog], env=env, stdout=subprocess.PIPE, text=True, timeout=60)
if p.returncode != 0:
    sys.exit("%s exited with %d" % (prog, p.returncode))
side = dict(l.split("=", 1) for l in p.stdout.split())

check = fdrtest.check

U64 = 2**64 - 1
expected = [
    ("gen_void", []),
    ("gen_empty", []),
    ("gen_noformat", []),
    ("gen_indented", [("x", -7)]),
    ("gen_ints", [("i8", -8), ("u8", 200), ("i16", -16000), ("u16", 65000),
                  ("i32", -2000000000), ("u32", 4000000000), ("i64", -2**63),
                  ("u64", U64), ("l", -5), ("ull", 123456789012345), ("sz", 77),
                  ("ssz", -77)]),
    ("gen_split", [("addr", 0x1122334455667788), ("size", 4096), ("base", 0xfee00000)]),
    ("gen_strings", [("name", "alpha"), ("buf", "buffer"), ("nul", "(null)")]),
    # %p on a char * records the address, not the string
    ("gen_pointers", [("opaque", int(side["dev"])), ("data", int(side["data"])),
                      ("raw", int(side["buf"])), ("dev", int(side["dev"]))]),
    ("gen_misc", [("flag", 1), ("c", ord("Z")), ("d", 2.5), ("f", 0.25), ("mode", 7),
                  ("u", 0xbeef), ("s", "s")]),
    ("gen_escapes", [("pct", 100)]),
    ("gen_literals", [("a", 1), ("b", 2)]),
    ("gen_keywords", [("new", 1), ("class", 2), ("this", 3)]),
    ("gen_star", [("w", 8), ("v", 0xab), ("p", 3), ("s", "abcdef"), ("o", 8)]),
    ("gen_prix", [("n", 5), ("b", 0xff)]),
    ("gen_tcg", [("cpu", int(side["cpu"])), ("vaddr", 0x1000), ("info", 3)]),
    ("gen_vcpu", [("cpu", int(side["cpu"]))]),
    ("gen_target", [("pc", 0x4000), ("pa", 0x5000)]),
    ("gen_second", [("n", 9)]),
    ("gen_last", [("v", -1234567890123)]),
]

t = tracecheck.read(out)
got = [(e.name, list(e.fields.items())) for e in t.events]
check(len(got) == len(expected),
      "%d events recorded, %d expected: %s" % (len(got), len(expected), [g[0] for g in got]))
for (name, fields), (gname, gfields) in zip(expected, got):
    check(gname == "gent:" + name, "event %s recorded as %s" % (name, gname))
    check([f[0] for f in gfields] == [f[0] for f in fields],
          "%s: fields %s, expected %s" % (name, [f[0] for f in gfields], [f[0] for f in fields]))
    for (fn, want), (gn, val) in zip(fields, gfields):
        check(val == want, "%s.%s = %r, expected %r" % (name, fn, val, want))
check(t.discarded == 0, "%d events discarded" % t.discarded)
want_calls = "2" if qemu else "1"
check(side["calls"] == want_calls, "arguments evaluated %s times, expected %s (disabled event)"
      % (side["calls"], want_calls))
check(side["void_enabled"] == "1", "trace_gen_void_enabled() false while recording")
check(side["void_state"] == "1", "trace_event_get_state_backends(TRACE_GEN_VOID) false")
check(side["disabled_enabled"] == "0", "trace_gen_disabled_enabled() true")
check(side["disabled_state"] == "0", "TRACE_GEN_DISABLED state true")
# Integers are shown in the base their conversion asks for (%x/%X/%p: 16,
# %o: 8, else 10): the metadata carries it and babeltrace2 reads it.
want_base = {("gen_ints", "i8"): 10, ("gen_ints", "u16"): 16, ("gen_ints", "u32"): 16,
             ("gen_split", "addr"): 16, ("gen_split", "size"): 10,
             ("gen_misc", "u"): 16, ("gen_misc", "mode"): 10, ("gen_star", "w"): 10,
             ("gen_star", "v"): 16, ("gen_star", "o"): 8, ("gen_prix", "n"): 10,
             ("gen_prix", "b"): 16, ("gen_tcg", "cpu"): 16}
bases = {}
for msg in bt2.TraceCollectionMessageIterator(out):
    if type(msg) is bt2._EventMessageConst:
        ev = msg.event
        for fname, member in ev.cls.payload_field_class.items():
            fc = member.field_class
            if hasattr(fc, "preferred_display_base"):
                bases[(ev.name.split(":", 1)[1], fname)] = fc.preferred_display_base
for key, want in want_base.items():
    check(bases.get(key) == want, "%s.%s shown in base %s, expected %d"
          % (key[0], key[1], bases.get(key), want))
ok, err = tracecheck.clean(out)
check(ok, "babeltrace2 complained: " + err)

# The same run printed live: the format text (escapes, %%, PRI macros
# spliced between literals, UTF-8) must reach fdr exactly as printf reads it.
env = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
env["FDR_TRACES"] = "gent:*"
p = subprocess.run([prog], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   timeout=60)
side2 = dict(l.split("=", 1) for l in p.stdout.decode().split())
hx = lambda k: "0x%x" % int(side2[k])  # noqa: E731
text = {
    "gen_void": "void event",
    "gen_empty": "",
    "gen_noformat": "",
    "gen_indented": "x=-7",
    "gen_ints": "-8 200 -16000 fde8 -2000000000 0xee6b2800 -9223372036854775808 "
                "18446744073709551615 -5 123456789012345 77 -77",
    "gen_split": "addr 0x1122334455667788 size 4096 base 0xfee00000",
    "gen_strings": 'name "alpha" buf buffer nul (null)',
    "gen_pointers": "opaque %s data %s raw %s dev %s" % (hx("dev"), hx("data"), hx("buf"),
                                                         hx("dev")),
    "gen_misc": "flag 1 c Z d 2.500 f 0.25 mode 7 u 0xbeef s s   |",
    "gen_escapes": '100% \t tab, quote " backslash \\ octal A hex B trigraph ??= '
                   "caf\u00e9 \u00e9 100",
    "gen_literals": "a 1 b 2",
    "gen_keywords": "new 1 class 2 this 3",
    "gen_star": "0x000000ab abc 10",
    "gen_prix": "5x FF",
    "gen_tcg": "cpu=%s vaddr=0x0000000000001000 info=3" % hx("cpu"),
    "gen_vcpu": "cpu=%s " % hx("cpu"),
    "gen_target": "pc=0000000000004000 pa=0000000000005000",
    "gen_second": "n 9",
    "gen_last": "v -1234567890123",
}
lines = {}
for l in p.stderr.decode("utf-8", "replace").splitlines():
    parts = l.split(" ", 3)
    if len(parts) >= 3 and parts[2].startswith("gent:"):
        lines[parts[2][5:]] = parts[3] if len(parts) > 3 else ""
check(p.returncode == 0, "live run exited with %d" % p.returncode)
check(sorted(lines) == sorted(text), "live events %s" % sorted(lines))
for name, want in text.items():
    check(lines.get(name) == want, "live %s: %r, expected %r" % (name, lines.get(name), want))
print("%d events" % len(got))
fdrtest.finish()
