#!/bin/sh
# SPDX-License-Identifier: MIT
# check-compile.sh - the generated header under every compiler and mode.
#   usage: check-compile.sh SRC-DIR HEADER-DIR TMP-DIR
# Compiles tests/programs/progs/gen-run.c against the header fdr-gen made
# (HEADER-DIR/gen-syntax.h) with -Wall -Wextra -Werror as strict C11 with
# gcc and clang and as C++17 with g++ and clang++ (each compiler that is
# installed; gcc and g++ must be). Then builds it with -DFDR_DISABLE and
# without libfdr: it must link, run without evaluating any trace argument,
# and leave no fdr symbol and no event name or format in the binary.
set -u
src=$1 hdir=$2 tmp=$3
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
inc="-I$src/include -I$src/tests/programs/gen -I$hdir"
prog=$src/tests/programs/progs/gen-run.c
for cc in "gcc -std=c11" "clang -std=c11" "g++ -x c++ -std=c++17" "clang++ -x c++ -std=c++17"; do
    set -- $cc
    if ! command -v "$1" >/dev/null; then
        case $1 in clang*) echo "skip: $1 not installed"; continue ;; esac
        fail "$1 not installed"
    fi
    $cc -Wall -Wextra -Werror $inc -c "$prog" -o "$tmp/obj.o" || fail "$cc"
    echo "ok: $cc"
done

gcc -std=c11 -O2 -Wall -Wextra -Werror -DFDR_DISABLE $inc "$prog" -o "$tmp/off" ||
    fail "-DFDR_DISABLE build (without libfdr)"
"$tmp/off" >"$tmp/off.out" || fail "-DFDR_DISABLE program failed"
grep -qx calls=0 "$tmp/off.out" || fail "-DFDR_DISABLE: arguments were evaluated: $(cat "$tmp/off.out")"
grep -qx void_enabled=0 "$tmp/off.out" || fail "-DFDR_DISABLE: trace_gen_void_enabled() true"
if nm "$tmp/off" | grep -i fdr; then fail "-DFDR_DISABLE: fdr symbols left"; fi
if strings "$tmp/off" | grep -E 'gen_(void|ints|split)|addr 0x|gent'; then
    fail "-DFDR_DISABLE: event strings left"
fi
echo "ok: -DFDR_DISABLE"
rm -rf "$tmp"
