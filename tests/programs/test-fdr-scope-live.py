# SPDX-License-Identifier: MIT
"""test-fdr-scope-live.py FDR FDRD SESSION_CLIENT WORKDIR SCOPE_PROG -
`fdr scope` on a running program, through a real fdrd (its own run
directory, session_helpers.py), checked against the program's own trace
(FDR_OUTPUT, read with bt2):

1. `fdr scope --window 1 -- scope-prog`: /api/info (live, the child's
   pid, running, control); /api/events lists its events and, once it
   reported its state, its tunables (gain 0..100 = 5, amp, offset) and
   recorded/printed flags; fdrd lists the scope's trace with only that pid.
2. A stream opened at once, and a client that asks for a stream and never
   reads, all along.
3. record scope:tick off: once the state says so, no scope:tick recorded
   after that moment (its mono field, CLOCK_MONOTONIC) is in the
   program's own trace; on again: ticks come back.
4. tunable gain=42: once the state says 42, the program's own trace has
   gain 5 then 42 (never 5 after 42), and the stream shows 42. Refusals
   (400): out of range, not a number, a fraction for an integer, unknown
   tunable or event, on=2. amp=2.5 (a double) is taken. print on: the
   state says printed. Each change is an event of fdr's own in the
   program's trace (fdr:switch, fdr:tunable: exactly those taken, in
   order; fdr:tunable name=gain value=42 between the program's last gain 5
   and its first 42), and the live event list shows fdr:tunable's field
   gain. `fdr export` of that trace, Perfetto (protoc's classes) and
   Chrome JSON: a counter per tunable, fdr:tunable.gain and
   fdr:tunable.amp, each with bt2's values and times (within 1 ms).
5. The program ends (SIGTERM): /api/info says not running, stderr says
   how it ended; every scope:level and scope:gain value of its own trace
   is a point of the stream with the same value and time (seconds since
   the epoch, within 1 ms: the clock's calibration goes on), and nothing
   else is.
6. SIGTERM to the scope: exit 0, its trace gone from fdrd, its temporary
   directory gone; a scope whose command still runs passes SIGTERM on to it
   and waits for it. A replay of the program's own trace gives the same
   points, and the tunables' values over time: the series
   fdr:tunable.gain (/api/range) is the trace's fdr:tunable events of
   gain, its tunables list gain 42 and amp 2.5.
7. SIGKILL to a scope: fdrd destroys its trace (ephemeral); the next
   scope removes the directory the killed one left.
8. PID mode on a program started alone (registered with fdrd): control
   works; a pid that is not registered is one error line, and so are PID
   and TRACE with no fdrd running (none is started for them). TRACE mode on a
   trace made with fdr create: read only, its events. An unknown trace is
   one error line."""
import glob
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scope_client as sc  # noqa: E402
import session_helpers as h  # noqa: E402

c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
s.start()
own = os.path.join(s.work, "own")
xdg = os.path.join(s.work, "xdg")
os.makedirs(xdg, mode=0o700)


def mono_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def scope_traces():
    return [n for n in s.traces() if n.startswith("scope-")]


# -- 1. start ---------------------------------------------------------------------
scope = sc.Scope(s, ["--window", "1", "--", prog, "--period-us", "5000"],
                 env={"FDR_OUTPUT": own, "XDG_RUNTIME_DIR": xdg})
info = scope.json("/api/info")
child = info["pid"]
s.pids.add(child)
c.check(info["mode"] == "live" and child > 0 and info["running"] and info["control"]
        and info["target"] == prog + " --period-us 5000", "/api/info: %r" % info)
tr = s.traces()
name = "scope-%d" % scope.p.pid
c.check(name in tr and tr[name].get("pid") == child, "fdrd's trace: %r" % tr.get(name))
tmps = glob.glob(os.path.join(xdg, "fdr-scope-*"))
c.check(len(tmps) == 1 and os.stat(tmps[0]).st_mode & 0o777 == 0o700,
        "the scope's directory: %s" % tmps)


def events():
    ev = scope.json("/api/events")
    return {x["id"]: x for x in ev["events"]}, {t["name"]: t for t in ev["tunables"]}


NAMES = ("scope:level", "scope:tick", "scope:gain", "scope:wave", "scope:note")


def reported():
    """The program's state lists its tunables and its events: a report
    made at its very start, or before an event's first use registered it,
    does not (the scope asks for a new one every second)."""
    byid, tun = events()
    return "gain" in tun and all(byid.get(n, {}).get("recorded") is not None for n in NAMES)


sc.wait(reported, "the program's state with its events and tunables")
byid, tun = events()
for n in NAMES:
    c.check(n in byid and byid[n]["recorded"] is True and byid[n]["printed"] is False,
            "%s: %r" % (n, byid.get(n)))
c.check(tun["gain"] == {"name": "gain", "double": False, "range": True, "min": 0, "max": 100,
                        "value": 5, "default": 5}, "gain: %r" % tun["gain"])
c.check(tun["amp"]["double"] and tun["amp"]["max"] == 10, "amp: %r" % tun["amp"])
c.check(tun["offset"]["range"] is False, "offset: %r" % tun["offset"])

# -- 2. a stream, and a client that never reads -------------------------------------
points = {}
plock = threading.Lock()
stream = scope.stream("fields=scope:level.value,scope:gain.value&width=4000")


def reader():
    try:
        for name_, data in stream.messages():
            if name_ == "points":
                with plock:
                    for ser in data["series"]:
                        points.setdefault(ser["key"], []).extend(zip(ser["t"], ser["v"]))
    except (AttributeError, OSError, ValueError):
        pass  # closed by the main thread (section 6)


th = threading.Thread(target=reader, daemon=True)
th.start()
idle = sc.raw_request(scope.port, "GET /api/stream?token=%s&fields=scope:level.value&"
                      "split=1 HTTP/1.1\r\nHost: x\r\n\r\n" % scope.token, read=False)


def npoints(key):
    with plock:
        return list(points.get(key, []))


sc.wait(lambda: len(npoints("scope:level.value")) > 20, "points of scope:level")

# -- 3. record off, on ---------------------------------------------------------------
st, body = scope.post("what=record&event=scope:tick&on=0")
c.check(st == 200 and body == {"ok": True}, "record off: %d %r" % (st, body))
sc.wait(lambda: events()[0]["scope:tick"]["recorded"] is False, "state: tick off")
t_off = mono_ns()
lv = events()[0]["scope:level"]["count"]
sc.wait(lambda: events()[0]["scope:level"]["count"] > lv + 50, "more events, tick off")
t_back = mono_ns()  # from here on ticks may come again
st, body = scope.post("what=record&event=scope:tick&on=1")
c.check(st == 200, "record on: %d %r" % (st, body))
sc.wait(lambda: events()[0]["scope:tick"]["recorded"] is True, "state: tick on")
t_on = mono_ns()
tk = events()[0]["scope:tick"]["count"]
sc.wait(lambda: events()[0]["scope:tick"]["count"] > tk + 20, "ticks again in the scope")

# -- 4. tunables ---------------------------------------------------------------------
for form, code in (("what=tunable&name=gain&value=101", 400),
                   ("what=tunable&name=gain&value=-1", 400),
                   ("what=tunable&name=gain&value=abc", 400),
                   ("what=tunable&name=gain&value=1.5", 400),
                   ("what=tunable&name=nope&value=1", 400),
                   ("what=record&event=nope:x&on=0", 400),
                   ("what=record&event=scope:tick&on=2", 400),
                   ("what=nonsense", 400), ("event=scope:tick", 400)):
    st, body = scope.post(form)
    c.check(st == code and "error" in body, "%s: %d %r, %d expected" % (form, st, body, code))
c.check(events()[1]["gain"]["value"] == 5, "a refused value changed gain")
st, body = scope.post("what=tunable&name=gain&value=42")
c.check(st == 200, "gain=42: %d %r" % (st, body))
sc.wait(lambda: events()[1]["gain"]["value"] == 42, "state: gain 42")
sc.wait(lambda: any(v == 42 for _, v in npoints("scope:gain.value")), "42 in the stream")
st, body = scope.post("what=tunable&name=amp&value=2.5")
c.check(st == 200, "amp=2.5: %d %r" % (st, body))
sc.wait(lambda: events()[1]["amp"]["value"] == 2.5, "state: amp 2.5")
sc.wait(lambda: {"gain", "amp"} <= {f["name"] for f in events()[0].get(
    "fdr:tunable", {}).get("fields", []) if f["numeric"]},
    "the live event list's fdr:tunable with the fields gain and amp")
st, body = scope.post("what=print&event=scope:note&on=1")
c.check(st == 200, "print on: %d %r" % (st, body))
sc.wait(lambda: events()[0]["scope:note"]["printed"] is True, "state: note printed")

# -- 5. the program ends ---------------------------------------------------------------
os.kill(child, signal.SIGTERM)
sc.wait(lambda: not scope.json("/api/info")["running"], "running false")
c.check("exited with status 0; still serving" in scope.stderr(), "stderr %r" % scope.stderr())
level = sc.trace_values(own, "scope:level", "value")
gain = sc.trace_values(own, "scope:gain", "value")
ticks = [m for _, m in sc.trace_values(own, "scope:tick", "mono")]
c.check(len(level) > 100, "own trace: %d scope:level" % len(level))
c.check(any(m < t_off for m in ticks), "no tick before the switch")
c.check(not any(t_off < m < t_back for m in ticks), "ticks recorded while switched off: %s"
        % [m for m in ticks if t_off < m < t_back][:3])
c.check(any(m > t_on for m in ticks), "no tick after switching back on")
gv = [v for _, v in gain]
first42 = gv.index(42) if 42 in gv else len(gv)
c.check(set(gv[:first42]) == {5} and set(gv[first42:]) == {42},
        "gain values: %s ... %s" % (gv[:3], gv[-3:]))
# the controls in the program's trace: exactly those taken, in order
ctl = sc.trace_controls(own)
tun_ev = [(t, f["name"], f["value"]) for t, n, f in ctl if n == "fdr:tunable"]
c.check([(n, v) for _, n, v in tun_ev] == [("gain", 42), ("amp", 2.5)],
        "fdr:tunable events %r" % tun_ev)
# each tunable its own counter in both exports (not one fdr:tunable mixing
# gain's and amp's values), its values bt2's, its times too within 1 ms
# (an export's times are fdr's line clock, at the frequency the class file
# has; bt2's the metadata's, calibrated at the end: 1 to 2 us apart after a
# second here)
xp = sc.export_tunables(s, own)
for fmt, counters in xp.items():
    want = {}
    for t, n, v in tun_ev:
        want.setdefault("fdr:tunable." + n, []).append((t, v))
    c.check(sorted(counters) == sorted(want) and all(
        len(counters[k]) == len(w) and all(abs(a[0] - b[0]) < 1e-3 and a[1] == b[1]
                                           for a, b in zip(counters[k], w))
        for k, w in want.items()),
        "%s export's tunable counters %r, bt2's fdr:tunable %r" % (fmt, counters, want))
sw = [(f["event"], f["what"], f["on"]) for t, n, f in ctl if n == "fdr:switch"]
c.check(sw == [("scope:tick", "record", 0), ("scope:tick", "record", 1),
               ("scope:note", "print", 1)], "fdr:switch events %r" % sw)
# gain=42 at its time: the program's gain was 5 before it, 42 after (but
# one read in flight either side: a loop may read the tunable just before
# the change and record it just after, or read 42 between the change and
# the clock read of its event)
if tun_ev:
    tg = tun_ev[0][0]
    c.check(sum(1 for t, v in gain if t > tg and v == 5) <= 1 and
            sum(1 for t, v in gain if t < tg and v == 42) <= 1 and
            any(t < tg and v == 5 for t, v in gain) and any(t > tg and v == 42 for t, v in gain),
            "fdr:tunable gain=42 at %.6f is not between the program's gains 5 and 42: %s"
            % (tg, [(t, v) for t, v in gain if abs(t - tg) < 0.05]))


# Times: the program's clock is converted with the frequency known when
# the scope read the trace's metadata, the program's own trace with the one
# calibrated at its end: they may differ by tens of microseconds after some
# seconds (docs/scope.md). Within 1 ms; values exactly.
TOL = 1e-3


def same_points(key, want, what):
    got = sorted(npoints(key), key=lambda p: (p[1], p[0]))
    want = sorted(want, key=lambda p: (p[1], p[0]))
    ok = len(got) == len(want) and all(
        abs(a[0] - b[0]) < TOL and a[1] == b[1] for a, b in zip(got, want))
    if ok or what is None:
        return ok
    bad = [(a, b) for a, b in zip(got, want) if not (abs(a[0] - b[0]) < TOL and a[1] == b[1])]
    gv, wv = set(p[1] for p in got), set(p[1] for p in want)
    return c.check(False, "%s: %d points, trace %d; first differing %s; values only in "
                   "the scope %s, only in the trace %s; the scope counts %d discarded"
                   % (what, len(got), len(want), bad[:2], sorted(gv - wv)[:5],
                      sorted(wv - gv)[:5], scope.json("/api/events")["discarded"]))


# What the scope shows of the end comes through fdrd's live trace within
# its period: a minute is no bet on the machine's speed. A wait that ends
# says what differs (same_points below) instead of hanging to the TIMEOUT.
t0 = time.monotonic()
while not same_points("scope:level.value", level, None) and time.monotonic() - t0 < 60:
    time.sleep(0.05)
same_points("scope:level.value", level, "scope:level.value")
same_points("scope:gain.value", gain, "scope:gain.value")
live_level = sorted(npoints("scope:level.value"), key=lambda p: (p[1], p[0]))

# -- 6. SIGTERM ---------------------------------------------------------------------------
stream.r.close()
idle.close()
c.check(scope.stop() == 0, "fdr scope: SIGTERM, exit not 0")
c.check(scope_traces() == [], "traces left: %s" % scope_traces())
c.check(glob.glob(os.path.join(xdg, "fdr-scope-*")) == [], "files left in %s" % xdg)
rep = sc.Scope(s, [own])
got = []
with rep.stream("fields=scope:level.value&width=4000") as st_:
    for name_, data in st_.messages():
        if name_ == "points":
            got.extend(p for ser in data["series"] for p in zip(ser["t"], ser["v"]))
        if name_ == "done":
            break
got.sort(key=lambda p: (p[1], p[0]))
c.check(len(got) == len(live_level) and all(abs(a[0] - b[0]) < TOL and a[1] == b[1]
                                            for a, b in zip(got, live_level)),
        "replay: %d points, live %d; first %s / %s" % (len(got), len(live_level), got[:1],
                                                       live_level[:1]))
# the tunables' values over time: a series per tunable, and the list
rg = rep.json("/api/range?key=fdr:tunable.gain&from=0&to=1e11&width=1000")
want_g = [(t, v) for t, n, v in tun_ev if n == "gain"]
c.check(len(rg["t"]) == len(want_g) and all(
    abs(a - b[0]) < TOL and v == b[1] for a, v, b in zip(rg["t"], rg["v"], want_g)),
    "replay's fdr:tunable.gain %r, the trace's %r" % (rg, want_g))
rtun = {t["name"]: t["value"] for t in rep.json("/api/events")["tunables"]}
c.check(rtun == {"gain": 42, "amp": 2.5}, "replay's tunables %r" % rtun)
rep.stop()

# SIGTERM to a scope whose command still runs: the command ends too (it is
# passed on), and the scope has waited for it (so it is gone, not a zombie
# left to init).
t = sc.Scope(s, ["--", prog], env={"XDG_RUNTIME_DIR": xdg})
tpid = t.json("/api/info")["pid"]
s.pids.add(tpid)
c.check(t.stop() == 0, "fdr scope with a running command: SIGTERM, exit not 0")
c.check(not os.path.exists("/proc/%d" % tpid),
        "SIGTERM to the scope: its command (pid %d) still exists" % tpid)
c.check(scope_traces() == [], "traces left: %s" % scope_traces())

# -- 7. SIGKILL -----------------------------------------------------------------------------
k = sc.Scope(s, ["--", prog], env={"XDG_RUNTIME_DIR": xdg})
kpid = k.json("/api/info")["pid"]
s.pids.add(kpid)
c.check(len(scope_traces()) == 1, "the second scope's trace: %s" % scope_traces())
k.p.kill()
k.p.wait()
h.wait_for(lambda: scope_traces() == [], "fdrd destroys a killed scope's trace", limit=60)
os.kill(kpid, signal.SIGTERM)

# -- 8. PID and TRACE --------------------------------------------------------------------------
alone = subprocess.Popen([prog], env=s.env, stdout=subprocess.DEVNULL)
s.pids.add(alone.pid)
sc.wait(lambda: any(p["pid"] == alone.pid for p in
                       s.json("list", "processes", "--json")["processes"]), "registered")
c.check(len(glob.glob(os.path.join(xdg, "fdr-scope-%d-*" % k.p.pid))) == 1,
        "the killed scope's directory: %s" % os.listdir(xdg))
ps = sc.Scope(s, [str(alone.pid)], env={"XDG_RUNTIME_DIR": xdg})
# the next scope removes the directory of the killed one
c.check(glob.glob(os.path.join(xdg, "fdr-scope-%d-*" % k.p.pid)) == [],
        "the killed scope's directory is left: %s" % os.listdir(xdg))
info = ps.json("/api/info")
c.check(info["target"] == "pid %d" % alone.pid and info["control"], "PID: %r" % info)
sc.wait(lambda: "gain" in {t["name"] for t in ps.json("/api/events")["tunables"]},
           "PID: the state")
st, body = ps.post("what=tunable&name=gain&value=7")
c.check(st == 200, "PID: gain=7: %d %r" % (st, body))
sc.wait(lambda: {t["name"]: t for t in ps.json("/api/events")["tunables"]}["gain"]
           ["value"] == 7, "PID: gain 7")
c.check(ps.stop() == 0, "PID: exit status")
c.check(os.listdir(xdg) == [], "left in %s: %s" % (xdg, os.listdir(xdg)))
alone.terminate()
alone.wait()
me = os.getpid()
s.fdr_err(["scope", str(me)], "fdr scope: process %d is not registered with fdrd (attaching "
          "needs fdrd running when the program started)" % me, 1)
# No fdrd at all: PID and TRACE refuse in one line and start none.
nofdrd = os.path.join(s.work, "no-fdrd")
for arg, what in ((str(me), "a program"), ("named", "a trace")):
    r = s.run(["scope", arg], env={"FDR_RUNDIR": nofdrd})
    c.check(r.returncode == 1 and r.stdout == "" and r.stderr ==
            "fdr scope: fdrd is not running (attaching to %s needs the fdrd it was "
            "started with)\n" % what, "scope %s without fdrd: %d %r" % (arg, r.returncode,
                                                                  r.stderr))
c.check(not os.path.exists(os.path.join(nofdrd, "fdrd.sock")), "fdr scope started fdrd")

tdir = os.path.join(s.work, "named")
s.fdr("create", "named", "-o", tdir)
s.fdr("enable", "named", "*")
s.fdr("start", "named")
r = subprocess.run([prog, "--seconds", "0.3"], env=s.env, stdout=subprocess.DEVNULL,
                   timeout=120)
c.check(r.returncode == 0, "scope-prog for the named trace: %d" % r.returncode)
ts_ = sc.Scope(s, ["named"])
info = ts_.json("/api/info")
c.check(info["target"] == "trace named" and not info["control"], "TRACE: %r" % info)
sc.wait(lambda: any(e["id"] == "scope:level" and e["count"] > 0
                       for e in ts_.json("/api/events")["events"]), "TRACE: events")
st, body = ts_.post("what=tunable&name=gain&value=7")
c.check(st == 409, "TRACE: control %d" % st)
c.check(ts_.stop() == 0, "TRACE: exit status")
s.fdr_err(["scope", "nope"], "fdr scope: no trace named 'nope' (fdr list traces)", 1)
c.finish()
