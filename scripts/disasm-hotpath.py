#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# disasm-hotpath.py - regenerates docs/hotpath.md: the machine code of the
# two-int fdr_trace() call site (the benchmark's two_ints event), as the
# compiler makes it from include/fdr today, with the instructions, loads,
# stores and branches of its disabled path and of its common enabled path
# counted. Generated, so that the document cannot drift from the code.
#
#   scripts/disasm-hotpath.py [--cc CC] > docs/hotpath.md
#   scripts/disasm-hotpath.py --check docs/hotpath.md   (the ctest hotpath-doc)
#   scripts/disasm-hotpath.py --counts OTHER/include     (compare another tree)
#
# Both first check on the code that the disabled event is one load and one
# branch and that the enabled common path has no lock, xchg, fence or call;
# and that a scoped span (fdr/span.h), off, is one load and one branch too,
# and has no lock, xchg or fence anywhere.
# --check regenerates and compares; it exits 77 (skipped) when the compiler
# is not the one the document was made with (the code would differ), 1 with
# a diff when the document is stale. Needs the compiler and objdump.
import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = """#include <fdr/fdr.h>
void hot(int a, int b);
void hot(int a, int b) { fdr_trace(bench, two_ints, "a=%d b=%d", a, b); }
"""
# A scoped span of one int (fdr/span.h): its begin and its end, both events.
SPAN_SOURCE = """#include <fdr/fdr.h>
void hot(int a);
void hot(int a) { fdr_span(bench, span, "a=%d", a); }
"""
FLAGS = ["-O2", "-fno-pic", "-fno-asynchronous-unwind-tables"]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def disassemble(cc, include, source=SOURCE):
    with tempfile.TemporaryDirectory() as d:
        src, obj = os.path.join(d, "hot.c"), os.path.join(d, "hot.o")
        with open(src, "w") as f:
            f.write(source)
        run([cc, *FLAGS, "-I", include, "-c", src, "-o", obj])
        out = run(["objdump", "-d", "-r", "--no-show-raw-insn", "-M", "intel", obj])
    body, inside = [], False
    for line in out.splitlines():
        if re.match(r"^[0-9a-f]+ <hot>:", line):
            inside = True
            continue
        if inside and not line.strip():
            break
        if inside:
            body.append(line.rstrip())
    insns = []  # (address, text), relocations folded into the text
    for line in body:
        if "R_X86_64" in line:
            if insns:
                insns[-1][1] += "    ; " + line.split()[-1]
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(.*)$", line)
        if m:
            insns.append([int(m.group(1), 16), re.sub(r"\s+#.*$", "", m.group(2)).strip()])
    return insns


def kind(text):
    op = text.split()[0]
    args = text[len(op):].split(";")[0]
    if op.startswith("j") or op in ("ret", "call"):
        return "branch" if op not in ("ret", "call", "jmp") else op
    if op == "nop" or op.startswith("nop") or op == "xchg" and "ax,ax" in args:
        return "nop"
    if op == "lea":
        return "alu"
    if op == "push":
        return "store"
    if op == "pop":
        return "load"
    parts = args.split(",", 1)
    if "[" in parts[0] and op.startswith(("mov", "add", "or", "and")) and op != "movzx":
        return "store" if op.startswith("mov") else "rmw"
    if "[" in args:
        return "load"
    return "alu"


def target(text):
    m = re.match(r"^\S+\s+([0-9a-f]+)\b", text)
    return int(m.group(1), 16) if m else None


def walk(insns, start, take_first_branch):
    """Straight-line path from `start` to the first ret: conditional
    branches fall through, except the first one when take_first_branch."""
    at = {a: i for i, (a, _) in enumerate(insns)}
    i, path, first = at[start], [], True
    while i < len(insns):
        a, t = insns[i]
        k = kind(t)
        if k != "nop":
            path.append((a, t, k))
        if k == "ret":
            break
        if k == "jmp" or (k == "branch" and first and take_first_branch):
            first = False
            i = at[target(t)]
            continue
        if k == "branch":
            first = False
        i += 1
    return path


def counts(path):
    c = {"instructions": len(path), "loads": 0, "stores": 0, "branches": 0}
    for _, t, k in path:
        if k == "load" or k == "ret":
            c["loads"] += 1 if k == "load" else 0
        elif k == "store":
            c["stores"] += 1
        elif k == "rmw":
            c["loads"] += 1
            c["stores"] += 1
        if k == "branch":
            c["branches"] += 1
    return c


def document(cc, include=os.path.join(TOP, "include")):
    # without the program's name: cc and gcc are the same compiler
    version = run([cc, "--version"]).splitlines()[0].split(None, 1)[-1]
    insns = disassemble(cc, include)
    disabled = walk(insns, insns[0][0], False)
    enabled = walk(insns, insns[0][0], True)
    out = []
    w = out.append
    w("<!-- generated by scripts/disasm-hotpath.py; do not edit (ctest hotpath-doc) -->")
    w("# The two-int hot path, as compiled")
    w("")
    w("Compiler: `%s`, flags `%s`, x86-64." % (version, " ".join(FLAGS)))
    w("Regenerate: `scripts/disasm-hotpath.py > docs/hotpath.md`.")
    w("")
    w("Source (the benchmark's `two_ints` event):")
    w("")
    w("```c")
    w(SOURCE.rstrip())
    w("```")
    w("")
    w("| path | instructions | loads | stores | branches |")
    w("|---|---|---|---|---|")
    for name, p in (("disabled (state 0)", disabled), ("enabled, common case", enabled)):
        c = counts(p)
        w("| %s | %d | %d | %d | %d |" % (name, c["instructions"], c["loads"], c["stores"],
                                          c["branches"]))
    w("")
    w("Loads and stores include the stack (`push`, `pop`); `ret` is not counted")
    w("as a branch. The common case is the path from the entry, through the")
    w("first branch (state != 0), falling through every later branch, to `ret`.")
    w("")
    w("Common enabled path:")
    w("")
    w("```")
    for a, t, k in enabled:
        w("%4x  %-60s %s" % (a, t, "" if k == "alu" else k))
    w("```")
    w("")
    w("Whole function (slow-path calls out of line):")
    w("")
    code = lambda ins: ["```"] + ["%4x  %s" % (a, t) for a, t in ins] + ["```"]
    out.extend(code(insns))
    span = disassemble(cc, include, SPAN_SOURCE)
    c = counts(walk(span, span[0][0], False))
    w("")
    w("## A scoped span")
    w("")
    w("```c")
    w(SPAN_SOURCE.rstrip())
    w("```")
    w("")
    w("| path | instructions | loads | stores | branches |")
    w("|---|---|---|---|---|")
    w("| disabled (state 0) | %d | %d | %d | %d |" % (c["instructions"], c["loads"],
                                                    c["stores"], c["branches"]))
    w("")
    w("Off, a span is an off event: the end tests nothing more (the begin's")
    w("depth, 0, is known at compile time on that path). On, it is the begin")
    w("event (a u16 depth before the fields), the push on the thread's span")
    w("stack (load the depth, store it and the class id), then the end event")
    w("(a u16) and the pop; `fdr-bench-spans` (bench/spans.c) times it against")
    w("two plain events. Whole function:")
    w("")
    out.extend(code(span))
    return "\n".join(out) + "\n"


def properties(cc):
    """What the fast path promises, checked on the code: the disabled
    event is one load and one branch; the common enabled path has no
    atomic read-modify-write, no fence and no call."""
    insns = disassemble(cc, os.path.join(TOP, "include"))
    c = counts(walk(insns, insns[0][0], False))
    if c["loads"] != 1 or c["branches"] != 1:
        return "the disabled event is %d loads and %d branches, not 1 and 1" % (
            c["loads"], c["branches"])
    for a, t, k in walk(insns, insns[0][0], True):
        op = t.split()[0]
        if (op in ("lock", "mfence", "lfence", "sfence", "call") or op.startswith("cmpxchg")
                or op.startswith("xadd") or (op == "xchg" and "ax,ax" not in t)):
            return "the enabled path has `%s` at %x" % (t, a)
    span = disassemble(cc, os.path.join(TOP, "include"), SPAN_SOURCE)
    off = walk(span, span[0][0], False)
    c = counts(off)
    if c["loads"] != 1 or c["branches"] != 1 or any(k == "call" for _, _, k in off):
        return "the disabled span is %d loads and %d branches (and no call), not 1 and 1" % (
            c["loads"], c["branches"])
    for a, t in span:
        op = t.split()[0]
        if (op in ("lock", "mfence", "lfence", "sfence") or op.startswith("cmpxchg")
                or op.startswith("xadd") or (op == "xchg" and "ax,ax" not in t)):
            return "the span has `%s` at %x" % (t, a)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--check", metavar="DOC")
    ap.add_argument("--counts", metavar="INCLUDE_DIR",
                    help="print only the counts table, for the headers in INCLUDE_DIR")
    a = ap.parse_args()
    if a.counts:
        doc = document(a.cc, a.counts)
        sys.stdout.write("\n".join(l for l in doc.splitlines() if l.startswith("|")) + "\n")
        return 0
    try:
        doc = document(a.cc)
    except (OSError, subprocess.CalledProcessError) as e:
        print("disasm-hotpath: cannot compile or disassemble: %s" % e, file=sys.stderr)
        return 77 if a.check else 1
    bad = properties(a.cc)
    if bad:
        print("disasm-hotpath: %s" % bad, file=sys.stderr)
        return 1
    if not a.check:
        sys.stdout.write(doc)
        return 0
    with open(a.check) as f:
        old = f.read()
    line = [l for l in old.splitlines() if l.startswith("Compiler: ")]
    new_line = [l for l in doc.splitlines() if l.startswith("Compiler: ")]
    if line != new_line:
        print("disasm-hotpath: %s was made with another compiler (%s); skipped"
              % (a.check, line[0] if line else "none"))
        return 77
    if old == doc:
        print("disasm-hotpath: %s is current" % a.check)
        return 0
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), doc.splitlines(True),
                                               a.check, "regenerated"))
    print("disasm-hotpath: %s is stale: run scripts/disasm-hotpath.py > %s"
          % (a.check, a.check))
    return 1


if __name__ == "__main__":
    sys.exit(main())
