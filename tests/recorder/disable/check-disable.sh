#!/bin/sh
# SPDX-License-Identifier: MIT
# check-disable.sh - -DFDR_DISABLE leaves nothing of fdr in a program.
#
# Usage: check-disable.sh CC CXX INCLUDE_DIR LIB_DIR WORK_DIR [SANITIZE_FLAGS]
#
# Builds tests/disable/disable-example.c with -DFDR_DISABLE (C at -O0 and
# -O2, C++17, and with clang when there is one) and checks that:
#   - nm shows no symbol containing "fdr";
#   - strings shows none of the provider, event, field names or formats;
#   - there is no fdr_sites section;
#   - the arguments' side effects did not run ("side effects 0").
# Then builds it without the switch, against libfdr in LIB_DIR, and checks
# that all of these are present (so the checks above can fail) and that the
# side effects ran once per event. Finally, that with the switch a format
# that disagrees with its arguments, or an undeclared argument, still does
# not compile. One line per failure; exit 1 on any.
set -u
CC=$1 CXX=$2 INC=$3 LIB=$4 WORK=$5 SAN=${6:-}
SRC=$(dirname "$0")/disable-example.c
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
names='zqprov|zqevent|zqfmt|zqname'

check_clean() { # binary label
    syms=$(nm "$1" 2>&1 | grep -i fdr)
    [ -z "$syms" ] || fail "$2: fdr symbols left: $(echo "$syms" | head -3 | tr '\n' ' ')"
    strs=$(strings -a "$1" | grep -Ei "$names|fdr")
    [ -z "$strs" ] || fail "$2: strings left: $(echo "$strs" | head -3 | tr '\n' ' ')"
    objdump -h "$1" | grep -q fdr_sites && fail "$2: has an fdr_sites section"
    out=$("$1") || fail "$2: exit status $?"
    [ "$out" = "side effects 0" ] || fail "$2: printed '$out', not 'side effects 0'"
}

W="-Wall -Wextra -Werror"
for opt in -O0 -O2; do
    if $CC $opt $W -DFDR_DISABLE -I"$INC" "$SRC" -o "$WORK/off$opt"; then
        check_clean "$WORK/off$opt" "C $opt -DFDR_DISABLE"
    else
        fail "C $opt -DFDR_DISABLE does not compile"
    fi
done
if $CXX -x c++ -std=c++17 -O0 $W -DFDR_DISABLE -I"$INC" "$SRC" -o "$WORK/offxx"; then
    check_clean "$WORK/offxx" "C++ -DFDR_DISABLE"
else
    fail "C++ -DFDR_DISABLE does not compile"
fi
if command -v clang >/dev/null 2>&1; then
    if clang -O0 $W -DFDR_DISABLE -I"$INC" "$SRC" -o "$WORK/offclang"; then
        check_clean "$WORK/offclang" "clang -DFDR_DISABLE"
    else
        fail "clang -DFDR_DISABLE does not compile"
    fi
fi

# The same program with fdr: everything checked above is there.
if $CC -O2 $W $SAN -I"$INC" "$SRC" -o "$WORK/on" -L"$LIB" -lfdr -Wl,-rpath,"$LIB"; then
    nm "$WORK/on" | grep -q 'fdr__' || fail "enabled: no fdr symbol (the nm check is blind)"
    n=$(strings -a "$WORK/on" | grep -Ec "$names")
    [ "$n" -ge 5 ] || fail "enabled: only $n names found by strings (the check is blind)"
    objdump -h "$WORK/on" | grep -q fdr_sites || fail "enabled: no fdr_sites section"
    out=$(FDR_OUTPUT= "$WORK/on") || fail "enabled: exit status $?"
    [ "$out" = "side effects 10" ] || fail "enabled: printed '$out', not 'side effects 10'"
else
    fail "the example does not build without -DFDR_DISABLE"
fi

# Still type-checked when disabled.
cat > "$WORK/badfmt.c" <<'C'
#include <fdr/fdr.h>
void f(int x) { fdr_trace(p, e, "%s", x); }
C
cat > "$WORK/undecl.c" <<'C'
#include <fdr/fdr.h>
void f(void) { fdr_trace(p, e, "%d", no_such_variable); }
C
cat > "$WORK/badspan.c" <<'C'
#include <fdr/fdr.h>
void f(int x) { fdr_span(p, e, "%s", x); }
C
cat > "$WORK/good.c" <<'C'
#include <fdr/fdr.h>
void f(int x) { fdr_trace(p, e, "%d", x); fdr_trace(p, e2); fdr_span(p, s, "%d", x);
                fdr_span_end(p, s2); fdr_span_async_end(p, a, x, "%d", x); }
C
$CC $W -DFDR_DISABLE -I"$INC" -c "$WORK/good.c" -o "$WORK/good.o" ||
    fail "a correct call does not compile with -DFDR_DISABLE"
for bad in badfmt undecl badspan; do
    $CC $W -DFDR_DISABLE -I"$INC" -c "$WORK/$bad.c" -o "$WORK/$bad.o" 2>/dev/null &&
        fail "$bad.c compiles with -DFDR_DISABLE: arguments are not checked"
done

[ $fails -eq 0 ] && echo "ok: -DFDR_DISABLE leaves nothing, side effects do not run"
[ $fails -eq 0 ]
