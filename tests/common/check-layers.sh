#!/bin/sh
# SPDX-License-Identifier: MIT
# check-layers.sh SRCDIR LIBFDR_COMMON_A - the layers point one way only.
#
# Fails when a file of lib/common includes anything from lib/recorder
# (or any layer above it), or when the objects of fdr_common need a symbol
# that fdr_common does not define and that is not the C library's: such a
# symbol can only come from libfdr, and a reader linking the core alone
# would not link. Prints one line per offence.
set -u
src=$1
lib=$2
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
exit $fail
