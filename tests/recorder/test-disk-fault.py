#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-disk-fault.py PROG SHIM OUTDIR WHO - a write that fails part-way.

disk-prog fill records 20,000 events in 4 KiB packets with the LD_PRELOAD
library SHIM (progs/fault-writev.c): the 5th packet written to a stream
file is cut short after half its bytes and the rest of it fails with EIO,
then the disk works again. WHO says who meets the fault: "flush" (a 4 MiB
ring: nothing is written before fdr_flush()) or "consumer" (a 64 KiB
ring: the consumer thread, woken at every half-full ring, writes the first
packets, and phase 1 goes on until it has met the fault (FAULT_WRITEV_MARK,
DISK_FILL_UNTIL); fdr_flush() must still report its error). The consumer writes
packets in batches, one writev each (common/drain.h), and writes a failed
batch again packet by packet: here the first of those writes fails too
(FAULT_WRITEV_FAILS=2). The stream file must still hold only whole
packets (the torn bytes cut away before anything else is written):
babeltrace2 reads the trace without error, fdr_flush() reports -EIO once,
the lost packet's events are counted as discarded (read + discarded ==
emitted) and every event of the second phase, after the fault, is there.

WHO "retry": as "flush", but the disk fails only for the torn batch
(FAULT_WRITEV_FAILS=1): written again packet by packet, nothing is lost,
so fdr_flush() reports no error, no line is printed, every event is read
and none is counted as discarded."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402

prog, shim, out, who = sys.argv[1:5]
N1, N2 = 20000, 1000
shutil.rmtree(out, ignore_errors=True)
env = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
env.update(FDR_OUTPUT=out, FDR_PACKET_SIZE="4096",
           FDR_BUFFER_SIZE="64K" if who == "consumer" else "4M",
           FDR_FLUSH_MS="60000", LD_PRELOAD=shim, FAULT_WRITEV_AT="5",
           FAULT_WRITEV_FAILS="1" if who == "retry" else "2")
if who == "consumer":
    # Phase 1 goes on until the consumer thread has met the fault, so that
    # fdr_flush() reports an error it did not meet itself (under load the
    # consumer might not have run before the flush).
    mark = os.path.join(os.path.dirname(out), "fault-consumer.met")
    if os.path.exists(mark):
        os.unlink(mark)
    env.update(DISK_FILL_UNTIL=mark, FAULT_WRITEV_MARK=mark)
p = subprocess.run([prog, "fill", str(N1), str(N2)], input="go\n", env=env,
                   capture_output=True, text=True, timeout=120)
print(p.stdout + p.stderr)
c.check(p.returncode == 0, "exit status %d" % p.returncode)
said = p.stdout.split()
if said and said[0].startswith("emitted1="):
    N1 = int(said.pop(0).split("=")[1])
if who == "retry":
    c.check(said == ["flush1=0", "flush2=0"],
            "fdr_flush: %r (the batch written again: no error)" % p.stdout)
    c.check("cannot write the trace" not in p.stderr,
            "no line about an error that lost nothing: %r" % p.stderr)
else:
    c.check(said == ["flush1=-5", "flush2=0"],
            "fdr_flush: %r (the write error once, then none)" % p.stdout)
    c.check(sum("cannot write the trace" in l for l in p.stderr.splitlines()) == 1,
            "one line about the write error: %r" % p.stderr)
ok, err = c.tracecheck.clean(out)
c.check(ok, "babeltrace2 on the trace with a torn write: " + err[-500:])
t = c.read(out)
phase = [0, 0, 0]
for e in t.events:
    phase[e.fields["phase"]] += 1
print("read %d + %d, discarded %d" % (phase[1], phase[2], t.discarded))
c.check(len(t.events) + t.discarded == N1 + N2, "emitted %d != read %d + discarded %d" %
        (N1 + N2, len(t.events), t.discarded))
if who == "retry":
    c.check(t.discarded == 0 and phase[1] == N1,
            "nothing lost to a fault written again: read %d of %d, discarded %d" %
            (phase[1], N1, t.discarded))
else:
    c.check(0 < t.discarded < N1, "the torn packet's events counted: %d" % t.discarded)
c.check(phase[2] == N2, "after the fault: %d of %d" % (phase[2], N2))
c.finish()
