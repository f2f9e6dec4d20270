#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tracetool-h.py - drives contrib/qemu/fdr.py without QEMU's tree (CI).

    tracetool-h.py GROUP OUT.h [--include HEADER] FILE...

QEMU's tracetool (scripts/tracetool.py --format=h --backend=fdr) is GPL
code of QEMU's tree, which CI does not have. This script is our own,
smaller reader of the same trace-events syntax that calls the back-end
module through the same interface tracetool uses -- generate_h_begin,
generate_h, generate_h_backend_dstate with events that have .name, .args
(.names(), .types()), .fmt (a string, or the two formats of a `tcg` event)
and .properties, and the implicit `void *__cpu` first argument of a `vcpu`
event -- and writes a header shaped like QEMU 7.2's trace-<group>.h:
TRACE_FOO_ENABLED, TRACE_FOO_BACKEND_DSTATE(), _nocheck__trace_foo() with
the back-end's body, and trace_foo() calling it (a `disable`d event keeps
an empty body, its arguments still evaluated, as in QEMU). It adds
trace_foo_enabled(), QEMU's trace_event_get_state_backends() spelled as a
function, for the test program. tests/programs/gen/check-run.py then runs
the same program and checks as for fdr-gen's header (gen-run.c), so a
back-end that records a wrong type, name or value fails there.
scripts/qemu-check.sh runs the module inside a real QEMU build."""
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import fdr  # noqa: E402  (contrib/qemu/fdr.py)

lines_out = []


def out(*lines, **kwargs):
    """tracetool.out: each line %-formatted with kwargs."""
    lines_out.extend(l % kwargs for l in lines)


fdr.out = out


class Args:
    def __init__(self, pairs):
        self.pairs = pairs

    def names(self):
        return [n for _, n in self.pairs]

    def types(self):
        return [t for t, _ in self.pairs]

    def __len__(self):
        return len(self.pairs)

    def __str__(self):
        return ", ".join("%s %s" % p for p in self.pairs) or "void"


class Event:
    def __init__(self, name, props, args, fmt):
        self.name, self.properties, self.args, self.fmt = name, props, args, fmt


def parse(path):
    events = []
    for line in open(path, encoding="utf-8", newline=None):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"((?:[a-z-]+\s+)*)(\w+)\((.*?)\)\s*(.*)$", line)
        if not m:
            sys.exit("%s: cannot read %r" % (path, line))
        props = m.group(1).split()
        pairs = []
        for a in m.group(3).split(","):
            a = " ".join(a.split())
            if not a or a == "void":
                continue
            am = re.match(r"(.*?[\s*])(\w+)$", a)
            pairs.append((" ".join(am.group(1).split()), am.group(2)))
        fmt = m.group(4) or '""'
        if "tcg" in props:
            # "translation-time format", "execution-time format"
            fmt = [f.strip() for f in re.findall(r'("(?:[^"\\]|\\.)*"(?:\s*\w+\s*"(?:[^"\\]|\\.)*")*(?:\s*\w+)?)', fmt)]
        if "vcpu" in props:  # what QEMU's tracetool/vcpu.py adds
            pairs.insert(0, ("void *", "__cpu"))
            fmt = ['"cpu=%p " ' + f for f in fmt] if isinstance(fmt, list) else '"cpu=%p " ' + fmt
        events.append(Event(m.group(2), props, Args(pairs), fmt))
    return events


def main(argv):
    group, dst = argv[1], argv[2]
    rest = argv[3:]
    includes = []
    while rest and rest[0] == "--include":
        includes.append(rest[1])
        rest = rest[2:]
    events = [e for f in rest for e in parse(f)]
    out("/* made by contrib/qemu/test/tracetool-h.py from %s */" % " ".join(
        os.path.basename(f) for f in rest).replace("%", "%%"))
    out("#ifndef TRACE_%s_H" % group.upper(), "#define TRACE_%s_H" % group.upper(),
        "#include <stdbool.h>")
    for h in includes:
        out('#include "%s"' % h)
    for e in events:
        out("#define TRACE_%s_ENABLED %d" % (e.name.upper(), "disable" not in e.properties))
    fdr.generate_h_begin(events, group)
    for e in events:
        out("", "#define TRACE_%s_BACKEND_DSTATE() ( \\" % e.name.upper())
        if "disable" not in e.properties:
            fdr.generate_h_backend_dstate(e, group)
        out("    false)", "",
            "static inline void _nocheck__trace_%s(%s)" % (e.name, e.args), "{")
        if "disable" not in e.properties:
            fdr.generate_h(e, group)
        else:  # QEMU builds without -Wunused-parameter; this test with it
            out(*("    (void)%s;" % n for n in e.args.names()))
        out("}", "",
            "static inline void trace_%s(%s)" % (e.name, e.args), "{",
            "    _nocheck__trace_%s(%s);" % (e.name, ", ".join(e.args.names())), "}",
            "static inline bool trace_%s_enabled(void)" % e.name, "{",
            "    return TRACE_%s_ENABLED && TRACE_%s_BACKEND_DSTATE();" % (
                e.name.upper(), e.name.upper()), "}")
    out("#endif")
    with open(dst + ".tmp", "w") as f:
        f.write("\n".join(lines_out) + "\n")
    os.replace(dst + ".tmp", dst)


if __name__ == "__main__":
    main(sys.argv)
