#!/bin/sh
# SPDX-License-Identifier: MIT
# check-corpus.sh - fdr-gen over real trace-events files (not in the repo).
#   usage: check-corpus.sh FDR-GEN CORPUS-DIR SRC-DIR TMP-DIR
# Every file whose name contains "trace-events" under CORPUS-DIR must
# generate with --strict (no event skipped), and its header compile with
# -Wall -Wextra -Werror as C (gnu11) and as C++17, after a prelude declaring
# QEMU's own typedefs.
set -u
gen=$1 corpus=$2 src=$3 tmp=$4
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
cat >"$tmp/prelude.h" <<'PRELUDE'
#include <stdint.h>
typedef uint64_t hwaddr;
typedef uint64_t ram_addr_t;
typedef uint64_t vaddr;
PRELUDE
n=0 bad=0
for f in $(find "$corpus" -type f -name '*trace-events*' | sort); do
    n=$((n + 1))
    prov=$(basename "$f" | tr -c 'A-Za-z0-9_\n' _)
    prov=qemu_$prov
    if ! "$gen" --strict --provider "$prov" --include "$tmp/prelude.h" -o "$tmp/$prov.h" "$f"; then
        echo "FAIL: fdr-gen $f" >&2; bad=$((bad + 1)); continue
    fi
    events=$(grep -c '^static inline void trace_' "$tmp/$prov.h")
    echo "#include \"$prov.h\"" >"$tmp/$prov.c"
    for cc in "gcc -std=gnu11" "g++ -x c++ -std=c++17"; do
        $cc -Wall -Wextra -Werror -fsyntax-only -I"$src/include" -I"$tmp" "$tmp/$prov.c" ||
            { echo "FAIL: $cc on the header of $f" >&2; bad=$((bad + 1)); }
    done
    echo "$f: $events events"
done
[ "$n" -gt 0 ] || { echo "FAIL: no trace-events file under $corpus" >&2; exit 1; }
[ "$bad" -eq 0 ] || exit 1
rm -rf "$tmp"
echo "ok: $n files"
