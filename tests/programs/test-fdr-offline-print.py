# SPDX-License-Identifier: MIT
"""test-fdr-offline-print.py - `fdr print` says what babeltrace2 reads.

    test-fdr-offline-print.py FDR OFFLINE_PROG OUTDIR

offline-prog parent (tests/programs/progs/offline-prog.c) writes a trace of
two processes (a fork + exec of itself into the same FDR_OUTPUT), four
threads each, with every field type (bool, char, i8..u64, float, double,
pointer, strings with UTF-8 and one cut by FDR_STRING_MAX, raw bytes).
`fdr print DIR` must give the events bt2 reads, event by event in time
order (clock value, then process directory, then stream), each value
parsed back from its line equal to bt2's, and each line's time equal to
(clock value - first process's line start) / frequency from the class
files. --filter, --pid, --tid, --since and --until are counted against
bt2; bad arguments give one line and exit 2. A one-process directory
prints lines without the pid prefix, and exactly the lines live tracing
(FDR_TRACES) printed for the same events.

babeltrace2 2.0.4 gives an empty string field the value of an earlier
string (a known bug of 2.0: efficios/babeltrace pull request 116, fixed
upstream by review.lttng.org change 4528): where fdr print shows an empty
string and bt2 does not, the value the program recorded is checked instead
(offline-prog writes words[i % 6], and words[1] is "")."""
import math
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402

fdr, prog, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
trace = os.path.join(out, "trace")
N = 40
c.run([prog, "parent", str(N)], trace, {"FDR_STRING_MAX": "32", "FDR_PACKET_SIZE": "4096"})
procs = sorted(os.listdir(trace))
c.check(len(procs) == 2 and all(re.fullmatch(r"offline-prog-\d+", p) for p in procs),
        "two process directories: %s" % procs)
c.clean(trace)
t = c.read(trace)
EVENTS_PER_PROC = 2 + 4 * 5 * N
c.check(len(t.events) == 2 * EVENTS_PER_PROC, "bt2 read %d events, not %d"
        % (len(t.events), 2 * EVENTS_PER_PROC))
kinds = {k for name, fields in c.typed_events(trace) for _, k, _ in fields}
for k in ["unsigned8", "signed8", "signed16", "signed32", "signed64", "unsigned16",
          "unsigned32", "unsigned64", "real32", "real64", "hex64", "string"]:
    c.check(k in kinds, "no field of kind %s in the trace" % k)


def line_clock(pdir):
    with open(os.path.join(trace, pdir, ".fdr-classes"), "rb") as f:
        head = f.read(32)
    return struct.unpack_from("<QQ", head, 16)


clocks = {}
for p in procs:
    clocks[int(p.rsplit("-", 1)[1])] = line_clock(p)
ref = min(s for s, _ in clocks.values())
order = {int(p.rsplit("-", 1)[1]): i for i, p in enumerate(procs)}


def line_ns(e):
    start, freq = clocks[e.pid]
    return int(float(e.cycles - ref) * 1e9 / float(freq)) if e.cycles >= ref else 0


# bt2's events in the reader's order: clock value, process, stream.
want = sorted(t.events, key=lambda e: (e.cycles, order[e.pid], e.stream))

LINE = re.compile(r"^(?:(\d+) )?(\d+)\.(\d{9}) \[(\d+)\] (\S+?:\S+?)(?: (.*))?$")


def parse(line):
    m = LINE.match(line)
    if not m:
        return None
    pid = int(m.group(1)) if m.group(1) else None
    ns = int(m.group(2)) * 1000000000 + int(m.group(3))
    name, msg = m.group(5), m.group(6) or ""
    fields = {}
    if name == "oraw:event_0":
        data = msg[len("data="):]
        fields["data"] = [int(x, 16) for x in data.split()] if data else []
        fields["data_len"] = len(fields["data"])
    elif name == "ofl:text":
        head, _, s = msg.partition(" s=")
        for kv in head.split():
            k, v = kv.split("=", 1)
            fields[k] = int(v)
        fields["s"] = s
    else:
        for kv in msg.split():
            k, v = kv.split("=", 1)
            fields[k] = v
    return pid, ns, int(m.group(4)), name, fields


def value(name, k, text, bt):
    """The value of field k printed as text, as bt2 gives it."""
    if k in ("f", "d"):
        return float(text)
    if k == "p":
        return int(text, 16)
    if k == "ch":
        return ord(text)
    return int(text)


def same_real(k, got, bt):
    if k == "f":  # float: printed with %.9g, which round-trips a float32
        return c.same(struct.unpack("f", struct.pack("f", got))[0], bt)
    if c.same(got, bt):
        return True
    # format.c's %.17g is exact to the last digit for usual magnitudes only
    # (its head comment); at the extremes of the double range allow 1e-14.
    return (not math.isnan(bt) and not math.isinf(bt) and abs(bt) > 1e200 or
            0 < abs(bt) < 1e-200) and math.isclose(got, bt, rel_tol=1e-14, abs_tol=0)


def fdr_print(args, rc=0):
    p = subprocess.run([fdr, "print"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    c.check(p.returncode == rc, "fdr print %s: exit %d, not %d: %s"
            % (args, p.returncode, rc, p.stderr.decode(errors="replace")))
    return p.stdout.decode("utf-8", errors="strict").splitlines(), p.stderr.decode()


lines, err = fdr_print([trace])
c.check(err == "", "fdr print wrote on stderr: %r" % err)
c.check(len(lines) == len(want), "fdr print: %d lines, bt2 %d events" % (len(lines), len(want)))
bad = bt2_empty_bug = 0
for i, (ln, e) in enumerate(zip(lines, want)):
    got = parse(ln)
    ok = got is not None
    if ok:
        pid, ns, tid, name, fields = got
        ok = pid == e.pid and tid == e.tid and name == e.name and ns == line_ns(e)
        if ok and name == "ofl:text" and fields.get("s") == "" and e.fields["s"] != "":
            ok = fields["i"] % 6 == 1 and fields["t"] == e.fields["t"] and \
                fields["i"] == e.fields["i"]  # bt2 2.0's empty-string bug
            bt2_empty_bug += ok
        elif ok and (name.startswith("oraw:") or name == "ofl:text"):
            ok = fields == e.fields
        elif ok:
            ok = set(fields) == set(e.fields)
            for k in fields if ok else []:
                v = value(name, k, fields[k], e.fields[k])
                good = same_real(k, v, e.fields[k]) if k in ("f", "d") else v == e.fields[k]
                ok = ok and good
    if not ok:
        bad += 1
        if bad <= 5:
            c.check(False, "event %d: line %r, bt2 %s (line time should be %d)"
                    % (i, ln, e, line_ns(e)))
c.check(bad == 0, "%d events differ between fdr print and bt2" % bad)
c.check(any("…" in (e.fields.get("s") or "") for e in want), "no cut string in the trace")
c.check(any("🎉" in ln for ln in lines), "no UTF-8 string printed")

# One process: no pid prefix, same lines otherwise.
one = os.path.join(trace, procs[0])
pid0 = int(procs[0].rsplit("-", 1)[1])
lines1, _ = fdr_print([one])
c.check(lines1 == [ln.split(" ", 1)[1] for ln in lines if ln.startswith("%d " % pid0)],
        "fdr print of one process differs from its lines in the whole trace")

# The lines live tracing printed (FDR_TRACES) for a one-process trace:
# fdr print gives the same lines, in time order (live lines of different
# threads are in the order they were written, so compare them sorted).
live = os.path.join(out, "live.txt")
if os.path.exists(live):
    os.remove(live)
solo = os.path.join(out, "solo")
c.run([prog, "types", "20"], solo, {"FDR_TRACES": "ofl:*,oraw:*", "FDR_TRACE_FILE": live,
                                    "FDR_STRING_MAX": "32"})
with open(live, "rb") as f:
    want_live = f.read().decode("utf-8").splitlines()
got_solo, err = fdr_print([solo])
c.check(err == "" and len(want_live) == 2 + 4 * 5 * 20, "live: %d lines, %r" % (len(want_live), err))
c.check(sorted(got_solo) == sorted(want_live), "fdr print's lines are not the live ones")
stamps = [int(ln.split()[0].replace(".", "")) for ln in got_solo]
c.check(stamps == sorted(stamps), "fdr print's lines are not in time order")

# Filters, counted against bt2.
def count(args):
    return len(fdr_print(args + [trace])[0])


def bt_count(pred):
    return sum(1 for e in want if pred(e))


for pat, pred in [("ofl:ints,ofl:text", lambda e: e.name in ("ofl:ints", "ofl:text")),
                  ("-ofl:ints", lambda e: e.name != "ofl:ints"),
                  ("oraw:*", lambda e: e.name.startswith("oraw:")),
                  ("st*", lambda e: e.name in ("ofl:start", "ofl:stop"))]:
    got, exp = count(["--filter", pat]), bt_count(pred)
    c.check(got == exp and exp > 0, "--filter %s: %d lines, bt2 %d" % (pat, got, exp))
pids = sorted({e.pid for e in want})
got, exp = count(["--pid", str(pids[1])]), bt_count(lambda e: e.pid == pids[1])
c.check(got == exp == EVENTS_PER_PROC, "--pid: %d lines, bt2 %d" % (got, exp))
tids = sorted({e.tid for e in want if e.tid != e.pid})
got, exp = count(["--tid", str(tids[0])]), bt_count(lambda e: e.tid == tids[0])
c.check(got == exp == 5 * N, "--tid: %d lines, bt2 %d" % (got, exp))
times = sorted(line_ns(e) for e in want)
lo, hi = times[len(times) // 4], times[3 * len(times) // 4]
s_lo, s_hi = "%d.%09d" % divmod(lo, 10**9), "%d.%09d" % divmod(hi, 10**9)
got, exp = count(["--since", s_lo]), bt_count(lambda e: line_ns(e) >= lo)
c.check(got == exp, "--since %s: %d lines, bt2 %d" % (s_lo, got, exp))
got, exp = count(["--until", s_hi]), bt_count(lambda e: line_ns(e) <= hi)
c.check(got == exp, "--until %s: %d lines, bt2 %d" % (s_hi, got, exp))
got = count(["--since", s_lo, "--until", s_hi, "--pid", str(pids[0]), "--filter", "ofl:*"])
exp = bt_count(lambda e: lo <= line_ns(e) <= hi and e.pid == pids[0] and
               e.name.startswith("ofl:"))
c.check(got == exp and exp > 0, "all filters: %d lines, bt2 %d" % (got, exp))

# Bad arguments: one line, exit 2, nothing printed.
for args, what in [(["--filter", "net:[rx"], "bad pattern 'net:[rx'"),
                   (["--filter", "x=3"], "bad pattern"),
                   (["--pid", "12a"], "--pid wants a number"),
                   (["--since", "-1"], "--since wants seconds"),
                   (["--until", "1.5s"], "--until wants seconds"),
                   (["--bogus"], "unknown option")]:
    o, e = fdr_print(args + [trace], rc=2)
    c.check(o == [] and e.count("\n") == 1 and e.startswith("fdr print: ") and what in e,
            "fdr print %s: %r" % (args, e))
c.finish()
