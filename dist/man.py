#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""man.py - fdr's manual pages, made from the Markdown of docs/ (their one
source, so that a page and its doc cannot drift).

    man.py DOCS OUT VERSION     writes OUT/man1/*.1, man3/, man7/, man8/

The pages:
  fdr(1)              docs/cli.md, less its verb sections
  fdr-VERB(1)         the section headed `fdr VERB` of any docs/*.md (one
                      per verb: cli.md, tools.md, daemon.md, scope.md); its
                      first block, an indented code block, is the SYNOPSIS;
                      the NAME line is the verb's row in cli.md's table
  fdrd(8)             sections of docs/daemon.md (PAGES below)
  fdr-gen(1)          docs/api.md's fdr-gen section
  libfdr(3)           docs/api.md, less that section
  fdr-environment(7)  docs/environment.md
A verb section inside another page's text is left out there (it is a page
of its own). The date is SOURCE_DATE_EPOCH's (reproducible builds), else
the newest source's modification time. The roff is plain ASCII (anything
else becomes \\[uXXXX]) for man(7) with no preprocessor: tables become
tagged paragraphs. tests/install/check-man.py checks the result."""
import datetime
import os
import re
import sys

# name, section, NAME line, synopsis lines (None: from the source), sources:
# (file, heading title or None for the whole file)
PAGES = [
    ("fdrd", 8, "fdr's per-user daemon: traces of many programs, rings in shared memory",
     ["fdrd -f | -d"],
     [("daemon.md", t) for t in (
         None,  # the introduction (up to the first section)
         "Running it", "Instrumented programs", "When fdrd dies",
         "Run directory and security", "Traces", "Providers",
         "Exit statuses of the verbs")]),
    ("fdr-gen", 1, "turn QEMU-style trace-event files into a C header of trace_*() calls",
     None, [("api.md", "fdr-gen: trace-event files to C")]),
    ("libfdr", 3, "record events from C programs into per-thread rings of CTF packets",
     ["#include <fdr/fdr.h>", "cc prog.c $(pkg-config --cflags --libs fdr)"],
     [("api.md", "")]),
    ("fdr-environment", 7, "the environment variables of libfdr and the programs using it",
     None, [("environment.md", "")]),
]
SEE_ALSO = ["fdr(1)", "fdrd(8)", "libfdr(3)", "fdr-environment(7)", "fdr-gen(1)",
            "babeltrace2(1)"]
# a link whose text is a doc's file name names that doc's page instead
DOC_PAGES = {"cli.md": "fdr(1)", "daemon.md": "fdrd(8)", "api.md": "libfdr(3)",
             "environment.md": "fdr-environment(7)", "tools.md": "fdr(1)"}
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
VERB_HEADING = re.compile(r"^`fdr ([a-z]+)`$")


def read(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return re.sub(r"<!--.*?-->\n?", "", text, flags=re.S).split("\n")


def headings(lines):
    """[(index, level, title)] of the headings outside fenced code."""
    out, fence = [], False
    for i, ln in enumerate(lines):
        if ln.startswith("```"):
            fence = not fence
        m = None if fence else HEADING.match(ln)
        if m:
            out.append((i, len(m.group(1)), m.group(2)))
    return out


def section(lines, title):
    """(level, body lines) of the section headed title (None: what comes
    before the first ## heading; "": the whole file after its # title)."""
    hs = headings(lines)
    if title is None:
        start = hs[0][0] + 1 if hs and hs[0][1] == 1 else 0
        end = next((i for i, lv, _ in hs if lv >= 2), len(lines))
        return 1, lines[start:end]
    if title == "":
        start = hs[0][0] + 1 if hs and hs[0][1] == 1 else 0
        return 1, lines[start:]
    for k, (i, lv, t) in enumerate(hs):
        if t == title:
            end = next((j for j, lv2, _ in hs[k + 1:] if lv2 <= lv), len(lines))
            return lv, lines[i + 1:end]
    raise SystemExit("man.py: no section '%s'" % title)


def drop_verbs(lines, keep=None):
    """lines less every verb section but keep's (their own pages)."""
    out, skip_level, fence = [], 0, False
    for ln in lines:
        if ln.startswith("```"):
            fence = not fence
        m = None if fence else HEADING.match(ln)
        if m:
            lv = len(m.group(1))
            if skip_level and lv <= skip_level:
                skip_level = 0
            v = VERB_HEADING.match(m.group(2))
            if not skip_level and v and v.group(1) != keep:
                skip_level = lv
        if not skip_level:
            out.append(ln)
    return out


# ---- inline Markdown to roff --------------------------------------------------
def esc(text, code=False):
    text = text.replace("\\", "\\e")
    if code:
        text = text.replace("-", "\\-")
    return "".join(c if ord(c) < 128 else "\\[u%04X]" % ord(c) for c in text)


def inline(text):
    out, i = [], 0
    link = re.compile(r"\[([^\]]*)\]\(([^)]*)\)")
    while i < len(text):
        c = text[i]
        if c == "`":
            j = text.find("`", i + 1)
            if j > i:
                out.append("\\fB" + esc(text[i + 1:j], True) + "\\fR")
                i = j + 1
                continue
        if text.startswith("**", i):
            j = text.find("**", i + 2)
            if j > i:
                out.append("\\fB" + inline(text[i + 2:j]) + "\\fR")
                i = j + 2
                continue
        if c in "*_" and i + 1 < len(text) and text[i + 1] not in " *_" and \
                (i == 0 or not text[i - 1].isalnum()):
            j = text.find(c, i + 1)
            if j > i + 1 and text[j - 1] != " " and \
                    (j + 1 == len(text) or not text[j + 1].isalnum()):
                out.append("\\fI" + inline(text[i + 1:j]) + "\\fR")
                i = j + 1
                continue
        if c == "[":
            m = link.match(text, i)
            if m:
                words, target = m.group(1), m.group(2)
                doc = DOC_PAGES.get(words.strip("`"))
                out.append("\\fB%s\\fR(%s)" % tuple(doc.rstrip(")").split("("))
                           if doc else inline(words))
                if re.match(r"https?://", target) and target != words:
                    out.append(" <" + esc(target) + ">")
                i = m.end()
                continue
        out.append(esc(c))
        i += 1
    return "".join(out)


def text_line(s):
    s = s.strip()
    return "\\&" + s if s[:1] in (".", "'") else s


def cells(row):
    """The cells of a table row; a | inside `code` is not a separator."""
    out, cur, code = [], "", False
    for c in row.strip().strip("|") if row.strip().endswith("|") else row.strip()[1:]:
        if c == "`":
            code = not code
        if c == "|" and not code:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    out.append(cur.strip())
    return out


# ---- blocks ---------------------------------------------------------------------
def blocks(lines, base):
    """roff for Markdown body lines; headings of level base+1 become .SH,
    deeper ones .SS."""
    out, i, n = [], 0, len(lines)
    depth = 0  # .RS levels open for list items

    def close_lists():
        nonlocal depth
        while depth:
            out.append(".RE")
            depth -= 1

    def code(block):
        out.extend([".PP", ".RS 4", ".nf"])
        out.extend(("\\&" if b[:1] in (".", "'") else "") + esc(b.rstrip(), True)
                   for b in block)
        out.extend([".fi", ".RE"])

    while i < n:
        ln = lines[i]
        if not ln.strip() or ln.strip() == "---":
            i += 1
            continue
        m = HEADING.match(ln)
        if m:
            close_lists()
            lv = len(m.group(1))
            title = inline(m.group(2))
            if lv <= base + 1:
                out.append(".SH " + '"' + title.upper().replace('"', "") + '"')
            elif lv == base + 2:
                out.append(".SS " + '"' + title.replace('"', "") + '"')
            else:
                out.extend([".PP", "\\fB" + title + "\\fR"])
            i += 1
            continue
        if ln.startswith("```"):
            j = i + 1
            while j < n and not lines[j].startswith("```"):
                j += 1
            code(lines[i + 1:j])
            i = j + 1
            continue
        indent = len(ln) - len(ln.lstrip(" "))
        item = re.match(r"^(\s*)([-*]|\d+\.)\s+(.*)$", ln)
        if indent >= 4 and not item:
            j = i
            block = []
            while j < n and (lines[j].startswith("    ") or not lines[j].strip()):
                block.append(lines[j][4:] if lines[j].strip() else "")
                j += 1
            while block and not block[-1]:
                block.pop()
            code(block)
            i = j
            continue
        if ln.lstrip().startswith("|"):
            close_lists()
            rows = []
            while i < n and lines[i].lstrip().startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            head = rows[0]
            body = [r for r in rows[1:] if not all(re.match(r"^:?-+:?$", c) for c in r)]
            for r in body:
                out.extend([".TP", inline(r[0])])
                rest = []
                for k, cell in enumerate(r[1:], 1):
                    name = head[k] if k < len(head) else ""
                    rest.append((inline(name) + ": " if len(r) > 2 and name else "")
                                + inline(cell))
                out.append(text_line("; ".join(rest) if len(r) > 2 else rest[0]
                                     if rest else ""))
            continue
        if item:
            level = len(item.group(1)) // 2
            while depth > level:
                out.append(".RE")
                depth -= 1
            if level > depth:
                out.append(".RS 2")
                depth += 1
            mark = item.group(2)
            para = [item.group(3)]
            i += 1
            while i < n and lines[i].strip() and not HEADING.match(lines[i]) and \
                    not re.match(r"^\s*([-*]|\d+\.)\s+", lines[i]) and \
                    not lines[i].lstrip().startswith("|") and \
                    not (len(lines[i]) - len(lines[i].lstrip()) >= len(item.group(1)) + 6):
                para.append(lines[i].strip())
                i += 1
            out.append('.IP "%s" %d' % ("\\(bu" if mark in "-*" else mark,
                                        2 if mark in "-*" else 4))
            out.append(text_line(inline(" ".join(para))))
            continue
        # a paragraph; one indented like a list item's text continues it
        if depth and indent == 0:
            close_lists()
        para = []
        while i < n and lines[i].strip() and not HEADING.match(lines[i]) and \
                not lines[i].startswith("```") and not lines[i].lstrip().startswith("|") and \
                not re.match(r"^\s*([-*]|\d+\.)\s+", lines[i]) and \
                not (not para and lines[i].startswith("    ")):
            para.append(lines[i].strip())
            i += 1
        if not para:  # a line nothing above takes: print it as it is
            para.append(ln.strip())
            i += 1
        out.extend([".IP" if depth else ".PP", text_line(inline(" ".join(para)))])
    close_lists()
    return out


def page(name, sect, summary, synopsis, body, base, date, version, see):
    title = name.upper()
    out = ['.\\" Generated by dist/man.py from docs/*.md: edit those, not this file.',
           '.TH "%s" "%s" "%s" "fdr %s" "fdr manual"' % (title, sect, date, version),
           ".SH NAME", "%s \\- %s" % (esc(name, True), esc(summary))]
    if synopsis:
        out.extend([".SH SYNOPSIS", ".nf"])
        out.extend(text_line(esc(s, True)) for s in synopsis)
        out.append(".fi")
    rest = blocks(body, base)
    if rest and not rest[0].startswith(".SH"):
        out.append(".SH DESCRIPTION")
    out.extend(rest)
    out.extend([".SH SEE ALSO", ", ".join(
        "\\fB%s\\fR(%s)" % (esc(p.split("(")[0], True), p.split("(")[1].rstrip(")"))
        for p in see if p != "%s(%d)" % (name, sect))])
    return "\n".join(out) + "\n"


def first_code(body):
    """(synopsis lines, the rest) when the body starts with an indented
    code block."""
    i = 0
    while i < len(body) and not body[i].strip():
        i += 1
    syn = []
    while i < len(body) and body[i].startswith("    "):
        syn.append(body[i].strip())
        i += 1
    return syn, body[i:]


def main():
    docs, outdir, version = sys.argv[1:4]
    files = sorted(f for f in os.listdir(docs) if f.endswith(".md"))
    text = {f: read(os.path.join(docs, f)) for f in files}
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        epoch = max(os.path.getmtime(os.path.join(docs, f)) for f in files)
    date = datetime.datetime.fromtimestamp(int(float(epoch)),
                                           datetime.timezone.utc).strftime("%Y-%m-%d")
    # the verbs: their sections, and their NAME lines from cli.md's table
    summary = {}
    for ln in text["cli.md"]:
        m = re.match(r"^\|\s*\[`fdr ([a-z]+)`\]\([^)]*\)\s*\|\s*(.*?)\s*\|$", ln)
        if m:
            summary[m.group(1)] = m.group(2)
    verbs = {}
    for f in files:
        for _, lv, t in headings(text[f]):
            m = VERB_HEADING.match(t)
            if m:
                if m.group(1) in verbs:
                    raise SystemExit("man.py: fdr %s has two sections (%s, %s)"
                                     % (m.group(1), verbs[m.group(1)], f))
                verbs[m.group(1)] = f
    missing = sorted(set(summary) ^ set(verbs))
    if missing:
        raise SystemExit("man.py: verbs without both a section and a row in cli.md's "
                         "table: %s" % ", ".join(missing))
    see_verbs = ["fdr-%s(1)" % v for v in sorted(verbs)]
    pages = []
    for v, f in sorted(verbs.items()):
        lv, body = section(text[f], "`fdr %s`" % v)
        syn, body = first_code(drop_verbs(body))
        if not syn:
            raise SystemExit("man.py: %s: `fdr %s` does not start with its synopsis" % (f, v))
        pages.append(("fdr-" + v, 1, summary[v], syn, body, lv,
                      ["fdr(1)"] + SEE_ALSO[1:]))
    lv, body = section(text["cli.md"], "")
    syn, body = first_code(drop_verbs(body))
    pages.append(("fdr", 1, "a flight data recorder for C programs: record, steer and "
                  "read traces", syn, body, lv, SEE_ALSO[1:] + see_verbs))
    for name, sect, summ, syn, sources in PAGES:
        body, base = [], 1
        for f, t in sources:
            lv, b = section(text[f], t)
            b = drop_verbs(b)
            if name == "libfdr":
                b = cut(b, PAGES[1][4][0][1])  # fdr-gen's section: its own page
            if t and len(sources) > 1:
                b = ["#" * lv + " " + t] + b  # one section of several: a heading
            elif t:
                base = lv  # the page is this section: its subsections are .SH
            body += b + [""]
        if syn is None:  # the program's own usage line, quoted in the section
            syn = [ln.strip()[7:] for ln in body if ln.strip().startswith("usage: ")]
        pages.append((name, sect, summ, syn, body, base,
                      SEE_ALSO + (see_verbs if name == "fdrd" else [])))
    for name, sect, summ, syn, body, base, see in pages:
        d = os.path.join(outdir, "man%d" % sect)
        os.makedirs(d, exist_ok=True)
        data = page(name, sect, summ, syn, body, base, date, version, see)
        path = os.path.join(d, "%s.%d" % (name, sect))
        old = None
        if os.path.exists(path):
            with open(path) as f:
                old = f.read()
        if old != data:
            with open(path, "w") as f:
                f.write(data)


def cut(lines, title):
    """lines less the section headed title."""
    hs = headings(lines)
    for k, (i, lv, t) in enumerate(hs):
        if t == title:
            end = next((j for j, lv2, _ in hs[k + 1:] if lv2 <= lv), len(lines))
            return lines[:i] + lines[end:]
    return lines


if __name__ == "__main__":
    main()
