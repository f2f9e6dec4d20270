# SPDX-License-Identifier: MIT
"""test-reader.py - a reader built on the shared core alone prints, from a
trace directory written by libfdr, the very lines FDR_TRACES printed live.

    test-reader.py PROG READER FDR_COMMON_A OUTDIR

PROG (tests/common/progs/reader-prog.c) runs with FDR_OUTPUT, FDR_TRACES
and FDR_TRACE_FILE set: four threads, events of many field types. READER
(tests/common/test-reader.c) links fdr_common only: every fdr symbol in it
must be defined by FDR_COMMON_A, and it must not need libfdr. Its lines
must equal the live ones byte for byte, thread by thread (the order across
threads differs: live lines are printed as they happen, the reader goes
stream by stream). Then corrupt copies of the trace (a class file cut
short, a packet header and an event scribbled over) must each give exit
status 1 and one line naming the file and the offset."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as t  # noqa: E402

prog, reader, common_a, out = sys.argv[1:5]
N = 25

# The reader uses the core alone.
def syms(args):
    p = subprocess.run(["nm"] + args, stdout=subprocess.PIPE, text=True, check=True)
    return {ln.split()[-1] for ln in p.stdout.splitlines() if ln.strip()}

core = syms(["--defined-only", "-g", common_a])
mine = {s for s in syms([reader]) if s.lower().startswith("fdr")}
t.check(mine and mine <= core, "reader symbols not from fdr_common: %s" % sorted(mine - core))
needed = subprocess.run(["readelf", "-d", reader], stdout=subprocess.PIPE, text=True).stdout
t.check("libfdr" not in needed, "the reader needs libfdr:\n" + needed)

live = os.path.join(out, "live.txt")
os.makedirs(out, exist_ok=True)
if os.path.exists(live):
    os.remove(live)  # FDR_TRACE_FILE appends
trace = os.path.join(out, "trace")
p = t.run([prog, str(N)], trace, {"FDR_TRACES": "rd:*", "FDR_TRACE_FILE": live})
dirs = os.listdir(trace)
t.check(len(dirs) == 1, "one process directory in %s: %s" % (trace, dirs))
pdir = os.path.join(trace, dirs[0])
t.check(os.path.exists(os.path.join(pdir, ".fdr-classes")), "no class file in " + pdir)
t.clean(pdir)

def by_tid(lines):
    groups = {}
    for ln in lines:
        m = re.match(rb"\S+ \[(\d+)\] ", ln)
        t.check(m is not None, "not a line: %r" % ln)
        if m:
            groups.setdefault(m.group(1), []).append(ln)
    return groups

with open(live, "rb") as f:
    want = f.read().splitlines(keepends=True)
r = subprocess.run([reader, pdir], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
t.check(r.returncode == 0 and r.stderr == b"", "reader failed (%d): %s" % (r.returncode, r.stderr))
got = r.stdout.splitlines(keepends=True)
t.check(len(want) == 2 + 4 * 4 * N, "live printed %d lines, not %d" % (len(want), 2 + 16 * N))
t.check(len(got) == len(want), "reader printed %d lines, live %d" % (len(got), len(want)))
w, g = by_tid(want), by_tid(got)
t.check(len(w) == 4, "live lines of %d threads, not 4" % len(w))
for tid in w:
    if not t.check(g.get(tid) == w[tid], "thread %s: reader's lines differ from live" % tid.decode()):
        for a, b in zip(w[tid], g.get(tid, [])):
            if a != b:
                print("live:   %r\nreader: %r" % (a, b), file=sys.stderr)
                break
t.check(sorted(got) == sorted(want), "reader's lines are not the live ones")
# Each field type made it: a few values as written.
text = b"".join(got)
for s in [b"i8=-100 ", b"u64=18446744073709551615", b"hex=0xbeef ", b"oct=755 ",
          b"ptr=0x1000", b"s=with \"quotes\"", b"c=a b=0", b"f=0.333333 ", b"rd:stop"]:
    t.check(s in text, "no %r in the reader's lines" % s)

# Untrusted input: one line naming file and offset, status 1, no crash.
def corrupt(name, what, edit):
    d = os.path.join(out, "bad-" + name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(pdir, d)
    path = os.path.join(d, what)
    with open(path, "rb") as f:
        b = bytearray(f.read())
    b = edit(b)
    with open(path, "wb") as f:
        f.write(b)
    r = subprocess.run([reader, d], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    err = r.stderr.decode(errors="replace")
    t.check(r.returncode == 1, "%s: exit status %d, not 1" % (name, r.returncode))
    t.check(err.count("\n") == 1 and (what + ": offset ") in err,
            "%s: not one line naming %s and an offset: %r" % (name, what, err))
    return err

def scribble(at, byte):
    def edit(b):
        b[at] ^= byte
        return b
    return edit

corrupt("classes-short", ".fdr-classes", lambda b: b[:len(b) - 3])
corrupt("classes-magic", ".fdr-classes", scribble(0, 0xff))
streams = sorted(f for f in os.listdir(pdir) if f.startswith("stream_"))
big = max(streams, key=lambda f: os.path.getsize(os.path.join(pdir, f)))
err = corrupt("packet-magic", big, scribble(0, 0x55))
t.check("offset 0:" in err, "packet-magic: not at offset 0: %r" % err)
# The first event's class id (just after the 100-byte packet header and
# context): an id no class has.
corrupt("event-id", big, lambda b: b[:100] + b"\xff\x7f" + b[102:])
t.finish()
