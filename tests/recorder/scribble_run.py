# SPDX-License-Identifier: MIT
"""scribble_run.py - runs progs/flight-scribble.c to the end it was asked
for (not a test: test-flight-scribble.py and test-flight-scribble-seeds.py
share it). "kill": the program says "kill" once it is ready; the drain
helpers it cloned are taken (pidfds) before it is told to go on and
SIGKILLs itself, and their end is waited for: they write the trace."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fdrtest import check, wait_fd  # noqa: E402


def helpers_of(pid):
    kids = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                kids += [int(k) for k in f.read().split()]
    except OSError:
        pass
    return kids


def run(args, end, out, what, **fdr):
    """Runs args + [out] (snapshot) with FDR_CRASH_DIR=out (crash) or
    FDR_OUTPUT=out (else), 4 KiB packets in 64 KiB rings and the FDR_*
    variables of fdr, no other: (exit status, stdout, stderr); status None
    (a failed check) when the program still ran after 120 s."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
    env.update(FDR_PACKET_SIZE="4096", FDR_BUFFER_SIZE="64K", **fdr)
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":handle_abort=0").lstrip(":")
    # Writing over rings its consumer thread may be reading is the
    # program's point: a data race by design, not one of fdr's.
    env["TSAN_OPTIONS"] = (env.get("TSAN_OPTIONS", "") +
                           ":handle_abort=0:report_bugs=0").lstrip(":")
    if end == "snapshot":
        args = args + [out]
    else:
        env["FDR_CRASH_DIR" if end == "crash" else "FDR_OUTPUT"] = out
    p = subprocess.Popen(args, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    helpers, said = [], ""
    if end == "kill":
        line = p.stdout.readline()
        while line and line != "kill\n":
            said += line
            line = p.stdout.readline()
        helpers = [os.pidfd_open(k) for k in helpers_of(p.pid)]
        try:
            p.stdin.write("go\n")
            p.stdin.flush()
        except OSError:
            pass
    try:
        stdout, stderr = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        check(False, "%s: still running after 120 s" % what)
        return None, "", ""
    for h in helpers:
        check(wait_fd(h, 120), "%s: the drain helper still runs after 120 s" % what)
        os.close(h)
    return p.returncode, said + stdout, stderr
