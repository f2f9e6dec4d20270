#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""soak.py BUILD_DIR - `make soak`: one fdrd, for SOAK_SECONDS (default 600),
while instrumented programs come and go and traces are made and unmade;
then every trace is read back and checked. Not in CI (docs/daemon.md).

The idea: what the per-feature tests show one at a time must also hold
when everything happens at once, for long. So, against one fdrd:

  - a trace "main" (discard mode, file-backed buffers) selects ses:tick
    and is started before any program and destroyed after the last;
  - up to 4 programs run at once (session-prog soak T N END: T threads
    each record N ses:tick once routed), ending in one of: exit 0, a real
    SIGSEGV, abort(), fork (a child records N more and exits 0), waiting
    to be SIGKILLed from outside; and some are SIGKILLed while recording;
  - "churn" traces (discard or overwrite, half of them file-backed,
    selecting ses:*) are created, started and destroyed all along.

At the end: babeltrace2 reads every trace without an error, and in main,
for every process that exited normally (and every forked child), each
thread has recorded + discarded == N exactly, n strictly increasing.
One summary line; exit 0 when all holds."""
import os
import random
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "programs"))
import session_helpers as h  # noqa: E402

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
FDR = os.path.join(build, "programs", "fdr", "fdr")
FDRD = os.path.join(build, "daemon", "fdrd")
PROG = os.path.join(build, "tests", "programs", "session-prog")
SECONDS = float(os.environ.get("SOAK_SECONDS", "600"))
ENDS = ["exit", "exit", "exit", "segv", "abrt", "fork", "hang", "kill"]
rng = random.Random(int(os.environ.get("SOAK_SEED", str(int(time.time())))))

work = os.path.join(build, "soak")
h.kill_leftovers(work)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
env.update(FDR_RUNDIR=os.path.join(work, "run"), FDR_FDRD=FDRD, LC_ALL="C",
           HOME=work)
env.pop("XDG_RUNTIME_DIR", None)
problems = []


def fdr(*args):
    p = subprocess.run([FDR] + list(args), env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    if p.returncode != 0:
        problems.append("fdr %s: %s" % (" ".join(args), p.stderr.strip()))
    return p


fdr("create", "main", "-o", os.path.join(work, "main"),
    *(["--file-buffers"] if os.environ.get("SOAK_MAIN_FILES", "1") == "1" else []))
fdr("enable", "main", "ses:tick")
fdr("start", "main")
with open(os.path.join(work, "run", "fdrd.pid")) as f:
    fdrd_pid = int(f.read())

penv = dict(env, FDR_EVENTS="-ses:*")
running = {}  # pid -> (Popen, end, threads, n, started)
done = []     # (pid, end, threads, n, status, child pid or 0)
churn = []    # (name, created)
churned = 0
counts = {e: 0 for e in ENDS}
deadline = time.monotonic() + SECONDS
next_churn = next_start = 0.0
while time.monotonic() < deadline:
    now = time.monotonic()
    if len(running) < 4 and now >= next_start:
        next_start = now + rng.uniform(0.0, 0.6)  # about 3 a second
        end = rng.choice(ENDS)
        t, n = rng.randint(1, 3), rng.randint(100, 2000)
        p = subprocess.Popen([PROG, "soak", str(t), str(n),
                              "hang" if end == "kill" else end], env=penv,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, cwd=work)
        running[p.pid] = (p, end, t, n, now)
        counts[end] += 1
    if now >= next_churn:
        next_churn = now + rng.uniform(0.2, 1.0)
        if len(churn) >= 3 or (churn and rng.random() < 0.4):
            name, _ = churn.pop(0)
            fdr("destroy", name)
        churned += 1
        name = "churn-%d" % churned
        args = ["create", name, "-o", os.path.join(work, "churn", name)]
        args += rng.choice([[], ["--overwrite"]]) + rng.choice([[], ["--file-buffers"]])
        fdr(*args)
        fdr("enable", name, "ses:*")
        fdr("start", name)
        churn.append((name, now))
    for pid, (p, end, t, n, started) in list(running.items()):
        if end == "kill" and now - started > rng.uniform(0.0, 0.3):
            p.kill()  # mid-flight, or once done: SIGKILL from outside
        if end == "hang" and now - started > 0.5:
            p.kill()
        if p.poll() is None:
            continue
        out = p.stdout.read()
        p.stdout.close()
        child = 0
        for line in out.splitlines():
            if line.startswith("child "):
                child = int(line.split()[1])
        done.append((pid, end, t, n, p.returncode, child))
        del running[pid]
    if not h.pid_alive(fdrd_pid):
        problems.append("fdrd died")
        break
    time.sleep(0.01)

for pid, (p, end, t, n, started) in running.items():
    p.kill()
    p.wait()
    done.append((pid, end, t, n, p.returncode, 0))
for name, _ in churn:
    fdr("destroy", name)
fdr("destroy", "main")
alive = h.pid_alive(fdrd_pid)
if not alive:
    problems.append("fdrd died")
else:
    os.kill(fdrd_pid, signal.SIGTERM)
    h.wait_for(lambda: not h.pid_alive(fdrd_pid), "fdrd stops")
if os.path.exists(os.path.join(work, "run", "buffers")) and \
        os.listdir(os.path.join(work, "run", "buffers")):
    problems.append("buffer directories left: %s"
                    % os.listdir(os.path.join(work, "run", "buffers")))

# Every trace reads without an error.
traces = [os.path.join(work, "main")]
if os.path.isdir(os.path.join(work, "churn")):
    traces += [os.path.join(work, "churn", d) for d in sorted(os.listdir(
        os.path.join(work, "churn")))]
read = 0
for d in traces:
    if not os.path.isdir(d) or not os.listdir(d):
        continue  # a trace no program recorded into
    read += 1
    p = subprocess.run(["babeltrace2", d], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0 or "ERROR" in p.stderr:
        problems.append("babeltrace2 %s: exit %d %s" % (d, p.returncode,
                                                        p.stderr[-300:]))

# Exact accounting for normal exits (and forked children).
exact = events = 0
for pid, end, t, n, status, child in done:
    if status != 0 or end not in ("exit", "fork"):
        continue
    for proc, threads, what in ((pid, t, end), (child, 1, "forked child")):
        if not proc:
            continue
        d = os.path.join(work, "main", "session-prog-%d" % proc)
        if not os.path.isdir(d):
            problems.append("pid %d (%s): no trace in main" % (proc, what))
            continue
        ns, lost = h.per_thread(d)
        tids = {tid for (tid, _) in ns} | set(lost)
        if len(tids) != threads:
            problems.append("pid %d (%s): %d threads, wanted %d"
                            % (proc, what, len(tids), threads))
        for tid in tids:
            v = ns.get((tid, "ses:tick"), [])
            if len(v) + lost[tid] != n or any(a >= b for a, b in zip(v, v[1:])):
                problems.append("pid %d (%s) tid %d: %d recorded + %d discarded, "
                                "emitted %d" % (proc, what, tid, len(v), lost[tid], n))
            events += len(v)
        exact += 1
problems += h.c.failures

status = {}
for pid, end, t, n, st, child in done:
    status[st] = status.get(st, 0) + 1
print("soak: %d s, %d processes (%s), %d churn traces, %d traces read by babeltrace2, "
      "%d processes exact (%d events), exit statuses %s, fdrd %s: %s"
      % (SECONDS, len(done), ", ".join("%s %d" % kv for kv in counts.items()), churned,
         read, exact, events,
         " ".join("%s:%d" % kv for kv in sorted(status.items())),
         "up until stopped" if alive else "DIED",
         "OK" if not problems else "FAILED (%d): %s" % (len(problems),
                                                         "; ".join(problems[:5]))))
sys.exit(1 if problems else 0)
