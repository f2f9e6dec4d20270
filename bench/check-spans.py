# SPDX-License-Identifier: MIT
"""check-spans.py FDR_BENCH_SPANS OUT.json - ctest bench-spans-quick: the
spans benchmark (bench/spans.c) runs and reports, in one run, the median,
min and max of every row (an off event and an off span, two events and the
scoped, begin/end and async spans they stand for) and the four ratios of
the medians (issue 33: "medians and ratios in one run"). It asserts no
duration and no ratio: the machine is shared; docs/performance.md, section
"Spans", has the figures of a full run."""
import json
import math
import subprocess
import sys

bench, out = sys.argv[1:3]
p = subprocess.run([bench, "--iters", "20000", "--reps", "3", "--json", out],
                   capture_output=True, text=True, timeout=120)
sys.stdout.write(p.stdout)
if p.returncode != 0:
    sys.exit("FAIL: fdr-bench-spans exited %d: %s" % (p.returncode, p.stderr))
with open(out) as f:
    r = json.load(f)
rows = ["event_off", "span_off", "two_events", "span_scoped", "two_events_int",
        "span_begin_end", "span_async"]
ratios = ["span_off/event_off", "span_scoped/two_events", "span_begin_end/two_events_int",
          "span_async/two_events_int"]
bad = [k for k in rows if k not in r["cases"] or
       not 0 < r["cases"][k]["min"] <= r["cases"][k]["median"] <= r["cases"][k]["max"]]
bad += [k for k in ratios if not (math.isfinite(r["ratios"].get(k, math.nan)) and
                                  r["ratios"][k] > 0)]
want = {"%s/%s" % (a, b): r["cases"][a]["median"] / r["cases"][b]["median"]
        for a, b in (("span_off", "event_off"), ("span_scoped", "two_events"),
                     ("span_begin_end", "two_events_int"), ("span_async", "two_events_int"))}
bad += [k for k in ratios if k not in bad and abs(r["ratios"][k] - want[k]) > 0.002 * want[k] + 0.001]
if bad or sorted(r["cases"]) != sorted(rows):
    sys.exit("FAIL: rows or ratios missing or inconsistent: %s\n%s" % (bad, json.dumps(r)))
print("PASS bench-spans-quick")
