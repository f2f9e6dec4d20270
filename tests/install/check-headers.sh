#!/bin/sh
# SPDX-License-Identifier: MIT
# check-headers.sh - the public headers under the warnings of the projects
# that include them.
#   usage: check-headers.sh INCLUDE-DIR TMP-DIR
# Compiles strict.c with -Werror and the whole flag list of issue 10 (QEMU's
# and Lua's flags) as C gnu11 and c99 with gcc and clang, and as C++17 with
# g++ and clang++ (the C-only flags left out), each with and without
# -DFDR_DISABLE; any diagnostic fails. -Wpedantic is added where the
# headers allow it, gcc -std=gnu11; elsewhere they need GNU extensions:
# a variadic macro called with no variadic argument (fdr_trace(p, e, "x")),
# __VA_OPT__ before C23/C++20, and _Generic/_Alignof in c99 (docs/api.md
# "Building and linking"). gcc and g++ must be installed, clang and clang++
# are used when they are.
set -u
inc=$1 tmp=$2
src=$(dirname "$0")/strict.c
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
common="-Wall -Wextra -Werror -Wundef -Wwrite-strings -Wredundant-decls -Wtype-limits
 -Winit-self -Wignored-qualifiers -Wempty-body -Wendif-labels -Wshadow -Wcast-qual
 -Wconversion -Wsign-conversion"
conly="-Wmissing-prototypes -Wstrict-prototypes -Wold-style-definition -Wnested-externs
 -Wdeclaration-after-statement"
gcconly="-Wold-style-declaration" # not a clang option
bad=0
run() { # label compiler-and-flags...
    label=$1
    shift
    for def in "" -DFDR_DISABLE; do
        # shellcheck disable=SC2086
        "$@" $def -I"$inc" -c "$src" -o "$tmp/o.o" >"$tmp/out" 2>&1
        rc=$?
        grep -E '(error|warning):' "$tmp/out" >"$tmp/diag"
        if [ "$rc" -ne 0 ] || [ -s "$tmp/diag" ]; then
            echo "FAIL: $label $def"
            sed 's/^/    /' "$tmp/out" | head -n 30
            bad=$((bad + 1))
        else
            echo "ok: $label $def"
        fi
    done
}
for c in gcc clang; do
    if ! command -v $c >/dev/null; then
        [ $c = gcc ] && { echo "FAIL: gcc not installed"; exit 1; }
        echo "skip: $c not installed"; continue
    fi
    extra=$conly
    [ $c = gcc ] && extra="$conly $gcconly"
    for std in gnu11 c99; do
        # shellcheck disable=SC2086
        run "$c -std=$std" $c -std=$std -O2 $common $extra
    done
    # shellcheck disable=SC2086
    [ $c = gcc ] && run "gcc -std=gnu11 -Wpedantic" gcc -std=gnu11 -O2 -Wpedantic $common $extra
done
for cxx in g++ clang++; do
    if ! command -v $cxx >/dev/null; then
        [ $cxx = g++ ] && { echo "FAIL: g++ not installed"; exit 1; }
        echo "skip: $cxx not installed"; continue
    fi
    # shellcheck disable=SC2086
    run "$cxx -std=c++17" $cxx -x c++ -std=c++17 -O2 $common
done
rm -rf "$tmp"
[ "$bad" -eq 0 ] || { echo "$bad configuration(s) failed"; exit 1; }
echo "ok: every configuration"
