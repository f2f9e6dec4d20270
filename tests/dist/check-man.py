# SPDX-License-Identifier: MIT
"""check-man.py FDR FDRD FDR_GEN MANDIR SRCDIR - the manual pages that
dist/man.py made from docs/ (MANDIR, the build's) say what the programs do:

  - every verb `fdr help` lists has its page fdr-VERB(1), named in fdr(1),
    whose SYNOPSIS holds every option of the verb's usage line (`fdr help
    VERB`); fdrd(8) and fdr-gen(1) hold every option of their --help;
  - every environment variable libfdr reads (the "FDR_*" names of
    lib/recorder/config.c, its only getenv file) is an entry of
    fdr-environment(7): a .SS heading or a tagged paragraph's tag; every
    FDR_* variable fdr and fdrd read (getenv in programs/, daemon/) is
    named in fdr(1), fdrd(8) or a verb's page;
  - each page renders without one warning: `man --warnings=w -l` (man-db
    as a user reads it and as lintian checks, with every groff warning), and
    lexgrog (whatis) parses its NAME line."""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402

fdr, fdrd, gen, mandir, src = sys.argv[1:6]
env = dict(os.environ, LC_ALL="C.UTF-8", MANWIDTH="80")


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env, timeout=120)


def page(name):
    path = glob.glob(os.path.join(mandir, "man*", name + ".[1-8]"))
    c.check(len(path) == 1, "no page %s in %s" % (name, mandir))
    if not path:
        return ""
    with open(path[0]) as f:
        return f.read()


def synopsis(roff):
    m = re.search(r"^\.SH SYNOPSIS\n(.*?)^\.SH", roff, re.S | re.M)
    return m.group(1).replace("\\-", "-") if m else ""


def options(usage):
    return set(re.findall(r"(?:^|[\[ |(,])(--?[A-Za-z][A-Za-z0-9-]*)", usage))


def usage_lines(text):
    """The usage line of a --help, with its continuation lines."""
    m = re.search(r"usage:.*\n(( {7}.*\n)*)", text)
    return m.group(0) if m else ""


# ---- verbs ----------------------------------------------------------------------
verbs = re.findall(r"^  (\w+) ", run([fdr, "help"]).stdout, re.M)
c.check(len(verbs) >= 17, "fdr help lists %d verbs" % len(verbs))
top = page("fdr")
for v in verbs:
    roff = page("fdr-" + v)
    syn = synopsis(roff)
    c.check(("fdr %s" % v) in syn, "fdr-%s(1): SYNOPSIS %r lacks 'fdr %s'" % (v, syn, v))
    want = options(usage_lines(run([fdr, "help", v]).stdout))
    lack = sorted(want - options(syn))
    c.check(not lack, "fdr-%s(1): SYNOPSIS lacks %s (fdr help %s)" % (v, lack, v))
    c.check("fdr\\-%s\\fR(1)" % v in top, "fdr(1) does not name fdr-%s(1)" % v)
for prog, name in ((fdrd, "fdrd"), (gen, "fdr-gen")):
    h = run([prog, "--help"])
    want = options(usage_lines(h.stdout + h.stderr))
    lack = sorted(want - options(synopsis(page(name))))
    c.check(want and not lack, "%s: SYNOPSIS lacks %s (%s --help)" % (name, lack, name))

# ---- environment variables ------------------------------------------------------
with open(os.path.join(src, "lib/recorder/config.c")) as f:
    lib_vars = set(re.findall(r'"(FDR_[A-Z0-9_]+)"', f.read()))
c.check(len(lib_vars) >= 20, "config.c names %d variables" % len(lib_vars))
environ = page("fdr-environment")
entries = set()
lines = environ.split("\n")
for i, ln in enumerate(lines):
    if ln.startswith(".SS "):
        entries |= set(re.findall(r"FDR_[A-Z0-9_]+", ln))
    if ln == ".TP" and i + 1 < len(lines):
        entries |= set(re.findall(r"FDR_[A-Z0-9_]+", lines[i + 1]))
lack = sorted(lib_vars - entries)
c.check(not lack, "fdr-environment(7) has no entry for %s (lib/recorder/config.c)" % lack)
prog_vars = set()
for path in glob.glob(os.path.join(src, "programs/**/*.c"), recursive=True) + \
        glob.glob(os.path.join(src, "daemon/*.c")):
    with open(path) as f:
        prog_vars |= set(re.findall(r'getenv\("(FDR_[A-Z0-9_]+)"\)', f.read()))
pages = "".join(page(n) for n in ["fdr", "fdrd"] + ["fdr-" + v for v in verbs])
lack = sorted(v for v in prog_vars if v not in pages)
c.check(not lack, "%s, read by fdr or fdrd, in no page of theirs" % lack)

# ---- rendering ---------------------------------------------------------------------
paths = sorted(glob.glob(os.path.join(mandir, "man*", "*.[1-8]")))
c.check(len(paths) == len(verbs) + 5, "%d pages, wanted %d" % (len(paths), len(verbs) + 5))
for path in paths:
    r = run(["man", "--warnings=w", "-E", "UTF-8", "-l", path])  # groff -ww: all
    c.check(r.returncode == 0 and r.stderr == "" and "NAME" in r.stdout,
            "man -l %s: exit %d, warnings %r" % (path, r.returncode, r.stderr))
    w = run(["lexgrog", path])
    c.check(w.returncode == 0 and "parse failed" not in w.stdout,
            "lexgrog %s: %r" % (path, w.stdout))
c.finish()
