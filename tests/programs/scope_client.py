# SPDX-License-Identifier: MIT
"""scope_client.py - what the fdr-scope-* drivers share (not a test
itself): starting `fdr scope` and reading its URL line, plain HTTP
requests with urllib (no browser), a Server-Sent Events reader, and the
values of a trace read with bt2.

    sc = Scope(session, ["--", prog, "--seconds", "3"], env={...})
    st, body = sc.get("/api/events")          # token added
    ev = sc.json("/api/events")
    with sc.stream("fields=scope:level.value") as s:
        for name, data in s.messages(): ...
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import session_helpers as h

c = h.c
URL = re.compile(r"^http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{32})\n$")


def wait(cond, what):
    """session_helpers.wait_for (it says on stderr what it still waits for
    after 30 s, for a TIMEOUT's log; the test's TIMEOUT bounds it)."""
    return h.wait_for(cond, what)


class Scope:
    def __init__(self, s, args, env=None):
        e = dict(s.env)
        e.update(env or {})
        self.err_path = os.path.join(s.work, "scope-%d.err" % len(s.pids))
        self.err = open(self.err_path, "w+")
        self.p = subprocess.Popen([s.fdr_bin, "scope"] + list(args), env=e,
                                  stdout=subprocess.PIPE, stderr=self.err, text=True)
        s.pids.add(self.p.pid)
        line = self.p.stdout.readline()
        m = URL.match(line)
        if not m:
            c.fail("fdr scope %s: first line %r, stderr %r"
                   % (" ".join(args), line, self.stderr()))
        self.port, self.token = int(m.group(1)), m.group(2)
        self.base = "http://127.0.0.1:%d" % self.port
        s.note_daemon()

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def url(self, path, token=True):
        if not token:
            return self.base + path
        return self.base + path + ("&" if "?" in path else "?") + "token=" + self.token

    def request(self, path, token=True, method="GET", data=None, headers=None, timeout=60):
        """(status, body bytes, headers) of one request."""
        req = urllib.request.Request(self.url(path, token), data=data, method=method,
                                     headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers

    def get(self, path, **kw):
        st, body, _ = self.request(path, **kw)
        return st, body

    def json(self, path):
        st, body = self.get(path)
        c.check(st == 200, "GET %s: status %d" % (path, st))
        return json.loads(body)

    def post(self, form, token=True):
        st, body, _ = self.request("/api/control", token=token, method="POST",
                                   data=form.encode(),
                                   headers={"Content-Type":
                                            "application/x-www-form-urlencoded"})
        return st, json.loads(body) if body.startswith(b"{") else body

    def stream(self, query):
        return Stream(self.url("/api/stream?" + query))

    def stop(self, sig=signal.SIGTERM):
        self.p.send_signal(sig)
        rc = self.p.wait(timeout=60)
        self.err.close()
        return rc


class Stream:
    """An SSE stream: messages() yields (event, parsed data)."""

    def __init__(self, url):
        self.r = urllib.request.urlopen(url, timeout=60)
        c.check(self.r.status == 200, "stream: status %d" % self.r.status)
        c.check(self.r.headers["Content-Type"] == "text/event-stream",
                "stream: Content-Type %r" % self.r.headers["Content-Type"])

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.r.close()

    def messages(self):
        name, data = None, []
        while True:
            line = self.r.readline()
            if not line:
                return
            line = line.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif line == "" and name:
                yield name, json.loads("\n".join(data))
                name, data = None, []


def raw_request(port, text, read=True):
    """Sends text on a new socket; the status code of the answer (0 when
    the connection closed without one), or the socket when read is False."""
    k = socket.create_connection(("127.0.0.1", port), timeout=60)
    k.sendall(text.encode() if isinstance(text, str) else text)
    if not read:
        return k
    buf = b""
    try:
        while b"\r\n" not in buf:
            more = k.recv(4096)
            if not more:
                break
            buf += more
    except (ConnectionResetError, BrokenPipeError):
        pass
    k.close()
    m = re.match(rb"HTTP/1\.[01] (\d+)", buf)
    return int(m.group(1)) if m else 0


def trace_values(path, event, field):
    """[(seconds since the epoch, value)] of event's field in the trace at
    path, read with bt2, in trace order."""
    import bt2
    out = []
    for m in bt2.TraceCollectionMessageIterator(path):
        if type(m) is bt2._EventMessageConst and m.event.name == event:
            ns = m.default_clock_snapshot.ns_from_origin
            out.append((ns / 1e9, m.event.payload_field[field]))
    return out


def trace_controls(path):
    """[(seconds since the epoch, name, {field: value})] of fdr's own events
    in the trace at path (the controls: fdr:tunable, fdr:switch), bt2."""
    import bt2
    out = []
    for m in bt2.TraceCollectionMessageIterator(path):
        if type(m) is bt2._EventMessageConst and m.event.name.startswith("fdr:"):
            f = {k: (str(v) if k in ("name", "event", "what") else float(v))
                 for k, v in m.event.payload_field.items()}
            out.append((m.default_clock_snapshot.ns_from_origin / 1e9, m.event.name, f))
    return out


def trace_names(path):
    """The event names of the trace at path, in bt2's order."""
    import bt2
    return [m.event.name for m in bt2.TraceCollectionMessageIterator(path)
            if type(m) is bt2._EventMessageConst]


def export_tunables(s, path):
    """The counters of fdr:tunable in `fdr export` of the trace at path, in
    both formats: {format: {counter name: [(seconds since the epoch,
    value)]}}, for every counter whose name starts with "fdr:tunable".
    Perfetto is parsed with the classes protoc makes from
    programs/fdr/perfetto.proto, its times mapped to the epoch by its clock
    snapshot; Chrome JSON's "C" events carry the same clock (ns since the
    trace's start, in us), mapped by that snapshot too."""
    import json
    pf, js = os.path.join(s.work, "tun.pftrace"), os.path.join(s.work, "tun.json")
    s.fdr("export", "--format", "perfetto", path, "-o", pf)
    s.fdr("export", "--format", "chrome", path, "-o", js)
    import session_helpers
    tr = session_helpers.perfetto_read(s, pf)
    clocks, tracks, out = {}, {}, {"perfetto": {}, "chrome": {}}
    for pk in tr.packet:
        if pk.HasField("clock_snapshot"):
            clocks = {ck.clock_id: ck.timestamp for ck in pk.clock_snapshot.clocks}
        td = pk.track_descriptor if pk.HasField("track_descriptor") else None
        if td and td.HasField("counter") and td.name.startswith("fdr:tunable"):
            tracks[td.uuid] = td.name
        te = pk.track_event if pk.HasField("track_event") else None
        if te and te.type == te.TYPE_COUNTER and te.track_uuid in tracks:
            v = te.double_counter_value if te.HasField("double_counter_value") else te.counter_value
            out["perfetto"].setdefault(tracks[te.track_uuid], []).append((pk.timestamp, v))
    epoch = clocks.get(1, 0) - clocks.get(6, 0)   # REALTIME - the packets' clock (BOOTTIME)
    out["perfetto"] = {k: [((t + epoch) / 1e9, v) for t, v in p] for k, p in out["perfetto"].items()}
    with open(js) as f:
        doc = json.load(f)
    for e in doc["traceEvents"]:
        if e.get("ph") == "C" and e["name"].startswith("fdr:tunable"):
            for k, v in e["args"].items():
                name = e["name"] if len(e["args"]) == 1 else e["name"] + " " + k
                out["chrome"].setdefault(name, []).append(((round(e["ts"] * 1000) + epoch) / 1e9, v))
    return out
