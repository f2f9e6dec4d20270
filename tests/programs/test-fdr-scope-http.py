# SPDX-License-Identifier: MIT
"""test-fdr-scope-http.py FDR FDRD SESSION_CLIENT WORKDIR SCOPE_PROG -
`fdr scope`'s HTTP side without a browser (urllib and raw sockets), on the
replay of a trace scope-prog wrote alone (FDR_OUTPUT, no fdrd):

1. Usage errors: one line "fdr scope: ...", status 2; a directory that
   holds no trace: status 1. The first stdout line is exactly the URL.
2. The token: every path (the page, a static file, each API, an unknown
   path, POST /api/control) answers 403 without it, with a wrong one,
   with one a byte short; X-Fdr-Token works as well as ?token=; a token
   with one byte changed is refused even when the real one is in another
   header (the gate passed the connection).
3. 404 (unknown path, unknown static file), 405 (DELETE, GET on
   /api/control, POST elsewhere), 8 KiB of headers refused (431), a 5 KiB
   body refused (413), a malformed body (400), control in a replay (409).
4. The page is served with the token in it; uPlot's files are embedded.
5. /api/info says replay; /api/events lists scope-prog's events, fields
   and counts equal to the trace's (bt2), tunables [], recorded null.
6. A stream's points for scope:level.value and scope:wave.x are exactly
   the trace's values at the trace's times (bt2: seconds since the
   epoch), then `done`; split=1 adds the per-thread series; width thins
   to first/min/max/last per column (M4), keeping the extremes; api/range
   gives a narrow span's points as they are and reduces a wide one; a tail pattern gives lines
   of the matching events only, a bad one an `error` message.
7. A client that connects, asks for a stream and never reads, and one
   that closes mid-stream, change nothing: the next requests are served.
8. 20 streams at once: 16 are served, the others get 503; once they
   close, a new one is served again.
9. SIGTERM: exit status 0.
10. /api/range of a big series (12,000 points of a square wave, the
    replay's block index in use) is, point for point, the M4 reduction
    computed here from the series' own points (all of them, raw), at
    several spans and widths: the index gives what reading every point
    gives."""
import bisect
import math
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scope_client as sc  # noqa: E402
import session_helpers as h  # noqa: E402

c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]

# -- a trace of scope-prog's own: 2 threads, 0.6 s -------------------------
trace = os.path.join(s.work, "own")
e = dict(s.env, FDR_DAEMON="off", FDR_OUTPUT=trace)
p = h.subprocess.run([prog, "--seconds", "0.6", "--period-us", "2000", "--threads", "2",
                      "--report", os.path.join(s.work, "report")],
                     env=e, stdout=h.subprocess.PIPE, stderr=h.subprocess.PIPE, text=True,
                     timeout=120)
c.check(p.returncode == 0, "scope-prog: exit %d: %s" % (p.returncode, p.stderr))
level = sc.trace_values(trace, "scope:level", "value")
wave = sc.trace_values(trace, "scope:wave", "x")
c.check(len(level) > 100, "scope-prog recorded %d scope:level" % len(level))

# -- 1. usage ---------------------------------------------------------------
s.fdr_err(["scope"], "fdr scope: missing -- CMD, PID, TRACE or DIR (fdr help scope)", 2)
s.fdr_err(["scope", "--port", "x", trace], "fdr scope: bad --port 'x': 0 to 65535", 2)
s.fdr_err(["scope", "--window", "0", trace],
          "fdr scope: bad --window '0': seconds, 1 to 86400", 2)
s.fdr_err(["scope", "--frob", trace], "fdr scope: unknown option '--frob' (fdr help scope)", 2)
s.fdr_err(["scope", trace, "x"], "fdr scope: unexpected argument 'x' (fdr help scope)", 2)
empty = os.path.join(s.work, "empty")
os.makedirs(empty)
pe = s.run(["scope", empty])
c.check(pe.returncode == 1 and pe.stdout == "" and pe.stderr.startswith("fdr scope: ")
        and pe.stderr.count("\n") == 1, "scope of an empty directory: %d %r"
        % (pe.returncode, pe.stderr))

scope = sc.Scope(s, [trace])
port, tok = scope.port, scope.token

# -- 2. the token -------------------------------------------------------------
paths = ["/", "/static/scope.js", "/static/uPlot.iife.min.js", "/api/info", "/api/events",
         "/api/stream?fields=scope:level.value", "/nope", "/static/nope.js"]
for path in paths:
    st, body = scope.get(path, token=False)
    c.check(st == 403, "%s without a token: %d" % (path, st))
    sep = "&" if "?" in path else "?"
    for bad in ("0" * 32, tok[:-1], tok + "0", tok.upper()):
        st, _ = scope.get(path + sep + "token=" + bad, token=False)
        c.check(st == 403, "%s with token %s: %d" % (path, bad, st))
st, body = scope.post("what=record&event=scope:tick&on=0", token=False)
c.check(st == 403, "POST /api/control without a token: %d" % st)
st, _, _ = scope.request("/api/info", token=False, headers={"X-Fdr-Token": tok})
c.check(st == 200, "X-Fdr-Token: %d" % st)
st, _, _ = scope.request("/api/info", token=False, headers={"X-Fdr-Token": tok[:-1] + "x"})
c.check(st == 403, "a wrong X-Fdr-Token: %d" % st)
# The gate lets a connection through once its bytes hold the token
# anywhere; the server then checks the token it was given, every byte: a
# wrong one (its last or a middle byte changed) beside the real token in
# another header is refused.
for i in (31, 16):
    bad = tok[:i] + ("1" if tok[i] == "0" else "0") + tok[i + 1:]
    for how in ("?token=%s HTTP/1.1\r\nHost: x\r\nX-Other: %s\r\n\r\n",
                " HTTP/1.1\r\nHost: x\r\nX-Fdr-Token: %s\r\nX-Other: %s\r\n\r\n"):
        st = sc.raw_request(port, "GET /api/info" + how % (bad, tok))
        c.check(st == 403, "token %s (byte %d changed), the real one in another header: %d"
                % (bad, i, st))

# -- 3. refusals ------------------------------------------------------------------
for path in ("/nope", "/static/nope.js", "/api", "/static/", "/api/events/x"):
    c.check(scope.get(path)[0] == 404, "%s: 404 expected" % path)
for method, path in (("DELETE", "/api/info"), ("PUT", "/"), ("GET", "/api/control"),
                     ("POST", "/api/events")):
    st, _, _ = scope.request(path, method=method, data=b"" if method != "GET" else None)
    c.check(st == 405, "%s %s: %d, 405 expected" % (method, path, st))
st, _, _ = scope.request("/api/info", headers={"X-Big": "a" * 9000})
c.check(st in (413, 414, 431), "9000 bytes of header: %d" % st)
st = sc.raw_request(port, "GET /api/info?token=%s&pad=%s HTTP/1.1\r\nHost: x\r\n\r\n"
                    % (tok, "b" * 9000))
c.check(st in (0, 413, 414, 431), "a 9000-byte URL: %d" % st)
st = sc.raw_request(port, "GET /api/info?token=%s HTTP/1.1\r\nHost: x\r\nX-Huge: %s\r\n\r\n"
                    % (tok, "c" * 200000))
c.check(st in (0, 413, 431), "200 KB of header: %d" % st)
st, body = scope.post("what=record&event=scope:tick&on=0&pad=" + "d" * 5000)
c.check(st == 413, "a 5 KB body: %d %r" % (st, body))
st, _, _ = scope.request("/api/control", method="POST", data=b"what=record",
                         headers={"Content-Type": "text/plain"})
c.check(st == 400, "a body that is not a form: %d" % st)
st, body = scope.post("what=nonsense")
c.check(st == 409 and "error" in body, "control in a replay: %d %r" % (st, body))
st = sc.raw_request(port, "garbage\r\n\r\n")
# (the gate, scope/gate.c, answers 403 to whatever lacks the token)
c.check(st in (0, 400, 403), "a garbage request line: %d" % st)

# -- 4. the page ----------------------------------------------------------------------
st, page = scope.get("/")
c.check(st == 200 and tok.encode() in page and b"@TOKEN@" not in page,
        "the page: %d, token in it: %s" % (st, tok.encode() in page))
for name, ctype in (("scope.js", "text/javascript"), ("scope.css", "text/css"),
                    ("uPlot.iife.min.js", "text/javascript"), ("uPlot.min.css", "text/css")):
    st, body, hd = scope.request("/static/" + name)
    c.check(st == 200 and len(body) > 100 and hd["Content-Type"].startswith(ctype)
            and hd["Cache-Control"] == "no-store",
            "/static/%s: %d, %d bytes, %s" % (name, st, len(body), hd["Content-Type"]))

# -- 5. info and events ----------------------------------------------------------------
info = scope.json("/api/info")
c.check(info == {"mode": "replay", "target": os.path.realpath(trace), "pid": 0,
                 "running": False, "control": False}, "/api/info: %r" % info)
ev = scope.json("/api/events")
byid = {x["id"]: x for x in ev["events"]}
for name in ("scope:level", "scope:tick", "scope:gain", "scope:wave", "scope:note"):
    c.check(name in byid, "/api/events lacks %s: %s" % (name, sorted(byid)))
c.check(byid["scope:level"]["count"] == len(level), "scope:level count %d, trace %d"
        % (byid["scope:level"]["count"], len(level)))
c.check(byid["scope:level"]["fields"] == [{"name": "value", "type": "int", "numeric": True}],
        "scope:level fields %r" % byid["scope:level"]["fields"])
c.check(byid["scope:note"]["fields"][0]["numeric"] is False, "scope:note's text is numeric")
c.check(byid["scope:wave"]["fields"][0]["type"] == "float", "scope:wave.x not a float")
c.check(byid["scope:level"]["recorded"] is None and ev["tunables"] == [],
        "a replay knows recorded/tunables: %r" % byid["scope:level"])
c.check(len(ev["threads"]) == 2, "threads %r" % ev["threads"])


# -- 6. points ------------------------------------------------------------------------------
def collect(query, end="done"):
    got, names = {}, []
    with scope.stream(query) as st_:
        for name, data in st_.messages():
            names.append(name)
            if name == "points":
                for ser in data["series"]:
                    t, v = got.setdefault(ser["key"], ([], []))
                    t.extend(ser["t"])
                    v.extend(ser["v"])
            if name == end:
                break
    return got, names


def close_to(a, b):
    return abs(a - b) < 2e-6


got, names = collect("fields=scope:level.value,scope:wave.x,nope:x.y&width=4000")
c.check(names[0] == "hello", "first message %s" % names[:1])
c.check("state" in names and names[-1] == "done", "messages %s" % names[:20])
for key, want in (("scope:level.value", level), ("scope:wave.x", wave)):
    t, v = got.get(key, ([], []))
    # by value, then time: a double holds an epoch time to ~0.3 us only,
    # so two threads' events that close may swap places when sorted by time
    pairs = sorted(zip(t, v), key=lambda p: (p[1], p[0]))
    wanted = sorted(want, key=lambda p: (p[1], p[0]))
    c.check(len(pairs) == len(wanted), "%s: %d points, trace %d" % (key, len(pairs),
                                                                    len(wanted)))
    bad = [(a, b) for a, b in zip(pairs, wanted)
           if not close_to(a[0], b[0]) or (a[1] != b[1] and abs(a[1] - b[1]) > 1e-6)]
    c.check(not bad, "%s: points differ from the trace: %s" % (key, bad[:3]))
c.check(set(got) == {"scope:level.value", "scope:wave.x"}, "series %s" % sorted(got))

got, _ = collect("fields=scope:level.value&split=1&width=4000")
tids = sorted(k for k in got if "@" in k)
c.check(len(tids) == 2, "split=1: per-thread series %s" % tids)
per = sorted(v for k in tids for v in got[k][1])
c.check(per == sorted(v for _, v in level), "split series hold other values")
# thread i's values are i * 1000000 + n: each thread's own
for k in tids:
    vs = got[k][1]
    c.check(len({int(v) // 1000000 for v in vs}) == 1, "%s mixes threads" % k)

got, _ = collect("fields=scope:level.value&width=10")
t, v = got["scope:level.value"]
c.check(len(v) <= 40, "width=10: %d points (4 per column at most)" % len(v))
c.check(max(v) == max(x for _, x in level) and min(v) == min(x for _, x in level),
        "thinning lost the extremes: %s..%s" % (min(v), max(v)))
c.check(t == sorted(t), "thinned points not in time order")
c.check(abs(t[0] - level[0][0]) < 1e-6 and abs(t[-1] - level[-1][0]) < 1e-6,
        "thinning lost the first or the last point")
lv = sorted(level)
# api/range (replay): a span with few points gives them as they are, with
# the one before and the one after; a wide one is reduced (M4)
mid = len(lv) // 2
t0, t1 = lv[mid][0], lv[mid + 5][0]
r = scope.json("/api/range?key=scope:level.value&from=%r&to=%r&width=100" % (t0, t1))
c.check(r["raw"] and not r["thinned"], "a narrow range is not raw: %s" % r)
got_r = list(zip(r["t"], r["v"]))
c.check(all(any(abs(x - y) < 2e-6 and a == b for y, b in lv) for x, a in got_r),
        "a narrow range has points the trace has not: %s" % r)
inner = [(x, a) for x, a in lv if t0 + 2e-6 < x < t1 - 2e-6]
c.check(len(inner) >= 3 and all(any(abs(x - y) < 2e-6 and a == b for y, b in got_r)
                                for x, a in inner),
        "a narrow range lacks the trace's points inside it: %s" % r)
c.check(min(r["t"]) < t0 + 2e-6 and max(r["t"]) > t1 - 2e-6,
        "a narrow range without the point before and the one after: %s" % r)
r = scope.json("/api/range?key=scope:level.value&from=0&to=1e10&width=10")
c.check(not r["raw"] and len(r["v"]) <= 40 and max(r["v"]) == max(v) and min(r["v"]) == min(v),
        "a wide range is not reduced to 4 points per column with the extremes: %d points"
        % len(r["v"]))
for q, code in [("key=scope:level.value&from=5&to=1", 400), ("key=scope:level.value&from=x&to=1", 400),
                ("from=0&to=1", 400), ("key=nope:x.y&from=0&to=1", 404)]:
    c.check(scope.get("/api/range?" + q)[0] == code, "api/range?%s: %d expected" % (q, code))

lines = []
with scope.stream("fields=&tail=scope:note") as st_:
    for name, data in st_.messages():
        if name == "tail":
            lines.extend(data["lines"])
        if name == "done":
            break
# the server keeps the newest 1024 events raw: the notes among them
names_all = sc.trace_names(trace)
notes = [n for n in names_all[-1024:] if n == "scope:note"]
c.check(len(lines) == len(notes) and all(" scope:note text=" in x for x in lines),
        "tail scope:note: %d lines (trace %d): %s" % (len(lines), len(notes), lines[:2]))
c.check(any(x.endswith("text=h\u00e9llo") for x in lines) or len(lines) < 3,
        "UTF-8 text not passed through: %s" % lines)
_, names = collect("fields=scope:level.value&tail=@/etc/passwd", "error")
c.check("error" in names, "a bad tail pattern gives no error message: %s" % names)

# -- 7. clients that never read, or leave -------------------------------------------------
idle = sc.raw_request(port, "GET /api/stream?token=%s&fields=scope:level.value,scope:wave.x"
                      "&split=1 HTTP/1.1\r\nHost: x\r\n\r\n" % tok, read=False)
half = sc.raw_request(port, "GET /api/stream?token=%s&fields=scope:level.value HTTP/1.1\r\n"
                      "Host: x\r\n\r\n" % tok, read=False)
half.recv(100)
half.close()
partial = sc.raw_request(port, "GET /api/info?token=%s HTTP/1.1\r\nHo" % tok, read=False)
c.check(scope.json("/api/info")["mode"] == "replay", "not served next to idle clients")
got, names = collect("fields=scope:level.value&width=4000")
c.check(len(got["scope:level.value"][1]) == len(level), "a stream next to an idle one: "
        "%d points" % len(got["scope:level.value"][1]))

# -- 8. 16 streams -------------------------------------------------------------------------------
idle.close()
partial.close()


def open_stream():
    k = socket.create_connection(("127.0.0.1", port), timeout=60)
    k.sendall(("GET /api/stream?token=%s&fields=scope:level.value HTTP/1.1\r\nHost: x\r\n\r\n"
               % tok).encode())
    buf = b""
    while b"\r\n" not in buf:
        more = k.recv(4096)
        if not more:
            break
        buf += more
    return k, int(buf.split()[1]) if buf.startswith(b"HTTP/") else 0




def twenty():
    """20 streams at once: their status codes (all closed after)."""
    got = [open_stream() for _ in range(20)]
    for k, _ in got:
        k.close()
    codes_ = [st for _, st in got]
    if codes_ != [200] * 16 + [503] * 4:
        time.sleep(0.2)  # not a timing assumption: only fewer tries while slots free
    return codes_


# Streams closed before (the idle and half-read ones above, or an earlier
# round of this) hold their slot until the server writes to them again
# (within a second): asked again until all 16 are free.
codes = []
sc.wait(lambda: codes.append(twenty()) or codes[-1] == [200] * 16 + [503] * 4,
           "20 streams: 16 served, 4 refused")
c.check(all(x.count(200) <= 16 and 503 in x for x in codes), "more than 16 streams "
        "served, or none refused: %s" % codes)
sc.wait(lambda: open_stream()[1] == 200, "a stream served after the others closed")

# -- 9. the end ---------------------------------------------------------------------------------
c.check(scope.stop() == 0, "SIGTERM: exit status not 0")
c.check(scope.stderr() == "", "stderr %r" % scope.stderr())

# -- 10. the replay's block index (series.c, m4_blocks) ----------------------------------------
big = os.path.join(s.work, "square")
p = h.subprocess.run([prog, "--square", "37", "--count", "12000", "--rate", "2000000"],
                     env=dict(s.env, FDR_DAEMON="off", FDR_OUTPUT=big),
                     stdout=h.subprocess.PIPE, stderr=h.subprocess.PIPE, text=True, timeout=120)
c.check(p.returncode == 0, "scope-prog --square: exit %d: %s" % (p.returncode, p.stderr))
sq = sc.Scope(s, [big])
K = "scope:square.value"
allp = sq.json("/api/range?key=%s&from=0&to=1e11&width=4000" % K)
P = list(zip(allp["t"], allp["v"]))
c.check(allp["raw"] and len(P) == 12000, "the square wave's raw points: %d" % len(P))
T = [x for x, _ in P]


def m4(t0, t1, width):
    """scope_db_range's reduction, from the raw points."""
    a, b = bisect.bisect_left(T, t0), bisect.bisect_left(T, math.nextafter(t1, math.inf))
    a, b = max(a - 1, 0), min(b + 1, len(P))
    if b - a <= 4 * width:
        return P[a:b]
    t0, t1 = max(t0, T[0]), min(t1, T[-1])
    out = []
    if T[a] < t0:
        out.append(P[a])
        a += 1
    after = T[b - 1] > t1
    end, span = b - after, (t1 - t0 if t1 > t0 else 1)

    def col(t):
        x = (t - t0) / span * width
        return 0 if x < 0 else width - 1 if x >= width else int(x)
    i = a
    while i < end:
        cc, j, lo, hi = col(T[i]), i, i, i
        while j < end and col(T[j]) == cc:
            lo = j if P[j][1] < P[lo][1] else lo
            hi = j if P[j][1] > P[hi][1] else hi
            j += 1
        idx = [i, min(lo, hi), max(lo, hi), j - 1]
        out.extend(P[x] for k, x in enumerate(idx) if k == 0 or x != idx[k - 1])
        i = j
    if after:
        out.append(P[b - 1])
    return out


span_all = T[-1] - T[0]
for f0, f1, w in ((0, 1, 7), (0, 1, 1200), (0.3, 0.31, 50), (0.123, 0.789, 333), (0.5, 0.5004, 3)):
    t0, t1 = T[0] + f0 * span_all, T[0] + f1 * span_all
    r = sq.json("/api/range?key=%s&from=%r&to=%r&width=%d" % (K, t0, t1, w))
    want = m4(t0, t1, w)
    got = list(zip(r["t"], r["v"]))
    c.check(got == want, "range [%r, %r] at %d px: %d points, the M4 of the raw points %d; "
            "first differing %s" % (t0, t1, w, len(got), len(want),
                                    next(((g, x) for g, x in zip(got, want) if g != x), None)))
c.check(sq.stop() == 0, "the square wave's replay: exit status not 0")
c.finish()
