// SPDX-License-Identifier: MIT
// test-scope-load.mjs - the scope under load: scope-prog records 1,000,000
// events/s (--rate, catch-up pacing: its achieved rate is its own measure)
//   1. alone (registered with the same fdrd, no scope): the baseline;
//   2. under `fdr scope`, while three browsers (three Chromium processes)
//      chart scope:load.value and tail every event.
// Each run is measured over MEASURE_S seconds, from SIGUSR1 (sent once the
// program runs, and in run 2 once every page draws points) to SIGTERM.
// Checks: the achieved rate under the scope is at least 95% of the
// baseline's; the peak RSS of the `fdr scope` process (VmHWM) stays under
// RSS_LIMIT_MIB; every page keeps drawing new points during the measure
// and receives a thinned stream (far fewer points than events), and its
// tail (every event) says it is an even sample: "sampled: N lines (at most
// 100) of about M (more than 10,000) events in the last tenth of a
// second"; the
// scope's count of scope:load (plus its discarded count) is exactly what
// the program recorded. Prints the
// server's CPU per 1,000,000 events/s watched (the benchmark's figure).
import fs from "node:fs";
import path from "node:path";
import {spawn} from "node:child_process";
import {A, Session, check, log, waitFor, sleep, getJSON, pidAlive, procStatus, procCpu, main} from "./lib.mjs";

const RATE = 1000000;
const MEASURE_S = 5;
const RSS_LIMIT_MIB = 128;
const BROWSERS = 3;
const FIELD = "scope:load.value";

function report(file) {
  const t = fs.readFileSync(file, "utf8").trim().split(/\s+/);
  const o = {};
  for (let i = 0; i + 1 < t.length; i += 2)
    o[t[i]] = Number(t[i + 1]);
  return o;
}

main("scope-load", async () => {
  const s = new Session();
  s.startDaemon();

  // 1. baseline: the program alone
  const baseFile = path.join(s.work, "base.txt");
  const base = spawn(A.prog, ["--rate", String(RATE), "--report", baseFile], {env: s.env, stdio: "inherit"});
  s.procs.push(base);
  s.note(base.pid);
  const baseExit = new Promise((r) => base.on("exit", r));
  await sleep(1000);            // warm-up, as the scope run gets (not a proof)
  base.kill("SIGUSR1");
  await sleep(MEASURE_S * 1000);  // the measure's length
  base.kill("SIGTERM");
  await baseExit;
  const b = report(baseFile);
  log(`alone: ${b.rate.toFixed(0)} events/s, ${b.cpu_ns_per_event} ns CPU/event, longest gap ${b.max_gap_us} us`);
  check(b.rate > RATE * 0.9, `the program alone reaches ${b.rate} of ${RATE} events/s: this machine cannot run the test`);

  // 2. under the scope, three browsers watching
  const loadFile = path.join(s.work, "scope.txt");
  const sc = await s.scope(["--", A.prog, "--rate", String(RATE), "--report", loadFile]);
  const info = await getJSON(sc, "/api/info");
  s.note(info.pid);
  const pages = [];
  for (let i = 0; i < BROWSERS; i++) {
    const br = await s.browser();
    const p = await s.page(br, sc.url, {width: 1280, height: 800});
    pages.push(p);
  }
  for (const p of pages) {
    const box = p.page.locator(`input[data-field="${FIELD}"]`);
    await box.waitFor();
    if (!(await box.isChecked()))
      await box.check();
  }
  const lastT = (p) => p.page.evaluate((k) => {
    const l = window.fdrScope.lastPoints(k, 1);
    return l.length ? l[0][0] : 0;
  }, FIELD);
  for (const p of pages)
    await waitFor(async () => (await lastT(p)) > 0, "a browser charts " + FIELD);
  log(`${BROWSERS} browsers chart ${FIELD}`);

  // the measure
  const at0 = await Promise.all(pages.map(async (p) => ({
    t: await lastT(p),
    draws: await p.page.evaluate(() => window.fdrScope.draws),
    pts: await p.page.evaluate(() => window.fdrScope.pointsReceived),
  })));
  const cpu0 = procCpu(sc.proc.pid), dcpu0 = procCpu(s.daemonPid());
  process.kill(info.pid, "SIGUSR1");
  const m0 = Date.now();
  const seen = pages.map(() => new Set());
  const sampled = pages.map(() => null);  // the tail's line saying it is a sample
  while (Date.now() - m0 < MEASURE_S * 1000) {      // the measure's length
    for (let i = 0; i < pages.length; i++) {
      seen[i].add(Math.floor(await lastT(pages[i])));
      const note = await pages[i].page.locator("#tail-msg").textContent();
      const m = /^sampled: (\d+) lines of about ([\d,]+) events in the last tenth of a second, evenly$/.exec(note);
      if (m && Number(m[2].replace(/,/g, "")) > 10000 && Number(m[1]) <= 100)
        sampled[i] = note;
    }
    await sleep(250);
  }
  process.kill(info.pid, "SIGTERM");
  const cpu1 = procCpu(sc.proc.pid), dcpu1 = procCpu(s.daemonPid());
  const at1 = await Promise.all(pages.map(async (p) => ({
    t: await lastT(p),
    draws: await p.page.evaluate(() => window.fdrScope.draws),
    pts: await p.page.evaluate(() => window.fdrScope.pointsReceived),
  })));
  await waitFor(() => !pidAlive(info.pid), "scope-prog ends");
  await waitFor(() => fs.existsSync(loadFile) && fs.readFileSync(loadFile, "utf8").includes("\n"), "its report");
  const r = report(loadFile);
  const st = procStatus(sc.proc.pid);
  const hwm = st.VmHWM / 1048576;
  const wall = r.seconds;
  log(`under the scope: ${r.rate.toFixed(0)} events/s (${(100 * r.rate / b.rate).toFixed(2)}% of alone), ` +
      `${r.cpu_ns_per_event} ns CPU/event, longest gap ${r.max_gap_us} us`);
  log(`fdr scope: VmHWM ${hwm.toFixed(1)} MiB (limit ${RSS_LIMIT_MIB}), VmRSS ${(st.VmRSS / 1048576).toFixed(1)} MiB, ` +
      `CPU ${((cpu1 - cpu0) / wall * 100).toFixed(1)}% of a core for ${(r.rate / 1e6).toFixed(2)}M events/s watched ` +
      `by ${BROWSERS} browsers; fdrd CPU ${((dcpu1 - dcpu0) / wall * 100).toFixed(1)}%`);
  for (let i = 0; i < pages.length; i++) {
    const adv = at1[i].t - at0[i].t;
    const pps = (at1[i].pts - at0[i].pts) / wall;
    log(`browser ${i + 1}: newest point moved ${adv.toFixed(2)} s, ${at1[i].draws - at0[i].draws} draws, ` +
        `${pps.toFixed(0)} points/s received, ${seen[i].size} distinct seconds seen`);
    check(adv >= MEASURE_S / 2, `browser ${i + 1}'s chart moved ${adv} s during a ${MEASURE_S} s measure`);
    check(at1[i].draws > at0[i].draws + 5, `browser ${i + 1} drew ${at1[i].draws - at0[i].draws} times`);
    check(seen[i].size >= 3, `browser ${i + 1} showed ${seen[i].size} distinct seconds`);
    check(pps < r.rate / 20, `browser ${i + 1} got ${pps} points/s for ${r.rate} events/s: not thinned`);
    check(pages[i].errors.length === 0, `browser ${i + 1} console errors:\n` + pages[i].errors.join("\n"));
    check(sampled[i], `browser ${i + 1}'s tail never said it is a sample of more than 10,000 events per tenth of a second`);
    log(`browser ${i + 1}'s tail: "${sampled[i]}"`);
  }
  // the scope saw every event: its count of scope:load plus what it reports
  // discarded is what the program recorded
  const seen1 = await waitFor(async () => {
    const st1 = await getJSON(sc, "/api/events");
    const ev = st1.events.find((e) => e.id === "scope:load");
    return ev && ev.count + st1.discarded >= r.total && {count: ev.count, discarded: st1.discarded};
  }, "the scope's count of scope:load reaching the program's " + r.total, 60000);
  log(`the scope counted ${seen1.count} scope:load events and ${seen1.discarded} discarded; the program recorded ${r.total}`);
  check(seen1.count + seen1.discarded === r.total, `the scope counted ${seen1.count} + ${seen1.discarded} discarded, ` +
        `the program recorded ${r.total}`);
  check(r.rate >= 0.95 * b.rate, `under the scope the program achieved ${r.rate} events/s, alone ${b.rate}: ` +
        `${(100 - 100 * r.rate / b.rate).toFixed(2)}% less (limit 5%)`);
  check(hwm < RSS_LIMIT_MIB, `fdr scope's peak RSS ${hwm.toFixed(1)} MiB (limit ${RSS_LIMIT_MIB} MiB)`);
  console.log(`bench: scope server CPU ${((cpu1 - cpu0) / wall / (r.rate / 1e6) * 100).toFixed(1)}% of a core ` +
              `per 1,000,000 events/s watched (${BROWSERS} browsers)`);
  for (const p of pages)
    await p.ctx.close();
  await s.stopScope(sc);
});
