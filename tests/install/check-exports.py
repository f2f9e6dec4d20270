#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""check-exports.py LIBFDR_SO INCLUDE_DIR - libfdr.so exports its API and nothing else.

The exported (dynamic, defined) symbols of the shared library must be exactly
the names declared with FDR_EXTERN (public API) or FDR__EXTERN (what the
inline fast path and the macros of the public headers must reach) in the
installed headers, include/fdr/**.h. So a public function that lost its
FDR_EXTERN, or an internal one (registry, patterns, buffers...) that leaked
out of -fvisibility=hidden, fails the test; the soname must be libfdr.so.0.
"""
import glob
import os
import platform
import re
import subprocess
import sys


def declared(include_dir):
    names = {}
    decl = re.compile(r"\bFDR_?_?EXTERN\b([^;{]*?)(?:\(|;|__attribute__)", re.S)
    for path in glob.glob(os.path.join(include_dir, "fdr", "**", "*.h"), recursive=True):
        text = open(path).read()
        text = re.sub(r"#\s*define[^\n]*(\\\n[^\n]*)*", "", text)  # not in macros
        for m in decl.finditer(text):
            ids = re.findall(r"\b[A-Za-z_]\w*\b", m.group(1))
            if ids:
                names[ids[-1]] = os.path.relpath(path, include_dir)
    return names


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            name = parts[2].split("@")[0]
            # ASan builds add an ODR indicator for each exported global
            # (__odr_asan.<global>): count it as the global itself.
            if name.startswith("__odr_asan."):
                name = name[len("__odr_asan."):]
            syms.add(name)
    return syms


def main():
    lib, inc = sys.argv[1], sys.argv[2]
    want = declared(inc)
    got = exported(lib)
    fails = []
    if len(want) < 10 or "fdr_strerror" not in want or "fdr__reserve_slow" not in want:
        fails.append("header scan found only %s: the scan is broken" % sorted(want))
    # Declared for other architectures only (fastpath.h, fdr__now()).
    arch_only = {"fdr__now_fallback"} if platform.machine() in ("x86_64", "aarch64") else set()
    for s in sorted(got - set(want)):
        fails.append("exported but not declared FDR_EXTERN/FDR__EXTERN in a header: " + s)
    for s in sorted(set(want) - got - arch_only):
        fails.append("declared in %s but not exported: %s" % (want[s], s))
    for internal in ("fdr__rules_parse", "fdr__class_get", "fdr__registry_init",
                     "fdr__buf_get", "fdr__warn", "fdr__init"):
        if internal in got:
            fails.append("internal symbol exported: " + internal)
    dyn = subprocess.run(["readelf", "-d", lib], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    if "Library soname: [libfdr.so.0]" not in dyn:
        fails.append("soname is not libfdr.so.0")
    for f in fails:
        print("FAIL: " + f)
    if not fails:
        print("ok: %d symbols exported, all declared in the public headers" % len(got))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
