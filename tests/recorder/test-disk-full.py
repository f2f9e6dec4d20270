#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-disk-full.py PROG OUTDIR - a full disk, then space again.

A 2 MiB tmpfs (mounted here; root only, else skipped with 77) holds a 1 MiB
file of the user's. disk-prog fill records 100,000 events (1.8 MB), which
cannot all fit: fdr_flush() must return -EIO. The test then deletes the
file and the program records 10,000 more. Afterwards babeltrace2 reads the
trace with no error, emitted = recorded + discarded exactly, some of the
first phase is discarded and every event of the second phase is there.

Then per stream (issue 25): disk-prog fillt, 4 threads alive to the end
record 20,000 events each into the full disk, then 2,000 more once there
is room. Each thread starts in a small ring and grows into a larger one
(issue 29), and a small ring retired may be taken by another thread: the
streams are grouped by the threads they share (a thread's two streams, a
ring's threads, named by its packets). For every group, the discarded events babeltrace2
reports equal those fdr dropped (emitted - recorded), the first packet's
too: a stream whose first packets could not be written starts with an
empty packet saying 0 (a reader ignores the first packet's count).

The same once more on a disk with 12 KiB left (the metadata fits, the
packets hardly): the small rings' first packets fail, and a small ring
retired then gets no other packet; its lost events are reported at the
flush by an empty packet of its own, which names its thread."""
import os
import collections
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check
tracecheck = c.tracecheck

prog, base = sys.argv[1], sys.argv[2]
N1, N2 = 100000, 10000
mnt = os.path.join(base, "mnt")
c.unmount(mnt)
shutil.rmtree(base, ignore_errors=True)
filler = c.full_disk(mnt)
try:
    out = os.path.join(mnt, "out")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
    env["FDR_OUTPUT"] = out
    p = subprocess.Popen([prog, "fill", str(N1), str(N2)], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line1 = p.stdout.readline().strip()
    helpers = []  # the drain helper: waited for, as it holds the directory
    for tid in os.listdir("/proc/%d/task" % p.pid):
        with open("/proc/%d/task/%s/children" % (p.pid, tid)) as f:
            helpers += [os.pidfd_open(int(k)) for k in f.read().split()]
    check(line1 == "flush1=-5", "full disk: fdr_flush() gave %r, expected -EIO" % line1)
    os.unlink(filler)
    p.stdin.write("go\n")
    p.stdin.flush()
    rest, err = p.communicate(timeout=120)
    check(p.returncode == 0, "exit status %d" % p.returncode)
    for h in helpers:
        check(c.wait_fd(h, 120), "the drain helper ended within 120 s")
        os.close(h)
    check(rest.strip() == "flush2=0", "after space returned: %r" % rest)
    warns = [l for l in err.splitlines() if "cannot write the trace" in l]
    check(len(warns) == 1, "one line about the write error expected: %r" % err)
    ok, berr = tracecheck.clean(out)
    check(ok, "babeltrace2: " + berr[-500:])
    t = tracecheck.read(out)
    phase = [0, 0, 0]
    for e in t.events:
        phase[e.fields["phase"]] += 1
    print("read %d + %d, discarded %d" % (phase[1], phase[2], t.discarded))
    check(len(t.events) + t.discarded == N1 + N2,
          "emitted %d != recorded %d + discarded %d" % (N1 + N2, len(t.events), t.discarded))
    check(0 < phase[1] < N1 and t.discarded > 0, "the first phase should be cut short")
    check(phase[2] == N2, "recording did not resume: %d of %d" % (phase[2], N2))

    # ---- per stream, 4 threads: 1 MiB left, then 12 KiB ----
    del t  # bt2 may hold the files: a new tmpfs, the same full disk
    for room in (1 << 20, 12 << 10):
        c.unmount(mnt)
        filler = c.full_disk(mnt, (2 << 20) - room)
        T, M1, M2 = 4, 20000, 2000
        out = os.path.join(mnt, "streams")
        env["FDR_OUTPUT"] = out
        p = subprocess.Popen([prog, "fillt", str(T), str(M1), str(M2)], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        line1 = p.stdout.readline().strip()
        check(line1 == "flush1=-5", "4 threads, full disk: fdr_flush() gave %r" % line1)
        os.unlink(filler)
        p.stdin.write("go\n")
        p.stdin.flush()
        rest, err = p.communicate(timeout=120)
        check(p.returncode == 0 and rest.strip() == "flush2=0",
              "4 threads: exit %d, %r" % (p.returncode, rest))
        ok, berr = tracecheck.clean(out)
        check(ok, "babeltrace2 (4 threads): " + berr[-500:])
        read = collections.Counter()
        lost = collections.Counter()
        tids = collections.defaultdict(set)  # per stream, from its packets
        thread_of = {}  # tid -> disk-prog's thread number
        for msg in tracecheck.bt2.TraceCollectionMessageIterator(out):
            if type(msg) is tracecheck.bt2._EventMessageConst:
                sid = msg.event.packet.stream.id
                read[sid] += 1
                thread_of[int(msg.event.packet.context_field["tid"])] = \
                    int(msg.event.payload_field["thread"])
            elif type(msg) is tracecheck.bt2._PacketBeginningMessageConst:
                tids[msg.packet.stream.id].add(int(msg.packet.context_field["tid"]))
            elif type(msg) is tracecheck.bt2._DiscardedEventsMessageConst:
                lost[msg.stream.id] += msg.count or 0
        # A stream's threads: those its packets name (one whose events all
        # failed to be written names it in the packets that report them).
        threads = {sid: {thread_of[t] for t in v if t in thread_of} for sid, v in tids.items()}
        check(all(t in thread_of for v in tids.values() for t in v),
              "4 threads: packets of no thread that recorded: %s" % dict(tids))
        # Groups: streams joined by a thread they share (union of thread sets).
        groups = []
        for sid in threads:
            g = ({sid}, set(threads[sid]))
            for o in [o for o in groups if o[1] & g[1]]:
                groups.remove(o)
                g = (g[0] | o[0], g[1] | o[1])
            groups.append(g)
        check(set().union(*(g[1] for g in groups)) == set(range(T)),
              "4 threads: some thread recorded nothing: %s" % dict(threads))
        for sids, ths in groups:
            got = sum(read[s] for s in sids)
            said = sum(lost[s] for s in sids)
            dropped = len(ths) * (M1 + M2) - got
            print("streams %s, threads %s: read %d, babeltrace2 reports %d discarded, "
                  "fdr dropped %d" % (sorted(sids), sorted(ths), got, said, dropped))
            check(said == dropped, "streams %s: babeltrace2 reports %d discarded, fdr dropped %d"
                  % (sorted(sids), said, dropped))
        check(sum(lost.values()) > 0, "4 threads: nothing was dropped: the disk was not full")
        msg = None  # bt2 may hold the files: unmounted next
finally:
    c.unmount(mnt)
c.finish()
