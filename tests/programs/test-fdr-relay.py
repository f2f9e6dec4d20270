# SPDX-License-Identifier: MIT
"""test-fdr-relay.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG PHASE -
fdrd streams traces to a real, unmodified lttng-relayd (issue 16).

A real /usr/bin/lttng-relayd on 127.0.0.1 with free ports, a real fdrd in a
run directory of the test's own, real instrumented programs
(progs/session-prog.c); what relayd stored is read with bt2. PHASE:

  basic    `fdr create --relayd` to a port where nothing listens: one error
           line, exit 1, no trace. A live trace (-o as well): two programs
           ("go": 2 threads x N events; one exits, one is SIGKILLed with its
           packets open) stream to relayd; `fdr status --json` shows the
           relayd connected with packets sent; babeltrace2 lttng-live lists
           the session and prints events while a third program runs; after
           destroy, relayd's copy of each process holds, per thread, exactly
           the local copy's events and discarded count, and the babeltrace2
           CLI reads it without a complaint. A corrupt packet in a streamed
           directory stops its stream with one log line; symlinks there are
           never followed.
  restart  a streamed trace with no -o (a spool, removed at destroy); a
           program records in paced bursts throughout; relayd is SIGKILLed
           and started again on the same ports: fdrd says "reconnecting",
           then connected in a second relay session; in that session, per
           thread, received + discarded == what the thread emitted (the
           program's own count), in the first, received <= emitted; the
           same, per process, for two programs that ended before relayd
           went away (their streams get no new packet: one packet per
           thread, and several); the
           program's rate does not drop below a quarter of a run without
           relayd and no burst of 100 events took 4 s (a program coupled to
           relayd would wait a 5 s send timeout per stall).
  fake     a fake relayd (the one allowed fake) that answers the handshake,
           then never reads again (a full TCP window): the program's rate
           as above (bounds generous: shared machines, sanitizers), fdrd's VmRSS bounded, fdrd reconnects (a second relay
           session), the local copy complete (received + discarded ==
           emitted, by `fdr stats`), destroy returns.
  full     relayd's output on a 2 MiB tmpfs that fills (root only, else
           skipped), FDR_HOSTNAME naming the host: relayd takes each
           connection and drops it; fdrd's logged waits grow from 0.1 s to
           the 5 s cap (one line per connection), and the attempts share
           one relay session directory (two in all, under FDR_HOSTNAME).
           The program stops, the disk gets room: the session after the
           gap reads alone, per thread received + discarded == emitted,
           the gap counted. After a connection that worked 12 s, relayd
           restarted: the next wait is 0.1 s again.
Every wait polls for a state, bounded (session_helpers.wait_for, line): a
state that never comes fails the test saying what it still waited for."""
import glob
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
phase = sys.argv[6]
RELAYD = "/usr/bin/lttng-relayd"
BT = "/usr/bin/babeltrace2"
HOST = socket.gethostname()

if not os.access(RELAYD, os.X_OK):
    print("SKIP: no %s (Debian's lttng-relayd)" % RELAYD)
    sys.exit(77)


def free_ports(n):
    socks = []
    for _ in range(n):
        k = socket.socket()
        k.bind(("127.0.0.1", 0))
        socks.append(k)
    ports = [k.getsockname()[1] for k in socks]
    for k in socks:
        k.close()
    return ports


class Relayd:
    def __init__(self, out):
        self.out = out
        self.ports = free_ports(3)
        self.p = None

    def start(self):
        c1, d1, l1 = self.ports
        env = dict(os.environ, LTTNG_HOME=os.path.join(s.work, "lttng-home"))
        os.makedirs(env["LTTNG_HOME"], exist_ok=True)
        self.p = subprocess.Popen(
            [RELAYD, "-C", "tcp://127.0.0.1:%d" % c1, "-D", "tcp://127.0.0.1:%d" % d1,
             "-L", "tcp://127.0.0.1:%d" % l1, "-o", self.out], env=env,
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(s.work, "relayd.log"), "a"))
        s.pids.add(self.p.pid)
        h.wait_for(lambda: self.listening(), "relayd listens")

    def listening(self):
        c.check(self.p.poll() is None, "relayd exited %s" % self.p.returncode)
        if self.p.poll() is not None:
            c.finish()
        try:
            socket.create_connection(("127.0.0.1", self.ports[2]), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
            return False

    def kill(self):
        self.p.kill()
        self.p.wait()

    def url(self):
        return "127.0.0.1:%d:%d" % (self.ports[0], self.ports[1])


def status(name):
    for t in s.json("status", "--json")["relayd"]:
        if t["trace"] == name:
            return t["relayd"]
    c.fail("no relayd in fdr status for trace " + name)


def wait_status(name, what, cond):
    h.wait_for(lambda: cond(status(name)), what)


def launch_go(threads, n, *extra):
    e = dict(s.env, FDR_DEBUG="1")
    p = subprocess.Popen([prog, "go", str(threads), str(n)] + list(extra), env=e,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    h.wait_route(p)
    p.stdin.write("go\n")
    p.stdin.flush()
    c.check(h.line(p) == "done\n", "pid %d: not done" % p.pid)
    return p


def launch_pace(threads=2, burst=100):
    e = dict(s.env, FDR_DEBUG="1")
    p = subprocess.Popen([prog, "pace", str(threads), str(burst)], env=e, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    h.wait_route(p)
    threading.Thread(target=lambda: p.stderr.read(), daemon=True).start()
    c.check(h.line(p) == "ready\n", "pace: not ready")
    return p


def end_pace(p):
    """Ends a pace program: ({t: events emitted}, rate, longest burst in µs)."""
    p.stdin.close()
    out = p.stdout.read()
    c.check(p.wait(timeout=120) == 0, "pace exits 0")
    emitted, rate, burst = {}, 0.0, 0
    for line in out.splitlines():
        w = line.split()
        if w[0] == "events":
            emitted[int(w[1])] = int(w[2])
        elif w[0] == "rate":
            rate = float(w[1])
        elif w[0] == "maxburst_us":
            burst = int(w[1])
    return emitted, rate, burst


def relay_dirs(out, trace, host=HOST):
    """Relay session directories of trace under relayd's output, oldest first
    (NAME-DATE, then NAME-DATE-2, ...)."""
    ds = glob.glob(os.path.join(out, host, trace + "-*"))
    def key(d):
        tail = os.path.basename(d)[len(trace) + 1:].split("-")
        return int(tail[2]) if len(tail) > 2 else 1
    return sorted(ds, key=key)


def totals(path):
    """{tid: (events, discarded)} of a trace read with bt2."""
    ns, lost = h.per_thread(path)
    out = {}
    for (tid, _), v in ns.items():
        e, d = out.get(tid, (0, 0))
        out[tid] = (e + len(v), d)
    for tid, d in lost.items():
        e, _ = out.get(tid, (0, 0))
        out[tid] = (e, d)
    return out, ns


def check_index(trace, cut=False):
    """relayd's index files of trace (a process directory at relayd) against
    the packets of its stream files: one entry per packet, in order, each
    field what the packet's header says (fdrd's CMD_SEND_INDEX): offset in
    the stream file, packet and content size (bits), begin and end times,
    events discarded, stream class id (fdr's one: 0), stream instance id,
    packet sequence number. A live viewer finds packets and their
    discarded counts through these alone. cut: relayd was killed while it
    wrote this session: its last packet may lack its entry (the index
    comes after the data) or be cut, and a stream whose first packet had
    not arrived whole has no index file (or one without its header)."""
    files = sorted(glob.glob(os.path.join(trace, "stream_*")))
    c.check(files, "%s: no stream file at relayd" % trace)
    for f in files:
        with open(f, "rb") as k:
            data = k.read()
        want, off = [], 0
        while off + 100 <= len(data):
            magic, sii, tb, te, cs, ps, seq, disc = struct.unpack_from("<I16xQQQQQQQ", data, off)
            if cut and off + ps // 8 > len(data):
                break
            if magic != 0xC1FC1FC1 or ps < 800 or ps % 8 or cs > ps:
                c.check(False, "%s: no packet at byte %d" % (f, off))
                break
            want.append((off, ps, cs, tb, te, disc, 0, sii, seq))
            off += ps // 8
        c.check(off == len(data) or cut, "%s: %d bytes after the last packet"
                % (f, len(data) - off))
        idx = os.path.join(trace, "index", os.path.basename(f) + ".idx")
        try:
            with open(idx, "rb") as k:
                raw = k.read()
        except FileNotFoundError:
            # relayd makes a stream's index file once it has received the
            # stream's first packet whole (after writing its data): killed
            # before that, the stream file holds at most that packet.
            c.check(cut and len(want) <= 1, "no index file %s (%d packets in %s)"
                    % (idx, len(want), f))
            continue
        if len(raw) < 16:
            # relayd's data thread makes the index file after the stream's
            # first whole packet (stream_update_index: open, then write the
            # header); killed between the two, the file is empty or holds
            # part of its header, and the stream file that one packet.
            c.check(cut and len(want) <= 1, "%s: %d bytes, no header (%d packets in %s)"
                    % (idx, len(raw), len(want), f))
            continue
        magic, major, minor, size = struct.unpack_from(">IIII", raw, 0)
        c.check((magic, major, minor, size) == (0xC1F1DCC1, 1, 1, 72),
                "%s: header %#x %d.%d, entries of %d bytes" % (idx, magic, major, minor, size))
        c.check((len(raw) - 16) % 72 == 0, "%s: a cut entry" % idx)
        got = [struct.unpack_from(">9Q", raw, at) for at in range(16, len(raw) - 71, 72)]
        names = ("offset", "packet_size", "content_size", "timestamp_begin", "timestamp_end",
                 "events_discarded", "stream_id", "stream_instance_id", "packet_seq_num")
        bad = [(i, n, g[j], w[j]) for i, (g, w) in enumerate(zip(got, want))
               for j, n in enumerate(names) if g[j] != w[j]]
        c.check((len(got) == len(want) or cut and len(got) == len(want) - 1) and not bad,
                "%s: %d entries for %d packets; entry, field, index, packet: %s"
                % (idx, len(got), len(want), bad[:6]))


def baseline_rate():
    """The pace program's rate into a local trace, no relayd."""
    s.fdr("create", "base", "-o", os.path.join(s.work, "base"))
    s.fdr("enable", "base", "ses:tick")
    s.fdr("start", "base")
    p = launch_pace()
    time.sleep(2)
    _, rate, _ = end_pace(p)
    s.fdr("destroy", "base")
    return rate


def stop_clean():
    """SIGTERM to fdrd; its log holds no sanitizer report (in the ASan and
    TSan builds a daemonized fdrd reports there)."""
    s.stop()
    log = s.log_text()
    c.check("Sanitizer" not in log and "runtime error" not in log,
            "fdrd's log is clean: " + log[-3000:])


def check_rate(rate, base, burst, what):
    """The program was not slowed. Generous bounds (ctest -j2 on 2 shared
    cores, sanitizers): a program coupled to relayd's sends would wait a
    whole send timeout (5 s) per stall, or stop outright."""
    c.check(rate >= base / 4, "%s: the program's rate %.0f/s fell below a quarter of "
            "%.0f/s" % (what, rate, base))
    c.check(burst < 4000000, "%s: a burst of 100 events took %d µs: the program waited"
            % (what, burst))


# ---------------------------------------------------------------------------
def basic():
    out = os.path.join(s.work, "relay-out")
    r = Relayd(out)
    r.start()
    s.start()
    dead = free_ports(1)[0]
    p = s.run(["create", "X", "--relayd", "127.0.0.1:%d" % dead])
    c.check(p.returncode == 1, "create with no relayd: exit %d" % p.returncode)
    c.check(p.stderr.startswith("fdr create: relayd 127.0.0.1: cannot connect to "
                                "127.0.0.1 port %d" % dead) and p.stderr.count("\n") == 1,
            "create with no relayd: one clear line, got %r" % p.stderr)
    c.check("X" not in s.traces(), "no trace made when relayd is unreachable")
    s.fdr_err(["create", "X", "--relayd", "h:0"], "fdr create: bad --relayd 'h:0': "
              "HOST[:CONTROL_PORT[:DATA_PORT]], ports 1 to 65535", 2)
    s.fdr_err(["create", "X", "--live", "--overwrite"],
              "fdr create: --live is for a trace in discard mode", 2)
    s.fdr_err(["create", "X", "--relayd", "h", "--live=0"], "fdr create: bad --live "
              "period '0': seconds, or a number with s, ms or us (1 ms to 1 hour)", 2)
    s.fdr_err(["create", "X", "--relayd", "h", "--overwrite"], "fdr create: --relayd "
              "streams a discard-mode trace (not --overwrite or --snapshot)", 2)

    local = os.path.join(s.work, "local")
    s.fdr("create", "R", "-o", local, "--relayd", r.url(), "--live=200ms")
    s.fdr("enable", "R", "ses:tick")
    s.fdr("start", "R")
    N = 30000
    normal = launch_go(2, N)
    killed = launch_go(2, N, "kill")
    normal.stdin.close()
    c.check(normal.wait(timeout=120) == 0, "the program that ends normally")
    killed.kill()
    killed.wait(timeout=120)
    wait_status("R", "packets reach relayd", lambda st: st["packets_sent"] > 0)
    st = status("R")
    c.check(st["state"] == "connected" and st["sessions"] == 1 and st["live_us"] == 200000,
            "status: %s" % st)

    # Live: lttng-live lists the session and follows a running program.
    q = subprocess.run([BT, "query", "src.ctf.lttng-live", "sessions", "-p",
                        "url=\"net://127.0.0.1:%d\"" % r.ports[2]],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=120)
    c.check(q.returncode == 0 and "R" in q.stdout and HOST in q.stdout,
            "lttng-live lists session R of %s: %s %s" % (HOST, q.stdout, q.stderr))
    pace = launch_pace(1)
    # babeltrace2 2.0's lttng-live learns of streams added after it attached
    # only through a stream that delivers data: attach once the running
    # program's stream is at relayd (docs/fleet.md).
    h.wait_for(lambda: glob.glob(os.path.join(local, "session-prog-%d" % pace.pid,
                                              "stream_*")), "the program's stream file")
    sent = status("R")["packets_sent"]
    wait_status("R", "the program's packets reach relayd",
                lambda st: st["packets_sent"] >= sent + 2)
    live_err = os.path.join(s.work, "lttng-live.err")
    live = subprocess.Popen([BT, "-l", os.environ.get("FDR_TEST_BT_LOG", "WARNING"),
                             "--input-format=lttng-live",
                             "net://127.0.0.1:%d/host/%s/R" % (r.ports[2], HOST),
                             "--params=session-not-found-action=\"end\""],
                            stdout=subprocess.PIPE, stderr=open(live_err, "w"), text=True)
    s.pids.add(live.pid)
    got = 0
    while got < 10:
        line = h.line(live)
        c.check(line != "", "lttng-live ended early (%s)" % live_err)
        if line == "":
            break
        got += "ses:tick" in line
    c.check(pace.poll() is None, "lttng-live printed events while the program runs")
    # What the live viewer prints of a program that starts after it
    # attached (its streams new to relayd: the viewer reads them from
    # their first packet): every event, per thread, while the session
    # runs (the running program's newer events let the viewer's merge by
    # time go past the ended program's last ones).
    shown = {}
    def read_live():
        for line in live.stdout:
            m = re.search(r"\{ pid = (\d+), tid = (\d+),", line)
            if m:
                k = (int(m.group(1)), int(m.group(2)))
                shown[k] = shown.get(k, 0) + 1
    reader = threading.Thread(target=read_live, daemon=True)
    reader.start()
    viewed = launch_go(2, 3000)
    viewed.stdin.close()
    c.check(viewed.wait(timeout=120) == 0, "go exits 0")
    def viewed_shown():
        return sorted(n for (pid, _), n in list(shown.items()) if pid == viewed.pid)
    h.wait_for(lambda: viewed_shown() == [3000, 3000],
               lambda: "lttng-live to print 3000 events of each of pid %d's 2 threads, it "
               "printed %s" % (viewed.pid, viewed_shown()))
    end_pace(pace)

    # Live flush: a program whose threads record a few events and then
    # stay (packets open, never full): relayd gets them while it runs.
    quiet = launch_go(2, 50, "kill")
    def at_relay():
        import bt2
        d = relay_dirs(out, "R")
        path = os.path.join(d[0], "session-prog-%d" % quiet.pid) if d else ""
        if not glob.glob(os.path.join(path, "stream_*")):
            return False
        try:
            n = sum(type(m) is bt2._EventMessageConst
                    for m in bt2.TraceCollectionMessageIterator(path))
        except Exception:
            return False  # relayd is still writing it
        return n == 100
    h.wait_for(at_relay, "a quiet program's open packets reach relayd while it runs")
    c.check(quiet.poll() is None, "the quiet program still runs")
    quiet.kill()
    quiet.wait()

    s.fdr("destroy", "R")  # returns once everything is sent
    dirs = relay_dirs(out, "R")
    c.check(len(dirs) == 1, "one relay session of R: %s" % dirs)
    h.wait_for(lambda: live.poll() is not None, "lttng-live ends with the session")
    with open(live_err) as f:
        said = f.read()[-3000:]
    c.check(live.returncode == 0, "lttng-live exits 0: %s %s" % (live.returncode, said))
    name = "session-prog-%d" % viewed.pid
    h.wait_for(lambda: h.bt_total(os.path.join(dirs[0], name)) == 6000,
               "relayd wrote %s's trace" % name)
    stored, _ = totals(os.path.join(dirs[0], name))
    c.check({(viewed.pid, t): e for t, (e, _) in stored.items()} ==
            {k: n for k, n in shown.items() if k[0] == viewed.pid} and
            all(e + d == 3000 for (e, d) in stored.values()),
            "lttng-live printed per thread %s, relayd stored %s (events, discarded), "
            "the program emitted 3000 per thread" % (shown, stored))
    for q in (normal, killed, pace, quiet, viewed):
        check_index(os.path.join(dirs[0], "session-prog-%d" % q.pid))
    for q in (normal, killed, pace, quiet):
        name = "session-prog-%d" % q.pid
        want = h.bt_total(os.path.join(local, name))
        h.wait_for(lambda: h.bt_total(os.path.join(dirs[0], name)) == want,
                   lambda: "relayd's copy of %s to hold %d events and discarded as the "
                   "local one does, it holds %s"
                   % (name, want, h.bt_total(os.path.join(dirs[0], name))))
    for q in (normal, killed, pace, quiet):
        name = "session-prog-%d" % q.pid
        mine, ns_local = totals(os.path.join(local, name))
        theirs, ns_relay = totals(os.path.join(dirs[0], name))
        c.check(mine == theirs and ns_local == ns_relay,
                "%s: relayd holds what the local trace holds: %s vs %s"
                % (name, theirs, mine))
        if q is not pace:
            n = 50 if q is quiet else N
            for tid, (e, d) in mine.items():
                c.check(e + d == n, "%s tid %d: %d + %d discarded != %d" % (name, tid, e, d, n))
    c.clean(dirs[0])
    c.clean(local)  # a live trace's packets written in parts: no gap in their numbers
    # Hostile files in a streamed trace's directory: a corrupt packet stops
    # its stream with one log line; symlinks are never followed.
    evil = os.path.join(s.work, "evil")
    os.makedirs(os.path.join(evil, "bad-1"))
    with open(os.path.join(evil, "bad-1", "metadata"), "w") as f:
        f.write("/* CTF 1.8 */\n")
    with open(os.path.join(evil, "bad-1", "stream_0"), "wb") as f:
        f.write(b"\xff" * 4096)
    os.symlink("/etc/passwd", os.path.join(evil, "bad-1", "stream_1"))
    os.symlink("/etc", os.path.join(evil, "link-2"))
    s.fdr("create", "E", "-o", evil, "--relayd", r.url())
    s.wait_log("bad-1/stream_0: packet at byte 0: bad magic; this stream is no longer sent")
    s.fdr("destroy", "E")
    c.check(s.log_text().count("bad magic") == 1, "one log line for the corrupt stream")
    ed = relay_dirs(out, "E")
    c.check(len(ed) == 1 and sorted(os.listdir(ed[0])) == ["bad-1"],
            "relayd got bad-1 only (no symlinked directory): %s"
            % [os.listdir(d) for d in ed])
    if ed:
        got = sorted(os.listdir(os.path.join(ed[0], "bad-1")))
        c.check("stream_1" not in got, "a symlinked stream file is not sent: %s" % got)

    # fdrd stopped with a streamed trace alive: its sender is stopped too
    # (the sanitizer builds see what it leaves).
    s.fdr("create", "L", "--relayd", r.url())
    stop_clean()
    r.kill()


# ---------------------------------------------------------------------------
def restart():
    out, r = started_relayd()
    base = baseline_rate()
    s.fdr("create", "S", "--relayd", r.url())
    s.fdr("enable", "S", "ses:tick")
    s.fdr("start", "S")
    spool = s.traces()["S"]["output"]
    c.check(spool.startswith(os.path.join(s.rundir, "spool") + "/"),
            "without -o a streamed trace spools in the run directory: " + spool)
    # Programs whose streams get no packet after the reconnection: one
    # packet per thread, and several; both exit before relayd goes away.
    small, big = launch_go(2, 100), launch_go(2, 20000)
    for q in (small, big):
        q.stdin.close()
        c.check(q.wait(timeout=120) == 0, "go exits 0")
    p = launch_pace()
    def pace_at_relay():
        fs = glob.glob(os.path.join(out, HOST, "S-*", "session-prog-%d" % p.pid, "stream_*"))
        return sum(os.path.getsize(f) for f in fs) >= (128 << 10)
    h.wait_for(pace_at_relay, "the running program's packets reach relayd")
    r.kill()
    wait_status("S", "fdrd notices relayd went away",
                lambda st: st["state"] == "reconnecting")
    # the program goes on while relayd is away: its stream files grow
    def spooled():
        return sum(os.path.getsize(f) for f in glob.glob(os.path.join(spool, "*", "stream_*")))
    was = spooled()
    h.wait_for(lambda: spooled() > was + (256 << 10), "the spool grows without relayd")
    r.start()
    wait_status("S", "fdrd reconnects in a second relay session",
                lambda st: st["state"] == "connected" and st["sessions"] == 2)
    sent = status("S")["packets_sent"]
    wait_status("S", "packets reach the second session",
                lambda st: st["packets_sent"] >= sent + 4)
    emitted, rate, burst = end_pace(p)
    st = status("S")
    c.check(st["discarded"] > 0, "the gap is counted as discarded: %s" % st)
    s.fdr("destroy", "S")
    c.check(not os.path.exists(spool), "the spool is removed at destroy")
    check_rate(rate, base, burst, "relayd killed and restarted")

    dirs = relay_dirs(out, "S")
    c.check(len(dirs) == 2, "two relay sessions of S: %s" % dirs)
    if len(dirs) != 2:
        c.finish()
    # What fdrd sent before destroy returned is on relayd's disk once each
    # trace of the second session reads in full (the exact checks follow).
    for q, n in ((p, sum(emitted.values())), (small, 2 * 100), (big, 2 * 20000)):
        name = "session-prog-%d" % q.pid
        h.wait_for(lambda: h.bt_total(os.path.join(dirs[1], name)) == n,
                   lambda: "relayd's second session of %s to hold %d events and "
                   "discarded, it holds %s" % (name, n, h.bt_total(os.path.join(dirs[1], name))))
    name = "session-prog-%d" % p.pid
    # relayd was killed while it wrote the first session: its last packets
    # may be cut; the whole ones are read.
    whole = h.whole_packets(os.path.join(dirs[0], name))
    first, _ = totals(whole)
    shutil.rmtree(whole)
    second, _ = totals(os.path.join(dirs[1], name))
    c.check(len(second) == len(emitted), "every thread in the second session: %s" % second)
    # Threads are told apart by tid; the program counts by its own numbering:
    # compare the sorted per-thread totals.
    tids = sorted(second)
    tot_emitted = sorted(emitted.values())
    got = sorted(e + d for (e, d) in second.values())
    c.check(got == tot_emitted,
            "second session: per thread received + discarded %s == emitted %s"
            % (got, tot_emitted))
    for tid in tids:
        e1 = first.get(tid, (0, 0))[0]
        c.check(e1 <= max(tot_emitted), "first session: received <= emitted")
    # A ring that passed from an exited thread to the next holds both
    # threads' packets: what the session lacks of that stream is reported
    # with the last packet's thread, so these count per process.
    for q, n in ((small, 100), (big, 20000)):
        got, _ = totals(os.path.join(dirs[1], "session-prog-%d" % q.pid))
        c.check(sum(e + d for (e, d) in got.values()) == 2 * n,
                "second session, a program that ended before: %s, %d in all"
                % (got, 2 * n))
    c.check(any(d > 0 for (_, d) in second.values()),
            "second session reports the gap as discarded: %s" % second)
    # relayd's index of each session agrees with its packets (the second
    # session's first packets carry the gap's count, numbered as the local
    # packets they stand for)
    for d in dirs:
        for q in (p, small, big):
            if os.path.isdir(os.path.join(d, "session-prog-%d" % q.pid)):
                check_index(os.path.join(d, "session-prog-%d" % q.pid), cut=d == dirs[0])
    c.clean(dirs[1])
    stop_clean()
    r.kill()


# ---------------------------------------------------------------------------
class FakeRelayd:
    """Answers VERSION, CREATE_SESSION, ADD_STREAM, STREAMS_SENT, takes
    SEND_METADATA; at the first SEND_INDEX stops reading for good. Never
    reads its data connections."""

    def __init__(self):
        self.ports = free_ports(2)
        self.held = []
        self.sessions = 0
        for port, fn in zip(self.ports, (self.control, self.data)):
            ls = socket.socket()
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ls.bind(("127.0.0.1", port))
            ls.listen(16)
            threading.Thread(target=self.accept, args=(ls, fn), daemon=True).start()

    def accept(self, ls, fn):
        while True:
            k, _ = ls.accept()
            k.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            self.held.append(k)
            threading.Thread(target=fn, args=(k,), daemon=True).start()

    def data(self, k):
        pass  # never read

    def control(self, k):
        def read(n):
            b = b""
            while len(b) < n:
                x = k.recv(n - len(b))
                if not x:
                    raise EOFError
                b += x
            return b
        try:
            while True:
                _, size, cmd, _ = struct.unpack(">QQII", read(24))
                if cmd == 13:
                    return  # never read again
                read(size)
                if cmd == 5:
                    k.sendall(struct.pack(">II", 2, 13))
                elif cmd == 2:
                    self.sessions += 1
                    k.sendall(struct.pack(">QI", self.sessions, 10))
                elif cmd in (1,):
                    k.sendall(struct.pack(">QI", 100, 10))
                elif cmd in (16, 7):
                    k.sendall(struct.pack(">I", 10))
        except (EOFError, OSError):
            return

    def url(self):
        return "127.0.0.1:%d:%d" % tuple(self.ports)


def liar(answer):
    """A server on a free port that answers the first message with `answer`
    and hangs up: its port."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)

    def serve():
        while True:
            k, _ = ls.accept()
            try:
                k.recv(4096)
                k.sendall(answer)
            except OSError:
                pass
            k.close()
    threading.Thread(target=serve, daemon=True).start()
    return ls.getsockname()[1]


def fake():
    # Short and foreign answers to the handshake: a clear error, no trace.
    s.start()
    for answer, says in ((b"\0\0\0", "does not answer as lttng-relayd"),
                         (struct.pack(">II", 3, 0), "speaks relayd protocol 3.0")):
        port = liar(answer)
        p = s.run(["create", "X", "--relayd", "127.0.0.1:%d:%d" % (port, port)])
        c.check(p.returncode == 1 and says in p.stderr and p.stderr.count("\n") == 1,
                "a relayd answering %r: %r" % (answer, p.stderr))
    c.check(not s.traces(), "no trace made")
    s.stop()
    # A bad FDR_HOSTNAME (it becomes a directory at relayd): one line, no trace.
    for bad in ("../up", "a/b", "x" * 64, ".hidden"):
        s.env["FDR_HOSTNAME"] = bad
        s.start()
        p = s.run(["create", "H", "--relayd", "127.0.0.1:1:1"])
        c.check(p.returncode == 1 and "bad FDR_HOSTNAME" in p.stderr and
                p.stderr.count("\n") == 1, "FDR_HOSTNAME=%r: %r" % (bad, p.stderr))
        c.check(not s.traces(), "FDR_HOSTNAME=%r: a trace was made" % bad)
        s.stop()
    del s.env["FDR_HOSTNAME"]

    f = FakeRelayd()
    pid = s.start()
    base = baseline_rate()
    local = os.path.join(s.work, "local")
    s.fdr("create", "F", "-o", local, "--relayd", f.url())
    s.fdr("enable", "F", "ses:tick")
    s.fdr("start", "F")
    rss0 = h.vmrss_kib(pid)
    p = launch_pace()
    peak = rss0
    # fdrd gives up on the stalled connection (send timeout) and connects again
    def stalled():
        nonlocal peak
        peak = max(peak, h.vmrss_kib(pid))
        return "connected again" in s.log_text()
    # (no packet was sent in the stalled session: the new connection takes
    # its path up again, and `sessions` stays 1)
    h.wait_for(stalled, "fdrd notices the stall and connects again")
    t0 = time.monotonic()
    while time.monotonic() - t0 < 2:
        peak = max(peak, h.vmrss_kib(pid))
        time.sleep(0.05)
    emitted, rate, burst = end_pace(p)
    check_rate(rate, base, burst, "relayd that never reads")
    c.check(peak - rss0 < 64 * 1024, "fdrd's VmRSS bounded: %d KiB -> %d KiB" % (rss0, peak))
    t0 = time.monotonic()
    s.fdr("destroy", "F")
    c.check(time.monotonic() - t0 < 60, "destroy returns")
    # fdr's own reader (a million events: bt2 from Python would take minutes)
    st = s.json("stats", os.path.join(local, "session-prog-%d" % p.pid), "--json")
    got = st["discarded"] + sum(t["events"] for t in st["threads"])
    c.check(got == sum(emitted.values()) and len(st["threads"]) == len(emitted),
            "the local copy is complete: %d events + discarded, emitted %s"
            % (got, emitted))
    stop_clean()


def full():
    """relayd's disk (a 2 MiB tmpfs) fills up, then has room again."""
    mnt = os.path.join(s.work, "mnt")
    c.unmount(mnt)
    filler = c.full_disk(mnt)
    try:
        full_run(mnt, filler)
    finally:
        c.unmount(mnt)


def waits(log):
    """The waits fdrd announced before each reconnection, in s."""
    return [float(w) for w in re.findall(r"connected again after waiting ([\d.]+) s", log)]


def full_run(mnt, filler):
    out = os.path.join(mnt, "relay")
    r = Relayd(out)
    r.start()
    # Hosts in containers share a nodename: FDR_HOSTNAME names this one.
    host = "fdr-full-host"
    s.env["FDR_HOSTNAME"] = host
    s.start()
    s.fdr("create", "F", "--relayd", r.url())
    s.fdr("enable", "F", "ses:tick")
    s.fdr("start", "F")
    p = launch_pace()
    # relayd takes the session, then drops the connection at every full
    # write: fdrd's waits double to their 5 s cap (counted in its log, one
    # line per connection), and every failed attempt is the same relay
    # session: no directory per attempt.
    h.wait_for(lambda: waits(s.log_text()).count(5.0) >= 2,
               "two reconnections at the 5 s cap to the relayd whose disk is full",
               limit=300)
    w = waits(s.log_text())
    c.check(w[0] == 0.1 and w == sorted(w) and len(w) <= 9,
            "fdrd's waits grow from 0.1 s to the 5 s cap, one connection each (an "
            "attempt relayd refused outright is not logged): %s" % w)
    dirs = sorted(os.listdir(os.path.join(out, host)))
    c.check(len(dirs) == 2, "relay session directories: the first and one for every "
            "attempt after the disk filled, not one each: %s" % dirs)
    c.check(not os.path.exists(os.path.join(out, HOST)) or HOST == host,
            "nothing stored under the nodename %s" % HOST)
    # The program stops, then relayd's disk has room: the next attempt
    # works, and that relay session reads alone, exact per thread. Room
    # once fdrd has written all of the program into its spool (its open
    # mark gone): an attempt starts at the spool's end, and one made while
    # fdrd still wrote the program's last packets there sent them, filled
    # the freed MiB again, and no attempt after it could write even its
    # metadata (CI at load 15: relayd's disk full for the test's last 4
    # minutes).
    emitted, _, _ = end_pace(p)
    spooled = os.path.join(s.traces()["F"]["output"], "session-prog-%d" % p.pid)
    h.wait_for(lambda: os.path.isdir(spooled) and
               not os.path.exists(os.path.join(spooled, ".fdr-open-fdrd")),
               "fdrd to finish the program's trace in its spool (%s without .fdr-open-fdrd)"
               % spooled)
    # Room for all fdrd may still send, not only the filler's MiB: a
    # stream file that appeared while no connection lasted (a ring that
    # grew, say) is new to the next one, which sends it from its start
    # (daemon/relay.c). With 1 MiB, the first attempt's data filled
    # relayd's disk again, and no attempt after it could write its
    # metadata (the README's `make test` at load 15: relayd's log, read
    # so; not reproduced on demand).
    os.unlink(filler)
    c.check(subprocess.run(["mount", "-o", "remount,size=256m", mnt]).returncode == 0,
            "relayd's tmpfs grown to 256 MiB")
    name = "session-prog-%d" % p.pid
    total = sum(emitted.values())
    # The newest relay session at each look: the attempt that works may
    # come after this line, in a directory of its own when the one before
    # it sent a packet (CI at load 15: the directory taken at once held
    # nothing readable for 290 s).
    def newest():
        return relay_dirs(out, "F", host)[-1]
    h.wait_for(lambda: h.bt_total(os.path.join(newest(), name)) == total,
               lambda: "relayd holds the session after the gap, %d events and discarded "
               "(its newest session %s holds %s; sessions %s)"
               % (total, os.path.basename(newest()), h.bt_total(os.path.join(newest(), name)),
                  [os.path.basename(d) for d in relay_dirs(out, "F", host)]),
               limit=300)
    last = newest()
    c.check(status("F")["discarded"] > 0, "fdr status counts the gap: %s" % status("F"))
    # A connection that worked for a while: the next wait starts at 0.1 s.
    t0 = time.monotonic()
    h.wait_for(lambda: time.monotonic() - t0 > 12, "the connection works for 12 s")
    n = len(waits(s.log_text()))
    r.kill()
    r.start()
    # fdrd learns that relayd went away at its next send: a new program's.
    more = launch_go(1, 100)
    more.stdin.close()
    c.check(more.wait(timeout=120) == 0, "go exits 0")
    h.wait_for(lambda: len(waits(s.log_text())) > n, "fdrd connects again", limit=300)
    c.check(waits(s.log_text())[n] == 0.1,
            "after a connection that worked, the wait starts again at 0.1 s: %s"
            % waits(s.log_text()))
    s.fdr("destroy", "F")
    got, _ = totals(os.path.join(last, name))
    c.check(sorted(e + d for (e, d) in got.values()) == sorted(emitted.values()),
            "the session after the gap, per thread received + discarded %s == emitted "
            "%s" % (got, emitted))
    c.check(any(d > 0 for (_, d) in got.values()), "the gap is counted: %s" % got)
    c.clean(last)
    stop_clean()
    r.kill()


def started_relayd():
    """relayd (its output under the work directory), then fdrd."""
    out = os.path.join(s.work, "relay-out")
    r = Relayd(out)
    r.start()
    s.start()
    return out, r


def live60():
    """A live viewer for 60 s: its timestamps never go back."""
    out, r = started_relayd()
    s.fdr("create", "L", "--relayd", r.url(), "--live=1s")
    s.fdr("enable", "L", "ses:tick")
    s.fdr("start", "L")
    p = launch_pace(3, 1)  # 3 threads, about 1,000 events/s each
    h.wait_for(lambda: glob.glob(os.path.join(out, HOST, "L-*", "session-prog-%d" % p.pid,
                                              "stream_*")),
               "the program's streams at relayd", limit=120)
    err = os.path.join(s.work, "lttng-live.err")
    live = subprocess.Popen([BT, "--input-format=lttng-live",
                             "net://127.0.0.1:%d/host/%s/L" % (r.ports[2], HOST),
                             "--params=session-not-found-action=\"end\""],
                            stdout=subprocess.PIPE, stderr=open(err, "w"), text=True)
    s.pids.add(live.pid)
    seen = [0]
    def read():
        for line in live.stdout:
            seen[0] += "ses:tick" in line
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    t0 = time.monotonic()
    h.wait_for(lambda: time.monotonic() - t0 > 60 or live.poll() is not None,
               "lttng-live running 60 s")
    with open(err) as f:
        said = f.read()[-3000:]
    c.check(live.poll() is None, "lttng-live ended after %.0f s, status %s: %s"
            % (time.monotonic() - t0, live.poll(), said))
    c.check(seen[0] > 0, "lttng-live printed events")
    end_pace(p)
    s.fdr("destroy", "L")
    h.wait_for(lambda: live.poll() is not None, "lttng-live ends with the session",
               limit=120)
    with open(err) as f:
        said = f.read()[-3000:]
    c.check(live.returncode == 0 and "ERROR" not in said,
            "lttng-live exits 0, no error: %s %s" % (live.returncode, said))
    stop_clean()
    r.kill()


{"basic": basic, "restart": restart, "fake": fake, "full": full, "live60": live60}[phase]()
c.finish()
