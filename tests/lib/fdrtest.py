# SPDX-License-Identifier: MIT
"""fdrtest.py - the one helper module every Python test driver imports.

    sys.path.insert(0, <tests/lib>); import fdrtest as t
    t.check(cond, "what")   records a failure, goes on (all are reported)
    t.finish()              exit 1 if any check failed, else print "ok"

Also: run() a helper program with a fresh FDR_OUTPUT and no other FDR_*
variable, clean() (the babeltrace2 CLI reads a trace without complaint),
read() (the trace through bt2, see tracecheck.py, with the packet sequence
numbers checked), same() (exact value comparison, NaN and -0.0 included)
and typed_events() (values with their field classes), full_disk() (a
small tmpfs, nearly full, for the full-disk tests). One copy of these,
so that a fix to how traces are checked reaches every test. On import, a
watchdog (_watchdog): a driver that still waits near its TIMEOUT fails,
saying where it waits."""
import faulthandler
import math
import os
import select
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bt2  # noqa: E402
import emulator  # noqa: E402,F401 (a cross build's programs run under qemu-user)
import tracecheck  # noqa: E402

failures = []


def _watchdog():
    """A hang is a failure that says where it waited, never a timeout
    (issue 27): 10 s before the test's TIMEOUT (FDR_TEST_TIMEOUT, given by
    tests/CMakeLists.txt; taken out of the environment, so that the
    programs a driver starts do not inherit it), a FAIL line and every
    thread's stack (the line that still waits) on stderr, then SystemExit(1)
    raised in the main thread from a SIGALRM handler: a blocking call ends
    with EINTR and the driver's finally blocks stop what it started. A
    driver stuck where no signal gets through is ended 5 s later by
    faulthandler (exit 1). Not earlier: on a loaded machine a test may
    pass late, and only its TIMEOUT says how late is too late."""
    limit = os.environ.pop("FDR_TEST_TIMEOUT", None)
    try:
        limit = float(limit)
    except (TypeError, ValueError):
        return
    if limit < 10 or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None):
        return

    after = int(max(0.5 * limit, limit - 10))

    def fire(signum, frame):
        sys.stderr.write("FAIL: still waiting after %d s (ctest's TIMEOUT is %.0f s); "
                         "where each thread waits:\n" % (after, limit))
        sys.stderr.flush()
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        raise SystemExit(1)

    signal.signal(signal.SIGALRM, fire)
    signal.alarm(after)
    faulthandler.dump_traceback_later(max(0.6 * limit, limit - 5), exit=True)


_watchdog()


def wait_fd(fd, seconds):
    """True once fd is readable (a pidfd: its process has ended), False
    after seconds. poll, not select: select refuses descriptors past 1023."""
    p = select.poll()
    p.register(fd, select.POLLIN)
    return bool(p.poll(seconds * 1000))


def drain_helpers(pid):
    """pidfds of process pid's drain helpers (consumer.c), to wait for their
    end (wait_fd): its children (a clone of the program), and the helpers
    it made through a child that exited (where a clone with no exit signal
    is refused, as under qemu-user: then init's or a subreaper's), found
    by the pidfd of pid that they hold."""
    kids = set()
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                kids.update(int(k) for k in f.read().split())
        except FileNotFoundError:
            pass  # a thread that ended since it was listed
    want = "Pid:\t%d\n" % pid
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/comm" % d) as f:
                if f.read() != "fdr-drain\n":
                    continue
            for fd in os.listdir("/proc/%s/fdinfo" % d):
                with open("/proc/%s/fdinfo/%s" % (d, fd)) as f:
                    if want in f.read():
                        kids.add(int(d))
                        break
        except OSError:
            pass  # gone, or not ours to read
    fds = []
    for k in sorted(kids):
        try:
            fds.append(os.pidfd_open(k))
        except ProcessLookupError:
            pass  # ended since it was listed (the child a helper is made through)
    return fds


def check(cond, what):
    """Records a failure (all are reported at the end, not just the first)."""
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return cond


def same(a, b):
    """Equal values of the same type; floats compare NaN and -0.0 exactly."""
    if isinstance(b, float):
        if not isinstance(a, float):
            return False
        if math.isnan(b):
            return math.isnan(a)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return type(a) is type(b) and a == b


def finish():
    if failures:
        # Said again last: CI shows a failed test's last lines, and a long
        # test's summary would push the FAIL lines out of them.
        for what in failures[:10]:
            print("failed: " + what[:500], file=sys.stderr)
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        sys.exit(1)
    print("ok")
    sys.exit(0)


def fail(what):
    """A check that cannot go on: reports and exits now."""
    check(False, what)
    finish()


def run(argv, outdir=None, env=None, timeout=120, expect_rc=0):
    """Runs argv with FDR_OUTPUT=outdir (emptied first); returns the
    CompletedProcess (text). Fails the test on a wrong exit status."""
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("FDR_"):
            del e[k]
    if outdir is not None:
        shutil.rmtree(outdir, ignore_errors=True)
        e["FDR_OUTPUT"] = outdir
    e.update(env or {})
    p = subprocess.run(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    if expect_rc is not None and p.returncode != expect_rc:
        sys.stderr.write(p.stderr)
        print("FAIL: %s exited with %d, expected %d" % (argv, p.returncode, expect_rc),
              file=sys.stderr)
        sys.exit(1)
    return p


def clean(path, overwritten=False):
    """The babeltrace2 CLI reads path without a complaint; unless packets
    may have been overwritten, it reports no discarded packet either (a
    packet_seq_num gap: see read())."""
    ok, err = tracecheck.clean(path)
    if not ok:
        sys.stderr.write(err)
    lost = re.findall(r"discarded (\d+) packets?", err)
    if not overwritten:
        check(not lost, "%s: babeltrace2 reports discarded packets: %s" % (path, lost))
    return check(ok, "babeltrace2 CLI complains about " + path)


def read(path, overwritten=False):
    """The trace at path (tracecheck.Trace). Unless packets may have been
    overwritten (overwrite mode, snapshots), every stream's packet_seq_num
    must count 0, 1, 2, ...: a gap is a packet lost without a word."""
    t = tracecheck.read(path)
    if not overwritten:
        check(not t.seq_gaps, "%s: packet_seq_num not consecutive (stream, previous, next): %s"
              % (path, t.seq_gaps[:5]))
        check(t.discarded_packets == 0, "%s: babeltrace2 reports %d discarded packets"
              % (path, t.discarded_packets))
    return t


def kind(fc):
    """A bt2 field class as a short word."""
    if isinstance(fc, bt2._SignedIntegerFieldClassConst):
        return "signed%d" % fc.field_value_range
    if isinstance(fc, bt2._UnsignedIntegerFieldClassConst):
        if fc.preferred_display_base == 16:
            return "hex%d" % fc.field_value_range
        return "unsigned%d" % fc.field_value_range
    if isinstance(fc, bt2._RealFieldClassConst):
        return "real32" if "Single" in type(fc).__name__ else "real64"
    if isinstance(fc, bt2._StringFieldClassConst):
        return "string"
    return type(fc).__name__


def typed_events(path):
    """Every event as (name, [(field, kind, value), ...]) in trace order."""
    out = []
    for msg in bt2.TraceCollectionMessageIterator(path):
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        fields = []
        pf = ev.payload_field
        if pf is not None:
            for name, member in pf.cls.items():
                fields.append((name, kind(member.field_class), tracecheck._value(pf[name])))
        out.append((ev.name, fields))
    return out


def fresh(base):
    """Empties directory base (made if missing) for a test's files and
    returns the environment without any FDR_ variable."""
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    return {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}


def full_disk(mnt, filler_bytes=1 << 20):
    """Mounts a 2 MiB tmpfs at mnt (an earlier run's unmounted first) that
    holds a file of the user's (1 MiB unless filler_bytes), and returns
    that file's path; exits 77 (skipped) when not root or when it cannot be
    mounted. The caller
    deletes the file to make room, and calls unmount(mnt) at the end."""
    if os.geteuid() != 0:
        print("skipped: mounting a tmpfs needs root")
        sys.exit(77)
    unmount(mnt)  # an earlier run's, killed before it could unmount
    os.makedirs(mnt, exist_ok=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs",
                       mnt]).returncode:
        print("skipped: cannot mount a tmpfs")
        sys.exit(77)
    filler = os.path.join(mnt, "filler")
    with open(filler, "wb") as f:
        f.write(bytes(filler_bytes))
    return filler


def unmount(mnt):
    """Unmounts whatever is mounted at mnt, lazily if something still holds
    it (bt2 may still hold a stream file open)."""
    while os.path.ismount(mnt):
        if subprocess.run(["umount", mnt], stderr=subprocess.DEVNULL).returncode and \
                subprocess.run(["umount", "-l", mnt], stderr=subprocess.DEVNULL).returncode:
            break
