#!/bin/sh
# SPDX-License-Identifier: MIT
# deps.sh - installs, from Debian's packages, what a step needs and is missing.
#   scripts/deps.sh build   compilers and build tools, libmicrohttpd, python3
#                           (the man pages, dist/man.py), and uPlot for fdr
#                           scope's page (npm ci in web/)
#   scripts/deps.sh demo    build + babeltrace2 (to print the demo trace)
#   scripts/deps.sh test    build + everything the test suite uses (with
#                           chromium and web/'s devDependencies: playwright-core;
#                           man-db, bash-completion, systemd and Debian's
#                           packaging tools for tests/dist) and the cross
#                           stage's (cross)
#   scripts/deps.sh cross   build + Debian's cross compilers for aarch64,
#                           armhf, i686, riscv64, s390x, qemu-user and musl
#                           (scripts/cross.sh, docs/portability.md)
# Runs apt-get only when something is missing; needs root for that.
set -eu
build="gcc g++ make cmake pkg-config libmicrohttpd-dev python3"
demo="$build babeltrace2"
cross="$build python3 python3-bt2 babeltrace2 qemu-user musl-tools strace"
for t in aarch64-linux-gnu:arm64 arm-linux-gnueabihf:armhf i686-linux-gnu:i386 \
    riscv64-linux-gnu:riscv64 s390x-linux-gnu:s390x; do
    cross="$cross gcc-${t%%:*} libc6-dev-${t##*:}-cross"
done
test="$cross $demo python3 python3-bt2 python3-protobuf protobuf-compiler libbabeltrace2-dev libcmocka-dev clang libclang-rt-14-dev binutils file lttng-tools liblttng-ust-dev python3-barectf chromium man-db bash-completion systemd debhelper dpkg-dev lintian"
case "${1:-}" in
build) want=$build ;;
demo) want=$demo ;;
test) want=$test ;;
cross) want=$cross ;;
*) echo "usage: scripts/deps.sh build|demo|test|cross" >&2; exit 2 ;;
esac
missing=""
for p in $want; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
# fdr scope's page embeds uPlot from npm (web/package-lock.json)
web="$(cd "$(dirname "$0")/.." && pwd)/web"
need_npm=""
npm_args="--omit=dev"
if [ ! -e "$web/node_modules/uplot/dist/uPlot.iife.min.js" ] && [ -e "$web/package-lock.json" ]; then
    need_npm=1
fi
# the scope's browser tests (tests/scope) drive Debian's chromium with
# playwright-core, a devDependency: npm ci with devDependencies
if [ "$1" = test ] && [ ! -e "$web/node_modules/playwright-core/package.json" ] &&
    [ -e "$web/package-lock.json" ]; then
    need_npm=1
    npm_args=""
fi
if [ -n "$need_npm" ]; then
    command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
fi
# the browser tests run under node (Debian 12's is 18: web/package.json's
# playwright-core is the last to support it)
if [ "$1" = test ] && ! command -v node >/dev/null 2>&1; then
    case "$missing" in *nodejs*) ;; *) missing="$missing nodejs" ;; esac
fi
if [ -n "$missing" ]; then
    echo "deps: installing$missing" >&2
    if [ "$(id -u)" != 0 ]; then
        echo "deps: missing packages:$missing (run as root or install them)" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if [ -n "$need_npm" ]; then
    echo "deps: npm ci $npm_args --prefix web" >&2
    # shellcheck disable=SC2086
    npm ci $npm_args --prefix "$web" >/dev/null
fi
