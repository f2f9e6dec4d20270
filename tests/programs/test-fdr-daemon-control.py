# SPDX-License-Identifier: MIT
"""test-fdr-daemon-control.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
steering a running program through fdrd (what the scope's switches and
sliders use), and the scope's kind of trace.

session-prog steer records ses:tick (t = its tunable gain, n = 0, 1, ...)
every 100 µs, and ses:mark (t = gain, n) for each line it reads. It writes
a trace of its own (FDR_OUTPUT), where the effects are checked:

1. `fdr control PID --json` lists its events (ses:tick recorded, not
   printed) and its tunable gain (5, range 0 to 100).
2. `--record -ses:tick`: once the state says ses:tick is off, a mark is
   recorded; no ses:tick comes after that mark in the program's own trace,
   and ticks came before it.
3. `--set gain=42`: after the state says 42, the next mark and every tick
   after it carry t = 42. `--record all` brings the ticks back.
4. `--print ses:mark`: the program prints the next mark (FDR_TRACE_FILE).
5. Refusals, one line each: a pid that is not registered, a bad pid, a
   bad --set; an out-of-range tunable leaves the value as it was.
6. The scope's trace (CREATE with flags EPHEMERAL, pid, live_us, sent from
   here on a raw socket): only that process is routed into it (a second
   program is not), its newest events reach the stream files while it
   records (live, within seconds, without stopping anything), and fdrd
   destroys the trace when this connection closes.
   A CONTROL with a bad `what` or a state question with items is
   refused (EINVAL, with its reason); a STATE from a connection that
   never registered as a process drops that connection.
   Each change is an event of fdr's own in the program's trace, in time
   order between the marks around it, with its exact values
   (fdr:switch event=ses:tick what=record on=0, fdr:tunable name=gain
   value=42, ...); the refused gain=1000 is none. `fdr export --format
   perfetto` of that trace carries them: instants of those names, with
   the same fields as annotations, at bt2's times, and gain's value on a
   counter track of its own, fdr:tunable.gain (decoded with the classes
   protoc makes from programs/fdr/perfetto.proto).
7. 300 enable/disable flips of one event keep one item for it in the
   trace's list (the last), so they fit and mean what the last said."""
import glob
import json
import os
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
import bt2  # noqa: E402  (after the helpers put tests/lib on the path)

s.start()


def launch(tag, extra=None):
    out = os.path.join(s.work, tag)
    e = dict(s.env)
    e.update(FDR_OUTPUT=out, FDR_TRACE_FILE=os.path.join(s.work, tag + ".printed"))
    e.update(extra or {})
    p = subprocess.Popen([prog, "steer"], env=e, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    c.check(h.line(p) == "ready\n", "%s: not ready" % tag)
    return p, out


def state(pid):
    """fdr control PID --json, once the program has reported with its
    events: it reports after registering, which can be before its main
    module's events are known; fdrd keeps the last report and each call
    asks for a new one, so a later call shows them."""
    t0 = time.monotonic()
    while True:
        if time.monotonic() - t0 > 120:
            c.fail("gave up after 120 s waiting for pid %d's report with its tick event" % pid)
        p = s.run(["control", str(pid), "--json"])
        if p.returncode == 0:
            st = json.loads(p.stdout)
            if any(e["event"] == "tick" for e in st["events"]):
                return st
        else:
            c.check("has not reported" in p.stderr or "no process" in p.stderr,
                    "fdr control: %s" % p.stderr.strip())
        time.sleep(0.02)


def control(pid, *args):
    return json.loads(s.fdr("control", str(pid), "--json", *args).stdout)


def ev(st, name):
    prov, event = name.split(":")
    for e in st["events"]:
        if e["provider"] == prov and e["event"] == event:
            return e
    c.fail("no event %s in %r" % (name, st))


def mark(p):
    p.stdin.write("m\n")
    p.stdin.flush()
    line = h.line(p)
    c.check(line.startswith("marked "), "mark: %r" % line)
    return int(line.split()[1])


def own_times(path):
    """[(ns from the epoch, name, {field: value})] of fdr's own events, bt2."""
    return [(m.default_clock_snapshot.ns_from_origin, m.event.name,
             {k: (str(v) if k in ("name", "event", "what") else float(v))
              for k, v in m.event.payload_field.items()})
            for m in bt2.TraceCollectionMessageIterator(path)
            if type(m) is bt2._EventMessageConst and m.event.name.startswith("fdr:")]


def perfetto_own(path, counters):
    """The same, from `fdr export --format perfetto` of the trace: the
    instants named fdr:*, their annotations, their times on the epoch
    (the export's clock snapshot maps its clock to REALTIME); the values
    of the counter tracks named fdr:* go to counters[track name]."""
    pf = os.path.join(s.work, "own.pftrace")
    s.fdr("export", "--format", "perfetto", path, "-o", pf)
    tr = h.perfetto_read(s, pf)
    names, got, clocks, ctracks = {}, [], {}, {}
    for pk in tr.packet:
        if pk.HasField("track_descriptor") and pk.track_descriptor.HasField("counter"):
            ctracks[pk.track_descriptor.uuid] = pk.track_descriptor.name
            counters.setdefault(pk.track_descriptor.name, [])
        if (pk.HasField("track_event") and pk.track_event.type == pk.track_event.TYPE_COUNTER
                and ctracks.get(pk.track_event.track_uuid, "").startswith("fdr:")):
            te = pk.track_event
            counters[ctracks[te.track_uuid]].append(
                te.double_counter_value if te.HasField("double_counter_value") else te.counter_value)
        if pk.HasField("clock_snapshot"):
            clocks = {ck.clock_id: ck.timestamp for ck in pk.clock_snapshot.clocks}
        if pk.HasField("interned_data"):
            for en in pk.interned_data.event_names:
                names[en.iid] = en.name
        te = pk.track_event if pk.HasField("track_event") else None
        if te and te.type == te.TYPE_INSTANT and names.get(te.name_iid, "").startswith("fdr:"):
            f = {}
            for a in te.debug_annotations:
                v = next(getattr(a, k) for k in ("string_value", "double_value", "int_value",
                                                 "uint_value", "bool_value") if a.HasField(k))
                f[a.name] = str(v) if a.name in ("name", "event", "what") else float(v)
            got.append((pk.timestamp - clocks.get(6, 0) + clocks.get(1, 0),
                        names[te.name_iid], f))
    return got


def events(path, own=None):
    """[(name, t, n)] of the program's own trace, in time order; fdr's own
    events (the controls, recorder/self.h) go to `own` as (index in the
    list, name, {field: value}), the index that of the next event."""
    out = []
    for m in bt2.TraceCollectionMessageIterator(path):
        if type(m) is not bt2._EventMessageConst:
            continue
        f = m.event.payload_field
        if m.event.name.startswith("fdr:"):
            c.check(own is not None, "an fdr event where none was made: %s" % m.event.name)
            own.append((len(out), m.event.name, {k: (str(v) if k in ("name", "event", "what")
                                                     else float(v)) for k, v in f.items()}))
            continue
        out.append((m.event.name, int(f["t"]), int(f["n"])))
    return out


# 1. the state -----------------------------------------------------------------
# FDR_EVENTS names events of the program's own module: a state report
# sent before that module registered must not make libfdr warn that the
# pattern matches no known event (it did: the report ran the deferred work).
p, out = launch("steer", {"FDR_EVENTS": "ses:*", "FDR_TRACES": "-ses:tick"})
st = state(p.pid)
c.check(st["pid"] == p.pid, "pid %r" % st["pid"])
tick = ev(st, "ses:tick")
c.check(tick["recorded"] and not tick["printed"], "ses:tick state %r" % tick)
gain = [t for t in st["tunables"] if t["name"] == "gain"]
c.check(len(gain) == 1 and gain[0]["value"] == 5 and gain[0]["range"] and
        gain[0]["min"] == 0 and gain[0]["max"] == 100 and not gain[0]["double"],
        "tunable gain %r" % gain)

# 2. recording switched off ------------------------------------------------------
st = control(p.pid, "--record", "-ses:tick")
c.check(not ev(st, "ses:tick")["recorded"] and ev(st, "ses:mark")["recorded"],
        "after --record -ses:tick: %r" % st)
m1 = mark(p)

# 3. a tunable -----------------------------------------------------------------
st = control(p.pid, "--set", "gain=42")
c.check([t["value"] for t in st["tunables"] if t["name"] == "gain"] == [42],
        "gain after --set: %r" % st["tunables"])
st = control(p.pid, "--record", "all")
c.check(ev(st, "ses:tick")["recorded"], "after --record all: %r" % st)
m2 = mark(p)

# 4. printing ------------------------------------------------------------------
st = control(p.pid, "--print", "ses:mark")
c.check(ev(st, "ses:mark")["printed"] and not ev(st, "ses:tick")["printed"],
        "after --print ses:mark: %r" % st)
m3 = mark(p)

# 5. refusals ------------------------------------------------------------------
s.fdr_err(["control", "12ab"], "fdr control: bad PID '12ab'", 2)
s.fdr_err(["control", "4000000"],
          "fdr control: no process with pid 4000000 is registered with fdrd "
          "(fdr list processes)", 1)
s.fdr_err(["control", str(p.pid), "--set", "gain"], "fdr control: bad --set 'gain': NAME=VALUE", 2)
s.fdr("control", str(p.pid), "--set", "gain=1000")  # the program warns, keeps 42
st = state(p.pid)
c.check([t["value"] for t in st["tunables"] if t["name"] == "gain"] == [42],
        "gain after an out-of-range set: %r" % st["tunables"])

p.stdin.close()
c.check(p.wait(timeout=120) == 0, "steer exit status")
err = p.stderr.read()
c.check("out of range for tunable gain" in err, "the program did not warn about gain=1000")
c.check("matches no known event" not in err, "early warnings: %r" % err)

own = []
ev_all = events(out, own)
marks = {n: i for i, (name, t, n) in enumerate(ev_all) if name == "ses:mark"}
c.check(sorted(marks) == [m1, m2, m3], "marks %r" % sorted(marks))
# The controls, in order, between the marks made before and after them.
want = [(None, marks[m1], "fdr:switch", {"event": "ses:tick", "what": "record", "on": 0}),
        (marks[m1], marks[m2], "fdr:tunable", {"name": "gain", "value": 42}),
        (marks[m1], marks[m2], "fdr:switch", {"event": "ses:tick", "what": "record", "on": 1}),
        (marks[m2], marks[m3], "fdr:switch", {"event": "ses:mark", "what": "print", "on": 1})]
c.check([(n, f) for i, n, f in own] == [(n, f) for lo, hi, n, f in want],
        "fdr's own events: %r" % own)
for (i, n, f), (lo, hi, _, _) in zip(own, want):
    c.check((lo is None or i > lo) and i <= hi,
            "%s %r at %d, not between the marks at %r and %d" % (n, f, i, lo, hi))
counters = {}
bt_own, pf_own = own_times(out), perfetto_own(out, counters)
c.check(len(pf_own) == len(bt_own) and all(
    a[1:] == b[1:] and abs(a[0] - b[0]) < 1000 for a, b in zip(pf_own, bt_own)),
    "Perfetto's fdr events %r, bt2's %r" % (pf_own, bt_own))
# a counter track per tunable (not one fdr:tunable.value mixing them all);
# fdr:switch's field on is a counter of its own, as any numeric field
c.check(counters.get("fdr:tunable.gain") == [42.0] and "fdr:tunable.value" not in counters,
        "Perfetto's fdr counter tracks %r" % counters)
ticks = [(i, t) for i, (name, t, n) in enumerate(ev_all) if name == "ses:tick"]
between = [i for i, t in ticks if marks[m1] < i < marks[m2]]
c.check(any(i < marks[m1] for i, t in ticks), "no tick before the first mark")
# After mark 1 (recording off, the state said so first) and before the
# set that switched it back on, no tick: the ticks between mark 1 and mark 2
# are all after `--record all`, so they carry gain 42.
# One tick may have been in flight: past its switch test before the switch,
# timestamped after the mark (a busy machine can stop a thread anywhere).
late = [t for i, t in ticks if marks[m1] < i and t != 42]
c.check(len(late) <= 1, "%d ticks with gain 5 after recording was off" % len(late))
c.check(ev_all[marks[m2]][1] == 42, "mark 2 has t=%d" % ev_all[marks[m2]][1])
c.check(between or any(i > marks[m2] for i, t in ticks), "no tick after --record all")
with open(os.path.join(s.work, "steer.printed")) as f:
    printed = f.read()
c.check("ses:mark" in printed and "n=%d" % m3 in printed and "ses:tick" not in printed,
        "printed lines: %r" % printed[:300])
print("control: %d events, marks %d %d %d, %d ticks after mark 1 (all gain 42)"
      % (len(ev_all), m1, m2, m3, len([1 for i, t in ticks if i > marks[m1]])))

# 6. the scope's trace: ephemeral, one pid, live -----------------------------------
a, _ = launch("a")
b, _ = launch("b")
state(a.pid)
state(b.pid)
VERSION, CREATE, ENABLE, START, REPLY = h.proto_version(), 16, 17, 20, 64
EPHEMERAL = 2
live_dir = os.path.join(s.work, "live")


def hdr(size, typ, seq):
    return struct.pack("=IHHII", size, VERSION, typ, seq, 0)


def name(n, cap=72):
    return n.encode().ljust(cap, b"\0")


create = (struct.pack("=IIQQ", 0, 0xFFFFFFFF, 0, 0) + name("scope-t") +
          live_dir.encode().ljust(4096, b"\0") + struct.pack("=Q", 0) + b"\0" * 256 +
          struct.pack("=IIIIII", 0, 0, 100000, a.pid, EPHEMERAL, 0) + b"\0" * 4096)
k = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
k.connect(s.sock)


def call(msg, typ, seq):
    k.send(hdr(16 + len(msg), typ, seq) + msg)
    r = k.recv(65536)
    size, ver, t, sq, status = struct.unpack("=IHHII", r[:16])
    c.check(t == REPLY and sq == seq and status == 0,
            "request %d: status %d %r" % (typ, status, r[24:].split(b"\0")[0]))


# Hostile CONTROL and STATE: refused with a reason, fdrd unharmed.
CONTROL, STATE = 26, 8
k.send(hdr(32, CONTROL, 9) + struct.pack("=IIII", a.pid, 7, 0, 0))
r = k.recv(65536)
c.check(struct.unpack("=IHHII", r[:16])[2:] == (REPLY, 9, 22) and b"bad control 7" in r,
        "CONTROL what=7: %r" % r[:60])
k.send(hdr(34, CONTROL, 10) + struct.pack("=IIII", a.pid, 2, 1, 2) + b"x\0")
r = k.recv(65536)
c.check(struct.unpack("=IHHII", r[:16])[2:] == (REPLY, 10, 22),
        "CONTROL state with items: %r" % r[:60])
k2 = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
k2.connect(s.sock)
k2.send(hdr(32, STATE, 1) + struct.pack("=IIII", 0, 0, 0, 0))  # not a process
c.check(k2.recv(65536) == b"", "STATE from a connection that is no process: not dropped")
k2.close()
call(create, CREATE, 1)
call(name("scope-t") + struct.pack("=II", 1, 2) + b"*\0", ENABLE, 2)
call(name("scope-t"), START, 3)
tr = s.traces()["scope-t"]
c.check(tr["pid"] == a.pid and tr["live_us"] == 100000 and tr["active"],
        "scope trace as listed: %r" % tr)
# Live: while a records (nothing stops, nothing is flushed by anyone), its
# ticks reach the stream file, and keep coming.


def stream_bytes():
    return sum(os.path.getsize(f) for f in glob.glob(os.path.join(
        live_dir, "session-prog-%d" % a.pid, "stream_*")))


h.wait_for(lambda: stream_bytes() > 0, "live stream file")
first = stream_bytes()
h.wait_for(lambda: stream_bytes() > first, "live stream file grows")
c.check(not os.path.exists(os.path.join(live_dir, "session-prog-%d" % b.pid)),
        "process b was routed into a trace of process a")
k.close()  # the scope goes away: its trace with it
h.wait_for(lambda: "scope-t" not in s.traces(), "ephemeral trace destroyed", limit=60)
s.wait_log("trace scope-t destroyed")
for q in (a, b):
    q.stdin.close()
    c.check(q.wait(timeout=120) == 0, "exit status")
got = events(os.path.join(live_dir, "session-prog-%d" % a.pid))
c.check(len(got) > 0 and all(name == "ses:tick" for name, t, n in got),
        "live trace events %r" % got[:5])
ns = [n for name, t, n in got]
c.check(ns == list(range(ns[0], ns[0] + len(ns))) or ns == sorted(set(ns)),
        "live trace ticks out of order")
print("scope trace: %d ticks of pid %d only, live, destroyed with its connection"
      % (len(got), a.pid))

# 7. A switch flipped back and forth (the scope sends ENABLE/DISABLE of one
# event to its trace each time): the list keeps one item per pattern, the
# last one, so 300 flips fit in a trace's 256 items and mean what the last
# said.
s.fdr("create", "flip")
s.fdr("enable", "flip", "ses:*")
for i in range(150):
    s.fdr("disable", "flip", "ses:tick")
    s.fdr("enable", "flip", "ses:tick")
s.fdr("disable", "flip", "ses:mark")
c.check(s.traces()["flip"]["events"] == ["ses:*", "ses:tick", "-ses:mark"],
        "flip: %r" % s.traces()["flip"]["events"])
c.finish()
