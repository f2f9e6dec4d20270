#!/bin/sh
# SPDX-License-Identifier: MIT
# check-units.sh FDRD SERVICE SOCKET MANDIR WORK - the systemd user units of
# dist/systemd/ as `systemd-analyze verify` sees them: no error and no
# warning (an unknown key, a bad value, a Documentation= page that does
# not exist: MANPATH is the build's pages), with the service's ExecStart
# (the installed fdrd, @CMAKE_INSTALL_FULL_BINDIR@) pointed at the build's
# fdrd. The socket must be the run directory's with fdrd's modes.
set -u
fdrd=$1 service=$2 socket=$3 mandir=$4 work=$5
command -v systemd-analyze >/dev/null || { echo "FAIL: systemd-analyze missing (Debian's systemd)"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || exit 1
grep -q '^ExecStart=/.*/fdrd -f$' "$service" || { echo "FAIL: $service: ExecStart is not an absolute fdrd -f"; exit 1; }
sed "s|^ExecStart=.*/fdrd |ExecStart=$fdrd |" "$service" >"$work/fdrd.service"
cp "$socket" "$work/fdrd.socket"
for want in 'ListenSequentialPacket=%t/fdr/fdrd.sock' 'SocketMode=0600' 'DirectoryMode=0700'; do
    grep -qx "$want" "$socket" || { echo "FAIL: $socket lacks $want"; exit 1; }
done
out=$(cd "$work" && MANPATH="$mandir" systemd-analyze verify ./fdrd.socket ./fdrd.service 2>&1)
rc=$?
if [ $rc != 0 ] || [ -n "$out" ]; then
    echo "FAIL: systemd-analyze verify: exit $rc"
    echo "$out"
    exit 1
fi
echo ok
