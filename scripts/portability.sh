#!/bin/sh
# SPDX-License-Identifier: MIT
# portability.sh - writes docs/portability.md's table (target x build x
# core tests under qemu-user x types exact x fdr's readers across
# machines) and
# the clock's measured cost, from a run of scripts/cross.sh.
#   scripts/portability.sh          cross-build and test every target first
#   scripts/portability.sh --table  only rewrite the doc from the last run
# The host's `fdr` is build-test/normal's (scripts/test.sh's normal
# build, or `FDR_TEST_ONLY=normal scripts/test.sh`).
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
doc=docs/portability.md
if [ "${1:-}" != --table ]; then
    scripts/cross.sh >build-test/cross.out 2>&1
    tail -n 12 build-test/cross.out
fi
table=build-test/cross-table.md
[ -e "$table" ] || { echo "portability: no $table (run scripts/cross.sh)" >&2; exit 1; }
cost=$(cc -O2 -I"$root/include" scripts/clock-cost.c -o build-test/clock-cost 2>&1 &&
    build-test/clock-cost)
load=$(cut -d' ' -f1 /proc/loadavg)
tmp=$doc.tmp
awk -v table="$table" -v cost="$cost" -v load="$load" -v date="$(date -u +%Y-%m-%d)" '
/^<!-- portability table/ {
    print; print ""
    print "| target | build (-Werror) | core tests under qemu-user | types exact (bt2 on the host) | fdr print, stats, export across machines |"
    print "|---|---|---|---|---|"
    while ((getline l < table) > 0) print l
    print ""; print "(" date ", scripts/portability.sh)"; skip = 1; next }
/^<!-- clock cost/ {
    print; print ""
    print "x86-64, " date ", load " load ": " cost
    print ""; skip = 1; next }
/^<!-- end of/ { skip = 0 }
!skip { print }' "$doc" >"$tmp" && mv "$tmp" "$doc"
echo "portability: $doc rewritten"
