# SPDX-License-Identifier: MIT
"""test-fdr-export.py FDR EXPORT_PROG OFFLINE_PROG PROTO OUTDIR - `fdr export`
holds what babeltrace2 reads.

export-prog (3 threads x ROUNDS rounds of work_enter, step, inner_begin,
inner_end, work_exit, and one stray_exit first) is exported to Chrome JSON
and to Perfetto protobuf; both are compared with the trace as bt2 reads it:
  - Chrome: valid JSON; a process_name and a thread_name per thread; every
    event once, in each thread's order: _enter/_begin as B (name without the
    suffix), _exit/_end as E, a stray end and the others as i; args equal to
    bt2's field values; B/E nest; each event's time since the previous one
    equal to bt2's; one C (counter) event per event, its series the numeric
    fields;
  - Perfetto: `protoc --decode` against programs/fdr/perfetto.proto reads it
    without error; parsed with the Python classes protoc makes from it: a
    clock snapshot first (the first event's time as REALTIME: bt2's ns from
    the epoch within 1 us), a process track, a thread track per thread (named, under the process),
    slices begin/end and instants counted per type, interned names, the
    step events' annotations equal to bt2's values, and the counter track
    ex:step.level holding bt2's level values in time order; the counter of
    ex:work_exit.took__us (track ex:work.took__us) has the unit "us".
offline-prog parent (two processes, every field type) is exported both ways:
per (pid, event) counts equal bt2's, integer fields equal, NaN/Inf as
strings in JSON. --filter keeps only what it selects. export and stats show
a progress bar when stderr is a terminal (a pty), and nothing when not. Bad arguments, a
missing trace, a corrupt stream and an unwritable output each give one line
and a non-zero status (a corrupt stream: the rest still exported)."""
import collections
import json
import math
import os
import pty
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402

fdr, prog, offprog, proto, out = sys.argv[1:6]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
THREADS, ROUNDS = 3, 50
trace = os.path.join(out, "trace")
c.run([prog, str(THREADS), str(ROUNDS)], trace, {"FDR_PACKET_SIZE": "4096"})
c.clean(trace)
t = c.read(trace)
c.check(len(t.events) == THREADS * (1 + 5 * ROUNDS),
        "bt2 read %d events" % len(t.events))


def export(fmt, src, dst, *extra):
    return subprocess.run([fdr, "export", "--format", fmt, src, "-o", dst] + list(extra),
                          capture_output=True, text=True, timeout=300)


def expected_kind(name):
    """(phase, name) the export gives an event of this name (B, E or i)."""
    prov, ev = name.split(":", 1)
    for suf, ph in (("_enter", "B"), ("_begin", "B"), ("_exit", "E"), ("_end", "E")):
        if ev.endswith(suf):
            return ph, prov + ":" + ev[: -len(suf)]
    return "i", name


# ---- Chrome JSON -------------------------------------------------------------
js = os.path.join(out, "trace.json")
p = export("chrome", trace, js)
c.check(p.returncode == 0 and p.stderr == "", "chrome export: %d %s" % (p.returncode, p.stderr))
with open(js) as f:
    doc = json.load(f)
evs = doc["traceEvents"]
meta = [e for e in evs if e["ph"] == "M"]
pname = [e for e in meta if e["name"] == "process_name"]
tname = {e["tid"]: e["args"]["name"] for e in meta if e["name"] == "thread_name"}
c.check(len(pname) == 1 and pname[0]["args"]["name"] == "export-prog",
        "process_name: %s" % pname)
c.check(sorted(tname.values()) == ["ex-%d" % i for i in range(THREADS)],
        "thread names: %s" % tname)
body = [e for e in evs if e["ph"] in "BEi"]
counters = [e for e in evs if e["ph"] == "C"]
c.check(len(body) == len(t.events), "%d B/E/i events, bt2 %d" % (len(body), len(t.events)))
c.check(len(counters) == len(t.events), "%d C events for %d events" %
        (len(counters), len(t.events)))
by_tid_bt, by_tid_js = collections.defaultdict(list), collections.defaultdict(list)
for e in t.events:
    by_tid_bt[e.tid].append(e)
for e in body:
    by_tid_js[e["tid"]].append(e)
c.check(sorted(by_tid_bt) == sorted(by_tid_js), "threads differ")
for tid, bl in by_tid_bt.items():
    jl = by_tid_js.get(tid, [])
    if not c.check(len(bl) == len(jl), "tid %d: %d vs %d events" % (tid, len(bl), len(jl))):
        continue
    depth = 0
    for k, (b, j) in enumerate(zip(bl, jl)):
        ph, name = expected_kind(b.name)
        if b.name == "ex:stray_exit":
            ph, name = "i", b.name  # an end with no begin before it
        c.check(j["ph"] == ph and j["name"] == name and j["pid"] == b.pid,
                "tid %d #%d: %s/%s for %s" % (tid, k, j["ph"], j["name"], b.name))
        c.check(j["args"] == b.fields, "tid %d #%d: args %s, bt2 %s" %
                (tid, k, j["args"], b.fields))
        depth += {"B": 1, "E": -1}.get(j["ph"], 0)
        c.check(depth >= 0, "tid %d: E without B at #%d" % (tid, k))
        if k:
            dj = round(j["ts"] * 1000) - round(jl[k - 1]["ts"] * 1000)
            db = b.ts_ns - bl[k - 1].ts_ns
            c.check(abs(dj - db) <= 10, "tid %d #%d: %d ns after the previous, bt2 %d" %
                    (tid, k, dj, db))
    c.check(depth == 0, "tid %d: %d slices left open" % (tid, depth))
# The C events carry no thread: matched to bt2's step events by their
# (t, i) fields, in time order. Events of two threads within a nanosecond
# may come in either order: bt2 rounds both to the same ns and orders the
# tie by stream, fdr keeps them 1 ns apart (seen once at load).
steps = [e for e in t.events if e.name == "ex:step"]
csteps = [e for e in counters if e["name"] == "ex:step"]
c.check(sorted((e["args"]["t"], e["args"]["i"], sorted(e["args"].items())) for e in csteps) ==
        sorted((e.fields["t"], e.fields["i"],
                sorted((k, float(v)) for k, v in e.fields.items() if k != "what"))
               for e in steps),
        "C events of ex:step do not hold the numeric fields")
c.check(all(float(a["ts"]) <= float(b["ts"]) for a, b in zip(csteps, csteps[1:])),
        "C events of ex:step out of time order")

# ---- Perfetto protobuf ----------------------------------------------------------
pf = os.path.join(out, "trace.pftrace")
p = export("perfetto", trace, pf)
c.check(p.returncode == 0 and p.stderr == "", "perfetto export: %d %s" %
        (p.returncode, p.stderr))
pdir = os.path.dirname(proto)
with open(pf, "rb") as f:
    d = subprocess.run(["protoc", "--decode=fdr.perfetto.Trace", "-I", pdir, proto],
                       stdin=f, capture_output=True, timeout=300)
c.check(d.returncode == 0 and d.stderr == b"", "protoc --decode: %d %s" %
        (d.returncode, d.stderr[-300:]))
c.check(d.stdout.count(b"track_event {") > len(t.events), "protoc printed too little")
py = os.path.join(out, "py")
os.makedirs(py)
subprocess.run(["protoc", "-I", pdir, "--python_out=" + py, proto], check=True)
sys.path.insert(0, py)
import perfetto_pb2  # noqa: E402

tr = perfetto_pb2.Trace()
with open(pf, "rb") as f:
    tr.ParseFromString(f.read())
procs, threads, ctracks, units = {}, {}, {}, {}
names = {}
types = collections.Counter()
per_thread = collections.defaultdict(list)
per_counter = collections.defaultdict(list)
first_flags = None
clocks = None
for pk in tr.packet:
    if pk.HasField("clock_snapshot"):
        c.check(clocks is None and first_flags is None,
                "the clock snapshot is not one, before the events")
        clocks = {ck.clock_id: ck.timestamp for ck in pk.clock_snapshot.clocks}
    if pk.HasField("track_descriptor"):
        td = pk.track_descriptor
        if td.HasField("process"):
            procs[td.uuid] = td.process
        elif td.HasField("thread"):
            threads[td.uuid] = (td.thread, td.parent_uuid)
        elif td.HasField("counter"):
            ctracks[td.uuid] = td.name
            units[td.name] = td.counter.unit_name
    if pk.HasField("interned_data"):
        for en in pk.interned_data.event_names:
            names[en.iid] = en.name
    if pk.HasField("track_event"):
        te = pk.track_event
        if first_flags is None:
            first_flags = pk.sequence_flags
            first_ts = pk.timestamp
        c.check(pk.trusted_packet_sequence_id == 1, "a packet without sequence id 1")
        types[te.type] += 1
        if te.type == te.TYPE_COUNTER:
            v = te.double_counter_value if te.HasField("double_counter_value") \
                else te.counter_value
            per_counter[ctracks.get(te.track_uuid)].append((pk.timestamp, v))
        else:
            per_thread[te.track_uuid].append(te)
c.check(first_flags == 3, "first event's sequence_flags %s (cleared | needs state)" %
        first_flags)
# absolute time: the snapshot maps the packets' clock (BOOTTIME, 6) at the
# first event to REALTIME (1), bt2's ns from the epoch of that event
first_bt = min(e.ts_ns for e in t.events)
c.check(clocks is not None and clocks.get(6) == first_ts and
        abs(clocks.get(1, 0) - first_bt) < 1000,
        "clock snapshot %s: first event at %s, bt2 %d ns from the epoch" %
        (clocks, first_ts if first_flags is not None else None, first_bt))
c.check(len(procs) == 1 and list(procs.values())[0].process_name == "export-prog",
        "process tracks: %s" % procs)
puuid = list(procs)[0] if procs else None
c.check(sorted(th.thread_name for th, _ in threads.values()) ==
        ["ex-%d" % i for i in range(THREADS)], "thread tracks")
c.check(all(parent == puuid for _, parent in threads.values()), "thread tracks' parent")
E = perfetto_pb2.TrackEvent
c.check(types[E.TYPE_SLICE_BEGIN] == THREADS * ROUNDS * 2, "%d slice begins" %
        types[E.TYPE_SLICE_BEGIN])
c.check(types[E.TYPE_SLICE_END] == THREADS * ROUNDS * 2, "%d slice ends" %
        types[E.TYPE_SLICE_END])
c.check(types[E.TYPE_INSTANT] == THREADS * (ROUNDS + 1), "%d instants" %
        types[E.TYPE_INSTANT])
numeric = {"ex:stray_exit": 1, "ex:work_enter": 2, "ex:step": 5, "ex:inner_begin": 1,
           "ex:inner_end": 1, "ex:work_exit": 3}
c.check(types[E.TYPE_COUNTER] == sum(numeric[e.name] for e in t.events),
        "%d counter points" % types[E.TYPE_COUNTER])
for uuid, (th, _) in threads.items():
    bl = by_tid_bt.get(th.tid, [])
    tl = per_thread.get(uuid, [])
    if not c.check(len(bl) == len(tl), "tid %d: %d track events, bt2 %d" %
                   (th.tid, len(tl), len(bl))):
        continue
    for b, te in zip(bl, tl):
        ph, name = expected_kind(b.name)
        if b.name == "ex:stray_exit":
            ph, name = "i", b.name
        want = {"B": E.TYPE_SLICE_BEGIN, "E": E.TYPE_SLICE_END, "i": E.TYPE_INSTANT}[ph]
        c.check(te.type == want, "tid %d: %s as type %d" % (th.tid, b.name, te.type))
        if ph != "E":
            c.check(names.get(te.name_iid) == name, "%s named %s" %
                    (b.name, names.get(te.name_iid)))
        got = {}
        for a in te.debug_annotations:
            vals = [v for fd, v in a.ListFields() if fd.name != "name"]
            got[a.name] = vals[0] if len(vals) == 1 else vals
        c.check(got == b.fields, "tid %d %s: annotations %s, bt2 %s" %
                (th.tid, b.name, got, b.fields))
# In time order; its values bt2's (ties within a nanosecond in either order).
level = per_counter.get("ex:step.level", [])
c.check(sorted(v for _, v in level) == sorted(e.fields["level"] for e in steps) and
        [ts for ts, _ in level] == sorted(ts for ts, _ in level),
        "counter ex:step.level differs from bt2's level values, or is out of time order")
# a field NAME__UNIT (docs/api.md, Units): its counter's unit_name
c.check(units.get("ex:work.took__us") == "us" and units.get("ex:step.level") == "",
        "counter units: %s" % units)

# ---- every field type, two processes ----------------------------------------------
trace2 = os.path.join(out, "types")
c.run([offprog, "parent", "20"], trace2, {"FDR_STRING_MAX": "32", "FDR_PACKET_SIZE": "4096"})
t2 = c.read(trace2)
want = collections.Counter((e.pid, e.name) for e in t2.events)
js2 = os.path.join(out, "types.json")
p = export("chrome", trace2, js2)
c.check(p.returncode == 0, "chrome export of the types trace: %s" % p.stderr)
with open(js2) as f:
    ev2 = json.load(f)["traceEvents"]
got = collections.Counter((e["pid"], e["name"]) for e in ev2 if e["ph"] in "BEi")
c.check(got == want, "per (pid, event) counts differ: %s" % (set(got.items()) ^ set(want.items())))
c.check(len({e["pid"] for e in ev2 if e["ph"] == "M"}) == 2, "two processes named")
bi = [e.fields for e in t2.events if e.name == "ofl:ints"]
ji = [e["args"] for e in ev2 if e["name"] == "ofl:ints" and e["ph"] == "i"]
key = lambda f: (f["t"], f["i"])  # noqa: E731
c.check(sorted(map(json.dumps, sorted(bi, key=key))) ==
        sorted(map(json.dumps, sorted(ji, key=key))), "ofl:ints values differ")
reals = [e["args"]["d"] for e in ev2 if e["name"] == "ofl:reals" and e["ph"] == "i"]
c.check({"NaN", "Infinity", "-Infinity"} <= set(x for x in reals if isinstance(x, str)),
        "non-finite doubles as strings: %s" % set(x for x in reals if isinstance(x, str)))
pf2 = os.path.join(out, "types.pftrace")
p = export("perfetto", trace2, pf2)
tr2 = perfetto_pb2.Trace()
with open(pf2, "rb") as f:
    tr2.ParseFromString(f.read())
nonc = sum(1 for pk in tr2.packet if pk.HasField("track_event") and
           pk.track_event.type != E.TYPE_COUNTER)
c.check(p.returncode == 0 and nonc == len(t2.events), "perfetto types: %d events of %d (%s)"
        % (nonc, len(t2.events), p.stderr))
c.check(sum(1 for pk in tr2.packet if pk.track_descriptor.HasField("process")) == 2,
        "two process tracks")

# ---- --filter --------------------------------------------------------------------
jf = os.path.join(out, "filter.json")
p = export("chrome", trace, jf, "--filter", "ex:step")
with open(jf) as f:
    fe = json.load(f)["traceEvents"]
c.check(p.returncode == 0 and sum(1 for e in fe if e["ph"] == "i") == THREADS * ROUNDS and
        all(e["name"] == "ex:step" for e in fe if e["ph"] in "BEiC"),
        "--filter ex:step kept other events")

# ---- the progress bar: on a terminal, not on a pipe ------------------------------
big = os.path.join(out, "big")
c.run([prog, "2", "2000"], big)  # 20,000 events: several progress updates
for verb, args in (("export", ["--format", "chrome", big, "-o", os.path.join(out, "b.json")]),
                   ("stats", [big])):
    env = dict(os.environ, FDR_PROGRESS_DELAY_MS="0")
    master, slave = pty.openpty()
    pr = subprocess.Popen([fdr, verb] + args, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    rc = pr.wait(timeout=120)
    c.check(rc == 0 and b"\r\x1b[Kfdr " + verb.encode() + b": " in seen and b" MB of " in seen and
            b"MB/s" in seen and b"left" in seen, "%s: no progress bar on a terminal: %r"
            % (verb, seen[:200]))
    p = subprocess.run([fdr, verb] + args, capture_output=True, env=env, timeout=120)
    c.check(p.returncode == 0 and p.stderr == b"", "%s: stderr not a terminal: %r" %
            (verb, p.stderr[:200]))

# ---- errors ----------------------------------------------------------------------
def one_line(argv, rc, text):
    p = subprocess.run([fdr, "export"] + argv, capture_output=True, text=True, timeout=60)
    lines = p.stderr.splitlines()
    c.check(p.returncode == rc and len(lines) == 1 and text in lines[0],
            "fdr export %s: rc %d, stderr %r" % (argv, p.returncode, p.stderr))


one_line([trace, "-o", js], 2, "--format perfetto or --format chrome is needed")
one_line(["--format", "svg", trace, "-o", js], 2, "unknown format 'svg'")
one_line(["--format", "chrome", trace], 2, "-o OUT is needed")
one_line(["--format", "chrome", os.path.join(out, "nowhere"), "-o", js], 1, "nowhere")
one_line(["--format", "chrome", "--filter", "ex:[", trace, "-o", js], 2, "bad pattern")
one_line(["--format", "chrome", trace, "-o", os.path.join(out, "no", "dir.json")], 1,
         "cannot write")
bad = os.path.join(out, "corrupt")
shutil.copytree(trace, bad)
stream = sorted(os.path.join(r, f) for r, _, fs in os.walk(bad) for f in fs
                if f.startswith("stream_"))[0]
size = os.path.getsize(stream)
with open(stream, "r+b") as f:
    f.truncate(size - 1000)
jb = os.path.join(out, "corrupt.json")
p = export("chrome", bad, jb)
with open(jb) as f:
    be = json.load(f)["traceEvents"]
nb = sum(1 for e in be if e["ph"] in "BEi")
c.check(p.returncode == 1 and "stream_" in p.stderr and 0 < nb < len(t.events),
        "corrupt stream: rc %d, %d events, stderr %r" % (p.returncode, nb, p.stderr))
c.finish()
