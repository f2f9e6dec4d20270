# SPDX-License-Identifier: MIT
"""test-fdr-session-providers.py - fdrd's provider table, from real
processes (progs/session-client.c, on fdr_proto alone): two processes
registering the same provider get the same handle and a refcount of 2; a
provider differing only in long_size, or only in checksum, gets another
handle (same name); registering again in one process takes no second
reference; the pid fdrd lists for a process is the kernel's, not the one
it claims; references drop when a process exits normally and when it is
SIGKILLed, and a provider is freed at zero (gone from `fdr list providers
--json`; handles are never reused); unregister drops one; bad
registrations are refused. Args: fdr fdrd session-client workdir."""
import signal
import subprocess
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)

pid = s.start()


class Proc:
    def __init__(self, name):
        self.p = subprocess.Popen([s.client_bin, s.sock], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=s.env)
        s.pids.add(self.p.pid)
        c.check(self.cmd("process " + name) == "ok 0", "process registered")

    def cmd(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def provider(self, name, nevents, checksum, long_size):
        r = self.cmd("provider %s %d %d %d" % (name, nevents, checksum, long_size))
        c.check(r.startswith("ok "), "register %s: %r" % (name, r))
        return int(r.split()[1]) if r.startswith("ok ") else -1


def names():
    return [p["name"] for p in s.json("list", "processes", "--json")["processes"]]


def table():
    return {p["handle"]: p for p in s.providers()}


a = Proc("proc_a")
b = Proc("proc_b")
ha = a.provider("net", 4, 0x5eed, 8)
hb = b.provider("net", 4, 0x5eed, 8)
c.check(ha == hb and ha > 0, "same provider, same handle: %d %d" % (ha, hb))
t = table()
c.check(list(t) == [ha] and t[ha]["refcount"] == 2, "one entry, refcount 2: %r" % t)
e = t[ha]
c.check(e["name"] == "net" and e["nevents"] == 4 and e["checksum"] == 0x5eed and e["sizeof_long"] == 8
        and e["sizeof_int"] == 4 and e["sizeof_pointer"] == 8 and e["sizeof_size_t"] == 8
        and e["alignment"] == 8 and e["size"] == 48, "fields: %r" % e)
c.check(a.provider("net", 4, 0x5eed, 8) == ha and table()[ha]["refcount"] == 2,
        "registering again in one process: same handle, no second reference")
hl = b.provider("net", 4, 0x5eed, 4)
hc = b.provider("net", 4, 0x5eee, 8)
c.check(len({ha, hl, hc}) == 3, "long_size or checksum differ: other handles %d %d %d" % (ha, hl, hc))
t = table()
c.check(sorted(t) == sorted([ha, hl, hc]) and t[hl]["sizeof_long"] == 4 and t[hc]["checksum"] == 0x5eee
        and t[hl]["refcount"] == 1 and t[hc]["refcount"] == 1, "three entries: %r" % t)
hn = a.provider("disk", 2, 7, 8)
c.check(table()[hn]["refcount"] == 1, "disk by a")

# Processes: the kernel's pid, not the claimed one.
procs = {p["name"]: p for p in s.json("list", "processes", "--json")["processes"]}
c.check(procs["proc_a"]["pid"] == a.p.pid and procs["proc_a"]["claimed_pid"] == a.p.pid + 1000000,
        "kernel pid listed: %r" % procs["proc_a"])
c.check(procs["proc_a"]["providers"] == 2 and procs["proc_b"]["providers"] == 3, "providers per process")
c.check(procs["proc_a"]["ppid"] == os.getpid(), "ppid as claimed")
c.check(s.json("status", "--json")["processes"] == 2 and s.json("status", "--json")["providers"] == 4,
        "status counts")
ev = s.json("list", "events", "--json")["events"]
c.check({(x["provider"], x["nevents"], x["pattern"]) for x in ev}
        == {("net", 4, "net:event_*"), ("disk", 2, "disk:event_*")}, "list events: %r" % ev)

# Bad registrations.
c.check(a.cmd("provider 9net 4 1 8").startswith("error 22 bad provider name"), "bad name refused")
c.check(a.cmd("provider net 0 1 8") == "error 22 provider net: 0 events (1 to 65535)", "0 events refused")
c.check(a.cmd("provider net 4 1 3") == "error 22 provider net: sizes and alignment must be powers of two up to 16",
        "long size 3 refused")
c.check(a.cmd("unregister 999") == "error 2 provider handle 999 is not held by this process", "unknown handle")

# Normal exit: a's references drop; disk (only a's) is freed.
a.p.stdin.write("exit\n")
a.p.stdin.flush()
c.check(a.p.wait(timeout=120) == 0, "a exited 0")
# fdrd drops a connection's references when it closes it, in the same step
# as it removes the process: wait for that state, then look at the table.
h.wait_for(lambda: names() == ["proc_b"], "a's connection closed")
t = table()
c.check(hn not in t and t[ha]["refcount"] == 1, "after a's exit: disk freed, net 1: %r" % t)

# unregister drops one reference.
c.check(b.cmd("unregister %d" % hc) == "ok %d" % hc, "unregister")
c.check(hc not in table(), "unregistered provider freed")

# SIGKILL: the kernel hangs the socket up; b's references drop, all freed.
b.p.kill()
b.p.wait(timeout=120)
h.wait_for(lambda: names() == [], "b's connection closed")
c.check(table() == {}, "all freed after SIGKILL: %r" % table())

# Handles are never reused: a new registration gets a new one.
d = Proc("proc_d")
hd = d.provider("net", 4, 0x5eed, 8)
c.check(hd > max(ha, hl, hc, hn), "new handle %d after the old were freed" % hd)
d.p.send_signal(signal.SIGKILL)
d.p.wait(timeout=120)
h.wait_for(lambda: names() == [], "d's connection closed")
c.check(table() == {}, "freed after d's SIGKILL")
c.check(h.pid_alive(pid), "fdrd alive")
s.stop()
c.finish()
