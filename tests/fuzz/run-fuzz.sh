#!/bin/sh
# SPDX-License-Identifier: MIT
# run-fuzz.sh - run a libFuzzer binary for a bounded time on a copy of a corpus.
#   usage: run-fuzz.sh <fuzz-binary> <corpus-dir> <seconds>
# The corpus is copied to a temporary directory, so the repository is never
# modified. Exits 0 if the fuzzer ran the whole time without finding a crash,
# leak or timeout; otherwise non-zero, keeping the temporary directory (with
# the crashing input under artifacts/) and printing its path.
set -eu

if [ $# -ne 3 ]; then
    echo "usage: $0 <fuzz-binary> <corpus-dir> <seconds>" >&2
    exit 2
fi
bin=$1 corpus=$2 seconds=$3
[ -x "$bin" ] || { echo "$0: $bin: not an executable" >&2; exit 2; }
[ -d "$corpus" ] || { echo "$0: $corpus: not a directory" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdr-fuzz.XXXXXX")
mkdir "$tmp/corpus" "$tmp/artifacts"
cp -R "$corpus"/. "$tmp/corpus/"

rc=0
"$bin" -max_total_time="$seconds" -timeout=10 -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$tmp/artifacts/" "$tmp/corpus" >"$tmp/log" 2>&1 || rc=$?

if [ "$rc" -ne 0 ] || [ -n "$(ls -A "$tmp/artifacts")" ]; then
    tail -n 60 "$tmp/log" >&2
    echo "$0: $(basename "$bin") failed (exit $rc); input and log kept in $tmp" >&2
    [ "$rc" -ne 0 ] || rc=1
    exit "$rc"
fi
tail -n 12 "$tmp/log"
rm -rf "$tmp"
exit 0
