// SPDX-License-Identifier: MIT
// lib.mjs - what the scope's browser tests share (not a test itself): the
// arguments ctest passes, a work directory of the test's own, a private
// fdrd (FDR_RUNDIR under it) killed at the end whatever happens, `fdr scope`
// started and its URL read from its first stdout line, headless Chromium
// (Debian's /usr/bin/chromium driven by playwright-core from web/), pages
// whose console errors are collected, traces read with bt2
// (tests/lib/tracecheck.py), and waits for states, never for times.
//
//   argv: FDR FDRD SCOPE_PROG WORKDIR WEBDIR TESTS_LIB_DIR
import {spawn, spawnSync} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {createRequire} from "node:module";

export const A = (() => {
  const [fdr, fdrd, prog, work, web, testlib] = process.argv.slice(2);
  if (!testlib) {
    console.error("usage: test-*.mjs FDR FDRD SCOPE_PROG WORKDIR WEBDIR TESTS_LIB_DIR");
    process.exit(2);
  }
  return {fdr, fdrd, prog, work, web, testlib};
})();

export const PYTHON = process.env.FDR_PYTHON || "/usr/bin/python3";
export const CHROMIUM = process.env.FDR_CHROMIUM || "/usr/bin/chromium";

export function check(cond, what) {
  if (!cond)
    throw new Error("check failed: " + what);
}

export function log(...a) {
  console.log("[" + ((performance.now() / 1000).toFixed(2)) + "s]", ...a);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls cond() (sync or async) until it returns a truthy value, which is
// returned. `ms` only bounds a runaway (a broken feature): generous, never
// the proof of anything.
export async function waitFor(cond, what, ms = 90000) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const v = await cond();
      if (v)
        return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end)
      throw new Error("timed out waiting for " + what + (last ? " (last error: " + last.message + ")" : ""));
    await sleep(50);
  }
}

// CLOCK_MONOTONIC in ns: node's hrtime is uv_hrtime, CLOCK_MONOTONIC on
// Linux (the clock scope-prog writes into scope:tick's mono field).
export const monoNs = () => process.hrtime.bigint();

// When process pid started (clock ticks since boot), or null: with the
// pid, who it is (pids wrap at 32768: a pid noted long ago may be another
// test's process now).
export function procStart(pid) {
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return st.slice(st.lastIndexOf(")") + 2).split(" ")[19];
  } catch (e) {
    return null;
  }
}

export function pidAlive(pid) {
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = st.slice(st.lastIndexOf(")") + 2).split(" ")[0];
    return state !== "Z" && state !== "X";
  } catch (e) {
    return false;
  }
}

export function procStatus(pid) {
  const out = {};
  try {
    for (const line of fs.readFileSync(`/proc/${pid}/status`, "utf8").split("\n")) {
      const m = /^(\w+):\s+(\d+) kB/.exec(line);
      if (m)
        out[m[1]] = Number(m[2]) * 1024;
    }
  } catch (e) { /* gone */ }
  return out;
}

// utime + stime of a process, in seconds
export function procCpu(pid) {
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;   // USER_HZ: 100 on Linux
  } catch (e) {
    return NaN;
  }
}

export class Session {
  constructor() {
    this.work = A.work;
    this.killLeftovers();
    fs.rmSync(this.work, {recursive: true, force: true});
    fs.mkdirSync(this.work, {recursive: true});
    this.rundir = path.join(this.work, "run");
    this.home = path.join(this.work, "home");
    fs.mkdirSync(this.home);
    this.pidsFile = path.join(this.work, "pids");
    this.pids = new Map();   // pid: its start time (procStart), killed at the end only if the same
    this.procs = [];
    this.browsers = [];
    const env = {};
    for (const [k, v] of Object.entries(process.env))
      if (!k.startsWith("FDR_") && k !== "XDG_RUNTIME_DIR")
        env[k] = v;
    Object.assign(env, {FDR_RUNDIR: this.rundir, FDR_FDRD: A.fdrd, HOME: this.home, LC_ALL: "C"});
    this.env = env;
    process.on("exit", () => this.killAll());
    for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"])
      process.on(sig, () => process.exit(1));
  }

  // A run killed by its TIMEOUT could not stop what it had started: every
  // pid it noted (fdrd, fdr scope, scope-prog, chromium) is killed if it is
  // still the same program.
  killLeftovers() {
    let lines = [];
    try {
      lines = fs.readFileSync(path.join(this.work, "pids"), "utf8").split("\n");
    } catch (e) {
      return;
    }
    for (const l of lines) {
      const [pid, exe] = l.split(" ");
      if (!pid || !pidAlive(Number(pid)))
        continue;
      try {
        if (path.basename(fs.readlinkSync(`/proc/${pid}/exe`)) === exe)
          process.kill(Number(pid), "SIGKILL");
      } catch (e) { /* gone */ }
    }
  }

  note(pid) {
    if (!pid || this.pids.has(pid))
      return;
    this.pids.set(pid, procStart(pid));
    let exe = "";
    try {
      exe = path.basename(fs.readlinkSync(`/proc/${pid}/exe`));
    } catch (e) { /* gone already */ }
    fs.appendFileSync(this.pidsFile, `${pid} ${exe}\n`);
  }

  killAll() {
    for (const b of this.browsers) {
      try {
        const p = b.process && b.process();
        if (p && p.pid)
          process.kill(p.pid, "SIGKILL");
      } catch (e) { /* gone */ }
    }
    for (const p of this.procs)
      if (p.exitCode === null && p.signalCode === null)
        try { p.kill("SIGKILL"); } catch (e) { /* gone */ }
    const d = this.daemonPid();
    try {
      if (d && fs.readlinkSync(`/proc/${d}/exe`) === fs.realpathSync(A.fdrd))
        this.note(d);
    } catch (e) { /* gone */ }
    for (const [pid, start] of this.pids)
      if (start !== null && procStart(pid) === start && pidAlive(pid))
        try { process.kill(pid, "SIGKILL"); } catch (e) { /* gone */ }
  }

  daemonPid() {
    try {
      return Number(fs.readFileSync(path.join(this.rundir, "fdrd.pid"), "utf8").trim()) || 0;
    } catch (e) {
      return 0;
    }
  }

  noteDaemon() {
    const pid = this.daemonPid();
    if (pid)
      this.note(pid);
    return pid;
  }

  startDaemon() {
    const p = spawnSync(A.fdrd, ["-d"], {env: this.env, encoding: "utf8", timeout: 120000});
    check(p.status === 0, `fdrd -d exited ${p.status}: ${p.stderr}`);
    const pid = this.noteDaemon();
    check(pid > 0, "fdrd -d wrote no pid file");
    return pid;
  }

  // `fdr scope ARGS...`; resolves once its first stdout line (the URL) is
  // read. Returns {proc, url, base, token, out(), err(), exited}.
  async scope(args, extraEnv = {}) {
    const env = Object.assign({}, this.env, extraEnv);
    const proc = spawn(A.fdr, ["scope", ...args], {env, stdio: ["ignore", "pipe", "pipe"]});
    this.procs.push(proc);
    this.note(proc.pid);
    let out = "", err = "";
    proc.stdout.setEncoding("utf8");
    proc.stderr.setEncoding("utf8");
    proc.stdout.on("data", (d) => { out += d; });
    proc.stderr.on("data", (d) => { err += d; });
    const exited = new Promise((r) => proc.on("exit", (code, sig) => r({code, sig})));
    const line = await waitFor(() => {
      if (proc.exitCode !== null || proc.signalCode !== null)
        throw new Error(`fdr scope ${args.join(" ")} ended (${proc.exitCode ?? proc.signalCode}) before printing its URL; stderr: ${err}`);
      const i = out.indexOf("\n");
      return i >= 0 ? out.slice(0, i) : null;
    }, "the URL line of fdr scope " + args.join(" "), 60000);
    const m = /^http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]{32})$/.exec(line);
    check(m, "fdr scope's first line is its URL: " + JSON.stringify(line));
    return {proc, url: line, base: `http://127.0.0.1:${m[1]}`, port: Number(m[1]), token: m[2],
            out: () => out, err: () => err, exited};
  }

  // SIGTERM; fdr scope must exit 0 with no sanitizer report on stderr
  async stopScope(sc) {
    if (sc.proc.exitCode === null && sc.proc.signalCode === null)
      sc.proc.kill("SIGTERM");
    const st = await sc.exited;
    check(st.code === 0, `fdr scope ended with ${JSON.stringify(st)}; stderr:\n${sc.err()}`);
    check(!/Sanitizer|runtime error:/.test(sc.err()), "fdr scope's stderr:\n" + sc.err());
    return st;
  }

  async browser() {
    const require = createRequire(path.join(A.web, "package.json"));
    let chromium;
    try {
      ({chromium} = require("playwright-core"));
    } catch (e) {
      throw new Error("playwright-core is not installed in " + A.web + " (scripts/deps.sh test runs npm ci there): " + e.message);
    }
    check(fs.existsSync(CHROMIUM), CHROMIUM + " is missing (scripts/deps.sh test installs Debian's chromium)");
    const b = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions"],
      timeout: 120000,
    });
    this.browsers.push(b);
    return b;
  }

  // A page of the scope in a new context of browser b. errors collects
  // console errors, uncaught exceptions and failed requests.
  async page(b, url, viewport = {width: 1280, height: 800}) {
    const ctx = await b.newContext({viewport, acceptDownloads: true});
    const page = await ctx.newPage();
    page.setDefaultTimeout(90000);
    const errors = [];
    page.on("console", (m) => {
      if (m.type() === "error")
        errors.push("console error: " + m.text());
    });
    page.on("pageerror", (e) => errors.push("page error: " + e.message));
    page.on("requestfailed", (r) => {
      // the event stream is cut when the page goes or the stream reopens
      if (!r.url().includes("/api/stream"))
        errors.push("request failed: " + r.url() + " " + (r.failure() || {}).errorText);
    });
    await page.goto(url);
    return {page, ctx, errors};
  }
}

// The page of a live `fdr scope` sc in a new browser, with the window "all"
// (what the page holds, not the last seconds of a run whose length is the
// machine's); the watched program's pid noted. {info, browser, page,
// errors, charts()}.
export async function livePage(s, sc) {
  const info = await getJSON(sc, "/api/info");
  s.note(info.pid);
  const browser = await s.browser();
  const {page, errors} = await s.page(browser, sc.url);
  await page.selectOption("#window", "0");
  return {info, browser, page, errors, charts: () => page.evaluate(() => window.fdrScope.charts())};
}

// The events of a trace directory (FDR_OUTPUT), read by bt2: objects with
// name, ts_ns (BigInt, ns since the epoch), tid, fields.
export function readTrace(dir) {
  const p = spawnSync(PYTHON, [path.join(A.testlib, "tracecheck.py"), "dump", dir],
                      {encoding: "utf8", maxBuffer: 1 << 30, timeout: 300000});
  check(p.status === 0, `tracecheck.py dump ${dir}: exit ${p.status}: ${p.stderr}`);
  return p.stdout.split("\n").filter(Boolean).map((l) => {
    // ns since the epoch do not fit a double exactly: keep them as BigInt
    const big = l.replace(/"(ts_ns|cycles|mono)": (\d+)/g, '"$1": "$2"');
    const e = JSON.parse(big);
    e.ts_ns = BigInt(e.ts_ns);
    if (e.fields && e.fields.mono !== undefined)
      e.fields.mono = BigInt(e.fields.mono);
    return e;
  });
}

// The time `fdr scope` gives an event of trace dir (read by readTrace):
// seconds since the epoch as a double, computed from the raw clock value
// and the process's clock (its metadata's freq, offset_s and offset) and
// rounded as programs/fdr/scope/series.c's seconds() rounds, so that a test
// compares the page's times with the trace's exactly. (At 1.8e9 s a double
// steps by 238 ns: distinct events a few ns apart get the same time, and
// Number(ts_ns) / 1e9 is another double for about a quarter of them.)
export function scopeTime(dir) {
  const clocks = new Map();
  const dirs = fs.existsSync(path.join(dir, "metadata")) ? [dir]
    : fs.readdirSync(dir).map((d) => path.join(dir, d)).filter((d) => fs.existsSync(path.join(d, "metadata")));
  for (const d of dirs) {
    const meta = fs.readFileSync(path.join(d, "metadata"), "latin1");
    const clock = meta.slice(meta.indexOf("clock {"));
    const num = (re) => {
      const m = re.exec(clock);
      check(m, `${d}/metadata: no ${re.source} in its clock`);
      return BigInt(m[1]);
    };
    const pid = /\bvpid = (\d+);/.exec(meta);
    check(pid, `${d}/metadata: no vpid in its env`);
    clocks.set(Number(pid[1]), {freq: num(/\tfreq = (\d+);/), offS: num(/\toffset_s = (-?\d+);/),
                                off: num(/\toffset = (\d+);/)});
  }
  return (e) => {
    const k = clocks.get(e.pid);
    check(k, `no clock for the event of pid ${e.pid} in ${dir}`);
    const v = BigInt(e.cycles) + k.off, q = v / k.freq;
    // (double)offset_s + (double)q + (double)(v - q * freq) / freq
    return Number(k.offS) + Number(q) + Number(v - q * k.freq) / Number(k.freq);
  };
}

// A multiset of points [t, v] (a Map from "t v" to a count): two events
// of a trace can have the same time and value.
export function pointCounts(points) {
  const m = new Map();
  for (const [t, v] of points) {
    const k = t + " " + v;
    m.set(k, (m.get(k) || 0) + 1);
  }
  return m;
}

export async function getJSON(sc, p) {
  const r = await fetch(sc.base + p + (p.includes("?") ? "&" : "?") + "token=" + sc.token);
  check(r.ok, `GET ${p}: HTTP ${r.status}`);
  return r.json();
}

// The test's body; prints PASS or the failure, exits 0 or 1.
export function main(name, body) {
  const t0 = Date.now();
  // below ctest's TIMEOUT (600 s): fail here, where the exit handler still
  // kills what the test started
  setTimeout(() => {
    console.error(`FAIL ${name}: still running after 540 s`);
    process.exit(1);
  }, 540000).unref();
  body().then(() => {
    log(`PASS ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    process.exit(0);
  }, (e) => {
    console.error(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
    process.exit(1);
  });
}
