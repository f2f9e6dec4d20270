# SPDX-License-Identifier: MIT
"""test-fdr-offline-corrupt.py - `fdr print` and `fdr stats` on damaged
traces: one line on stderr naming the file and the offset, the rest of the
trace still printed, exit status 1; never a crash or a hang.

    test-fdr-offline-corrupt.py FDR OFFLINE_PROG OUTDIR

The trace: offline-prog parent (two processes) with 4 KiB packets, so each
stream has several packets. Copies of it get: a stream file cut in the
middle of its last packet; the magic of a stream's first packet
overwritten (the reader finds the next packet header and goes on); a
garbage class file (that process is skipped, the other is printed); a
packet whose sizes claim more than the packet or the file (copies of its
events written over what follows: no event read twice); a
class file without classes (few lines however many packets); and
the tool is run on an empty and on a missing directory."""
import os
import re
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402

fdr, prog, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
trace = os.path.join(out, "trace")
# Overwrite mode: writing to disk its rings have their full size from the
# start, so each thread's events are one stream of several packets (in
# discard mode a thread starts with a ring of two packets and goes on in a
# larger one, in a stream of its own: under load no stream had 3 packets).
# Nothing is overwritten: the 1 MiB rings hold every event.
N = 60
c.run([prog, "parent", str(N)], trace, {"FDR_PACKET_SIZE": "4096", "FDR_MODE": "overwrite"})
procs = sorted(os.listdir(trace))
c.check(len(procs) == 2, "two processes: %s" % procs)


def run(verb, path, *extra):
    p = subprocess.run([fdr, verb, path] + list(extra), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    c.check(p.returncode >= 0, "fdr %s %s died of signal %d" % (verb, path, -p.returncode))
    return p.returncode, p.stdout.decode(errors="replace").splitlines(), \
        p.stderr.decode(errors="replace")


rc, full, err = run("print", trace)
c.check(rc == 0 and err == "", "the intact trace: exit %d, %r" % (rc, err))
c.check(len(full) == 2 * (2 + 4 * 5 * N), "intact trace: %d lines" % len(full))


def packets(path):
    """Offsets and sizes of the packets of a stream file."""
    with open(path, "rb") as f:
        b = f.read()
    offs, off = [], 0
    while off + 100 <= len(b):
        size = struct.unpack_from("<Q", b, off + 52)[0] // 8
        offs.append((off, size))
        off += size
    return offs


def copy(name):
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(trace, d)
    return d


def subsequence(part, whole):
    it = iter(whole)
    return all(any(x == y for y in it) for x in part)


def one_line(name, err, file, offset):
    want = "%s: offset %d: " % (file, offset)
    c.check(err.count("\n") == 1 and err.startswith("fdr ") and want in err,
            "%s: not one line naming %s: %r" % (name, want, err))


# The stream with the most packets of the first process.
pdir = procs[0]
streams = sorted((f for f in os.listdir(os.path.join(trace, pdir)) if f.startswith("stream_")),
                 key=lambda f: -len(packets(os.path.join(trace, pdir, f))))
big = streams[0]
pk = packets(os.path.join(trace, pdir, big))
c.check(len(pk) >= 3, "%s has %d packets, want 3 or more" % (big, len(pk)))

# 1. Cut in the middle of the last packet.
d = copy("cut")
path = os.path.join(d, pdir, big)
last_off, last_size = pk[-1]
with open(path, "r+b") as f:
    f.truncate(last_off + last_size // 2)
for verb in ("print", "stats"):
    rc, lines, err = run(verb, d)
    c.check(rc == 1, "cut, %s: exit %d, not 1" % (verb, rc))
    one_line("cut, " + verb, err, path, last_off)
    c.check("truncated packet" in err, "cut: %r" % err)
rc, lines, err = run("print", d)
lost = len(full) - len(lines)
c.check(0 < lost < 4096 // 11, "cut: %d lines lost, want the events of one packet" % lost)
c.check(subsequence(lines, full), "cut: the lines printed are not the intact trace's")

# 2. The magic of the first packet overwritten: that packet is lost, the
# reader finds the next one.
d = copy("magic")
path = os.path.join(d, pdir, big)
with open(path, "r+b") as f:
    f.write(b"\x00\x00\x00\x00")
rc, lines, err = run("print", d)
c.check(rc == 1, "magic: exit %d, not 1" % rc)
one_line("magic", err, path, 0)
lost = len(full) - len(lines)
c.check(0 < lost < 4096 // 11, "magic: %d lines lost, want the events of one packet" % lost)
c.check(subsequence(lines, full), "magic: the lines printed are not the intact trace's")

# 3. A packet header's sizes scribbled over (content_size of the second
# packet made odd): that packet is skipped, the third still read.
d = copy("sizes")
path = os.path.join(d, pdir, big)
with open(path, "r+b") as f:
    f.seek(pk[1][0] + 44)
    f.write(struct.pack("<Q", 12345))
rc, lines, err = run("print", d)
c.check(rc == 1, "sizes: exit %d, not 1" % rc)
one_line("sizes", err, path, pk[1][0])
lost = len(full) - len(lines)
c.check(0 < lost < 4096 // 11, "sizes: %d lines lost" % lost)

# 3b. Sizes that claim more than the packet, or than the file (issue 27):
# packet K claims its events plus copies of them written over what follows,
# so that every byte it claims parses as events and only the size bounds
# can reject it. "content": content larger than the packet (copies over the
# rest of K and over K+1; K and K+1 lost, K+2 found again); "file": the
# last packet larger than the rest of the file, its content (two copies
# appended) within it (that packet lost). Each: one line naming K's offset,
# the rest printed, no event twice; print, stats and export exit 1.
def n_events(d):
    """Trace events the chrome export of d holds, and its exit status."""
    o = os.path.join(out, "export.json")
    p = subprocess.run([fdr, "export", "--format", "chrome", d, "-o", o],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    c.check(p.returncode >= 0, "fdr export %s died of signal %d" % (d, -p.returncode))
    with open(o, "rb") as f:
        return p.returncode, p.stderr.decode(errors="replace"), f.read().count(b'"ph":"i"')


rc, err, full_exported = n_events(trace)
c.check(rc == 0 and full_exported > 0, "intact export: exit %d, %d instants: %r"
        % (rc, full_exported, err))
for kind, k in (("content", 0), ("file", len(pk) - 1)):
    d = copy("claims-" + kind)
    path = os.path.join(d, pdir, big)
    with open(path, "rb") as f:
        b = bytearray(f.read())
    off = pk[k][0]
    content = struct.unpack_from("<Q", b, off + 44)[0] // 8
    events = bytes(b[off + 100:off + content])
    if kind == "content":
        m = (pk[k + 2][0] - off - content) // len(events)
        for j in range(m):
            at = off + content + j * len(events)
            b[at:at + len(events)] = events
    else:  # the last packet: the copies appended
        m = 2
        b[off + content:] = events * m
    claim = content + m * len(events)
    packet = pk[k][1] if kind == "content" else (claim + 7) // 8 * 8 + 4096
    c.check(claim > pk[k][1] and claim <= len(b) - off and
            (packet > len(b) - off if kind == "file" else packet < claim),
            "claims-%s: %d bytes claimed by a packet of %d (now %d), %d left in the file"
            % (kind, claim, pk[k][1], packet, len(b) - off))
    struct.pack_into("<QQ", b, off + 44, claim * 8, packet * 8)
    with open(path, "wb") as f:
        f.write(b)
    for verb in ("print", "stats"):
        rc, lines, err = run(verb, d)
        c.check(rc == 1, "claims-%s, %s: exit %d, not 1" % (kind, verb, rc))
        one_line("claims-%s, %s" % (kind, verb), err, path, off)
    rc, lines, err = run("print", d)
    c.check(len(lines) < len(full) and subsequence(lines, full),
            "claims-%s: %d lines of %d, not all the intact trace's in its order (the "
            "copies taken?)" % (kind, len(lines), len(full)))
    lost = len(full) - len(lines)
    c.check(lost < 3 * 4096 // 11, "claims-%s: %d lines lost, want two packets'" % (kind, lost))
    rc, err, n = n_events(d)
    c.check(rc == 1 and "offset %d: " % off in err and n < full_exported,
            "claims-%s, export: exit %d, %d instants of %d: %r"
            % (kind, rc, n, full_exported, err))

# 3c. The first packet's sequence number or packet size scribbled larger:
# one line, and every other packet still read. A number scribbled high made
# every later packet "go back" (their times do not: read), and a size past
# the end of the file ended the stream: the rest of it was lost.
for kind in ("seq", "size"):
    d = copy("first-" + kind)
    path = os.path.join(d, pdir, big)
    with open(path, "r+b") as f:
        if kind == "seq":
            f.seek(60)
            f.write(struct.pack("<Q", 1 << 40))
        else:
            f.seek(52)
            f.write(struct.pack("<Q", (os.path.getsize(path) + 4096) * 8))
    rc, lines, err = run("print", d)
    c.check(rc == 1, "first-%s: exit %d, not 1" % (kind, rc))
    one_line("first-" + kind, err, path, pk[1][0] if kind == "seq" else 0)
    lost = len(full) - len(lines)
    if kind == "seq":
        c.check(lost == 0, "first-seq: %d lines lost, want none" % lost)
    else:
        c.check(0 < lost < 4096 // 11, "first-size: %d lines lost, want the events of one "
                "packet (of %d packets)" % (lost, len(pk)))
    c.check(subsequence(lines, full), "first-%s: the lines are not the intact trace's" % kind)

# 4. A garbage class file: that process is skipped with one line, the other
# process is printed whole.
d = copy("classes")
path = os.path.join(d, pdir, ".fdr-classes")
with open(path, "wb") as f:
    f.write(os.urandom(1000))
for verb in ("print", "stats"):
    rc, lines, err = run(verb, d)
    c.check(rc == 1, "classes, %s: exit %d, not 1" % (verb, rc))
    c.check(err.count("\n") == 1 and re.search(re.escape(path) + r": offset \d+: ", err),
            "classes, %s: not one line naming the class file: %r" % (verb, err))
rc, lines, err = run("print", d)
other = procs[1].rsplit("-", 1)[1]
c.check(len(lines) == 2 + 4 * 5 * N and all(ln.startswith(other + " ") or
                                             not ln.split()[0].isdigit() for ln in lines),
        "classes: %d lines, want the other process's %d" % (len(lines), 2 + 4 * 5 * N))

# 4a. A trace of an older fdr (10-byte event headers, class file version
# 1): refused with one line that says so; babeltrace2 reads such traces.
d = copy("old")
path = os.path.join(d, pdir, ".fdr-classes")
with open(path, "r+b") as f:
    f.seek(4)
    f.write(struct.pack("<H", 1))
rc, lines, err = run("print", d)
c.check(rc == 1 and err.count("\n") == 1 and path in err and
        "written by an older fdr (10-byte event headers)" in err,
        "old: exit %d, not one line naming the class file and its header: %r" % (rc, err))

# 4b. A valid class file with no class: every packet's first event is
# unknown. At most 5 lines per stream file, then one saying the rest of
# that file's problems are not shown; the other process printed whole.
d = copy("noclass")
path = os.path.join(d, pdir, ".fdr-classes")
with open(path, "rb") as f:
    head = bytearray(f.read(32))
struct.pack_into("<II", head, 8, 0, 0)
with open(path, "wb") as f:
    f.write(head)
rc, lines, err = run("print", d)
nstreams = len([f for f in os.listdir(os.path.join(d, pdir)) if f.startswith("stream_")])
errs = err.splitlines()
c.check(rc == 1 and 0 < len(errs) <= 6 * nstreams and
        all(re.search(r"/stream_\d+: offset \d+: ", e) for e in errs),
        "noclass: exit %d, %d lines for %d streams: %r" % (rc, len(errs), nstreams, errs[:8]))
# How many packets each stream holds depends on how the threads shared
# the rings (timing): the line is due where a file has more than 5.


def packets(path):
    with open(path, "rb") as f:
        b = f.read()
    n = off = 0
    while off + 60 <= len(b):
        size = struct.unpack_from("<Q", b, off + 52)[0] // 8
        if size <= 0:
            break
        n, off = n + 1, off + size
    return n


many = [f for f in os.listdir(os.path.join(d, pdir))
        if f.startswith("stream_") and packets(os.path.join(d, pdir, f)) > 5]
more = [e for e in errs if "more problems in this file, not shown" in e]
c.check(len(more) == len(many),
        "noclass: %d lines saying further problems are not shown, for %d files of more "
        "than 5 packets: %r" % (len(more), len(many), errs[:8]))
c.check(len(lines) == 2 + 4 * 5 * N, "noclass: %d lines, want the other process's" % len(lines))

# 5. An empty directory, a missing one, a class file alone that is garbage.
empty = os.path.join(out, "empty")
shutil.rmtree(empty, ignore_errors=True)
os.makedirs(empty)
missing = os.path.join(out, "no-such-dir")
for verb in ("print", "stats"):
    rc, lines, err = run(verb, empty)
    c.check(rc == 1 and lines == [] and err.count("\n") == 1 and empty in err and
            "no trace" in err, "empty, %s: exit %d, %r" % (verb, rc, err))
    rc, lines, err = run(verb, missing)
    c.check(rc == 1 and lines == [] and err.count("\n") == 1 and missing in err and
            "No such file or directory" in err, "missing, %s: exit %d, %r" % (verb, rc, err))

# 6. Every byte of a packet header flipped in turn, and random bytes over
# the events: never a crash (checked in run), at most a line per problem.
d = copy("fuzz")
path = os.path.join(d, pdir, big)
with open(os.path.join(trace, pdir, big), "rb") as f:
    orig = f.read()
for at in list(range(0, 100, 3)) + [pk[1][0] + 100 + k for k in range(0, 300, 7)]:
    b = bytearray(orig)
    b[at] ^= 0xA5
    with open(path, "wb") as f:
        f.write(b)
    rc, lines, err = run("print", d)
    c.check(rc in (0, 1), "flip at %d: exit %d" % (at, rc))
    c.check(len(lines) >= len(full) - 3 * (4096 // 11), "flip at %d: only %d lines" % (at, len(lines)))
c.finish()
