#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-provider-raw.py - raw events as babeltrace2 reads them.

Usage: test-provider-raw.py PROG TRACEDIR [PACKET_SIZE]

Runs tests/progs/provider-raw (see its head comment) with FDR_OUTPUT=TRACEDIR,
FDR_EVENTS="-rawp:event_3" and FDR_PACKET_SIZE, then checks with the
babeltrace2 CLI (no complaint) and the bt2 bindings that the trace holds
exactly the events the program recorded, in order, under the names
"rawp:event_<id>", with byte payloads equal to what was passed, including
the empty one and the one of the largest size.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tracecheck  # noqa: E402
from fdrtest import fail, finish  # noqa: E402


def main():
    prog, out = sys.argv[1], sys.argv[2]
    psize = sys.argv[3] if len(sys.argv) > 3 else None
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, FDR_OUTPUT=out, FDR_EVENTS="-rawp:event_3")
    env.pop("FDR_TRACES", None)
    if psize:
        env["FDR_PACKET_SIZE"] = psize
    p = subprocess.run([prog], env=env, stdout=subprocess.PIPE, text=True, timeout=60)
    sys.stdout.write(p.stdout)
    if p.returncode != 0:
        fail("%s exited with %d" % (prog, p.returncode))
    maxline = [l for l in p.stdout.splitlines() if l.startswith("max ")]
    if not maxline:
        fail("no 'max' line from the program")
    mx = int(maxline[0].split()[1])
    if psize and not (int(psize) - 200 < mx < int(psize)):
        fail("fdr_raw_event_max() = %d for packets of %s bytes" % (mx, psize))

    ok, err = tracecheck.clean(out)
    if not ok:
        fail("babeltrace2 complained:\n" + err)
    t = tracecheck.read(out)

    want = []
    for n in [s for s in (0, 1, 2, 255, 4096) if s <= mx] + [mx - 1, mx]:
        want.append(("rawp:event_0", [(i * 7 + n) & 0xFF for i in range(n)]))
    want.append(("rawp:event_1", list(b"hello")))
    want.append(("rawp:event_2", [0xFF] * 8))

    got = [(e.name, e.fields) for e in t.events]
    if len(got) != len(want):
        fail("%d events in the trace, expected %d: %s"
             % (len(got), len(want), [g[0] for g in got]))
    for k, ((gname, gfields), (wname, wdata)) in enumerate(zip(got, want)):
        if gname != wname:
            fail("event %d is %s, expected %s" % (k, gname, wname))
        if sorted(gfields) != ["data", "data_len"]:
            fail("event %d has fields %s, expected data_len and data" % (k, sorted(gfields)))
        if gfields["data_len"] != len(wdata):
            fail("event %d: data_len %d, expected %d" % (k, gfields["data_len"], len(wdata)))
        if gfields["data"] != wdata:
            diff = next(i for i, (a, b) in enumerate(zip(gfields["data"], wdata)) if a != b)
            fail("event %d (%d bytes): byte %d differs" % (k, len(wdata), diff))
    if t.discarded:
        fail("%d events discarded, expected none" % t.discarded)
    print("ok: %d raw events, largest %d bytes" % (len(got), mx))
    finish()


if __name__ == "__main__":
    main()
