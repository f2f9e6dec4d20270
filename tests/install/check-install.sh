#!/bin/sh
# SPDX-License-Identifier: MIT
# check-install.sh - install fdr into a temporary prefix and use it from there.
#
# Usage: check-install.sh CMAKE BUILD_DIR LIBDIR CC PYTHON WORK_DIR [SANITIZE_FLAGS]
#
# 1. DESTDIR=WORK/stage cmake --install BUILD_DIR --prefix /opt/fdr-test:
#    everything lands under WORK/stage/opt/fdr-test (DESTDIR and prefix
#    honoured), nothing under /opt/fdr-test; the shared library has the
#    soname libfdr.so.0 and the links libfdr.so -> libfdr.so.0 -> the file;
#    fdr.pc names the prefix without the DESTDIR; fdr-gen is installed when
#    the build has one; with fdr and fdrd, their man pages, bash completion
#    and systemd user units (dist/), fdrd.service naming the installed fdrd.
# 2. consumer.c built with a plain compiler line from `pkg-config --cflags
#    --libs fdr`, run, its trace checked with babeltrace2 (check-trace.py).
# 3. consumer.c built by a separate CMake project with find_package(fdr),
#    linked with fdr::fdr and with fdr::fdr_static; both run and checked.
# 4. With the Makefile generator: `make install PREFIX=... DESTDIR=...`.
# 5. Installed for real into WORK/prefix (no DESTDIR), consumer.c built with
#    pkg-config alone (no -Wl,-rpath of ours) and run with no
#    LD_LIBRARY_PATH: the rpath in fdr.pc's --libs must find libfdr.so.0.
# SANITIZE_FLAGS (the -fsanitize=... of a sanitizer build) are added to the
# consumers' compile and link: a sanitized libfdr needs a sanitized program.
set -u
CMAKE=$1 BUILD=$2 LIBDIR=$3 CC=$4 PY=$5 WORK=$6 SAN=${7:-}
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
PREFIX=/opt/fdr-test
ROOT=$WORK/stage$PREFIX
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run_and_check() { # program trace-dir label
    out=$(FDR_OUTPUT="$2" "$1") || { fail "$3: exit status $? ($out)"; return; }
    [ "$out" = "fdr 0.1.0" ] || fail "$3: printed '$out'"
    "$PY" "$HERE/check-trace.py" "$2" || fail "$3: trace"
}

# ---- 1. install -----------------------------------------------------------
if ! DESTDIR="$WORK/stage" "$CMAKE" --install "$BUILD" --prefix "$PREFIX" \
        >"$WORK/install.log" 2>&1; then
    cat "$WORK/install.log"
    echo "FAIL: cmake --install failed"
    exit 1
fi
[ -e "$PREFIX" ] && fail "$PREFIX exists: DESTDIR was not honoured"
for f in $LIBDIR/libfdr.a $LIBDIR/libfdr.so.0.1.0 include/fdr/fdr.h include/fdr/provider.h \
         include/fdr/trace.h include/fdr/span.h include/fdr/error.h include/fdr/control.h \
         include/fdr/internal/fastpath.h include/fdr/internal/args.h \
         include/fdr/internal/visibility.h $LIBDIR/pkgconfig/fdr.pc \
         $LIBDIR/cmake/fdr/fdrConfig.cmake $LIBDIR/cmake/fdr/fdrConfigVersion.cmake \
         $LIBDIR/cmake/fdr/fdrTargets.cmake; do
    [ -f "$ROOT/$f" ] || fail "not installed: $f"
done
[ "$(readlink "$ROOT/$LIBDIR/libfdr.so")" = libfdr.so.0 ] || fail "libfdr.so is not a link to libfdr.so.0"
[ "$(readlink "$ROOT/$LIBDIR/libfdr.so.0")" = libfdr.so.0.1.0 ] || fail "libfdr.so.0 is not a link to libfdr.so.0.1.0"
readelf -d "$ROOT/$LIBDIR/libfdr.so.0.1.0" | grep -q 'SONAME.*\[libfdr\.so\.0\]' ||
    fail "soname is not libfdr.so.0"
grep -qx "prefix=$PREFIX" "$ROOT/$LIBDIR/pkgconfig/fdr.pc" || fail "fdr.pc: prefix is not $PREFIX"
grep -q "$WORK" "$ROOT/$LIBDIR/pkgconfig/fdr.pc" "$ROOT/$LIBDIR/cmake/fdr/"*.cmake &&
    fail "an installed file names the DESTDIR"
if [ -x "$BUILD/programs/gen/fdr-gen" ]; then
    [ -x "$ROOT/bin/fdr-gen" ] || fail "fdr-gen is built but not installed"
fi
if [ -x "$BUILD/daemon/fdrd" ]; then
    for f in share/man/man1/fdr.1 share/man/man1/fdr-record.1 share/man/man8/fdrd.8 \
             share/man/man3/libfdr.3 share/man/man7/fdr-environment.7 \
             share/bash-completion/completions/fdr lib/systemd/user/fdrd.socket \
             lib/systemd/user/fdrd.service; do
        [ -f "$ROOT/$f" ] || fail "not installed: $f"
    done
    grep -qx "ExecStart=$PREFIX/bin/fdrd -f" "$ROOT/lib/systemd/user/fdrd.service" ||
        fail "fdrd.service does not start $PREFIX/bin/fdrd"
fi
for h in $(cd "$HERE/../../include" && find fdr -name '*.h'); do
    cmp -s "$HERE/../../include/$h" "$ROOT/include/$h" || fail "header $h differs or is missing"
done

# ---- 2. pkg-config and a plain compiler line --------------------------------
export PKG_CONFIG_PATH="$ROOT/$LIBDIR/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$WORK/stage"
[ "$(pkg-config --modversion fdr)" = 0.1.0 ] || fail "pkg-config --modversion fdr"
PC=$(pkg-config --cflags --libs fdr) || fail "pkg-config --cflags --libs fdr"
case "$PC" in *"-I$ROOT/include"*"-L$ROOT/$LIBDIR"*) ;; *) fail "pkg-config gives '$PC'" ;; esac
pkg-config --static --libs fdr | grep -q -- '-pthread' || fail "pkg-config --static lacks -pthread"
# shellcheck disable=SC2086
if $CC -Wall -Wextra -Werror $SAN "$HERE/consumer.c" -o "$WORK/consumer-pc" $PC \
        -Wl,-rpath,"$ROOT/$LIBDIR"; then
    ldd "$WORK/consumer-pc" | grep -q "$ROOT/$LIBDIR/libfdr.so.0" ||
        fail "consumer-pc does not use the installed libfdr.so.0"
    run_and_check "$WORK/consumer-pc" "$WORK/trace-pc" pkg-config
else
    fail "build with pkg-config failed"
fi

# ---- 3. CMake find_package ---------------------------------------------------
if "$CMAKE" -S "$HERE" -B "$WORK/cm" -DCMAKE_PREFIX_PATH="$ROOT" -DCMAKE_C_COMPILER="$CC" \
        -DCMAKE_C_FLAGS="-Wall -Wextra -Werror $SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" \
        >"$WORK/cm.log" 2>&1 &&
    "$CMAKE" --build "$WORK/cm" >>"$WORK/cm.log" 2>&1; then
    ldd "$WORK/cm/consumer" | grep -q "$ROOT/$LIBDIR/libfdr.so.0" ||
        fail "cmake consumer does not use the installed libfdr.so.0"
    ldd "$WORK/cm/consumer_static" | grep -q libfdr && fail "consumer_static uses libfdr.so"
    run_and_check "$WORK/cm/consumer" "$WORK/trace-cm" "find_package fdr::fdr"
    run_and_check "$WORK/cm/consumer_static" "$WORK/trace-cms" "find_package fdr::fdr_static"
else
    cat "$WORK/cm.log"
    fail "build with find_package(fdr) failed"
fi

# ---- 4. make install PREFIX= DESTDIR= ---------------------------------------
if [ -f "$BUILD/Makefile" ]; then
    env -u MAKEFLAGS -u MFLAGS make -s -C "$BUILD" install/fast PREFIX=/opt/fdr-make \
        DESTDIR="$WORK/stage2" >"$WORK/make.log" 2>&1 || fail "make install/fast failed"
    [ -f "$WORK/stage2/opt/fdr-make/$LIBDIR/libfdr.so.0.1.0" ] ||
        fail "make install PREFIX=/opt/fdr-make DESTDIR=...: library not there"
    grep -qx "prefix=/opt/fdr-make" "$WORK/stage2/opt/fdr-make/$LIBDIR/pkgconfig/fdr.pc" ||
        fail "make install PREFIX=/opt/fdr-make: fdr.pc prefix is not /opt/fdr-make"
fi

# ---- 5. pkg-config alone, run without LD_LIBRARY_PATH ----------------------
REAL=$WORK/prefix
if env -u DESTDIR "$CMAKE" --install "$BUILD" --prefix "$REAL" >"$WORK/install5.log" 2>&1; then
    PC=$(env -u PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH="$REAL/$LIBDIR/pkgconfig" \
        pkg-config --cflags --libs fdr) || fail "5: pkg-config --cflags --libs fdr"
    # shellcheck disable=SC2086
    if $CC $SAN "$HERE/consumer.c" -o "$WORK/consumer-alone" $PC; then
        out=$(env -u LD_LIBRARY_PATH FDR_OUTPUT="$WORK/trace-alone" "$WORK/consumer-alone" 2>&1)
        [ "$out" = "fdr 0.1.0" ] || fail "5: built with pkg-config alone, it does not run: $out"
        env -u LD_LIBRARY_PATH ldd "$WORK/consumer-alone" | grep -q "$REAL/$LIBDIR/libfdr.so.0" ||
            fail "5: consumer-alone does not load $REAL/$LIBDIR/libfdr.so.0"
    else
        fail "5: build with pkg-config alone failed"
    fi
else
    cat "$WORK/install5.log"
    fail "5: cmake --install --prefix $REAL failed"
fi

[ $fails -eq 0 ] && echo "ok: installed, built with pkg-config and find_package, traces read"
[ $fails -eq 0 ]
