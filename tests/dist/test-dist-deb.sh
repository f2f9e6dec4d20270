#!/bin/sh
# SPDX-License-Identifier: MIT
# test-dist-deb.sh SRC WORK PYTHON - the Debian packages, built with Debian's
# own tools, installed on this machine, used, and removed.
#
#  1. A copy of the source tree (no build directory, no .git: nothing is
#     shared with the build this test belongs to) in WORK/src;
#     `dpkg-buildpackage -us -uc -b` builds libfdr0, libfdr-dev and
#     fdr-tools (debian/); lintian reports no error (its output, warnings
#     included, and the packages' sizes are printed).
#  2. `dpkg -i` installs the three; fdr, fdrd, fdr-gen, the man pages
#     (`man -w fdr-record`), the completion and the user units are where
#     Debian's tools look for them.
#  3. tests/install/consumer.c is built with `cc $(pkg-config --cflags
#     --libs fdr)` alone (the system's fdr.pc, prefix /usr) and run with
#     FDR_OUTPUT, then under the installed `fdr record`; both traces are read
#     with bt2 (check-trace.py); `fdr print` reads the second.
#  4. `dpkg -P` removes them (also when a step fails: trap): no package
#     left, no file of theirs left, libfdr.so.0 gone from the loader's
#     cache, no systemd state left for fdrd's units.
# Needs root, dpkg-buildpackage, debhelper and lintian (scripts/deps.sh
# test installs them; CI runs as root): without them it FAILS, it does not
# skip. It refuses to run when one of the packages, or one of their files,
# is already on the machine (it would remove what it did not install).
# About 3 to 5 minutes on 2 cores: registered in the normal build only.
set -u
SRC=$1 WORK=$2 PY=$3
HERE=$(cd "$(dirname "$0")" && pwd)
PKGS="fdr-tools libfdr-dev libfdr0"
fail() {
    echo "FAIL: $*"
    exit 1
}

[ "$(id -u)" = 0 ] || fail "dpkg -i needs root (CI runs as root)"
for t in dpkg-buildpackage dh lintian pkg-config cc man; do
    command -v $t >/dev/null || fail "$t is missing (scripts/deps.sh test installs it)"
done
# One run of this test at a time on the machine: two suites at once (CI
# beside a user's `make test`) installed and removed each other's packages
# (dpkg: "frontend lock was locked by another process"). The lock is in a
# directory of /run only root can write to: no link planted by another user.
[ -d /run/fdr-tests ] || mkdir -m 0700 /run/fdr-tests || fail "cannot make /run/fdr-tests"
exec 9>/run/fdr-tests/dist-deb.lock || fail "cannot open /run/fdr-tests/dist-deb.lock"
flock -w 900 9 || fail "another run of this test held /run/fdr-tests/dist-deb.lock for 15 minutes"
# dpkg ARGS, its output in LOG, waiting up to 5 minutes while another dpkg
# or apt holds dpkg's lock (unattended-upgrades on a fresh machine): dpkg
# itself gives up at once.
dpkg_wait() {
    log=$1
    shift
    i=0
    until dpkg "$@" >"$log" 2>&1; do
        grep -q 'lock' "$log" && [ $i -lt 300 ] || return 1
        i=$((i + 1))
        sleep 1
    done
}
for p in $PKGS; do
    # dpkg -s also knows a package purged before ("unknown ok not-installed")
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$'; then
        fail "$p is installed already; this test installs and removes it (dpkg -P $p first)"
    fi
done

# ---- 1. build ---------------------------------------------------------------------
rm -rf "$WORK" && mkdir -p "$WORK/src" || exit 1
(cd "$SRC" && tar -c --exclude=./.git --exclude='./build*' --exclude=./web/node_modules .) |
    tar -x -C "$WORK/src" || fail "copying the source"
mkdir -p "$WORK/src/web/node_modules" &&
    cp -a "$SRC/web/node_modules/uplot" "$WORK/src/web/node_modules/" ||
    fail "copying uPlot (scripts/deps.sh build)"
if ! (cd "$WORK/src" && dpkg-buildpackage -us -uc -b -j2 >"$WORK/build.log" 2>&1); then
    tail -n 40 "$WORK/build.log"
    fail "dpkg-buildpackage -us -uc -b (log: $WORK/build.log)"
fi
debs=""
for p in libfdr0 libfdr-dev fdr-tools; do
    f=$(ls "$WORK/${p}_"*.deb 2>/dev/null)
    [ -f "$f" ] || fail "no package $p"
    debs="$debs $f"
done
echo "packages (bytes, then installed size in KiB):"
for f in $debs; do
    printf '  %-40s %8s %6s\n' "$(basename "$f")" "$(stat -c %s "$f")" \
        "$(dpkg-deb -f "$f" Installed-Size)"
done
echo "lintian:"
lintian --fail-on error "$WORK"/fdr_*_*.changes >"$WORK/lintian.txt" 2>&1
rc=$?
grep -v '^running with root privileges' "$WORK/lintian.txt" | sed 's/^/  /'
[ $rc = 0 ] || fail "lintian reports errors"

# ---- 2. install -------------------------------------------------------------------
# every file of the packages must be new to the machine
for f in $debs; do
    for path in $(dpkg-deb -c "$f" | awk '$1 !~ /^d/ { print substr($6, 2) }'); do
        [ -e "$path" ] || [ -L "$path" ] && fail "$path exists already: refusing to install over it"
    done
done
for f in $debs; do
    dpkg-deb -c "$f" | awk '$1 !~ /^d/ { print substr($6, 2) }'
done >"$WORK/files"
cleanup() {
    # shellcheck disable=SC2086
    dpkg_wait "$WORK/purge.log" -P $PKGS
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# shellcheck disable=SC2086
dpkg_wait "$WORK/install.log" -i $debs || { cat "$WORK/install.log"; fail "dpkg -i"; }
for f in /usr/bin/fdr /usr/bin/fdrd /usr/bin/fdr-gen /usr/lib/systemd/user/fdrd.socket \
    /usr/lib/systemd/user/fdrd.service /usr/share/bash-completion/completions/fdr; do
    [ -f "$f" ] || fail "not installed: $f"
done
[ "$(man -w fdr-record)" = /usr/share/man/man1/fdr-record.1.gz ] ||
    fail "man -w fdr-record: $(man -w fdr-record 2>&1)"
[ "$(man -w 3 libfdr)" = /usr/share/man/man3/libfdr.3.gz ] || fail "man -w 3 libfdr"
grep -qx 'ExecStart=/usr/bin/fdrd -f' /usr/lib/systemd/user/fdrd.service ||
    fail "fdrd.service does not start /usr/bin/fdrd"

# ---- 3. use -----------------------------------------------------------------------
cd "$WORK" || exit 1
[ "$(env -u PKG_CONFIG_PATH pkg-config --variable=prefix fdr)" = /usr ] ||
    fail "pkg-config fdr: not the package's fdr.pc"
# shellcheck disable=SC2046
cc -o consumer "$HERE/../install/consumer.c" $(env -u PKG_CONFIG_PATH pkg-config --cflags --libs fdr) ||
    fail "cc with pkg-config fdr"
ldd ./consumer | grep -q '=> /lib/x86_64-linux-gnu/libfdr.so.0\|=> /usr/lib/.*/libfdr.so.0' ||
    fail "consumer does not load the package's libfdr.so.0: $(ldd ./consumer | grep fdr)"
out=$(env -u FDR_RUNDIR FDR_DAEMON=off FDR_OUTPUT="$WORK/trace" ./consumer) || fail "consumer: exit $?"
[ "$out" = "fdr 0.1.0" ] || fail "consumer printed '$out'"
"$PY" "$HERE/../install/check-trace.py" "$WORK/trace" || fail "the consumer's trace (bt2)"
FDR_DAEMON=off /usr/bin/fdr record --quiet -o "$WORK/record" -- ./consumer >/dev/null ||
    fail "fdr record"
"$PY" "$HERE/../install/check-trace.py" "$WORK/record" || fail "fdr record's trace (bt2)"
/usr/bin/fdr print "$WORK/record" | grep -q 'inst:hello n=42 s=installed' || fail "fdr print"

# ---- 4. remove --------------------------------------------------------------------
trap - EXIT
# shellcheck disable=SC2086
dpkg_wait "$WORK/purge.log" -P $PKGS || { cat "$WORK/purge.log"; fail "dpkg -P"; }
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$' && fail "$p still installed after dpkg -P"
done
while read -r path; do
    [ -e "$path" ] && fail "$path left after dpkg -P"
done <"$WORK/files"
ldconfig -p | grep -q 'libfdr\.so\.0 ' && fail "libfdr.so.0 still in the loader's cache"
ls /var/lib/systemd/deb-systemd-user-helper-enabled 2>/dev/null | grep -q fdrd &&
    fail "systemd state of fdrd's units left"
echo "ok: built, lintian clean of errors, installed, used with pkg-config and bt2, removed"
