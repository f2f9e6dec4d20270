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
    c.check(p.stdout.readline() == "ready\n", "%s: not ready" % tag)
    return p, out


def state(pid):
    """fdr control PID --json, once the program has reported with its
    events: it reports after registering, which can be before its main
    module's events are known; fdrd keeps the last report and each call
    asks for a new one, so a later call shows them."""
    while True:
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
    line = p.stdout.readline()
    c.check(line.startswith("marked "), "mark: %r" % line)
    return int(line.split()[1])


def events(path):
    """[(name, t, n)] of the program's own trace, in time order."""
    out = []
    for m in bt2.TraceCollectionMessageIterator(path):
        if type(m) is bt2._EventMessageConst:
            out.append((m.event.name, int(m.event.payload_field["t"]),
                        int(m.event.payload_field["n"])))
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

ev_all = events(out)
marks = {n: i for i, (name, t, n) in enumerate(ev_all) if name == "ses:mark"}
c.check(sorted(marks) == [m1, m2, m3], "marks %r" % sorted(marks))
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
VERSION, CREATE, ENABLE, START, REPLY = 2, 16, 17, 20, 64
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
