#!/bin/sh
# SPDX-License-Identifier: MIT
# test-core-compile.sh CC CXX INCLUDE_DIR CASES_DIR - compile-time errors.
#
# Each tests/compile/fail-*.c (fail-*.cpp with CXX) must FAIL to compile,
# and the compiler's output must contain the line given in the case's
# "expect-gcc:" or "expect-clang:" comment (whichever compiler CC is): the
# error must say what is wrong, not only that something is. ok.c must
# compile without a warning with -std=c11 -Wall -Wextra -Werror (and ok.c
# as C++17 with CXX). What -pedantic says is printed, not judged: fdr.h
# relies on __VA_OPT__ and on empty variadic arguments (see the report).
set -u
CC=$1 CXX=$2 INC=$3 DIR=$4
LC_ALL=C
export LC_ALL
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

family() { # gcc or clang
    if "$1" --version 2>/dev/null | grep -qi clang; then echo clang; else echo gcc; fi
}

check_fail() { # compiler flags file
    cc=$1 flags=$2 f=$3
    fam=$(family "$cc")
    want=$(sed -n "s/^.*expect-$fam: //p" "$f" | sed 's|[[:space:]]*\*/$||' | head -n 1)
    if [ -z "$want" ]; then
        echo "FAIL: $f has no expect-$fam: line"
        fails=$((fails + 1))
        return
    fi
    # shellcheck disable=SC2086
    if "$cc" $flags -Wall -Wextra -I"$INC" -c -o "$tmp/x.o" "$f" >"$tmp/out" 2>&1; then
        echo "FAIL: $f compiled with $cc; it must not"
        fails=$((fails + 1))
    elif ! grep -qF -- "$want" "$tmp/out"; then
        echo "FAIL: $f: $cc did not say \"$want\"; it said:"
        sed 's/^/    /' "$tmp/out" | head -n 20
        fails=$((fails + 1))
    else
        echo "ok: $f ($cc): $(grep -F -- "$want" "$tmp/out" | head -n 1 | sed 's/^[^ ]* //')"
    fi
}

check_ok() { # compiler flags file
    # shellcheck disable=SC2086
    if "$1" $2 -Wall -Wextra -Werror -I"$INC" -c -o "$tmp/ok.o" "$3" >"$tmp/out" 2>&1; then
        echo "ok: $3 compiles with $1 $2 -Wall -Wextra -Werror"
    else
        echo "FAIL: $3 does not compile with $1 $2 -Wall -Wextra -Werror:"
        sed 's/^/    /' "$tmp/out" | head -n 20
        fails=$((fails + 1))
    fi
}

n=0
for f in "$DIR"/fail-*.c; do
    check_fail "$CC" -std=gnu11 "$f"
    n=$((n + 1))
done
for f in "$DIR"/fail-*.cpp; do
    [ -e "$f" ] || continue
    check_fail "$CXX" -std=c++17 "$f"
    n=$((n + 1))
done
[ "$n" -ge 8 ] || { echo "FAIL: only $n compile-fail cases found in $DIR"; fails=$((fails + 1)); }

check_ok "$CC" -std=c11 "$DIR/ok.c"
check_ok "$CC" -std=gnu11 "$DIR/ok.c"
cp "$DIR/ok.c" "$tmp/ok.cpp"
check_ok "$CXX" "-std=c++17 -x c++" "$tmp/ok.cpp"

for std in c11 gnu11; do
    # shellcheck disable=SC2086
    if "$CC" -std=$std -pedantic -Wall -Wextra -Werror -I"$INC" -c -o "$tmp/p.o" \
        "$DIR/ok.c" >"$tmp/out" 2>&1; then
        echo "note: ok.c is also clean with $CC -std=$std -pedantic"
    else
        echo "note: $CC -std=$std -pedantic -Werror refuses ok.c (expected, see header):"
        grep -E 'error' "$tmp/out" | sed 's/^.*error: /    /' | sort | uniq -c | head -n 5
    fi
done

if [ "$fails" -ne 0 ]; then
    echo "$fails compile check(s) failed"
    exit 1
fi
echo "all compile checks passed"
