# SPDX-License-Identifier: MIT
"""test-fdr-daemon-death.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
fdrd's own death (kill -9) loses nothing uncounted and leaves readable
traces.

Four programs (session-prog "resume", 3 threads each, recording ses:tick
n = 0, 1, ... in bursts of 10 once routed) record into a discard trace
(small rings, so that they fill while fdrd is dead). fdrd is killed with
SIGKILL in the middle. Then, as a kill in the middle of a write leaves
them: half a packet is appended to a stream file, and a whole packet
numbered as the next one to a stream of another program (written, but not
yet marked written when fdrd died); and the run directory gets a corrupt
and a hostile trace definition. The next `fdr list` starts fdrd again (the
traces were kept: daemon/persist.c): it shows the same trace (every field:
selection, mask, output, sizes, started), cuts the torn tail and logs it,
logs one line per bad definition; the programs register again by
themselves and go on in the same trace, and the whole packet is cut
(DEAD_RING: its program counted it as discarded). Then they end and say
what they emitted per thread. The trace reads in babeltrace2 (exit 0,
only its discarded-events warnings, whose sum equals bt2's) and in bt2,
and per thread recorded + discarded == emitted, exactly, over the whole
run: what the programs recorded while no fdrd could take it, and what was
in the dead fdrd's rings, is counted as discarded in the resumed trace. While fdrd is dead, `fdr stats` says of each
program's part that fdrd ended before finishing it (its open mark,
common/tracedir.h); at the end, that every part is finished."""
import glob
import os
import re
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
import bt2  # noqa: E402

PROGRAMS, THREADS = 4, 3


def trace_view():
    return s.traces()["D"]  # every field: selection, mask, output, sizes, started


out = os.path.join(s.work, "out")
s.start()
# Small rings: they fill while fdrd is dead, and their discards are counted.
s.fdr("create", "D", "-o", out, "--buffer-size", "64K", "--packet-size", "16K")
s.fdr("enable", "D", "ses:*")
s.fdr("disable", "D", "ses:rare")
s.fdr("filter", "D", "0x21")
s.fdr("start", "D")
before = trace_view()
c.check(oct(os.stat(os.path.join(s.rundir, "traces", "D")).st_mode & 0o777) == "0o600",
        "the definition is not 0600")

env = dict(s.env, FDR_EVENTS="-ses:*")
procs = []
for i in range(PROGRAMS):
    p = subprocess.Popen([prog, "resume", str(THREADS)], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    procs.append(p)
for p in procs:
    c.check(h.line(p) == "ready\n", "pid %d: not ready" % p.pid)

# Every program has packets written by fdrd, then fdrd dies mid-flight.
streams = lambda: glob.glob(os.path.join(out, "session-prog-*", "stream_*"))  # noqa: E731
h.wait_for(lambda: len({os.path.dirname(f) for f in streams()
                        if os.path.getsize(f) > 0}) == PROGRAMS,
           "a written stream of each of the %d programs" % PROGRAMS, limit=120)
pid = s.daemon_pid()
os.kill(pid, signal.SIGKILL)
h.wait_for(lambda: not h.pid_alive(pid), "fdrd %d gone" % pid, limit=60)


def trace_states(what):
    """{pid: "trace" of fdr stats --json}, and fdr stats's warning lines."""
    p = s.run(["stats", "--json", out])
    c.check(p.returncode == 0, "%s: fdr stats: exit %d: %s" % (what, p.returncode, p.stderr))
    try:
        procs = h.json.loads(p.stdout)["processes"]
    except (ValueError, KeyError):
        procs = []
    return {q["pid"]: q.get("trace") for q in procs}, p.stderr.splitlines()


# While no fdrd writes it, each program's part of the trace says so: fdrd
# ended before finishing it (its open mark outlived fdrd's lock), and until
# a new fdrd takes the programs on, nothing could count what its rings held.
states, warned = trace_states("fdrd dead")
c.check(sorted(states) == sorted(p.pid for p in procs) and
        set(states.values()) == {"cut"},
        "with fdrd dead, fdr stats says %s, not 'cut' for each of %s"
        % (states, [p.pid for p in procs]))
want = re.compile(r"^fdr stats: \S+: warning: fdrd ended before finishing this trace of "
                  r"process (\d+) \(killed, and not started again while the process "
                  r"lived\): the events fdrd had not written yet are lost, and no count "
                  r"says how many$")
c.check(sorted(int(want.match(ln).group(1)) for ln in warned if want.match(ln)) ==
        sorted(p.pid for p in procs) and all(want.match(ln) for ln in warned),
        "with fdrd dead, fdr stats's lines: %s" % warned)

def whole_packets(path):
    """The stream file's bytes up to its last whole packet, and where that
    packet starts (a kill in the middle of a write may leave a torn one)."""
    with open(path, "rb") as f:
        data = f.read()
    at = last = 0
    while at + 68 <= len(data):
        end = at + struct.unpack_from("<Q", data, at + 52)[0] // 8
        if end > len(data) or end <= at:
            break
        last, at = at, end
    return data[:at], last


# A write cut short: half a packet appended to a stream.
used = sorted(f for f in streams() if os.path.getsize(f) > 0)
torn = used[0]
data, _ = whole_packets(torn)
size, torn_size = len(data), os.path.getsize(torn) + len(data[:4096]) // 2
with open(torn, "ab") as f:
    f.write(data[:4096][:len(data[:4096]) // 2])
# A write the kill cut after a whole packet, before fdrd marked it written
# (consumed): the next packet of a stream of another program, whole (its
# last one again, numbered one more). That program counts it as discarded;
# the new fdrd cuts it (DEAD_RING), else its events would be there twice.
whole = next(f for f in used if os.path.dirname(f) != os.path.dirname(torn))
data, last = whole_packets(whole)
pkt = bytearray(data[last:])
struct.pack_into("<Q", pkt, 60, struct.unpack_from("<Q", pkt, 60)[0] + 1)
whole_size = len(data)
with open(whole, "wb") as f:
    f.write(data + pkt)
# Bad definitions: garbage, and one naming a trace that is not its file's.
with open(os.path.join(s.rundir, "traces", "garbage"), "wb") as f:
    f.write(b"\x00" * 100)
with open(os.path.join(s.rundir, "traces", "D"), "rb") as f:
    good = f.read()
with open(os.path.join(s.rundir, "traces", "other"), "wb") as f:
    f.write(good)
# The programs record on meanwhile (their rings fill: counted).
time.sleep(0.5)

# Any verb brings fdrd back, with the trace as it was.
after = trace_view()
c.check(after == before, "the restarted fdrd's trace differs:\n %r\n %r" % (before, after))
s.note_daemon()
c.check(s.daemon_pid() not in (0, pid), "no new fdrd")
log = s.log_text()
c.check("%s: cut from %d to %d bytes" % (os.path.basename(torn), torn_size, size)
        in log, "the torn tail's cut is not logged:\n" + log)
c.check(os.path.getsize(torn) <= size, "the torn tail of %s was not cut" % torn)
for bad in ("garbage", "other"):
    c.check(sum(("traces/%s: ignored:" % bad) in line for line in log.splitlines()) == 1,
            "no one line for definition %s:\n%s" % (bad, log))
c.check(sorted(s.traces()) == ["D"], "traces: %r" % sorted(s.traces()))

# The programs register again by themselves and go on in the same trace.
h.wait_for(lambda: s.log_text().count("registered again: goes on in") >= PROGRAMS,
           "the %d programs routed again" % PROGRAMS, limit=120)
time.sleep(0.5)
h.wait_for(lambda: "%s: cut from %d to %d bytes (packets the killed fdrd wrote" % (
    os.path.basename(whole), whole_size + len(pkt), whole_size) in s.log_text(),
    "the cut of the whole packet appended to %s" % whole, limit=120)
emitted = h.resume_emitted(procs)
c.check(len(emitted) == PROGRAMS * THREADS, "counts of %d threads" % len(emitted))
h.wait_for(lambda: not {q["pid"] for q in s.json("list", "processes", "--json")["processes"]}
           & {p.pid for p in procs}, "fdrd saw the programs go", limit=120)
s.fdr("destroy", "D")
# The new fdrd finished every program's part: what the dead one had not
# written is counted now (below), and no mark is left.
states, warned = trace_states("the end")
c.check(set(states.values()) == {"finished"} and not warned,
        "at the end, fdr stats says %s; lines %s" % (states, warned))

# babeltrace2 says nothing but the discarded counts (one warning each).
bt = subprocess.run(["babeltrace2", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    text=True, timeout=600)
other = [ln for ln in bt.stderr.splitlines()
         if not re.match(r"WARNING: Tracer discarded \d+ events between ", ln)]
c.check(bt.returncode == 0 and not other,
        "babeltrace2 %s: exit %d: %s" % (out, bt.returncode, "\n".join(other)[:2000]))
bt_lost = sum(int(n) for n in re.findall(r"Tracer discarded (\d+) events", bt.stderr))
ns, lost = h.per_thread(out)
total_lost = h.resume_exact(emitted, ns, lost)
c.check(bt_lost == total_lost, "babeltrace2 counts %d discarded, bt2 %d" % (bt_lost, total_lost))
c.check(total_lost > 0, "nothing discarded: the programs did not record while fdrd was dead")
print("emitted %d, recorded %d, discarded %d" % (sum(emitted.values()),
                                                  sum(len(v) for v in ns.values()), total_lost))
c.finish()
