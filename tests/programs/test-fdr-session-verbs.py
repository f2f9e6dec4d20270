# SPDX-License-Identifier: MIT
"""test-fdr-session-verbs.py - the session verbs against a real fdrd: the
first verb starts fdrd (auto-start), then create / enable / disable /
filter / start / stop / destroy, each checked by value through
`fdr list --json` and `fdr status --json` (json.loads), plus the text
output of list and status. Args: fdr fdrd session-client workdir."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_helpers as h  # noqa: E402  (tests/programs/session_helpers.py)
c = h.c
s = h.Session(sys.argv)

# No fdrd yet: list and status say so, exit 0, and start nothing.
c.check(not os.path.exists(s.sock), "no socket before the first verb")
st = s.json("status", "--json")
c.check(st == {"running": False, "rundir": s.rundir}, "status without fdrd: %r" % st)
c.check(s.json("list", "--json") == {"running": False, "traces": []}, "list without fdrd")
c.check(s.fdr("list").stdout == "no fdrd running (%s)\n" % s.rundir, "list text without fdrd")
c.check(s.daemon_pid() == 0, "list/status started no fdrd")

# create starts fdrd (FDR_FDRD) and the trace exists with its defaults.
p = s.fdr("create", "t1")
c.check(p.stdout == "trace t1 created\n", "create output %r" % p.stdout)
pid = s.note_daemon()
c.check(pid > 0 and h.pid_alive(pid), "create started fdrd")
st = s.json("status", "--json")
c.check(st["running"] is True and st["pid"] == pid and st["rundir"] == s.rundir,
        "status: %r" % st)
c.check(st["traces"] == 1 and st["active"] == 0 and st["max_traces"] == 32, "status counts %r" % st)
t = s.traces()["t1"]
c.check(t["active"] is False and t["mode"] == "discard", "defaults %r" % t)
c.check(t["mask"] == 0xffffffff and t["mask_hex"] == "0xffffffff", "default mask %r" % t)
c.check(t["buffer_size"] == 1 << 20 and t["packet_size"] == 64 << 10, "default sizes %r" % t)
c.check(t["events"] == [], "no events selected at first")
c.check(t["output"].startswith(os.path.join(s.home, "fdr-traces", "t1-")), "default output %r" % t["output"])
stamp = t["output"].rsplit("t1-", 1)[1]
c.check(len(stamp) == 15 and stamp[8] == "-" and (stamp[:8] + stamp[9:]).isdigit(),
        "output stamp YYYYmmdd-HHMMSS: %r" % stamp)

# Options of create: -o relative made absolute, modes, sizes with suffixes.
cwd = os.path.join(s.work, "cwd")
os.makedirs(cwd)
e = dict(s.env)
p = subprocess.run([s.fdr_bin, "create", "t2", "-o", "out/here", "--overwrite",
                    "--buffer-size", "2M", "--packet-size", "16K"], env=e, cwd=cwd,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
c.check(p.returncode == 0, "create t2: %s" % p.stderr)
s.fdr("create", "t3", "--snapshot", "--packet-size", "1m", "-o", "/abs/dir")
s.fdr("create", "t4", "--buffer-size=8192", "--packet-size=4096", "--memory", "64M")
ts = s.traces()
c.check(list(ts) == ["t1", "t2", "t3", "t4"], "creation order %r" % list(ts))
c.check(ts["t2"]["output"] == os.path.join(cwd, "out/here"), "-o made absolute: %r" % ts["t2"]["output"])
c.check(ts["t2"]["mode"] == "overwrite" and ts["t2"]["buffer_size"] == 2 << 20
        and ts["t2"]["packet_size"] == 16 << 10, "t2 %r" % ts["t2"])
c.check(ts["t3"]["mode"] == "snapshot" and ts["t3"]["packet_size"] == 1 << 20
        and ts["t3"]["buffer_size"] == 4 << 20 and ts["t3"]["output"] == "/abs/dir",
        "t3 (buffer defaults to 4 packets) %r" % ts["t3"])
c.check(ts["t4"]["buffer_size"] == 8192 and ts["t4"]["packet_size"] == 4096
        and ts["t4"]["memory"] == 64 << 20, "t4 %r" % ts["t4"])
c.check(ts["t3"]["memory"] == 256 << 20, "default memory budget %r" % ts["t3"])

# enable / disable append, in order, normalised one rule per item.
s.fdr("enable", "t1", "net:*", "foo_?", "-bar")
s.fdr("disable", "t1", "net:rx", "baz")
s.fdr("enable", "t1", "a,b:c")
c.check(s.traces()["t1"]["events"] == ["net:*", "foo_?", "-bar", "-net:rx", "-baz", "a", "b:c"],
        "events %r" % s.traces()["t1"]["events"])
c.check(s.traces()["t2"]["events"] == [], "other traces untouched")

# filter: hex and decimal.
s.fdr("filter", "t1", "0x1f")
c.check(s.traces()["t1"]["mask"] == 0x1f, "mask 0x1f")
s.fdr("filter", "t1", "4294967295")
c.check(s.traces()["t1"]["mask"] == 0xffffffff, "mask decimal max")
s.fdr("filter", "t1", "0")
c.check(s.traces()["t1"]["mask"] == 0 and s.traces()["t1"]["mask_hex"] == "0x00000000", "mask 0")
s.fdr("filter", "t2", "0X80000001")
c.check(s.traces()["t2"]["mask"] == 0x80000001, "mask 0X80000001")

# start / stop.
c.check(s.fdr("start", "t1").stdout == "trace t1 started\n", "start output")
c.check(s.traces()["t1"]["active"] is True and s.traces()["t2"]["active"] is False, "t1 started")
s.fdr("start", "t2")
c.check(s.json("status", "--json")["active"] == 2, "2 active")
c.check(s.fdr("stop", "t1").stdout == "trace t1 stopped\n", "stop output")
c.check(s.traces()["t1"]["active"] is False, "t1 stopped")
c.check(s.json("status", "--json")["active"] == 1, "1 active")

# Text output of list and status.
out = s.fdr("list").stdout
c.check(out == s.fdr("list", "traces").stdout, "list = list traces")
c.check("t1  stopped  mode=discard mask=0x00000000 buffer=1M packet=64K memory=256M\n" in out, "list text: %r" % out)
c.check("t2  started  mode=overwrite mask=0x80000001 buffer=2M packet=16K memory=256M\n" in out, "list text t2")
c.check("    events: net:* foo_? -bar -net:rx -baz a b:c\n" in out, "list text events")
c.check("    events: (none)\n" in out, "list text no events")
out = s.fdr("status").stdout
c.check(out.startswith("fdrd running, pid %d, in %s\n" % (pid, s.rundir)), "status text %r" % out)
c.check("traces: 4 (1 started, at most 32)\n" in out, "status text counts %r" % out)
c.check(s.json("list", "processes", "--json") == {"running": True, "processes": []}, "no processes")
c.check(s.json("list", "providers", "--json") == {"running": True, "providers": []}, "no providers")
c.check(s.json("list", "events", "--json") == {"running": True, "events": []}, "no events")
c.check(s.fdr("list", "processes").stdout == "no processes\n", "list processes text")

# destroy.
c.check(s.fdr("destroy", "t1").stdout == "trace t1 destroyed\n", "destroy output")
c.check(list(s.traces()) == ["t2", "t3", "t4"], "t1 gone")
s.fdr("create", "t1")  # the name is free again
c.check(list(s.traces()) == ["t2", "t3", "t4", "t1"], "t1 again, last")
for n in ("t1", "t2", "t3", "t4"):
    s.fdr("destroy", n)
c.check(s.traces() == {}, "all destroyed")
c.check(s.json("status", "--json")["traces"] == 0, "status: 0 traces")

# JSON strings are escaped: an output directory with quotes, a backslash,
# a control byte and UTF-8.
odd = "/tmp/a\"b\\c\td\u00e9"
s.fdr("create", "odd", "-o", odd)
c.check(s.traces()["odd"]["output"] == odd, "escaped output %r" % s.traces()["odd"]["output"])
s.fdr("destroy", "odd")
c.check(s.daemon_pid() == pid, "one fdrd all along")
s.stop()
c.finish()
