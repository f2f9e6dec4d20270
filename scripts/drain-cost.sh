#!/bin/sh
# SPDX-License-Identifier: MIT
# drain-cost.sh NEW_LIBDIR OLD_LIBDIR [RUNS] - what the drain helper process
# costs (consumer.c), next to the consumer thread alone.
#
# Builds a tiny program that records one event with FDR_OUTPUT set and
# exits, links it with each libfdr.so (NEW: with the helper, OLD: an
# earlier build without it), and prints for each: the mean wall time of a
# whole run (exec to exit, RUNS runs, default 200) and the memory of the
# process(es) while it sleeps: Pss of the program and of fdr-drain, from
# /proc/<pid>/smaps_rollup. A measurement, not a test: numbers vary with load.
set -eu
new=$1 old=$2 runs=${3:-200}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/p.c" <<'C'
#include <stdlib.h>
#include <unistd.h>
#include <fdr/fdr.h>
int main(int argc, char **argv)
{
    fdr_trace(cost, one, "n=%d", argc);
    if (argc > 1)
        sleep((unsigned)atoi(argv[1]));
    return 0;
}
C
for which in new old; do
    eval dir=\$$which
    cc -O2 -I"$src/include" "$tmp/p.c" -L"$dir" -Wl,-rpath,"$dir" -lfdr -o "$tmp/p-$which"
done
/usr/bin/python3 - "$tmp" "$runs" <<'PY'
import os, subprocess, sys, time
tmp, runs = sys.argv[1], int(sys.argv[2])
def pss(pid):
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for l in f:
            if l.startswith("Pss:"):
                return int(l.split()[1])
    return 0
for which in ("new", "old"):
    prog = os.path.join(tmp, "p-" + which)
    env = dict(os.environ, FDR_OUTPUT=os.path.join(tmp, "out-" + which))
    t0 = time.perf_counter()
    for _ in range(runs):
        subprocess.run([prog], env=env, check=True)
    dt = (time.perf_counter() - t0) / runs
    p = subprocess.Popen([prog, "3"], env=env)
    time.sleep(1)
    kids = []
    for tid in os.listdir("/proc/%d/task" % p.pid):
        with open("/proc/%d/task/%s/children" % (p.pid, tid)) as f:
            kids += [int(k) for k in f.read().split()]
    mem = pss(p.pid)
    helper = sum(pss(k) for k in kids)
    p.wait()
    print("%s: %.2f ms per run (exec to exit, %d runs); Pss program %d KiB, "
          "helper %d KiB (%d helper)" % (which, dt * 1e3, runs, mem, helper, len(kids)))
PY
