# SPDX-License-Identifier: MIT
"""test-fdr-spans.py FDR SPAN_PROG SPAN_CXX PROTO OUTDIR - spans (fdr/span.h).

span-prog (tests/programs/progs/span-prog.c) runs each mode with FDR_OUTPUT;
the driver reads the trace with bt2 and pairs the spans itself, then checks:
  - layout: every span event's first field is span_begin / span_end (the
    depth) or span_async_begin / span_async_end (the id); nested spans pair
    by depth and name on their thread, 20 deep (past the 16 a thread's stack
    keeps), the end's own fields after the marker (rc); async spans begun
    by thread producer end on thread consumer;
  - `fdr stats --json`: per span name count, total, min, p50, p90, p99, max
    (nearest rank) and self time (children subtracted) equal to what the
    driver computes from bt2's events (line times, as fdr computes them);
    `fdr stats` (text): its SPAN table has one row per name, with the same
    count, unended, unmatched and reused;
  - `fdr export --format perfetto`, decoded by protoc against
    programs/fdr/perfetto.proto: on each thread track the sequence of slice
    begins (by name) and ends is exactly the driver's; each async span on a
    track of its own under the process, one begin (with a flow id) and one
    end, and an instant on the consumer's track ending that flow (a track
    is reused once its span ended: its slices never overlap);
  - `fdr export --format chrome`: B/E per thread and b/e per id, as paired;
  - `fdr scope TRACE` (a replay): a span has the numeric field span_ns, and
    its series holds exactly the driver's durations;
  - unbalanced: each end without begin, begin never ended and reused id
    counted per name by `fdr stats`, and the exports still nest exactly;
  - SIGKILL inside sp:killed: the drain helper's trace holds its begin,
    counted as never ended;
  - crash: abort(), then a SIGSEGV, inside sp:outer > sp:mid > sp:inner
    while a thread is in sp:work: the crash dump prints both stacks, one
    line per thread, and exactly the async spans left open (one begun by
    each thread; one begun by main and ended by the worker is not listed);
    the crash snapshot (FDR_CRASH_DIR) holds the same lines in .fdr-spans,
    as does an fdr_snapshot taken inside sp:outer > sp:mid with one async
    span open (one ended on another thread, one on its own: not listed);
    a snapshot after a ring wrapped (flight mode): an async span whose end
    may have been overwritten is listed as such, one whose begin was
    overwritten is not;
  - span-cxx: a C++ fdr_span ends in its destructor, on return too."""
import collections
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402

fdr, prog, cxx, proto, out = sys.argv[1:6]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
MARKERS = ("span_begin", "span_end", "span_async_begin", "span_async_end")


def record(mode, *args):
    trace = os.path.join(out, mode)
    c.run([prog, mode] + [str(a) for a in args], trace)
    c.clean(trace)
    return trace, c.read(trace)


def line_ns(trace, t):
    """Each event's time as fdr's reader computes it (line clock)."""
    clocks = {}
    for p in os.listdir(trace):
        with open(os.path.join(trace, p, ".fdr-classes"), "rb") as f:
            clocks[int(p.rsplit("-", 1)[1])] = struct.unpack_from("<QQ", f.read(32), 16)
    ref = min(st for st, _ in clocks.values())
    return [int(float(e.cycles - ref) * 1e9 / float(clocks[e.pid][1])) for e in t.events]


def marker(e):
    keys = list(e.fields)
    return keys[0] if keys and keys[0] in MARKERS else None


def pair(t, ns):
    """The driver's own pairing: (durations and self times per name, the
    per-thread draw sequence, anomalies per name)."""
    durs, selfs = collections.defaultdict(list), collections.defaultdict(int)
    draw = collections.defaultdict(list)  # tid -> [("B", name) | ("E", name)]
    bad = collections.defaultdict(collections.Counter)
    stacks = collections.defaultdict(list)  # tid -> [[name, depth, t0, child]]
    opened = {}
    for e, t1 in zip(t.events, ns):
        m = marker(e)
        if m is None:
            continue
        v = e.fields[m]
        if m == "span_begin":
            st = stacks[e.tid]
            while st and st[-1][1] >= v:
                bad[st.pop()[0]]["unended"] += 1
                draw[e.tid].append(("E", None))
            st.append([e.name, v, t1, 0])
            draw[e.tid].append(("B", e.name))
        elif m == "span_end":
            st = stacks[e.tid]
            j = len(st)
            while j > 0 and not (st[j - 1][1] == v and st[j - 1][0] == e.name):
                j -= 1
            if v == 0 or j == 0:
                bad[e.name]["unmatched"] += 1
                continue
            while len(st) > j:
                bad[st.pop()[0]]["unended"] += 1
                draw[e.tid].append(("E", None))
            name, _, t0, child = st.pop()
            d = t1 - t0
            durs[name].append(d)
            selfs[name] += d - child
            if st:
                st[-1][3] += d
            draw[e.tid].append(("E", None))
        elif m == "span_async_begin":
            k = (e.pid, e.name, v)
            if k in opened:
                bad[e.name]["reused"] += 1
                bad[e.name]["unended"] += 1
            opened[k] = (t1, e.tid)
        else:
            k = (e.pid, e.name, v)
            if k not in opened:
                bad[e.name]["unmatched"] += 1
                continue
            t0, _ = opened.pop(k)
            durs[e.name].append(t1 - t0)
            selfs[e.name] += t1 - t0
    for st in stacks.values():
        for f in st:
            bad[f[0]]["unended"] += 1
    for k in opened:
        bad[k[1]]["unended"] += 1
    return durs, selfs, draw, bad


def rank(vals, q):
    v = sorted(vals)
    k = -(-q * len(v) // 1)  # ceil
    return v[max(int(k), 1) - 1]


def stats(trace):
    p = subprocess.run([fdr, "stats", "--json", trace], capture_output=True, text=True,
                       timeout=120)
    c.check(p.returncode == 0 and p.stderr == "", "fdr stats: %d %s" % (p.returncode, p.stderr))
    return json.loads(p.stdout)


def check_stats(trace, t, ns, label):
    durs, selfs, draw, bad = pair(t, ns)
    s = stats(trace)
    got = {x["name"]: x for x in s["spans"]}
    c.check(set(got) == set(durs) | set(bad), "%s: span names %s, driver %s"
            % (label, sorted(got), sorted(set(durs) | set(bad))))
    for name, x in got.items():
        d = durs.get(name, [])
        want = {"count": len(d), "total_ns": sum(d), "self_ns": selfs.get(name, 0),
                "unended": bad[name]["unended"], "unmatched": bad[name]["unmatched"],
                "reused": bad[name]["reused"]}
        if d:
            want.update({"min_ns": min(d), "max_ns": max(d), "p50_ns": rank(d, 0.5),
                         "p90_ns": rank(d, 0.9), "p99_ns": rank(d, 0.99)})
        have = {k: x[k] for k in want}
        c.check(have == want, "%s: %s: stats %s, driver %s" % (label, name, have, want))
    # the text form: the SPAN table, one row per name with the same counts
    p = subprocess.run([fdr, "stats", trace], capture_output=True, text=True, timeout=120)
    rows = p.stdout.split("\n  SPAN ", 1)[-1].splitlines()[1:] if "\n  SPAN " in p.stdout else []
    text = {r.split()[0]: [int(r.split()[i]) for i in (1, -3, -2, -1)] for r in rows
            if r.startswith("  ")}
    c.check(text == {n: [x["count"], x["unended"], x["unmatched"], x["reused"]]
                     for n, x in got.items()},
            "%s: fdr stats' SPAN table %s, --json %s" % (label, text, got.keys()))
    tot = [sum(b[k] for b in bad.values()) for k in ("unmatched", "unended", "reused")]
    c.check([s["span_unmatched"], s["span_unended"], s["span_reused"]] == tot,
            "%s: totals %s, driver %s" % (label, [s["span_unmatched"], s["span_unended"],
                                                  s["span_reused"]], tot))
    return durs, draw, bad


pb = None


def perfetto(trace, label):
    global pb
    pf = os.path.join(out, label + ".pftrace")
    p = subprocess.run([fdr, "export", "--format", "perfetto", trace, "-o", pf],
                       capture_output=True, text=True, timeout=120)
    c.check(p.returncode == 0 and p.stderr == "", "%s: perfetto export: %s" % (label, p.stderr))
    pdir = os.path.dirname(proto)
    with open(pf, "rb") as f:
        d = subprocess.run(["protoc", "--decode=fdr.perfetto.Trace", "-I", pdir, proto],
                           stdin=f, capture_output=True, timeout=120)
    c.check(d.returncode == 0 and d.stderr == b"", "%s: protoc --decode: %s" % (label, d.stderr))
    if pb is None:
        py = os.path.join(out, "py")
        os.makedirs(py)
        subprocess.run(["protoc", "-I", pdir, "--python_out=" + py, proto], check=True)
        sys.path.insert(0, py)
        import perfetto_pb2
        pb = perfetto_pb2
    tr = pb.Trace()
    with open(pf, "rb") as f:
        tr.ParseFromString(f.read())
    return tr


def pf_tracks(tr):
    """(thread uuid -> tid, other named tracks uuid -> (name, parent), names,
    events per track uuid in order)."""
    threads, named, names = {}, {}, {}
    per = collections.defaultdict(list)
    for pk in tr.packet:
        if pk.HasField("track_descriptor"):
            td = pk.track_descriptor
            if td.HasField("thread"):
                threads[td.uuid] = td.thread.tid
            elif not td.HasField("process") and not td.HasField("counter"):
                named[td.uuid] = (td.name, td.parent_uuid)
        if pk.HasField("interned_data"):
            for en in pk.interned_data.event_names:
                names[en.iid] = en.name
        if pk.HasField("track_event") and pk.track_event.type != pk.track_event.TYPE_COUNTER:
            per[pk.track_event.track_uuid].append(pk.track_event)
    return threads, named, names, per


def check_nesting(tr, draw, label):
    """Each thread track's slices: the driver's begin/end sequence exactly."""
    threads, _, names, per = pf_tracks(tr)
    E = pb.TrackEvent
    for uuid, tid in threads.items():
        seq = [("B", names.get(te.name_iid)) if te.type == E.TYPE_SLICE_BEGIN else ("E", None)
               for te in per[uuid] if te.type in (E.TYPE_SLICE_BEGIN, E.TYPE_SLICE_END)]
        c.check(seq == draw.get(tid, []), "%s: thread %d slices %s..., driver %s..."
                % (label, tid, seq[:8], draw.get(tid, [])[:8]))
        depth = 0
        for kind, _ in seq:
            depth += 1 if kind == "B" else -1
            if depth < 0:
                c.check(False, "%s: thread %d: a slice end with no slice open" % (label, tid))
                break


def chrome(trace, label):
    js = os.path.join(out, label + ".json")
    p = subprocess.run([fdr, "export", "--format", "chrome", trace, "-o", js],
                       capture_output=True, text=True, timeout=120)
    c.check(p.returncode == 0 and p.stderr == "", "%s: chrome export: %s" % (label, p.stderr))
    with open(js) as f:
        return json.load(f)["traceEvents"]


# ---- nested ---------------------------------------------------------------------
N = 200
trace, t = record("nested", N)
ns = line_ns(trace, t)
spans = [e for e in t.events if marker(e)]
c.check(len(spans) == len(t.events), "nested: events that are not spans")
names = collections.Counter((e.name, marker(e)) for e in spans)
want = {("sp:outer", "span_begin"): N, ("sp:outer", "span_end"): N,
        ("sp:inner", "span_begin"): 3 * N, ("sp:inner", "span_end"): 3 * N,
        ("sp:expl", "span_begin"): N, ("sp:expl", "span_end"): N,
        ("sp:deep", "span_begin"): 20, ("sp:deep", "span_end"): 20}
c.check(dict(names) == want, "nested: events %s" % dict(names))
c.check(sorted(e.fields["span_begin"] for e in spans if e.name == "sp:deep" and
               "span_begin" in e.fields) == list(range(1, 21)), "deep: depths 1..20")
c.check(all(e.fields["span_begin"] == 2 for e in spans
            if e.name in ("sp:inner", "sp:expl") and "span_begin" in e.fields),
        "inner and expl begin at depth 2")
ends = [e for e in spans if e.name == "sp:expl" and "span_end" in e.fields]
begins = [e for e in spans if e.name == "sp:expl" and "span_begin" in e.fields]
c.check([e.fields.get("rc") for e in ends] == [-b.fields["k"] for b in begins],
        "expl: the end's rc field follows its marker")
durs, draw, bad = check_stats(trace, t, ns, "nested")
c.check(len(durs["sp:inner"]) == 3 * N and not any(bad.values()),
        "nested: all paired (%s)" % dict(bad))
check_nesting(perfetto(trace, "nested"), draw, "nested")
evs = chrome(trace, "nested")
scope_durs = durs
be = collections.Counter(e["ph"] for e in evs if e["ph"] in ("B", "E"))
c.check(be == {"B": 5 * N + 20, "E": 5 * N + 20}, "nested: chrome B/E %s" % be)

# ---- the scope: a span's duration is a series (span_ns), replayed ---------------
def scope_points(trace, key):
    """/api/events' fields of the span, and the points of series key, from
    `fdr scope TRACE` (a replay: every point is kept)."""
    sp = subprocess.Popen([fdr, "scope", trace], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    try:
        m = re.match(r"^http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{32})\n$",
                     sp.stdout.readline())
        if not c.check(m, "fdr scope: no URL line"):
            return None, []
        base = "http://127.0.0.1:%s" % m.group(1)
        tok = "token=" + m.group(2)
        with urllib.request.urlopen(base + "/api/events?" + tok, timeout=60) as r:
            ev = json.loads(r.read())
        vals = []
        url = base + "/api/stream?fields=%s&width=4000&%s" % (key, tok)
        with urllib.request.urlopen(url, timeout=60) as r:
            name = None
            for line in r:
                line = line.decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: ") and name == "points":
                    for ser in json.loads(line[6:])["series"]:
                        if ser["key"] == key:
                            vals.extend(ser["v"])
                elif line.startswith("data: ") and name == "done":
                    break
        return ev, vals
    finally:
        sp.send_signal(signal.SIGTERM)
        sp.communicate(timeout=60)


ev, vals = scope_points(trace, "sp:inner.span_ns")
fields = {e["id"]: e["fields"] for e in ev["events"]} if ev else {}
c.check({"name": "span_ns", "type": "uint", "numeric": True} in fields.get("sp:inner", []),
        "scope: sp:inner's fields %s" % fields.get("sp:inner"))
c.check(sorted(vals) == sorted(scope_durs["sp:inner"]),
        "scope: sp:inner.span_ns %d points %s..., driver %d %s..."
        % (len(vals), sorted(vals)[:5], len(scope_durs["sp:inner"]),
           sorted(scope_durs["sp:inner"])[:5]))

# ---- async, ended on another thread ----------------------------------------------
A = 100
trace, t = record("async", A)
ns = line_ns(trace, t)
tids = {e.thread_name: e.tid for e in t.events}
beg = {e.fields["span_async_begin"]: e for e in t.events if "span_async_begin" in e.fields}
end = {e.fields["span_async_end"]: e for e in t.events if "span_async_end" in e.fields}
c.check(sorted(beg) == list(range(A + 1)) and sorted(end) == list(range(A + 1)),
        "async: ids begun %d, ended %d" % (len(beg), len(end)))
c.check(all(beg[i].thread_name == "producer" and end[i].thread_name == "consumer"
            for i in range(A)), "async: begun by producer, ended by consumer")
durs, draw, bad = check_stats(trace, t, ns, "async")
c.check(len(durs["sp:req"]) == A + 1 and not any(bad.values()), "async: all paired")
tr = perfetto(trace, "async")
threads, named, names, per = pf_tracks(tr)
E = pb.TrackEvent
atracks = {u: v for u, v in named.items() if v[0] == "sp:req"}
# a track per span open at once, reused once free: on each, begin, end, ...
c.check(0 < len(atracks) <= A + 1, "async: %d tracks named sp:req" % len(atracks))
flows, nbeg = [], 0
for u in atracks:
    ev = per[u]
    kinds = [te.type for te in ev]
    c.check(kinds == [E.TYPE_SLICE_BEGIN, E.TYPE_SLICE_END] * (len(kinds) // 2) and kinds,
            "async track: %s" % kinds[:8])
    nbeg += kinds.count(E.TYPE_SLICE_BEGIN)
    flows.extend(f for te in ev for f in te.flow_ids)
c.check(nbeg == A + 1, "async: %d slices on async tracks" % nbeg)
c.check(len(set(flows)) == len(flows), "async: a flow id used twice")
ctrack = [u for u, tid in threads.items() if tid == tids.get("consumer")]
term = [f for te in per[ctrack[0]] for f in te.terminating_flow_ids] if ctrack else []
c.check(len(flows) == A + 1 and len(term) == A and set(term) <= set(flows),
        "async: %d flows begun, %d ended on the consumer's track" % (len(flows), len(term)))
evs = chrome(trace, "async")
b = collections.Counter(e["id"] for e in evs if e["ph"] == "b")
e_ = collections.Counter(e["id"] for e in evs if e["ph"] == "e")
c.check(len(b) == A + 1 and b == e_ and set(b.values()) == {1}, "async: chrome b/e pairs")

# ---- unbalanced -------------------------------------------------------------------
trace, t = record("unbalanced")
ns = line_ns(trace, t)
durs, draw, bad = check_stats(trace, t, ns, "unbalanced")
want = {"sp:stray": {"unmatched": 1}, "sp:leak": {"unended": 1}, "sp:forgot": {"unended": 1},
        "sp:job": {"unended": 1, "reused": 1, "unmatched": 1},
        "sp:alpha": {"unended": 1, "unmatched": 1}, "sp:beta": {"unmatched": 1}}
c.check({k: dict(v) for k, v in bad.items() if v} == want, "unbalanced: %s" % dict(bad))
c.check(sorted(durs) == ["sp:holder", "sp:job", "sp:last"], "unbalanced: paired %s" % sorted(durs))
check_nesting(perfetto(trace, "unbalanced"), draw, "unbalanced")
evs = chrome(trace, "unbalanced")
for tid in {e["tid"] for e in evs if e["ph"] in "BE"}:
    depth = 0
    for e in evs:
        if e.get("tid") == tid and e["ph"] in "BE":
            depth += 1 if e["ph"] == "B" else -1
            c.check(depth >= 0, "unbalanced: chrome E with nothing open on %d" % tid)

# ---- a process killed inside a span: its begin is counted as never ended ----------
trace = os.path.join(out, "killed")
e = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
e["FDR_OUTPUT"] = trace
hp = subprocess.Popen([prog, "hang"], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
c.check(hp.stdout.readline() == b"ready\n", "hang: did not start")
helpers = []
for tid in os.listdir("/proc/%d/task" % hp.pid):
    with open("/proc/%d/task/%s/children" % (hp.pid, tid)) as f:
        helpers += [os.pidfd_open(int(k)) for k in f.read().split()]
hp.send_signal(signal.SIGKILL)
hp.communicate(timeout=120)
for h in helpers:  # the drain helper writes the rings once the program died
    c.check(c.wait_fd(h, 120), "killed: the drain helper ended")
    os.close(h)
c.check(len(helpers) == 1, "killed: %d drain helpers" % len(helpers))
s = stats(trace)
got = {x["name"]: (x["count"], x["unended"], x["unmatched"]) for x in s["spans"]}
c.check(got == {"sp:done": (1, 0, 0), "sp:killed": (0, 1, 0)}, "killed: %s" % got)

# ---- crash and snapshot: the spans open on each thread, and the async ones ------------
# span-prog crash leaves async sp:rpc 7 open on main and 30 on the worker; 20
# (begun by main, ended by the worker) and 8 (main) ended. A real abort() and
# a real SIGSEGV, each with FDR_CRASH_DIR.
for how, sig in (("abort", signal.SIGABRT), ("segv", signal.SIGSEGV)):
    env = {"ASAN_OPTIONS": "handle_abort=0:handle_segv=0:detect_leaks=0",
           "TSAN_OPTIONS": "handle_segv=0",
           "FDR_CRASH_DIR": os.path.join(out, "crashdir-" + how)}
    os.makedirs(env["FDR_CRASH_DIR"])
    p = c.run([prog, "crash", how], os.path.join(out, "crash-" + how), env, expect_rc=None)
    c.check(p.returncode == -sig, "crash %s: exit %d" % (how, p.returncode))
    lines = re.findall(r"^fdr: spans open in thread (\d+): (.*)$", p.stderr, re.M)
    c.check(sorted(s for _, s in lines) == ["sp:outer > sp:mid > sp:inner", "sp:work"],
            "crash %s: open spans %s\n%s" % (how, lines, p.stderr[-600:]))
    c.check(len({tid for tid, _ in lines}) == 2, "crash %s: two threads" % how)
    tid = {s: t for t, s in lines}
    want = ["sp:rpc id=7 (begun in thread %s)" % tid.get("sp:outer > sp:mid > sp:inner"),
            "sp:rpc id=30 (begun in thread %s)" % tid.get("sp:work")]
    got = re.findall(r"^fdr: async span open: (.*)$", p.stderr, re.M)
    c.check(got == want, "crash %s: async spans open %s, expected %s\n%s" %
            (how, got, want, p.stderr[-600:]))
    snaps = os.listdir(env["FDR_CRASH_DIR"])
    if c.check(len(snaps) == 1, "crash snapshots: %s" % snaps):
        d = os.path.join(env["FDR_CRASH_DIR"], snaps[0])
        c.clean(d, overwritten=True)
        with open(os.path.join(d, ".fdr-spans")) as f:
            c.check(sorted(f.read().splitlines()) ==
                    sorted(["spans open in thread %s: %s" % x for x in lines] +
                           ["async span open: " + x for x in want]),
                    "crash %s: the snapshot's .fdr-spans differs from the dump's lines" % how)
snap = os.path.join(out, "snap")
p = c.run([prog, "snapshot", snap], os.path.join(out, "snapshot-run"))
c.clean(snap, overwritten=True)
with open(os.path.join(snap, ".fdr-spans")) as f:
    got = f.read().splitlines()
c.check(len(got) == 2 and got[0].endswith(": sp:outer > sp:mid") and
        got[1] == "async span open: sp:rpc id=3 (begun in thread %s)" %
        got[0].split()[4].rstrip(":"), "snapshot: %s" % got)

# A ring that wrapped: the begin of async 1 and the end of async 2 (on the
# filler's ring) overwritten, the begin of 2 (main's ring) kept: 2 is listed
# as open with its end maybe overwritten, 1 not at all.
snap = os.path.join(out, "snap-wrap")
p = c.run([prog, "wrap", snap], None, {"FDR_PACKET_SIZE": "4096", "FDR_BUFFER_SIZE": "8192"})
with open(os.path.join(snap, ".fdr-spans")) as f:
    got = f.read().splitlines()
c.check(got == ["async span open: sp:rpc id=2 (begun in thread %s; its end may have been "
                "overwritten)" % p.stdout.strip()], "wrapped snapshot: %s" % got)

# ---- C++ (SPAN_CXX "none": a build without a C++ compiler, a cross one) ---------------
if cxx != "none":
    trace = os.path.join(out, "cxx")
    c.run([cxx], trace)
    t = c.read(trace)
    durs, _, draw, bad = pair(t, line_ns(trace, t))
    c.check(len(durs["cx:outer"]) == 10 and len(durs["cx:inner"]) == 10 and
            not any(bad.values()), "C++: outer %d, inner %d, %s" %
            (len(durs["cx:outer"]), len(durs["cx:inner"]), dict(bad)))
    c.check(all(e.fields["span_begin"] == 2 for e in t.events
                if e.name == "cx:inner" and "span_begin" in e.fields), "C++: inner at depth 2")
c.finish()
