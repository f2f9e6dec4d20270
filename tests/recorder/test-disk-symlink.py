#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test-disk-symlink.py PROG OUTDIR - paths another user prepared.

First, by everyone: fdr_snapshot into a directory of our own holding a
stream_0 symlink to a file of ours: the file is unchanged, the link still
a link (fdr never writes through a symlink, even in its own directory).
Then as root (else skipped with 77). disk-prog pause prints its pid and
waits; then `nobody` (setpriv) prepares, in a shared sticky world-writable
directory: DIR/disk-prog-<pid>/ with metadata and stream_0 symlinks (the
FDR_OUTPUT trace directory), crash-<pid> as a symlink to a directory of
nobody's holding a metadata symlink, and snap/ with metadata and stream_0
symlinks (an fdr_snapshot directory). Every symlink points at a root-owned
0600 file. The program then execs itself (same pid) with FDR_OUTPUT and
FDR_CRASH_DIR set to the shared directory, records, calls fdr_snapshot on
snap/ and crashes with SIGSEGV. The root file must be unchanged, the
snapshot refused (-EPERM: snap/ is nobody's), and each refusal said in
one line."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fdrtest as c  # noqa: E402
check = c.check

prog = sys.argv[1]
env = {k: v for k, v in os.environ.items() if not k.startswith("FDR_")}
# Sanitizers would take the SIGSEGV from fdr's crash handler.
env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":handle_segv=0").lstrip(":")
env["TSAN_OPTIONS"] = (env.get("TSAN_OPTIONS", "") + ":handle_segv=0").lstrip(":")

# A directory of our own with a symlink where fdr puts a stream file (a
# stale link, a user's mistake; no other user needed, so run by everyone):
# fdr never writes through it (O_EXCL | O_NOFOLLOW, common/tracedir.c).
own = tempfile.mkdtemp(prefix="fdr-ownlink-")
try:
    precious = os.path.join(own, "precious")
    with open(precious, "w") as f:
        f.write("precious\n")
    snap = os.path.join(own, "snap")
    os.mkdir(snap)
    os.symlink(precious, os.path.join(snap, "stream_0"))
    p = subprocess.run([prog, "victim"], env=dict(env, DISK_SNAPSHOT=snap),
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == -signal.SIGSEGV, "own link: exit status %d, expected SIGSEGV (%s)"
          % (p.returncode, p.stderr[-300:]))
    with open(precious, "rb") as f:
        got = f.read()
    check(got == b"precious\n" and os.path.islink(os.path.join(snap, "stream_0")),
          "own link: fdr_snapshot wrote through the stream_0 symlink (%d bytes now) (%s %s)"
          % (len(got), p.stdout.strip(), p.stderr.strip()[-300:]))
finally:
    shutil.rmtree(own, ignore_errors=True)

if os.geteuid() != 0 or not shutil.which("setpriv"):
    print("skipped: needs root and setpriv")
    sys.exit(77)
root = tempfile.mkdtemp(prefix="fdr-symlink-")  # 0700, root's
shared = tempfile.mkdtemp(prefix="fdr-shared-")
os.chmod(shared, 0o1777)
try:
    secret = os.path.join(root, "secret")
    with open(secret, "w") as f:
        f.write("root's secret\n")
    os.chmod(secret, 0o600)
    env.update(DISK_OUTPUT=shared, DISK_CRASH_DIR=shared,
               DISK_SNAPSHOT=os.path.join(shared, "snap"))
    p = subprocess.Popen([prog, "pause"], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline())
    attack = """set -e
cd '{shared}'
mkdir disk-prog-{pid} mine snap
ln -s '{secret}' disk-prog-{pid}/metadata
ln -s '{secret}' disk-prog-{pid}/stream_0
ln -s '{secret}' mine/metadata
ln -s mine crash-{pid}
ln -s '{secret}' snap/metadata
ln -s '{secret}' snap/stream_0
""".format(shared=shared, pid=pid, secret=secret)
    r = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                        "sh", "-c", attack])
    check(r.returncode == 0, "nobody could not prepare the paths")
    out, err = p.communicate("go\n", timeout=120)
    print(out + err)
    check(p.returncode == -signal.SIGSEGV, "exit status %d, expected SIGSEGV" % p.returncode)
    with open(secret, "rb") as f:  # bytes: what was written through may be CTF
        check(f.read() == b"root's secret\n", "the root file was written through a symlink")
    st = os.stat(secret)
    check(st.st_uid == 0 and st.st_mode & 0o777 == 0o600, "the root file changed mode")
    # snap/ itself is nobody's, in a directory others can write: refused
    # before any file in it is looked at (-EPERM, common/pathwalk.c)
    check("snapshot=-1\n" in out, "fdr_snapshot into nobody's directory: %r" % out)
    lines = err.splitlines()
    one = [l for l in lines if "FDR_OUTPUT" in l]
    # The directory itself is refused (it is nobody's), not only the
    # symlinks in it: nothing of the trace goes into it.
    check(len(one) == 1 and "belongs to another user" in one[0],
          "FDR_OUTPUT refusal: %r" % one)
    pdir = os.path.join(shared, "disk-prog-%d" % pid)
    check(sorted(os.listdir(pdir)) == ["metadata", "stream_0"] and
          all(os.path.islink(os.path.join(pdir, f)) for f in os.listdir(pdir)),
          "files written into nobody's trace directory: %s" % os.listdir(pdir))
    one = [l for l in lines if "could not write the crash snapshot" in l]
    check(len(one) == 1 and "crash-%d" % pid in one[0], "crash dump refusal: %r" % one)
    check(not any(os.path.isfile(os.path.join(shared, "mine", f)) and
                  not os.path.islink(os.path.join(shared, "mine", f))
                  for f in os.listdir(os.path.join(shared, "mine"))),
          "a crash file was written into nobody's directory")
finally:
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(shared, ignore_errors=True)
c.finish()
