# SPDX-License-Identifier: MIT
"""test-fdr-daemon-recover-damage.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG -
`fdr recover` on buffer directories damaged in many seeded ways (issue 24:
it used to exit 0 with "recovered N events" on output babeltrace2 could
not read, e.g. a process whose metadata was zeroed).

One real buffer directory is made once: a real fdrd, one overwrite trace
with file-backed buffers (small rings that wrap), two programs "go 2 N
kill" and a storm, then fdrd and every program SIGKILLed. Each seed then
copies it and damages it with 1 to 3 of: metadata zeroed, truncated,
removed or with bytes flipped; the class file zeroed, truncated or
flipped; a ring's header, a packet header or a packet's middle
overwritten with random bytes; a ring truncated or emptied; a ring's
produced/consumed counts garbled. For every seed:

  - fdr recover never crashes (exit 0 or 1, nothing else, within 120 s);
  - exit 0: babeltrace2 reads the output with no error;
  - exit 1: stderr has a line "fdr recover: <process>..." naming a
    process (or its ring) of the directory, and babeltrace2 still reads
    whatever was written without an error.

FDR_DAMAGE_SEEDS (default 120) sets the number of seeds; the figures of
issue 24 were taken with 470."""
import glob
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog = sys.argv[5]
SEEDS = int(os.environ.get("FDR_DAMAGE_SEEDS", "120"))
HDR = 4096  # FDR__BUF_HEADER
PKT = 16384


def started(*args):
    """session-prog ARGS, once fdrd routed it (FDR_DEBUG says so)."""
    p = subprocess.Popen([prog] + list(args), env=dict(s.env, FDR_DEBUG="1"),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    s.pids.add(p.pid)
    for line in p.stderr:
        if "recording into an fdrd trace" in line:
            return p
    c.fail("pid %d ended before fdrd routed it" % p.pid)


def kill(pid):
    os.kill(pid, signal.SIGKILL)
    h.wait_for(lambda: not h.pid_alive(pid), "pid %d dies" % pid, limit=120)


# ---- one real buffer directory ---------------------------------------------------
clean = os.path.join(s.work, "buffers")
s.start()
fdrd = s.daemon_pid()
s.fdr("create", "O", "-o", os.path.join(s.work, "out"), "--overwrite",
      "--file-buffers=" + clean, "--buffer-size", "64K", "--packet-size", "16K")
s.fdr("enable", "O", "ses:*")
s.fdr("start", "O")
# Two programs that record and keep their packets open, and a storm: rings
# that wrap, open packets, three processes' metadata.
storm = started("storm", "2")
c.check(h.line(storm) == "ready\n", "storm ready")
gos = []
for _ in range(2):
    gos.append(started("go", "2", "20000", "kill"))
    print("go", file=gos[-1].stdin, flush=True)
    c.check(h.line(gos[-1]) == "done\n", "pid %d: not done" % gos[-1].pid)


def settled():
    for p in gos + [storm]:
        try:
            with open(os.path.join(clean, "session-prog-%d" % p.pid, "metadata")) as f:
                if '"ses:tick"' not in f.read():
                    return False
        except FileNotFoundError:
            return False
    return True


h.wait_for(settled, "every class in the buffer directory's metadata", limit=120)
kill(fdrd)
for p in gos + [storm]:
    kill(p.pid)
    p.wait()
procs = sorted(d for d in os.listdir(clean) if os.path.isdir(os.path.join(clean, d)))
c.check(len(procs) == 3, "three processes in %s: %s" % (clean, procs))

r = s.run(["recover", clean, "-o", os.path.join(s.work, "rec-clean")])
c.check(r.returncode == 0 and r.stderr == "", "undamaged: exit %d: %r"
        % (r.returncode, r.stderr))


# ---- the damages -------------------------------------------------------------------
def scribble(path, off, n, rnd):
    size = os.path.getsize(path)
    if size == 0:
        return
    off = min(off, size - 1)
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(bytes(rnd.getrandbits(8) for _ in range(min(n, size - off))))


def zero(path, rnd):
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.write(b"\0" * size)


def truncate(path, rnd):
    os.truncate(path, rnd.randrange(0, os.path.getsize(path) + 1))


def flip(path, rnd):
    size = os.path.getsize(path)
    if size == 0:
        return
    with open(path, "r+b") as f:
        for _ in range(rnd.randrange(1, 8)):
            f.seek(rnd.randrange(size))
            b = f.read(1)
            f.seek(-1, 1)
            f.write(bytes([b[0] ^ (1 << rnd.randrange(8))]))


def ring_header(path, rnd):
    scribble(path, rnd.randrange(0, 256), rnd.randrange(1, 256), rnd)


def packet_header(path, rnd):
    slots = (os.path.getsize(path) - HDR) // PKT
    if slots > 0:
        scribble(path, HDR + PKT * rnd.randrange(slots) + rnd.randrange(0, 96),
                 rnd.randrange(1, 64), rnd)


def packet_middle(path, rnd):
    slots = (os.path.getsize(path) - HDR) // PKT
    if slots > 0:
        scribble(path, HDR + PKT * rnd.randrange(slots) + rnd.randrange(96, PKT),
                 rnd.randrange(1, 4000), rnd)


def counts(path, rnd):
    # produced (offset 64) and consumed (128), as test-fdr-daemon-recover.py
    with open(path, "r+b") as f:
        f.seek(rnd.choice((64, 128)))
        f.write(struct.pack("=Q", rnd.choice((0, 1, 2**63, 2**64 - 1,
                                              rnd.getrandbits(64), rnd.randrange(64)))))


def empty(path, rnd):
    os.truncate(path, 0)


def remove(path, rnd):
    os.unlink(path)


FILE_DAMAGES = [zero, truncate, flip, remove]
RING_DAMAGES = [ring_header, packet_header, packet_middle, truncate, counts, empty,
                packet_middle, packet_header]


def damage(top, rnd):
    """1 to 3 damages in the copy top; what was done, for the failure line."""
    done = []
    for _ in range(rnd.randrange(1, 4)):
        proc = rnd.choice(procs)
        pdir = os.path.join(top, proc)
        what = rnd.random()
        if what < 0.35:
            name = "metadata" if rnd.random() < 0.6 else ".fdr-classes"
            path = os.path.join(pdir, name)
            if not os.path.exists(path):
                continue
            fn = rnd.choice(FILE_DAMAGES)
        else:
            rings = sorted(glob.glob(os.path.join(pdir, "ring-*")))
            if not rings:
                continue
            path = rnd.choice(rings)
            name = os.path.basename(path)
            fn = rnd.choice(RING_DAMAGES)
        fn(path, rnd)
        done.append("%s/%s: %s" % (proc, name, fn.__name__))
    return done


def bt_reads(path):
    """None when babeltrace2 reads path with no error, else its complaint."""
    if not os.path.isdir(path) or not any(
            glob.glob(os.path.join(path, "*", "stream_*"))):
        return None  # nothing to read
    p = subprocess.run(["babeltrace2", path], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, errors="replace",
                       timeout=600)
    if p.returncode == 0 and "ERROR" not in p.stderr:
        return None
    return "exit %d: %s" % (p.returncode, p.stderr.strip()[-600:])


tally = {0: 0, 1: 0}
bad_seeds = []  # every seed's failure, then one verdict: the figure of all seeds
for seed in range(SEEDS):
    rnd = random.Random(seed)
    top = os.path.join(s.work, "damaged")
    out = os.path.join(s.work, "rec")
    shutil.rmtree(top, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(clean, top)
    done = damage(top, rnd)
    r = subprocess.run([s.fdr_bin, "recover", top, "-o", out], env=s.env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       errors="replace", timeout=120)
    say = "seed %d (%s): recover exit %d, stderr %r" % (seed, "; ".join(done),
                                                        r.returncode, r.stderr[-800:])
    if r.returncode not in (0, 1):
        bad_seeds.append(say + ": neither 0 nor 1")
        continue
    tally[r.returncode] += 1
    if r.returncode == 1 and not any(
            re.match(r"fdr recover: (%s)\b" % "|".join(map(re.escape, procs)), ln)
            for ln in r.stderr.splitlines()):
        bad_seeds.append(say + ": no line names a process")
    bad = bt_reads(out)
    if bad is not None:
        bad_seeds.append(say + ": babeltrace2 cannot read the output: %s" % bad)
with open(os.path.join(s.work, "wrong.txt"), "w") as f:
    f.write("\n".join(bad_seeds))
print("%d seeds: %d exit 0, %d exit 1, %d wrong"
      % (SEEDS, tally[0], tally[1], len(bad_seeds)))
c.check(not bad_seeds, "%d of %d seeds wrong; the first ones:\n%s"
        % (len(bad_seeds), SEEDS, "\n".join(bad_seeds[:5])))

c.finish()
