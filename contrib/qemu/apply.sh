#!/bin/sh
# SPDX-License-Identifier: MIT
# apply.sh - adds fdr's trace back-end to a QEMU source tree.
#
#     contrib/qemu/apply.sh QEMU-SRC
#
# Copies the tracetool back-end (fdr.py) into QEMU-SRC/scripts/tracetool/
# backend/, lets meson accept `--enable-trace-backends=fdr` (the choice in
# meson_options.txt) and, when fdr is chosen, find libfdr with pkg-config
# (fdr.pc, installed by `make install` of fdr) and give its include
# directory to every compilation: the generated trace-*.h headers include
# <fdr/fdr.h> and are included from everywhere. Running it twice changes
# nothing. Tested with QEMU 7.2 (Debian 12's source package); a tree whose
# meson files do not have the lines it anchors on gets one line saying so
# and exit status 1, with nothing changed. Needs sh and python3.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 QEMU-SRC" >&2; exit 2; }
src=$1
here=$(cd "$(dirname "$0")" && pwd)
for f in meson.build meson_options.txt trace/meson.build scripts/tracetool/backend/log.py; do
    [ -f "$src/$f" ] || { echo "apply.sh: $src is not a QEMU source tree (no $f)" >&2; exit 1; }
done
python3 - "$src" <<'PY'
import os
import sys
src = sys.argv[1]
texts = {}  # every file's new text, all checked before any is written


def text(path):
    if path not in texts:
        texts[path] = open(os.path.join(src, path)).read()
    return texts[path]


def edit(path, anchor, new, after=True):
    """Adds `new` next to the first line containing `anchor`, once."""
    t = text(path)
    if new in t:
        return
    at = t.find(anchor)
    if at < 0:
        sys.exit("apply.sh: %s/%s: no line with %r: QEMU version not supported"
                 % (src, path, anchor))
    if after:
        at = t.index("\n", at) + 1
    texts[path] = t[:at] + new + t[at:]


# the choice: 'fdr' among the back-ends meson accepts
old = "choices: ['dtrace', 'ftrace', 'log', 'nop',"
if "'fdr'" not in text("meson_options.txt"):
    if old not in text("meson_options.txt"):
        sys.exit("apply.sh: %s/meson_options.txt: no trace_backends choices: "
                 "QEMU version not supported" % src)
    texts["meson_options.txt"] = text("meson_options.txt").replace(
        old, "choices: ['dtrace', 'fdr', 'ftrace', 'log', 'nop',", 1)

# libfdr: found with pkg-config; its headers seen by every compilation
edit("meson.build", "lttng = not_found",
     "fdr_trace = not_found\n"
     "if 'fdr' in get_option('trace_backends')\n"
     "  fdr_trace = dependency('fdr', required: true, method: 'pkg-config')\n"
     "  add_project_arguments('-isystem', fdr_trace.get_variable(pkgconfig: 'includedir'),\n"
     "                        language: ['c', 'cpp', 'objc'])\n"
     "endif\n", after=False)

# linked through libqemuutil, like lttng-ust for the ust back-end
edit("trace/meson.build", "trace_ss.add(files('control.c'))",
     "if 'fdr' in get_option('trace_backends')\n"
     "  trace_ss.add(fdr_trace)\n"
     "endif\n", after=False)

for path, t in texts.items():
    p = os.path.join(src, path)
    if open(p).read() != t:  # unchanged files keep their mtime
        open(p + ".fdr-tmp", "w").write(t)
        os.replace(p + ".fdr-tmp", p)
PY
# copied only when it changed: a new mtime would make ninja regenerate
# every trace header of an existing build
cmp -s "$here/fdr.py" "$src/scripts/tracetool/backend/fdr.py" ||
    cp "$here/fdr.py" "$src/scripts/tracetool/backend/fdr.py"
echo "apply.sh: fdr back-end added to $src"
