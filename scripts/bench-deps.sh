#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs what bench/ (fdr-bench) needs to compare fdr with LTTng-UST and
# barectf, on Debian 12: checks each package with dpkg -s and runs
# apt-get update + apt-get install -y only when something is missing.
# Needs root (or sudo) only in that case. Exit status 0 when all are there.
set -eu

PKGS="lttng-tools liblttng-ust-dev python3-barectf babeltrace2 python3-bt2 libbabeltrace2-dev"

missing=""
for p in $PKGS; do
    if ! dpkg -s "$p" >/dev/null 2>&1; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "bench-deps: all present ($PKGS)"
    exit 0
fi

echo "bench-deps: missing:$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "bench-deps: not root and no sudo; install:$missing" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
# shellcheck disable=SC2086 # word splitting of the package list is wanted
$SUDO apt-get install -y --no-install-recommends $missing
echo "bench-deps: installed:$missing"
