#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""check-trace.py TRACEDIR - the trace of consumer.c, as babeltrace2 reads it."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tracecheck  # noqa: E402

path = sys.argv[1]
ok, err = tracecheck.clean(path)
if not ok:
    print("FAIL: babeltrace2 complained about %s:\n%s" % (path, err))
    sys.exit(1)
got = [(e.name, e.fields) for e in tracecheck.read(path).events]
want = [
    ("inst:hello", {"n": 42, "s": "installed"}),
    ("instraw:event_1", {"data_len": 3, "data": [1, 2, 3]}),
]
if got != want:
    print("FAIL: %s holds %r, expected %r" % (path, got, want))
    sys.exit(1)
