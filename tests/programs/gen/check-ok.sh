#!/bin/sh
# SPDX-License-Identifier: MIT
# check-ok.sh - one well-formed fdr-gen run compared with expected files.
#   usage: check-ok.sh FDR-GEN GEN-DIR TMP-DIR OUT-NAME EXPECTED-HEADER EXPECTED-STDERR ARGS...
# Runs `FDR-GEN -o TMP-DIR/OUT-NAME ARGS...` from GEN-DIR; exit status must
# be 0, the header byte for byte EXPECTED-HEADER, stderr exactly
# EXPECTED-STDERR, and nothing but the header left in TMP-DIR.
set -u
gen=$1 dir=$2 tmp=$3 name=$4 header=$5 expect=$6
shift 6
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
cd "$dir" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
"$gen" -o "$tmp/$name" "$@" 2>"$tmp.stderr"
rc=$?
[ "$rc" -eq 0 ] || { cat "$tmp.stderr" >&2; fail "exit status $rc"; }
cmp -s "$tmp.stderr" "$expect" || { cat "$tmp.stderr" >&2; fail "unexpected stderr"; }
diff -u "$header" "$tmp/$name" >&2 || fail "header differs from $header"
[ "$(ls -A "$tmp")" = "$name" ] || fail "stray files: $(ls -A "$tmp")"
rm -rf "$tmp" "$tmp.stderr"
echo ok
