#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-flight-crash.py PROG OUTDIR - the crash dump, from the parent's side.

Runs tests/recorder/progs/flight-crash.c once per way of dying and checks:
  - the child dies of the same signal as without fdr (returncode -SIG, which
    is WTERMSIG(status) of waitpid), or exits 42 when its own handler says so;
  - stderr holds the last events in time order, with their values and string
    contents, from both threads, then the end line;
  - the CTF crash snapshot in FDR_CRASH_DIR/crash-<pid> is read by
    babeltrace2 without complaint and ends with the same events;
  - FDR_CRASH=0 and FDR_CRASH_SIGNALS=none: no dump, same signal;
  - FDR_CRASH_SIGNALS=bogus and FDR_CRASH_EVENTS=0: one warning line each.
A crash handler that returns without restoring the default action would
make the fault come back for ever: the child runs under a CPU-time limit
of a few seconds (it needs milliseconds), so such a loop ends in SIGXCPU
or SIGKILL, which the test names, instead of a wall-clock timeout.
Under ASan the sanitizer's own SIGSEGV/SIGABRT/SIGFPE handling is switched
off (ASAN_OPTIONS), as it would replace the signal deaths this test checks.
"""
import os
import re
import resource
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest  # noqa: E402
import tracecheck  # noqa: E402

PROG, OUT = sys.argv[1], sys.argv[2]
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
check = fdrtest.check

CPU_LIMIT = 5  # seconds of CPU: a crash takes milliseconds, a re-fault loop all


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT + 1))


def refault(p):
    """A child stopped by its CPU limit: its handler returned and the
    signal came back, again and again."""
    return p.returncode in (-signal.SIGXCPU, -signal.SIGKILL)


def run(kind, **env):
    e = dict(os.environ)
    e.pop("FDR_OUTPUT", None)
    e["ASAN_OPTIONS"] = (e.get("ASAN_OPTIONS", "") + ":handle_segv=0:handle_abort=0:"
                         "handle_sigfpe=0:handle_sigbus=0:handle_sigill=0:"
                         "detect_stack_use_after_return=0:use_sigaltstack=0").lstrip(":")
    e["TSAN_OPTIONS"] = (e.get("TSAN_OPTIONS", "") + ":handle_segv=0:handle_sigbus=0:"
                         "handle_abort=0:handle_sigill=0:handle_sigfpe=0").lstrip(":")
    e.update(env)
    p = subprocess.run([PROG, kind], env=e, capture_output=True, text=True,
                       preexec_fn=no_core, timeout=60)
    if refault(p):  # no point in going on: every crash would loop
        fdrtest.fail("%s: the crash handler returned and the signal came back until the "
                     "%d s CPU limit (returncode %d)" % (kind, CPU_LIMIT, p.returncode))
    return p


LINE = re.compile(r"^fdr: (\d+\.\d{9}) \[(\d+)(?: ([^\]]*))?\] (\S+?):(\S+) (.*)$")


def dump_lines(stderr):
    return [LINE.match(l) for l in stderr.splitlines() if LINE.match(l)]


def expected_tail(kind, n_events):
    """The last n_events events of each thread, in time order (main
    records work:step, the ticker thread its ticks, then main crash:now)."""
    main = [("work", "step", "i=%d s=s%d" % (i, i)) for i in range(10)]
    main += [("crash", "now", "kind=%s" % kind)]
    main = main[-n_events:]
    ticks = [("other", "tick", "n=%d name=ticker" % n) for n in range(100, 105)]
    return main[:-1] + ticks[-n_events:] + main[-1:]


def check_dump(name, kind, p, n_events=32):
    lines = dump_lines(p.stderr)
    got = [(m.group(4), m.group(5), m.group(6)) for m in lines]
    want = expected_tail(kind, n_events)
    check(got == want, "%s: dumped events\n got  %r\n want %r\nstderr:\n%s"
          % (name, got, want, p.stderr))
    times = [float(m.group(1)) for m in lines]
    check(times == sorted(times), name + ": lines sorted by time")
    tids = {m.group(2) for m in lines if m.group(4) == "other"}
    check(len(tids) == 1 and all(m.group(3) == "ticker" for m in lines
                                 if m.group(4) == "other"),
          name + ": the ticker thread is named")
    check("fdr: end of last events" in p.stderr, name + ": end line")


SIGS = {"null": signal.SIGSEGV, "abort": signal.SIGABRT, "overflow": signal.SIGSEGV,
        "fpe": signal.SIGFPE, "chain": signal.SIGSEGV}

for kind, sig in SIGS.items():
    crash_dir = os.path.join(OUT, kind)
    shutil.rmtree(crash_dir, ignore_errors=True)
    p = run(kind, FDR_CRASH_DIR=crash_dir)
    check(p.returncode == -sig, "%s: died of %s (returncode %d, want %d)\n%s"
          % (kind, sig.name, p.returncode, -sig, p.stderr))
    check("fdr: caught %s" % sig.name in p.stderr, kind + ": names the signal")
    kind_logged = kind
    check_dump(kind, kind_logged, p)
    if kind == "chain":
        check("own handler, chaining" in p.stderr, "chain: the program's handler ran")
    snaps = os.listdir(crash_dir) if os.path.isdir(crash_dir) else []
    check(len(snaps) == 1 and snaps[0].startswith("crash-"),
          kind + ": one crash snapshot, got %r" % snaps)
    if snaps:
        path = os.path.join(crash_dir, snaps[0])
        check("fdr: crash snapshot (CTF) in " + path in p.stderr, kind + ": path printed")
        ok, err = tracecheck.clean(path)
        check(ok, kind + ": babeltrace2 reads the crash snapshot\n" + err)
        t = tracecheck.read(path)
        got = [(e.name, e.fields) for e in t.events]
        want = [("work:step", {"i": i, "s": "s%d" % i}) for i in range(10)]
        want += [("other:tick", {"n": n, "name": "ticker"}) for n in range(100, 105)]
        want += [("crash:now", {"kind": kind_logged})]
        check(got == want, kind + ": snapshot events\n got  %r\n want %r" % (got, want))

# The banner says where the signal came from: a fault and its address, the
# process itself (abort), or another process (its pid).
p = run("null")
check("fdr: caught SIGSEGV (fault at address 0x0) in thread" in p.stderr,
      "null: banner names the fault address\n" + p.stderr)
check("set FDR_CRASH_DIR=DIR" in p.stderr, "null: says how to keep a complete record")
check("; last 256 events per thread" in p.stderr,
      "null: 256 events per thread by default (docs/environment.md)\n" + p.stderr)
p = run("abort")
check("fdr: caught SIGABRT (raised by this process" in p.stderr,
      "abort: banner says raised by the process\n" + p.stderr)
e = dict(os.environ)
e.pop("FDR_OUTPUT", None)
e["ASAN_OPTIONS"] = e["TSAN_OPTIONS"] = "handle_segv=0"
w = subprocess.Popen([PROG, "wait"], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True, preexec_fn=no_core)
check(w.stdout.readline().strip() == "ready", "wait: started")
w.send_signal(signal.SIGSEGV)
_, err = w.communicate(timeout=60)
check(w.returncode == -signal.SIGSEGV, "wait: died of SIGSEGV (%d)" % w.returncode)
check("fdr: caught SIGSEGV (sent by process %d, uid %d) in thread" % (os.getpid(), os.getuid())
      in err, "wait: banner names the sending process\n" + err)

# fewer events asked for: the newest ones only
p = run("abort", FDR_CRASH_EVENTS="3")
check(p.returncode == -signal.SIGABRT, "events=3: SIGABRT")
check_dump("events=3", "abort", p, 3)

# a handler installed by the program that does not chain: fdr is out of it
p = run("handled")
check(p.returncode == 42, "handled: the program's handler decides (%d)" % p.returncode)
check("fdr: caught" not in p.stderr, "handled: no dump")

# off
for env in ({"FDR_CRASH": "0"}, {"FDR_CRASH_SIGNALS": "none"}):
    p = run("null", **env)
    check(p.returncode == -signal.SIGSEGV, "%r: still SIGSEGV" % env)
    check("fdr:" not in p.stderr, "%r: no dump\n%s" % (env, p.stderr))
# only some signals
p = run("fpe", FDR_CRASH_SIGNALS="SEGV,ABRT")
check(p.returncode == -signal.SIGFPE and "fdr: caught" not in p.stderr,
      "SIGNALS=SEGV,ABRT: SIGFPE not dumped")
p = run("fpe", FDR_CRASH_SIGNALS="sigfpe 11")
check(p.returncode == -signal.SIGFPE and "fdr: caught SIGFPE" in p.stderr,
      "SIGNALS='sigfpe 11': SIGFPE dumped")

# bad values: one clear line each, defaults used
p = run("null", FDR_CRASH_SIGNALS="SEGV,bogus")
warn = [l for l in p.stderr.splitlines() if "FDR_CRASH_SIGNALS" in l]
check(len(warn) == 1 and "not valid" in warn[0], "bogus signals: one warning\n" + p.stderr)
check(p.returncode == -signal.SIGSEGV and "fdr: caught SIGSEGV" in p.stderr,
      "bogus signals: defaults used")
p = run("null", FDR_CRASH_EVENTS="0")
warn = [l for l in p.stderr.splitlines() if l.startswith("fdr: FDR_CRASH_EVENTS")]
check(len(warn) == 1 and "not valid" in warn[0], "events=0: one warning\n" + p.stderr)
check_dump("events=0", "null", p)

fdrtest.finish()
