# SPDX-License-Identifier: MIT
"""test-dist-completion.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG COMPLETION -
dist/bash-completion/fdr driven in a real bash against a real fdrd.

fdrd runs with traces web (started, ses:*) and other; a real program
(session-prog steer: events ses:tick and ses:mark, tunable gain) is
registered with it. For each command line the test sets COMP_WORDS,
COMP_CWORD, COMP_LINE and COMP_POINT as bash does (':' and '=' are word
breaks), calls _fdr and compares COMPREPLY with what the program itself
says: the verbs of `fdr help`, the options of `fdr help VERB`, the traces
of `fdr list`, the pid, events and tunables of `fdr control PID --json`.
Run with bash-completion's helpers loaded (as installed) and without
(the file alone). With no fdrd, a trace name completes to nothing."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs"))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)
prog, completion = sys.argv[5], sys.argv[6]
helpers = "/usr/share/bash-completion/bash_completion"
c.check(os.path.exists(helpers), "%s missing (Debian's bash-completion: scripts/deps.sh)"
        % helpers)


def comp_words(line):
    """COMP_WORDS and COMP_CWORD for line, split as readline does with the
    default COMP_WORDBREAKS (blanks, and : and = as words of their own)."""
    words = []
    for w in line.split():
        words += [p for p in re.split(r"([:=])", w) if p]
    if line.endswith(" "):
        words.append("")
    return words, len(words) - 1


def bash_quote(w):
    return "'" + w.replace("'", "'\\''") + "'"


def complete(lines, with_helpers=True):
    """{line: sorted COMPREPLY} for each command line (its first word is
    replaced by the fdr under test, as a user's ./fdr would be)."""
    script = ["set -u"] if not with_helpers else []
    if with_helpers:
        script.append("source %s" % bash_quote(helpers))
    script.append("source %s" % bash_quote(completion))
    for ln in lines:
        ln = s.fdr_bin + ln[len("fdr"):]
        words, cword = comp_words(ln)
        script += ["COMP_WORDS=(%s)" % " ".join(bash_quote(w) for w in words),
                   "COMP_CWORD=%d" % cword, "COMP_LINE=%s" % bash_quote(ln),
                   "COMP_POINT=%d" % len(ln), "COMPREPLY=()", "_fdr",
                   "printf '%s\\n' \"${COMPREPLY[@]}\"", "echo '@@end'"]
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", "\n".join(script)],
                       env=s.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    c.check(p.returncode == 0 and p.stderr == "", "bash: exit %d, stderr %r"
            % (p.returncode, p.stderr))
    outs = p.stdout.split("@@end\n")
    return {ln: sorted(x for x in o.split("\n") if x) for ln, o in zip(lines, outs)}


def expect(got, line, want):
    c.check(got[line] == sorted(want), "completing %r: %s, wanted %s"
            % (line, got[line], sorted(want)))


verbs = re.findall(r"^  (\w+) ", s.fdr("help").stdout, re.M)
c.check(len(verbs) >= 17, "fdr help lists %d verbs" % len(verbs))


def options(verb):
    text = s.fdr("help", verb).stdout
    usage = re.match(r"usage:.*\n(( {7}.*\n)*)", text).group(0)
    opts = set(re.findall(r"(?:^|[\[ |(,])(--?[A-Za-z][A-Za-z0-9-]*)", usage))
    for ln in text.splitlines():
        if re.match(r"^ +-", ln):
            opts |= set(re.findall(r"(?:^|[ ,])(--?[A-Za-z][A-Za-z0-9-]*)",
                                   " ".join(ln.split()[:2])))
    return opts


s.start()
s.fdr("create", "web", "-o", os.path.join(s.work, "web"))
s.fdr("enable", "web", "ses:*")
s.fdr("start", "web")
s.fdr("create", "other", "-o", os.path.join(s.work, "other"))
p = subprocess.Popen([prog, "steer"], env=s.env, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
s.pids.add(p.pid)
c.check(p.stdout.readline() == "ready\n", "session-prog steer: not ready")
# its state, once it reported its main module's events (fdrd keeps the last
# report; each call asks for a new one)
h.wait_for(lambda: (lambda r: r.returncode == 0 and any(
    e["event"] == "tick" for e in json.loads(r.stdout)["events"]))(
        s.run(["control", str(p.pid), "--json"])), "session-prog's events at fdrd", 60)
st = json.loads(s.fdr("control", str(p.pid), "--json").stdout)
events = sorted("%s:%s" % (e["provider"], e["event"]) for e in st["events"])
tunables = sorted(t["name"] + "=" for t in st["tunables"])
c.check("ses:tick" in events and "ses:mark" in events and tunables == ["gain="],
        "session-prog's state: %s %s" % (events, tunables))
pid = str(p.pid)

cases = ["fdr ", "fdr st", "fdr help ", "fdr start ", "fdr destroy o", "fdr create --",
         "fdr record -", "fdr export --format ", "fdr list ", "fdr control ",
         "fdr control %s --record " % pid, "fdr control %s --print -" % pid,
         "fdr control %s --record ses:t" % pid, "fdr control %s --record -ses:m" % pid,
         "fdr control %s --set " % pid, "fdr enable web ", "fdr enable web ses:",
         "fdr filter web ", "fdr scope --window 5 -"]
for mode in (True, False):
    got = complete(cases, mode)
    expect(got, "fdr ", verbs + ["help", "--version"])
    expect(got, "fdr st", [v for v in verbs if v.startswith("st")])
    expect(got, "fdr help ", verbs)
    expect(got, "fdr start ", ["other", "web"])
    expect(got, "fdr destroy o", ["other"])
    expect(got, "fdr create --", [o for o in options("create") if o.startswith("--")])
    expect(got, "fdr record -", options("record"))
    expect(got, "fdr export --format ", ["chrome", "perfetto"])
    expect(got, "fdr list ", ["events", "processes", "providers", "traces"])
    expect(got, "fdr control ", [pid])
    expect(got, "fdr control %s --record " % pid, events)
    expect(got, "fdr control %s --print -" % pid, ["-" + e for e in events])
    expect(got, "fdr control %s --set " % pid, tunables)
    expect(got, "fdr enable web ", events)
    expect(got, "fdr filter web ", [])
    expect(got, "fdr scope --window 5 -", options("scope"))
    if mode:  # ':' completes inside one word only with bash-completion's helpers
        expect(got, "fdr control %s --record ses:t" % pid, ["tick"])
        expect(got, "fdr control %s --record -ses:m" % pid, ["mark"])
        expect(got, "fdr enable web ses:", [e.split(":", 1)[1] for e in events])
p.stdin.close()
c.check(p.wait(timeout=120) == 0, "session-prog's exit status")
s.stop()
got = complete(["fdr start ", "fdr control "])
expect(got, "fdr start ", [])
expect(got, "fdr control ", [])
c.finish()
