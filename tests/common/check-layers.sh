#!/bin/sh
# SPDX-License-Identifier: MIT
# check-layers.sh SRCDIR LIBFDR_COMMON_A [RECORDER_OBJDIR] - the layers
# point one way only.
#
# Fails when a file of lib/common includes anything from lib/recorder
# (or any layer above it), or when the objects of fdr_common need a symbol
# that fdr_common does not define and that is not the C library's: such a
# symbol can only come from libfdr, and a reader linking the core alone
# would not link. Prints one line per offence.
#
# Inside lib/recorder, files are layers too (docs/design.md, Layers): the
# graph "file A uses a symbol that file B defines" is built from nm on the
# objects of libfdr (RECORDER_OBJDIR, by default the static library's
# object directory beside LIBFDR_COMMON_A's build folder), and any cycle in
# it fails the check, printed with the symbol of each edge. References made
# only by the module constructors that the public headers put in every file
# that includes them (fdr__register_module & co, include/fdr/trace.h and
# tunable.h: libfdr has no call site, so they never run) are not calls
# between files and are left out: objdump -dr tells in which function each
# reference is.
set -u
src=$1
lib=$2
objdir=${3:-$(dirname "$lib")/../recorder/CMakeFiles/fdr_static.dir}
fail=0
bad=$(grep -n '#include *"\(recorder\|proto\|daemon\|programs\)/' "$src"/lib/common/*.[ch])
if [ -n "$bad" ]; then
    echo "lib/common includes an upper layer:"
    echo "$bad"
    fail=1
fi
defined=$(nm --defined-only -g "$lib" | awk 'NF == 3 {print $3}' | sort -u)
needed=$(nm -u "$lib" | awk '{print $NF}' | sort -u)
for s in $needed; do
    case $s in
    fdr_* | fdr__* | FDR*)
        if ! printf '%s\n' "$defined" | grep -qx "$s"; then
            echo "fdr_common needs $s, which only an upper layer defines"
            fail=1
        fi
        ;;
    esac
done
[ $fail -eq 0 ] && echo "layers ok: $(printf '%s\n' "$needed" | wc -l) undefined symbols, none of fdr's"

# ---- lib/recorder: no cycle among its files ----
objs=
for c in "$src"/lib/recorder/*.c; do
    # drain_main.c is fdr-drain's main, a program over the library's
    # drainer.c, not a layer of libfdr
    [ "$(basename "$c")" = drain_main.c ] && continue
    o=$objdir/$(basename "$c").o
    if [ ! -f "$o" ]; then
        echo "no object $o for $c: cannot check lib/recorder's layers"
        exit 1
    fi
    objs="$objs $o"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in $objs; do
    f=$(basename "$o" .c.o)
    nm --defined-only -g "$o" | awk -v f="$f" 'NF == 3 && $3 ~ /^fdr_/ {print $3, f}' \
        >>"$tmp/defs"
    # The fdr symbols this object needs, each with the function that refers
    # to it (text) or "data"; module constructors left out.
    nm -u "$o" | awk '{print $NF}' | grep '^fdr_' | sort -u >"$tmp/undef"
    {
        objdump -dr "$o" | awk '
            /^[0-9a-f]+ <[^>]*>:$/ { fn = $2; gsub(/[<>:]/, "", fn); sub(/\..*/, "", fn); next }
            /^[ \t]+[0-9a-f]+: R_/ { s = $NF; sub(/[-+]0x[0-9a-f]+$/, "", s); sub(/@.*/, "", s)
                                     print s, fn }'
        objdump -rw "$o" | awk '
            /^RELOCATION RECORDS FOR/ { sec = $4; gsub(/[\[\]:]/, "", sec); next }
            sec !~ /^\.(text|debug|eh_frame)/ && NF == 3 && $1 ~ /^[0-9a-f]+$/ {
                s = $3; sub(/[-+]0x[0-9a-f]+$/, "", s); print s, "data" }'
    } | awk '$2 !~ /^fdr__(un)?register(_tunable)?_module$/ {print $1}' | sort -u |
        comm -12 - "$tmp/undef" | awk -v f="$f" '{print f, $1}' >>"$tmp/uses"
done
# edges: user definer symbol
awk 'NR == FNR { def[$1] = $2; next } ($2 in def) && def[$2] != $1 { print $1, def[$2], $2 }' \
    "$tmp/defs" "$tmp/uses" | sort -u >"$tmp/edges"
# A cycle, found by depth-first search, printed as a path with the symbols.
cycle=$(awk '
    { if (!(($1, $2) in sym)) { n[$1]++; out[$1, n[$1]] = $2; sym[$1, $2] = $3 } else
          sym[$1, $2] = sym[$1, $2] "," $3
      node[$1] = 1; node[$2] = 1 }
    function dfs(v,    i, w, k, p) {
        color[v] = 1; stack[++depth] = v
        for (i = 1; i <= n[v]; i++) {
            w = out[v, i]
            if (color[w] == 1) {
                for (k = 1; stack[k] != w; k++) ;
                p = stack[k]
                for (; k < depth; k++) p = p " -> " stack[k + 1] " (" sym[stack[k], stack[k + 1]] ")"
                print p " -> " w " (" sym[v, w] ")"
                return 1
            }
            if (!color[w] && dfs(w)) return 1
        }
        color[v] = 2; depth--
        return 0
    }
    END { for (v in node) if (!color[v] && dfs(v)) exit 0 }' "$tmp/edges")
# The documented order (lib/README.md, the first line after "bottom layer
# first"):
# every file is in it, and every use points down it.
order=$(awk '/bottom layer first/ { on = 1; next } on && NF { print; exit }' "$src/lib/README.md")
if [ -z "$order" ]; then
    echo "lib/README.md gives no order of lib/recorder's files (\"bottom layer first\")"
    fail=1
fi
for c in "$src"/lib/recorder/*.c; do
    f=$(basename "$c" .c)
    [ "$f" = drain_main ] && continue
    if ! printf ' %s ' "$order" | grep -q " $f "; then
        echo "lib/recorder/$f.c is not in lib/README.md's order of layers"
        fail=1
    fi
done
up=$(awk -v order="$order" 'BEGIN { n = split(order, o, " "); for (i = 1; i <= n; i++) at[o[i]] = i }
    ($1 in at) && ($2 in at) && at[$2] > at[$1] { print "  " $1 " uses " $3 " of " $2 ", a layer above it" }' \
    "$tmp/edges")
if [ -n "$up" ]; then
    echo "lib/recorder: upward uses (lib/README.md's order):"
    echo "$up"
    fail=1
fi
if [ -n "$cycle" ]; then
    echo "lib/recorder: a cycle among its files (each arrow: uses a symbol of):"
    echo "  $cycle"
    fail=1
else
    echo "lib/recorder: $(wc -l <"$tmp/edges") file-to-file uses, no cycle (layers, bottom first: $(echo $order))"
fi
exit $fail
