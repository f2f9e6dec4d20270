#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""leftovers.py BUILD_DIR - the suite leaves nothing running (the last test
of tests/CMakeLists.txt, run after every other one).

A process is the suite's if its program or its command line lies in
BUILD_DIR (fdrd -d, fdr scope, lttng-relayd writing into a test's
directory, Chromium with a profile there, a test program). Such a process
that is still there 30 s after the last test ended (a process being torn
down gets the time to go) fails the test: each is named with its command
line, then killed so that it cannot disturb what runs next."""
import os
import signal
import sys
import time


def ancestors():
    out, pid = set(), os.getpid()
    while pid > 1:
        out.add(pid)
        try:
            with open("/proc/%d/stat" % pid) as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
    return out


def suite_processes(build):
    mine = ancestors()
    found = {}
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in mine:
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            try:
                exe = os.readlink("/proc/%s/exe" % d)
            except OSError:
                exe = ""
        except OSError:
            continue
        if not cmd:  # a zombie or a kernel thread
            continue
        if exe.startswith(build + "/") or (build + "/") in cmd:
            found[int(d)] = cmd
    return found


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: leftovers.py BUILD_DIR")
    build = os.path.realpath(sys.argv[1])
    deadline = time.monotonic() + 30
    left = suite_processes(build)
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = suite_processes(build)
    if not left:
        print("leftovers: no process of %s is left" % build)
        return 0
    for pid, cmd in sorted(left.items()):
        print("leftovers: still running after the suite: %d %s" % (pid, cmd[:300]))
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    print("leftovers: FAIL: %d process(es) of the suite outlived their test" % len(left))
    return 1


if __name__ == "__main__":
    sys.exit(main())
