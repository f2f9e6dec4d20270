#!/bin/sh
# SPDX-License-Identifier: MIT
# cross.sh - cross-builds fdr with Debian's cross compilers and runs the
# core tests under qemu-user (docs/portability.md):
#   scripts/cross.sh [TARGET...]     default: every target below
# A target is NAME (build and test as the table says), NAME:build or
# NAME:smoke (a few tests only).
#   aarch64 armhf s390x    build everything, run the core tests under
#                          qemu-user; the Python drivers start target
#                          programs through CMAKE_CROSSCOMPILING_EMULATOR
#                          (tests/lib/emulator.py) and read every trace on
#                          the host with babeltrace2
#   i686                   build everything, run a smoke set (threads, types,
#                          the crash dump) under qemu-i386
#                          (armhf and i686 run core-stress too: 32-bit)
#   riscv64                build everything, run the core tests under
#                          qemu-riscv64
#   musl                   build everything with musl-gcc (but the scope's
#                          web server: no libmicrohttpd for musl) and run
#                          the core tests natively (musl's loader,
#                          /lib/ld-musl-x86_64.so.1, is Debian's musl)
#   musl:build             libfdr and fdr-gen alone (FDR_TOOLS=OFF), what
#                          an embedded user builds, in cross-musl-lib
# Each build is in build-test/cross-NAME, with -Werror. Prints one line per
# target and ends with "cross: N passed, N failed" (a target passes when it
# builds and, where run, its tests pass); FDR_CROSS_TESTS overrides the
# regular expression of the tests run.
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)
# The core: libfdr's own tests in real processes (threads, accounting,
# types, snapshots, the crash dump, flight mode), plus the trace reader.
# The core: libfdr's own tests in real processes that start the target's
# programs from Python (a test that starts them through sh or from another
# target program needs binfmt_misc, docs/portability.md): every type, the
# accounting, exits, configuration, the crash dump and snapshots, live
# printing, raw events, and the reader. About 2 min each under qemu-user.
# Not flight-reentry: its events from a signal handler are counted right
# under qemu too, but the emulated timer makes it discard some.
tests=${FDR_CROSS_TESTS:-'^(core-(types|accounting|accounting-exit|drain|wait|time|exit-.*|config-(buffer-size|packet-size|mode|output-file))|flight-(crash|snapshot)|live-(api|lines|threads|file)|provider-raw|reader|format|check-atomics)$'}
passed=0
failed=0
default="aarch64 armhf s390x i686:smoke riscv64 musl musl:build"
# smoke: a 32-bit x86 run of the tests with threads, types and the crash
# dump (the 3-thread hang of issue 30 was seen on i686 only)
smoke='^(core-(types|accounting|accounting-exit|drain|wait)|flight-crash|format|check-atomics)$'

triplet() {
    case $1 in
    aarch64) echo aarch64-linux-gnu ;;
    armhf) echo arm-linux-gnueabihf ;;
    s390x) echo s390x-linux-gnu ;;
    i686) echo i686-linux-gnu ;;
    riscv64) echo riscv64-linux-gnu ;;
    esac
}
qemu() {
    case $1 in
    aarch64) echo qemu-aarch64 ;;
    armhf) echo qemu-arm ;;
    s390x) echo qemu-s390x ;;
    i686) echo qemu-i386 ;;
    riscv64) echo qemu-riscv64 ;;
    esac
}

# fdr's own readers across machines, on core-types' traces: x86-64's
# (build-test/normal) `fdr print`, `fdr stats --json` and `fdr export
# --format chrome` of the target's trace give what they give for the
# host's own trace, and the target's `fdr print`, under qemu-user, of the
# host's trace gives what x86-64's does: the same lines once addresses,
# times, ids and what the program's machine decides (a 32-bit long, plain
# char's sign, rates; under qemu-user a thread's name is the emulator's)
# are masked; doubles are compared digit for digit (format.c prints them
# exactly, as glibc does: the test format). Prints yes, NO (the
# differences in DIR.readers.diff) or - (no host build or trace to compare
# with).
mask='s/^[^]]*\] //; s/0x[0-9a-f]+/ADDR/g; s/(^| )(pi|pcv|puc|pmax)=[0-9]+/\1\2=ADDR/g;
      s/l=-(2147483648|9223372036854775808)/l=LONG_MIN/; s/pmax=ADDR/pmax=MAX/;
      s/"(ts|pid|tid|rate|first_ns|last_ns|span_ns)": ?[0-9.e+-]+/"\1":X/g;
      s/"(pi|pcv|puc|pmax)":[0-9.e+]+/"\1":ADDR/g; s/"c":(-1|255)\b/"c":CHAR/;
      s/"l":-(2147483648|9223372036854775808|2.147483648e\+09|9.2233720368547758e\+18)/"l":LONG_MIN/;
      s/"(trace|name)": ?"([^"]*types|qemu-[a-z0-9]+)"/"\1":X/g'
# agree WHAT TRACE READER ARGS...: READER ARGS TRACE (READER may be an
# emulator and a program) against x86-64's `fdr ARGS` of its own trace.
agree() {
    what=$1 trace=$2 reader=$3
    shift 3
    # shellcheck disable=SC2086
    if ! $reader "$@" "$trace" 2>"$rdir.readers.err" | sed -E "$mask" >"$rdir.readers.out" ||
        [ -s "$rdir.readers.err" ] ||
        ! "$fdr" "$@" "$mine" | sed -E "$mask" | diff - "$rdir.readers.out" >>"$rdir.readers.diff"; then
        echo "($what: differs, or said the above)" >>"$rdir.readers.diff"
        cat "$rdir.readers.err" >>"$rdir.readers.diff"
        ok=NO
    fi
}
readers() { # DIR NAME
    rdir=$1
    fdr="$root/build-test/normal/programs/fdr/fdr"
    mine="$root/build-test/normal/tests/recorder/core/types"
    theirs="$1/tests/recorder/core/types"
    if [ ! -x "$fdr" ] || [ ! -d "$mine" ] || [ ! -d "$theirs" ]; then
        echo "-"
        return
    fi
    : >"$rdir.readers.diff"
    ok=yes
    agree "x86-64's fdr print of the target's trace" "$theirs" "$fdr" print
    agree "x86-64's fdr stats of the target's trace" "$theirs" "$fdr" stats --json
    agree "x86-64's fdr export of the target's trace" "$theirs" "$fdr" export --format chrome -o -
    agree "the target's fdr print of x86-64's trace" "$mine" "$(qemu "$2") $1/programs/fdr/fdr" print
    # The crash dump and live printing are the program's own: core-types
    # ending with abort(), every event printed live, against x86-64's.
    dump_of "$root/build-test/normal/tests/recorder/core-types" "" "$1.host" >"$1.host.dumped"
    dump_of "$1/tests/recorder/core-types" "$(qemu "$2")" "$1" |
        diff "$1.host.dumped" - >>"$1.readers.diff" || {
        echo "(the target's crash dump and live printing of every type differ)" >>"$1.readers.diff"
        ok=NO
    }
    echo $ok
}
# dump_of PROG EMULATOR OUT: PROG's crash dump lines then its live lines,
# masked (core-types abort, FDR_TRACES='*')
dump_of() {
    (
        ulimit -c 0 # dash and bash have it (SC3045)
        # shellcheck disable=SC2086
        # "|| :": the subshell waits, and its shell's "Aborted" goes to /dev/null
        FDR_TRACES='*' FDR_TRACE_FILE="$3.live" $2 "$1" abort >/dev/null 2>"$3.dump" || :
    ) 2>/dev/null
    { grep -aE '^fdr: [0-9]+\.[0-9]+ \[' "$3.dump" || echo "(no crash dump)"; cat "$3.live"; } |
        sed -E "$mask"
}

row() { # NAME BUILD TESTS TYPES PRINT
    printf '| %s | %s | %s | %s | %s |\n' "$@" >>"$table"
}

one() { # NAME MODE
    name=$1 mode=$2
    dir="$root/build-test/cross-$name"
    if [ "$name" = musl ]; then
        # no C++ compiler: the host's g++ would link glibc's libstdc++
        set -- -DCMAKE_C_COMPILER=musl-gcc -DCMAKE_CXX_COMPILER="" -DFDR_SCOPE_HTTP=OFF
        [ "$mode" = build ] && dir="$dir-lib" && set -- "$@" -DFDR_TOOLS=OFF
    else
        t=$(triplet "$name")
        if [ -z "$t" ]; then
            echo "cross: $name: unknown target (aarch64 armhf s390x i686 riscv64 musl)"
            failed=$((failed + 1))
            return
        fi
        # The programs name the target's loader and libc by their path on
        # this machine, so qemu runs them without -L: -L would also turn
        # the programs' own "/" into the sysroot's.
        ld=$(ls /usr/"$t"/lib/ld*.so.[0-9] 2>/dev/null | head -n 1)
        link="-Wl,--dynamic-linker=$ld -Wl,-rpath,/usr/$t/lib"
        # armhf with a 64-bit time_t, as Debian 13 builds it (glibc's
        # _TIME_BITS=64); i686 with glibc's default 32-bit one
        flags=""
        [ "$name" = armhf ] && flags="-D_TIME_BITS=64"
        set -- -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR="$name" \
            -DCMAKE_C_FLAGS="$flags" \
            -DCMAKE_C_COMPILER="$t-gcc" -DCMAKE_CXX_COMPILER="" \
            -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link" \
            -DCMAKE_CROSSCOMPILING_EMULATOR="$(qemu "$name")"
    fi
    log="$dir.log"
    # build only: what a user installs (libfdr, fdrd, fdr, fdr-gen), not
    # the tests' programs
    targets=""
    if [ "$mode" = build ] && [ "$name" != musl ]; then
        targets="--target fdr fdr_static fdrd fdr-cli fdr-gen"
    fi
    start=$(date +%s)
    # shellcheck disable=SC2086
    if ! cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFDR_BENCH=OFF "$@" \
        >"$log" 2>&1 || ! cmake --build "$dir" -j "$jobs" $targets >>"$log" 2>&1; then
        grep -E "error|Error" "$log" | head -n 20
        echo "cross: $name: BUILD FAILED (log: $log)"
        row "$name" FAILED - - -
        failed=$((failed + 1))
        return
    fi
    if [ "$mode" = build ]; then
        echo "cross: $name: built ($(($(date +%s) - start)) s)"
        if [ "$name" = musl ]; then
            row "musl (x86-64), FDR_TOOLS=OFF" "ok (libfdr, fdr-gen)" "not run" - -
        else
            row "$name" "ok (libfdr, fdrd, fdr, fdr-gen)" "not run" - -
        fi
        passed=$((passed + 1))
        return
    fi
    re=$tests
    [ "$mode" = smoke ] && re=$smoke
    # 32-bit targets also run core-stress: threads coming and going while
    # flushes and snapshots stop them, and SIGTERM during recording, every
    # wait bounded (issue 30's 3-thread hang was seen on i686)
    # musl runs natively: also the 10,000 threads of core-threads (musl's
    # own thread stacks and TLS), core-stress, and fdrd and `fdr` built
    # with musl in the quick tests that start them
    case $name in
    armhf | i686) re="${re%)\$}|core-stress)\$" ;;
    musl) re="${re%)\$}|core-threads|core-stress|core-config-daemon|fdr-session-daemon|fdr-daemon-(socket|full))\$" ;;
    esac
    (cd "$dir" && ctest --output-on-failure --timeout 300 -j "$jobs" -R "$re") \
        >"$dir.ctest.log" 2>&1
    rc=$?
    summary=$(grep -E "tests passed" "$dir.ctest.log" | tail -n 1)
    types=-
    grep -qE "Test +#[0-9]+: core-types +\.+ +Passed" "$dir.ctest.log" && types=yes
    grep -qE "Test +#[0-9]+: core-types +\.+\*+Failed" "$dir.ctest.log" && types=NO
    rd=$(readers "$dir" "$name")
    label=$name built="ok (everything)" under="under $(qemu "$name")" natively=""
    if [ "$name" = musl ]; then
        label="musl (x86-64)" built="ok (all but the scope's web server)"
        under="natively" natively=" (natively)"
    fi
    row "$label" "$built" "$(echo "$summary" | sed -E 's/.*tests passed, ([0-9]+) tests failed out of ([0-9]+)/\2 run, \1 failed/')$natively" \
        "$types" "$rd"
    if [ "$rd" = NO ]; then
        head -n 60 "$dir.readers.diff"
        echo "cross: $name: fdr's readers do not agree across machines ($dir.readers.diff)"
        rc=1
    fi
    if [ "$rc" = 0 ] && [ -n "$summary" ]; then
        echo "cross: $name: built, $summary $under ($(($(date +%s) - start)) s)"
        passed=$((passed + 1))
    else
        grep -B 2 -A 30 -E "\*\*\*Failed|\*\*\*Timeout" "$dir.ctest.log" | head -n 120
        echo "cross: $name: built, ${summary:-ctest did not finish} (log: $dir.ctest.log)"
        failed=$((failed + 1))
    fi
}

mkdir -p build-test
table="$root/build-test/cross-table.md"
: >"$table"
for spec in ${*:-$default}; do
    case $spec in
    *:build) one "${spec%:build}" build ;;
    *:smoke) one "${spec%:smoke}" smoke ;;
    *) one "$spec" test ;;
    esac
done
echo "cross: $passed passed, $failed failed"
[ "$failed" = 0 ]
