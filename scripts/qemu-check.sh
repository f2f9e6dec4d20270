#!/bin/sh
# SPDX-License-Identifier: MIT
# qemu-check.sh - builds QEMU with fdr as its trace back-end and runs
# contrib/qemu/check.py on it (`make qemu-check QEMU_SRC=...`; not in CI: a
# QEMU build takes long). docs/qemu.md explains what it shows.
#
#   QEMU_SRC     a QEMU source tree (tested: 7.2, Debian 12's `apt-get source
#                qemu`); contrib/qemu/apply.sh adds the back-end to it
#   QEMU_BUILD   build directory (default: $QEMU_SRC/../build-fdr), configured
#                --enable-trace-backends=fdr,log with the tools only
#   QEMU_NOP_BUILD  optional: a build of the same tree with
#                --enable-trace-backends=nop (the overhead table's first row)
#   FDR_PREFIX   where fdr is installed for QEMU to find it with pkg-config
#                (default: $QEMU_SRC/../fdr-prefix)
#   FDR_BUILD    this tree's build directory installed there (default:
#                build-qemu/; an existing build is brought up to date)
#   QEMU_CHECK_WORK  images and traces (default: /dev/shm/qemu-check, a tmpfs)
#   QEMU_CHECK_RUNS  runs per configuration of the overhead table (default 5;
#                0 skips it)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
: "${QEMU_SRC:?set QEMU_SRC to a QEMU source tree}"
QEMU_SRC=$(cd "$QEMU_SRC" && pwd)
QEMU_BUILD=${QEMU_BUILD:-$QEMU_SRC/../build-fdr}
FDR_PREFIX=${FDR_PREFIX:-$QEMU_SRC/../fdr-prefix}
work=${QEMU_CHECK_WORK:-/dev/shm/qemu-check}

echo "== fdr: build and install into $FDR_PREFIX"
fdr_build=${FDR_BUILD:-$top/build-qemu}
cmake -S "$top" -B "$fdr_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFDR_BENCH=OFF \
    -DCMAKE_INSTALL_PREFIX="$FDR_PREFIX" >"$fdr_build.log" 2>&1 &&
    cmake --build "$fdr_build" -j2 --target fdr fdr_static fdr-gen fdr-cli fdrd \
        >>"$fdr_build.log" 2>&1 &&
    cmake --install "$fdr_build" >>"$fdr_build.log" 2>&1 ||
    { tail -20 "$fdr_build.log"; echo "qemu-check: the fdr build failed"; exit 1; }

echo "== QEMU: add the back-end to $QEMU_SRC"
"$top/contrib/qemu/apply.sh" "$QEMU_SRC"

export PKG_CONFIG_PATH="$FDR_PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
mkdir -p "$QEMU_BUILD"
QEMU_BUILD=$(cd "$QEMU_BUILD" && pwd)
start=$(date +%s)
if [ ! -f "$QEMU_BUILD/build.ninja" ]; then
    echo "== QEMU: configure in $QEMU_BUILD (--enable-trace-backends=fdr,log, tools only)"
    (cd "$QEMU_BUILD" && "$QEMU_SRC/configure" --enable-trace-backends=fdr,log \
        --disable-system --disable-user --enable-tools --disable-docs --disable-werror \
        >configure.log 2>&1) || { tail -20 "$QEMU_BUILD/configure.log"; exit 1; }
fi
echo "== QEMU: ninja qemu-img qemu-io"
ninja -C "$QEMU_BUILD" -j2 qemu-img qemu-io >"$QEMU_BUILD/ninja.log" 2>&1 ||
    { tail -30 "$QEMU_BUILD/ninja.log"; echo "qemu-check: the QEMU build failed"; exit 1; }
echo "QEMU build: $(($(date +%s) - start)) s now$(
    [ -f "$QEMU_BUILD/build.start" ] && [ -f "$QEMU_BUILD/build.end" ] &&
    echo "; from scratch (configure + qemu-img + qemu-io, -j2): $(($(cat "$QEMU_BUILD/build.end") - $(cat "$QEMU_BUILD/build.start"))) s")"
grep -q "^#define CONFIG_TRACE_FDR" "$QEMU_BUILD/config-host.h" ||
    { echo "qemu-check: $QEMU_BUILD is not configured with the fdr back-end"; exit 1; }

exec /usr/bin/python3 "$top/contrib/qemu/check.py" "$QEMU_SRC" "$QEMU_BUILD" "$FDR_PREFIX" \
    "$work" ${QEMU_NOP_BUILD:+"$QEMU_NOP_BUILD"}
