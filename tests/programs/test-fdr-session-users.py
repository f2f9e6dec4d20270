# SPDX-License-Identifier: MIT
"""test-fdr-session-users.py FDR FDRD SESSION_CLIENT WORKDIR SESSION_PROG CRASH_PROG -
fdr is closed to other local users (issue 26), with two real users made
for the test (useradd; removed after, even on failure): A is the victim,
B prepares A's paths in advance.

B owns a directory SHARED that anyone may write (0777, not sticky: the
kernel's fs.protected_symlinks does not apply there, so the refusals seen
are fdr's own), and a directory of its own, BDIR (0777), the target of
its links. In SHARED, B plants `mid` and `last`, symlinks to BDIR, and
makes `bdir`, a directory of its own.

  - A's `fdr create -o` SHARED/mid/out, SHARED/last, SHARED/bdir/out and
    `--file-buffers=SHARED/mid/buf` are refused with one line naming the
    component (common/pathwalk.c);
  - a link B plants after the trace was created (SHARED/late, A's output
    directory, not there yet at create): fdrd refuses it when it writes,
    says so in its log; A's program runs on;
  - A's `fdr snapshot -o` SHARED/mid/snap and SHARED/last: one line;
  - A's libfdr with FDR_OUTPUT=SHARED/mid/out or SHARED/last (no fdrd),
    and FDR_CRASH_DIR=SHARED/last (a real SIGSEGV): one line, nothing
    written;
  - in every case nothing is written in BDIR, and the links are intact;
  - A's own symlink in A's own directory (HOME/link -> HOME/real), and
    one in a sticky directory (A's link, nobody else can replace it):
    followed, the trace is where A asked;
  - root walks by the same rule: B's symlink in a sticky world-writable
    directory is refused for root's FDR_OUTPUT too;
  - B makes /tmp/fdr-<A's uid> before A's first fdr (no XDG_RUNTIME_DIR,
    no FDR_RUNDIR): A's `fdr create` says so in one line and starts fdrd in
    HOME/.fdr/run; A's program records into it (libfdr finds the same
    directory).
Skipped (77) when not run as root or without useradd."""
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402
c = h.c
s = h.Session(sys.argv)
prog, crash_prog = sys.argv[5], sys.argv[6]

if os.geteuid() != 0 or not shutil.which("useradd"):
    print("skipped: needs root and useradd")
    sys.exit(77)

tag = "%05d" % (os.getpid() % 100000)
A, B = "fdr26a" + tag, "fdr26b" + tag
base = tempfile.mkdtemp(prefix="fdr-users-")
os.chmod(base, 0o755)
made = []
pids = []


def cleanup():
    for pid in pids:  # A's fdrd (-d: not our child), by its pid
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for u in made:
        subprocess.run(["userdel", u], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(base, ignore_errors=True)
    squat = "/tmp/fdr-%d" % uid_a if made else None
    if squat and os.path.lexists(squat) and os.lstat(squat).st_uid == uid_b:
        shutil.rmtree(squat, ignore_errors=True)


uid_a = uid_b = -1
try:
    for u in (A, B):
        home = os.path.join(base, u)
        p = subprocess.run(["useradd", "-M", "-N", "-d", home, "-s", "/bin/sh", u],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        c.check(p.returncode == 0, "useradd %s: %s" % (u, p.stdout))
        made.append(u)
    uid_a, uid_b = pwd.getpwnam(A).pw_uid, pwd.getpwnam(B).pw_uid
    gid_a, gid_b = pwd.getpwnam(A).pw_gid, pwd.getpwnam(B).pw_gid

    def as_user(u):
        return ["setpriv", "--reuid=" + u, "--regid=%d" % pwd.getpwnam(u).pw_gid,
                "--clear-groups"]

    if subprocess.run(as_user(A) + ["test", "-x", s.fdr_bin]).returncode != 0:
        print("skipped: %s cannot reach %s" % (A, s.fdr_bin))
        sys.exit(77)

    def mkdir(path, uid, gid, mode):
        os.mkdir(path)
        os.chown(path, uid, gid)
        os.chmod(path, mode)
        return path

    home_a = mkdir(os.path.join(base, A), uid_a, gid_a, 0o755)
    home_b = mkdir(os.path.join(base, B), uid_b, gid_b, 0o755)
    shared = mkdir(os.path.join(base, "shared"), uid_b, gid_b, 0o777)
    bdir = mkdir(os.path.join(home_b, "bdir"), uid_b, gid_b, 0o777)
    sticky = mkdir(os.path.join(base, "sticky"), 0, 0, 0o1777)

    def plant(link, target=bdir):
        p = subprocess.run(as_user(B) + ["ln", "-s", target, link])
        c.check(p.returncode == 0, "B plants " + link)

    plant(os.path.join(shared, "mid"))
    plant(os.path.join(shared, "last"))
    subprocess.run(as_user(B) + ["mkdir", "-m", "0777", os.path.join(shared, "bdir")])

    env_a = dict(s.env, HOME=home_a, FDR_RUNDIR=os.path.join(home_a, "run"), USER=A)

    def run_a(args, env=None, stdin=None):
        e = dict(env_a)
        e.update(env or {})
        return subprocess.run(as_user(A) + list(args), env=e, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=120, input=stdin)

    def fdr_a(*args, env=None):
        return run_a([s.fdr_bin] + list(args), env)

    def refused(p, what, component):
        """one line on stderr naming the component, a failure status"""
        print("%s: %s" % (what, p.stderr.strip()))
        c.check(p.returncode != 0 and p.stderr.count("\n") == 1 and component + ":" in p.stderr,
                "%s: refused in one line naming %s: %d %r" % (what, component, p.returncode,
                                                              p.stderr))

    def bdir_empty(what):
        c.check(os.listdir(bdir) == [], "%s: nothing written in B's directory: %s"
                % (what, os.listdir(bdir)))
        for n in ("mid", "last"):
            c.check(os.readlink(os.path.join(shared, n)) == bdir, "%s: %s intact" % (what, n))

    # -- fdr create -o, --file-buffers ------------------------------------
    p = fdr_a("create", "t1", "-o", os.path.join(shared, "mid", "out"))
    refused(p, "create -o SHARED/mid/out", os.path.join(shared, "mid"))
    p = fdr_a("create", "t2", "-o", os.path.join(shared, "last"))
    refused(p, "create -o SHARED/last", os.path.join(shared, "last"))
    p = fdr_a("create", "t3", "-o", os.path.join(shared, "bdir", "out"))
    refused(p, "create -o SHARED/bdir/out", os.path.join(shared, "bdir"))
    p = fdr_a("create", "t4", "--file-buffers=" + os.path.join(shared, "mid", "buf"))
    refused(p, "create --file-buffers=SHARED/mid/buf", os.path.join(shared, "mid"))
    bdir_empty("fdr create")
    pids.append(int(open(os.path.join(home_a, "run", "fdrd.pid")).read()))

    # -- a link planted after create: fdrd refuses it when it writes ------
    late = os.path.join(shared, "late")
    p = fdr_a("create", "late", "-o", late)
    c.check(p.returncode == 0, "create -o SHARED/late (not there yet): %r" % p.stderr)
    fdr_a("enable", "late", "ses:tick")
    fdr_a("start", "late")
    plant(late)

    def record_a(n, env=None):
        """A's program records n ses:tick through fdrd: its exit status"""
        e = dict(env_a, FDR_DEBUG="1")
        e.update(env or {})
        q = subprocess.Popen(as_user(A) + [prog, "go", "1", str(n)], env=e,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        h.wait_route(q)
        q.stdin.write("go\n")
        q.stdin.close()
        q.stdout.read()
        return q.wait(timeout=120)

    c.check(record_a(100) == 0, "A's program runs on")
    log_a = os.path.join(home_a, "run", "fdrd.log")
    h.wait_for(lambda: late + ": a symlink" in open(log_a).read(),
               "fdrd's log line refusing SHARED/late", limit=60)
    bdir_empty("a link planted after create")
    fdr_a("destroy", "late")

    # -- fdr snapshot -o ---------------------------------------------------
    good = os.path.join(home_a, "out")
    fdr_a("create", "snap", "--overwrite", "-o", good)
    fdr_a("enable", "snap", "ses:tick")
    fdr_a("start", "snap")
    q = subprocess.Popen(as_user(A) + [prog, "go", "1", "100", "kill"],
                         env=dict(env_a, FDR_DEBUG="1"), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    h.wait_route(q)
    q.stdin.write("go\n")
    q.stdin.flush()
    c.check(h.line(q) == "done\n", "A's snapshot program recorded")
    for target, comp in (("mid/snap", "mid"), ("last", "last")):
        p = fdr_a("snapshot", "snap", "-o", os.path.join(shared, target))
        refused(p, "snapshot -o SHARED/" + target, os.path.join(shared, comp))
    ok = os.path.join(home_a, "snapshot")
    p = fdr_a("snapshot", "snap", "-o", ok)
    c.check(p.returncode == 0 and os.listdir(ok), "a snapshot where A may: %r" % p.stderr)
    q.kill()
    q.wait(timeout=120)
    bdir_empty("fdr snapshot")

    # -- libfdr: FDR_OUTPUT, FDR_CRASH_DIR ----------------------------------
    for target, comp in (("mid/out", "mid"), ("last", "last")):
        p = run_a([prog, "start"], env={"FDR_DAEMON": "off",
                                        "FDR_OUTPUT": os.path.join(shared, target)})
        warn = [x for x in p.stderr.splitlines() if os.path.join(shared, comp) + ":" in x]
        c.check(p.returncode == 0 and len(warn) == 1,
                "FDR_OUTPUT=SHARED/%s: one line naming it: %r" % (target, p.stderr))
    crash_env = {"FDR_DAEMON": "off", "FDR_CRASH_DIR": os.path.join(shared, "last"),
                 "ASAN_OPTIONS": "handle_segv=0:use_sigaltstack=0",
                 "TSAN_OPTIONS": "handle_segv=0"}
    p = run_a([crash_prog, "null"], env=crash_env)
    c.check(p.returncode == -signal.SIGSEGV and
            "could not write the crash snapshot in " + os.path.join(shared, "last") in p.stderr,
            "FDR_CRASH_DIR=SHARED/last: said, not written: %d %r" % (p.returncode, p.stderr[-400:]))
    bdir_empty("libfdr")

    # -- A's own links are followed ------------------------------------------
    real = os.path.join(home_a, "real")
    run_a(["mkdir", real])
    run_a(["ln", "-s", real, os.path.join(home_a, "link")])
    p = run_a([prog, "start"], env={"FDR_DAEMON": "off",
                                    "FDR_OUTPUT": os.path.join(home_a, "link", "t")})
    c.check(p.returncode == 0 and p.stderr == "" and os.listdir(os.path.join(real, "t")),
            "A's own link in A's own directory followed: %r" % p.stderr)
    real2 = os.path.join(home_a, "real2")
    run_a(["mkdir", real2])
    run_a(["ln", "-s", real2, os.path.join(sticky, "alink")])
    p = run_a([prog, "start"], env={"FDR_DAEMON": "off",
                                    "FDR_OUTPUT": os.path.join(sticky, "alink")})
    c.check(p.returncode == 0 and p.stderr == "" and os.listdir(real2),
            "A's own link in a sticky directory followed: %r" % p.stderr)

    # -- root too refuses B's link in a sticky world-writable directory -----
    plant(os.path.join(sticky, "blink"))
    e = dict(s.env, FDR_DAEMON="off", FDR_OUTPUT=os.path.join(sticky, "blink"))
    p = subprocess.run([prog, "start"], env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    c.check(p.returncode == 0 and os.path.join(sticky, "blink") + ":" in p.stderr,
            "root's FDR_OUTPUT through B's link in a sticky directory: %r" % p.stderr)
    bdir_empty("root")

    fdr_a("destroy", "snap")
    os.kill(pids[0], signal.SIGTERM)
    h.wait_for(lambda: not h.pid_alive(pids[0]), "A's first fdrd exits", limit=60)

    # -- a squatted /tmp/fdr-UID ---------------------------------------------
    squat = "/tmp/fdr-%d" % uid_a
    if os.path.lexists(squat):
        print("skipped the squat case: %s exists" % squat)
    else:
        p = subprocess.run(as_user(B) + ["mkdir", "-m", "0700", squat])
        c.check(p.returncode == 0, "B squats " + squat)
        env_sq = {k: v for k, v in env_a.items() if k != "FDR_RUNDIR"}
        run_sq = os.path.join(home_a, ".fdr", "run")
        p = subprocess.run(as_user(A) + [s.fdr_bin, "create", "sq", "-o",
                                         os.path.join(home_a, "sq")],
                           env=env_sq, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=120)
        print("squatted: " + p.stderr.strip())
        c.check(p.returncode == 0 and p.stderr.count("\n") == 1 and squat in p.stderr and
                run_sq in p.stderr, "A's fdr create with %s squatted: %d %r"
                % (squat, p.returncode, p.stderr))
        if os.path.exists(os.path.join(run_sq, "fdrd.pid")):
            pids.append(int(open(os.path.join(run_sq, "fdrd.pid")).read()))
        c.check(os.path.exists(os.path.join(run_sq, "fdrd.sock")), "fdrd in " + run_sq)
        for verb in (["enable", "sq", "ses:tick"], ["start", "sq"]):
            p = subprocess.run(as_user(A) + [s.fdr_bin] + verb, env=env_sq,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            c.check(p.returncode == 0, "fdr %s: %r" % (" ".join(verb), p.stderr))
        env_keep = env_a
        env_a = env_sq
        c.check(record_a(100) == 0, "A's program with the squatted directory")
        env_a = env_keep
        p = subprocess.run(as_user(A) + [s.fdr_bin, "destroy", "sq"], env=env_sq,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        c.check(p.returncode == 0, "destroy sq: %r" % p.stderr)
        dirs = os.listdir(os.path.join(home_a, "sq")) if os.path.isdir(
            os.path.join(home_a, "sq")) else []
        c.check(len(dirs) == 1 and h.bt_total(os.path.join(home_a, "sq", dirs[0])) == 100,
                "A's program recorded its 100 events through the fdrd of %s: %s"
                % (run_sq, dirs))
        os.kill(pids[-1], signal.SIGTERM)
        h.wait_for(lambda: not h.pid_alive(pids[-1]), "A's second fdrd exits", limit=60)
finally:
    cleanup()
c.finish()
