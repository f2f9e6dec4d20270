#!/bin/sh
# SPDX-License-Identifier: MIT
# check-fail.sh - one malformed-input case of fdr-gen.
#   usage: check-fail.sh FDR-GEN GEN-DIR TMP-DIR EXPECTED-STDERR STATUS ARGS...
# Runs `FDR-GEN -o TMP-DIR/out.h ARGS...` from GEN-DIR (so file names in
# messages are relative) and checks the exit status, that stderr is exactly
# EXPECTED-STDERR, and that no output (not even a temporary file) is left.
# Runs it again over an existing out.h, which must be left unchanged.
set -u
gen=$1 dir=$2 tmp=$3 expect=$4 status=$5
shift 5
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
cd "$dir" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }

"$gen" -o "$tmp/out.h" "$@" 2>"$tmp/stderr.txt"
rc=$?
mv "$tmp/stderr.txt" "$tmp/../$(basename "$tmp").stderr"
got="$tmp/../$(basename "$tmp").stderr"
[ "$rc" -eq "$status" ] || { cat "$got" >&2; fail "exit status $rc, expected $status"; }
cmp -s "$got" "$expect" || {
    echo "--- expected" >&2; cat "$expect" >&2; echo "--- got" >&2; cat "$got" >&2
    fail "wrong message"
}
[ -z "$(ls -A "$tmp")" ] || fail "output left behind: $(ls -A "$tmp")"

echo previous >"$tmp/out.h"
"$gen" -o "$tmp/out.h" "$@" 2>/dev/null
[ "$(cat "$tmp/out.h")" = previous ] || fail "existing output modified"
[ "$(ls -A "$tmp")" = out.h ] || fail "temporary file left behind: $(ls -A "$tmp")"
rm -rf "$tmp" "$got"
echo ok
