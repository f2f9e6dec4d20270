// SPDX-License-Identifier: MIT
// test-scope-live.mjs - `fdr scope -- scope-prog` watched and steered from a
// real headless Chromium, checked against the program's own trace
// (FDR_OUTPUT, read with bt2 once it has ended):
//   - the page loads with no console error, at 1280x800 and 390x844 (no
//     sideways scrolling; a screenshot of each kept in the work directory);
//   - the chart of scope:level.value ends with exactly the program's last
//     20 scope:level events (time and value);
//   - the page's cap on the points it keeps (the phone page's URL has
//     points=200, scope:level has 600): its chart's title says the oldest
//     were dropped (the desk page's, which keeps them all, does not), and
//     it holds exactly the program's last 160 to 200 scope:level events;
//   - moving the gain slider with the mouse sends at most one request per
//     100 ms and the final value; the program then reads that value (its
//     scope:gain events);
//   - once the program ended, an api/info answer of before (running),
//     held back until then, leaves the controls disabled;
//   - switching scope:tick's "recorded" off in the page: the program's
//     last scope:tick is at most 200 ms after the control request's answer,
//     on CLOCK_MONOTONIC (tick's mono field, node's hrtime), while its other
//     events go on;
//   - the print switch of scope:note: the program prints it live;
//   - the tail: a bad pattern shows the server's error, a good one filters;
//   - the stream cut (a TCP relay): "disconnected", then reconnected;
//   - zoom (drag), pan (button, shift+wheel), double-click reset, the
//     min/max/mean of the view, CSV and PNG downloads;
//   - controls recorded: the program's trace holds an fdr:tunable event
//     (name gain) for each value the slider sent, in order, the program's
//     gain reads the old value before the last one and the new after it;
//     an fdr:switch (scope:tick, record, off) between the click and the
//     answer (+200 ms) on CLOCK_MONOTONIC, then one for scope:note's print;
//   - replay: the page's first chart is the busiest numeric field (not
//     fdr:switch's, the first by name);
//     `fdr scope DIR` of that trace ends with the same points,
//     and shows gain's values over time (the chart of fdr:tunable.gain is
//     the trace's fdr:tunable events) and gain's last value, read only.
// The scope runs with --window 2: slices of 2/2048 s, so that the program's
// events (10 ms apart, never closer than 5 ms) are each kept exactly
// (docs/scope.md: what a chart shows).
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import {A, Session, check, log, waitFor, monoNs, readTrace, getJSON, pidAlive, main} from "./lib.mjs";

const LEVEL = "scope:level.value";
const GAIN = "scope:gain.value";
const WAVE = "scope:wave.x";
const N = 20;
// scope:level stops after LEVEL_MAX loops (the program goes on): fewer
// points than the chart's width in pixels, so that the history a replay
// sends in one message is not thinned however long the test runs
const LEVEL_MAX = 600;
// the phone page's cap on the points it keeps per series: scope:level's
// 600 points pass it
const PHONE_POINTS = 200;

function chartLocator(page, field) {
  return page.locator(".chart", {has: page.locator(".chart-title", {hasText: field})});
}

async function chartInfo(page, field) {
  const cs = await page.evaluate(() => window.fdrScope.charts());
  return cs.find((c) => c.fields.includes(field));
}

// the trace's last n events named `name` as [[t_ns (BigInt), value]]
function lastEvents(events, name, n) {
  return events.filter((e) => e.name === name).slice(-n).map((e) => [e.ts_ns, e.fields.value]);
}

// Same values, same times within 1 ms: live, the scope converts the
// clock with the frequency known so far, the trace's metadata has the one
// calibrated at its end (docs/trace-format.md, Clock): 2 to 40 us apart
// after seconds here (printed). One thread's events are at least 5 ms
// apart: no other event is that close, and no two share a time (a double
// of ~1.8e9 s steps by 238 ns), so the page's times rise strictly (unlike
// scope-replay's square wave, whose events are ns apart).
const TIME_TOLERANCE_NS = 1000000;
function samePoints(page, trace, what) {
  check(page.length === trace.length, `${what}: ${page.length} points on the page, ${trace.length} in the trace`);
  let worst = 0;
  for (let i = 1; i < page.length; i++)
    check(page[i][0] > page[i - 1][0], `${what}: points ${i - 1} and ${i} on the page are ` +
          `(${page[i - 1]}) and (${page[i]}): held twice, or out of order`);
  for (let i = 0; i < page.length; i++) {
    const dt = Math.abs(page[i][0] * 1e9 - Number(trace[i][0]));
    worst = Math.max(worst, dt);
    check(dt < TIME_TOLERANCE_NS && page[i][1] === trace[i][1],
          `${what}: point ${i} is (${page[i][0]}, ${page[i][1]}) on the page, ` +
          `(${Number(trace[i][0]) / 1e9}, ${trace[i][1]}) in the trace`);
  }
  log(`${what}: ${page.length} points, same values, times within ${(worst / 1000).toFixed(1)} us`);
}

async function noSidewaysScroll(page, width) {
  const w = await page.evaluate(() => document.documentElement.scrollWidth);
  check(w <= width + 1, `the page is ${w} px wide in a ${width} px window`);
}

main("scope-live", async () => {
  const s = new Session();
  s.startDaemon();
  const out = path.join(s.work, "trace");
  const sc = await s.scope(["--window", "2", "--", A.prog, "--period-us", "10000", "--level-max", String(LEVEL_MAX)],
                          {FDR_OUTPUT: out});
  log("scope at", sc.url);
  const info = await getJSON(sc, "/api/info");
  check(info.mode === "live" && info.running && info.pid > 0, "api/info: " + JSON.stringify(info));
  check(info.control, "api/info says no control: " + JSON.stringify(info));
  s.note(info.pid);

  const browser = await s.browser();
  const desk = await s.page(browser, sc.url, {width: 1280, height: 800});
  const page = desk.page;
  await waitFor(() => page.evaluate(() => window.fdrScope && window.fdrScope.ready), "first points drawn");
  log("page ready");
  // the window "all": scope:level stops after LEVEL_MAX loops while the
  // test goes on for as long as the machine takes (the other events go
  // on), so a window of seconds would soon show none of it
  await page.selectOption("#window", "0");

  // the event list: scope:level with its numeric field; plot it
  const box = page.locator(`input[data-field="${LEVEL}"]`);
  await box.waitFor();
  if (!(await box.isChecked()))
    await box.check();
  const wbox = page.locator(`input[data-field="${WAVE}"]`);
  if (!(await wbox.isChecked()))
    await wbox.check();
  await waitFor(async () => ((await chartInfo(page, LEVEL)) || {}).points >= 10, "points in the level chart");
  await waitFor(() => page.locator(`input[data-what="recorded"][data-event="scope:tick"]`).isChecked(),
                "scope:tick shows as recorded");

  // a phone-sized window too, which keeps at most PHONE_POINTS points per
  // series (its URL's points=), with a chart of scope:level
  const phone = await s.page(browser, sc.url + "&points=" + PHONE_POINTS, {width: 390, height: 844});
  await waitFor(() => phone.page.evaluate(() => window.fdrScope && window.fdrScope.ready), "phone page ready");
  const pbox = phone.page.locator(`input[data-field="${LEVEL}"]`);
  if (!(await pbox.isChecked()))
    await pbox.check();

  // ---- the slider: drag gain from 5 towards 42 with the mouse
  const gainPlot = await chartInfo(page, GAIN);
  if (!gainPlot)
    await page.locator(`input[data-field="${GAIN}"]`).check();
  const slider = page.locator('[data-tunable="gain"] input[type=range]');
  await slider.scrollIntoViewIfNeeded();
  const sb = await slider.boundingBox();
  const posOf = (v) => sb.x + 8 + (sb.width - 16) * v / 100;   // thumb travel (16 px thumb)
  const sent = [];
  let inFlight = 0, maxInFlight = 0;
  const isControl = (r) => r.url().includes("/api/control") && r.method() === "POST";
  const onReq = (r) => {
    if (!isControl(r))
      return;
    sent.push({at: Date.now(), body: r.postData()});
    maxInFlight = Math.max(maxInFlight, ++inFlight);
  };
  const onDone = (r) => {
    if (isControl(r))
      inFlight--;
  };
  // Each answer held back 250 ms (more than the 100 ms between two
  // requests of a drag), so that a page that sends the next before the
  // last one's answer has two on the wire, whatever the machine's speed.
  const ctl = (u) => u.pathname === "/api/control";
  const slow = async (route) => {
    await new Promise((r) => setTimeout(r, 250));
    await route.continue().catch(() => {}); // unrouted meanwhile: it went on without us
  };
  await page.route(ctl, slow);
  // every tunable value the page sends, to the end (the change event's
  // final value may follow the drag's same last value once it is answered)
  const tunableSent = [];
  page.on("request", (r) => {
    if (isControl(r) && (r.postData() || "").includes("what=tunable"))
      tunableSent.push(r.postData());
  });
  page.on("request", onReq);
  page.on("requestfinished", onDone);
  page.on("requestfailed", onDone);
  const y = sb.y + sb.height / 2;
  const dragStart = Date.now();
  await page.mouse.move(posOf(5), y);
  await page.mouse.down();
  for (let i = 1; i <= 30; i++)
    await page.mouse.move(posOf(5 + (37 * i) / 30), y, {steps: 2});
  await page.mouse.up();
  const dragMs = Date.now() - dragStart;
  const want = Number(await slider.inputValue());
  check(want !== 5 && want >= 20 && want <= 60, "the slider moved: its value is " + want);
  await waitFor(() => sent.length && sent[sent.length - 1].body.includes("value=" + want) && sent,
                "the final slider value sent", 30000);
  page.off("request", onReq);
  page.off("requestfinished", onDone);
  page.off("requestfailed", onDone);
  await page.unroute(ctl, slow);
  // one at a time: requests in parallel could be applied out of order
  check(maxInFlight === 1, `${maxInFlight} tunable requests in flight at once`);
  const gainReqs = sent.filter((r) => r.body.includes("what=tunable"));
  check(gainReqs.length >= 2, `${gainReqs.length} tunable requests while dragging`);
  check(gainReqs.length <= dragMs / 100 + 3,
        `${gainReqs.length} tunable requests in a ${dragMs} ms drag (at most one per 100 ms, and the last)`);
  log(`slider: gain -> ${want} (${gainReqs.length} requests in a ${dragMs} ms drag)`);
  // the program reads it: its scope:gain events, as the page shows them
  await waitFor(async () => {
    const p = await page.evaluate((k) => window.fdrScope.lastPoints(k, 1), GAIN);
    return p.length && p[0][1] === want;
  }, "the program's scope:gain at " + want);
  log("the program reads gain =", want);

  // screenshots (the program running, its charts moving)
  // (the phone's first chart is the busiest field's: level, tick, gain and
  // wave go at one rate, so any of them)
  await waitFor(async () => ((await phone.page.evaluate(() => window.fdrScope.charts()))[0] || {}).points >= 10,
                "points on the phone page");
  const shotDesk = path.join(s.work, "scope-1280x800.png");
  const shotPhone = path.join(s.work, "scope-390x844.png");
  await page.screenshot({path: shotDesk});
  await phone.page.screenshot({path: shotPhone});
  await noSidewaysScroll(page, 1280);
  await noSidewaysScroll(phone.page, 390);
  console.log("screenshot: " + shotDesk);
  console.log("screenshot: " + shotPhone);

  // ---- switch scope:tick off
  const tick = page.locator('input[data-what="recorded"][data-event="scope:tick"]');
  await tick.scrollIntoViewIfNeeded();
  const answer = page.waitForResponse((r) => r.url().includes("/api/control") && r.request().method() === "POST");
  const t0 = monoNs();
  await tick.click();
  const resp = await answer;
  const t1 = monoNs();
  const t1Wall = Date.now() / 1000;
  check(resp.status() === 200, "the switch's request answered " + resp.status() + " " + (await resp.text()));
  check((resp.request().postData() || "").includes("what=record") &&
        (resp.request().postData() || "").includes("on=0"), "the switch sent " + resp.request().postData());
  log(`switch off: request answered in ${Number(t1 - t0) / 1e6} ms`);
  await waitFor(async () => {
    const st = await getJSON(sc, "/api/events");
    const ev = st.events.find((e) => e.id === "scope:tick");
    return ev && ev.recorded === false;
  }, "the server reports scope:tick not recorded");
  // the program goes on: scope:gain up to 0.8 s after the switch (the
  // page's times are the trace clock's, Unix time)
  const gainAt = async () => (await page.evaluate((k) => window.fdrScope.lastPoints(k, 1), GAIN))[0];
  await waitFor(async () => (await gainAt())[0] > t1Wall + 0.8, "scope:gain 0.8 s after the switch");
  check(!(await page.locator(`input[data-what="recorded"][data-event="scope:tick"]`).isChecked()),
        "the switch shows off");

  // ---- the stream drops: a page that reaches the scope through a TCP
  // relay of ours, cut (open connections reset, new ones refused) until the
  // page says "disconnected", then let through again: it reconnects by
  // itself and its chart moves on
  let cut = false;
  const socks = new Set();
  const relay = net.createServer((c) => {
    if (cut)
      return c.resetAndDestroy();
    const u = net.connect(sc.port, "127.0.0.1");
    socks.add(c);
    socks.add(u);
    c.pipe(u);
    u.pipe(c);
    const end = () => { c.destroy(); u.destroy(); socks.delete(c); socks.delete(u); };
    c.on("error", end); u.on("error", end); c.on("close", end); u.on("close", end);
  });
  await new Promise((r) => relay.listen(0, "127.0.0.1", r));
  const relayed = await s.page(browser, sc.url.replace(":" + sc.port + "/", ":" + relay.address().port + "/"));
  await waitFor(() => relayed.page.evaluate(() => window.fdrScope.ready), "the relayed page's first points");
  cut = true;
  for (const c of socks)
    c.resetAndDestroy();
  await waitFor(async () => /^disconnected/.test(await relayed.page.locator("#conn").textContent()),
                "the page says disconnected");
  // the first chart is the busiest field's (scope:level, tick, gain and wave
  // go at one rate): whichever it is
  const FIRST = await relayed.page.evaluate(() => window.fdrScope.charts()[0].keys[0]);
  const tCut = await relayed.page.evaluate((k) => window.fdrScope.lastPoints(k, 1)[0][0], FIRST);
  cut = false;
  await waitFor(async () => (await relayed.page.locator("#conn").textContent()) === "connected", "the page reconnects");
  await waitFor(() => relayed.page.evaluate(([k, t]) => window.fdrScope.lastPoints(k, 1)[0][0] > t + 0.3, [FIRST, tCut]),
                "the relayed chart moves on after the reconnection");
  // while cut, the browser reports the failed stream connections; nothing else
  const other = relayed.errors.filter((e) => !/ERR_(CONNECTION|EMPTY_RESPONSE|NETWORK)|api\/(stream|info)/.test(e));
  check(other.length === 0, "console errors of the relayed page:\n" + other.join("\n"));
  log(`stream cut: "disconnected" shown, reconnected, chart moving (${relayed.errors.length} network messages while cut)`);
  await relayed.ctx.close();
  relay.close();

  // ---- the tail: a bad pattern shows the server's error; a good one
  // shows only the matching events
  const tailFilter = page.locator("#tail-filter");
  await tailFilter.fill("scope:[");
  await waitFor(async () => /unterminated/.test(await page.locator("#tail-msg").textContent()),
                "the server's error about a bad tail pattern");
  await tailFilter.fill("scope:gain");
  await waitFor(async () => {
    const lines = (await page.locator("#tail").textContent()).split("\n").filter(Boolean);
    return lines.length >= 5 && lines.every((l) => / scope:gain value=\d+$/.test(l));
  }, "tail lines of scope:gain only");
  // (the line may say the tail is a sample: a busy moment of the reader)
  const tailMsg = await page.locator("#tail-msg").textContent();
  check(!/unterminated/.test(tailMsg) && !(await page.locator("#tail-msg.bad").count()),
        "the tail's error cleared: " + tailMsg);
  log("tail: bad pattern reported, filter applied");

  // ---- the print switch: the program prints scope:note live (on its
  // stderr, which is fdr scope's)
  check(!/scope:note text=/.test(sc.err()), "scope:note printed before its switch");
  const prn = page.locator('input[data-what="printed"][data-event="scope:note"]');
  await prn.scrollIntoViewIfNeeded();
  await prn.click();
  await waitFor(() => /scope:note text=(hello|scope with spaces|h\u00e9llo)\n/.test(sc.err()),
                "the program prints scope:note live");
  log("print switch: the program prints scope:note");

  // ---- the program ends (SIGTERM: its trace is written whole)
  // One of the page's api/info polls is answered while the program runs
  // and that answer held back (page.route) until the page showed the end:
  // a late answer that says running changes nothing.
  let heldInfo = null;
  await page.route("**/api/info?*", async (route) => {
    if (heldInfo)
      return route.continue();
    heldInfo = {route: null};
    heldInfo.resp = await route.fetch();
    heldInfo.route = route;
  });
  await waitFor(() => heldInfo && heldInfo.route, "a poll of api/info answered (held back)");
  check((await heldInfo.resp.json()).running, "the held api/info answer says running");
  process.kill(info.pid, "SIGTERM");
  await waitFor(() => !pidAlive(info.pid), "scope-prog ends");
  await waitFor(async () => !(await getJSON(sc, "/api/info")).running, "api/info: not running");
  await waitFor(async () => (await page.locator("#running").textContent()) === "ended", "the header says ended");
  // no control of a program that is gone: every switch and tunable disabled, with a line
  await waitFor(async () => (await page.locator("#events-note").textContent()).includes("has ended"),
                "the line saying the program has ended");
  const enabled = await page.evaluate(() =>
    [...document.querySelectorAll("#events input[data-what], #tunables input")].filter((e) => !e.disabled).length);
  check(enabled === 0, `${enabled} switches or tunables still enabled once the program ended`);
  const answers = await page.evaluate(() => window.fdrScope.infoAnswers);
  await heldInfo.route.fulfill({response: heldInfo.resp});
  await waitFor(async () => (await page.evaluate(() => window.fdrScope.infoAnswers)) > answers,
                "the late api/info answer handled");
  const late = await page.evaluate(() =>
    [...document.querySelectorAll("#events input[data-what], #tunables input")].filter((e) => !e.disabled).length);
  const run = await page.locator("#running").textContent();
  check(late === 0 && run === "ended",
        `a late api/info answer (running): the header says ${run}, ${late} switches or tunables enabled`);
  await page.unroute("**/api/info?*");
  const events = readTrace(out);
  log(`trace: ${events.length} events`);

  // switch-off timing on CLOCK_MONOTONIC
  const ticks = events.filter((e) => e.name === "scope:tick");
  check(ticks.length > 0, "ticks in the trace");
  const before = ticks.filter((e) => e.fields.mono < t0).length;
  check(before > 10, `${before} ticks before the switch`);
  const lastTick = ticks[ticks.length - 1].fields.mono;
  const afterAnswer = Number(lastTick - t1) / 1e6;
  const afterClick = Number(lastTick - t0) / 1e6;
  log(`last scope:tick: ${afterClick.toFixed(1)} ms after the click, ${afterAnswer.toFixed(1)} ms after the answer`);
  check(afterAnswer <= 200, `the program recorded scope:tick ${afterAnswer} ms after the switch's answer (limit 200 ms)`);
  // the same on the trace clock: its offset from CLOCK_MONOTONIC (from the
  // ticks, which carry both) places the other events; scope:level went on
  // (a tick's time is taken after its mono field: a thread preempted in
  // between only makes the difference larger, by as long as the machine
  // kept it off a CPU. So the two clocks are compared by the smallest
  // difference of the first and of the last third of the ticks: the same
  // within 1 ms when they run at the same rate, whatever the load)
  const diffs = ticks.map((e) => e.ts_ns - e.fields.mono);
  const minOf = (a) => a.reduce((x, y) => (y < x ? y : x));
  const third = Math.max(1, Math.floor(diffs.length / 3));
  const drift = Number(minOf(diffs.slice(-third)) - minOf(diffs.slice(0, third))) / 1e6;
  check(Math.abs(drift) < 1, `trace clock - CLOCK_MONOTONIC drifts by ${drift} ms over the ticks`);
  const off = minOf(diffs);
  const lateGains = events.filter((e) => e.name === "scope:gain" && e.ts_ns - off > t1 + 400000000n).length;
  check(lateGains >= 20, `${lateGains} scope:gain events 0.4 s after the switch`);
  const lateTicks = events.filter((e) => e.name === "scope:tick" && e.ts_ns - off > t1 + 200000000n).length;
  check(lateTicks === 0, `${lateTicks} scope:tick events on the trace clock 200 ms after the switch`);

  // the gain the program read
  const gains = events.filter((e) => e.name === "scope:gain").map((e) => e.fields.value);
  check(gains[0] === 5, "gain starts at its default 5, not " + gains[0]);
  check(gains[gains.length - 1] === want, `the program's last gain is ${gains[gains.length - 1]}, the slider ${want}`);

  // ---- the controls, recorded in the program's trace (fdr's own events)
  const own = events.filter((e) => e.name.startsWith("fdr:"));
  const tunEv = own.filter((e) => e.name === "fdr:tunable");
  const sentValues = tunableSent.map((b) => Number(new URLSearchParams(b).get("value")));
  // the final value may be sent twice (the last move, then the release:
  // the second once the first is answered, which may be after the test
  // stopped listening): a value set again is the same change
  const once = (a) => a.filter((x, i) => i === 0 || JSON.stringify(x) !== JSON.stringify(a[i - 1]));
  check(JSON.stringify(once(tunEv.map((e) => [e.fields.name, e.fields.value]))) ===
        JSON.stringify(once(sentValues.map((v) => ["gain", v]))),
        `fdr:tunable events ${JSON.stringify(tunEv.map((e) => e.fields))}, the slider sent ${sentValues}`);
  // the program's gain around the change to the final value (the page may
  // send it twice: the last move, then the release): the value before,
  // then the new one (but one read in flight either side of the change)
  let k = tunEv.length - 1;
  while (k > 0 && tunEv[k - 1].fields.value === want)
    k--;
  const tWant = tunEv[k].ts_ns;
  const prev = k > 0 ? tunEv[k - 1].fields.value : 5;
  const gainEv = events.filter((e) => e.name === "scope:gain");
  check(gainEv.filter((e) => e.ts_ns > tWant && e.fields.value !== want).length <= 1 &&
        gainEv.some((e) => e.ts_ns > tWant && e.fields.value === want) &&
        gainEv.filter((e) => e.ts_ns < tWant && e.fields.value === want).length <= 1,
        `fdr:tunable gain=${want} is not between the program's gains ${prev} and ${want}`);
  const sw = own.filter((e) => e.name === "fdr:switch");
  check(JSON.stringify(sw.map((e) => [e.fields.event, e.fields.what, e.fields.on])) ===
        JSON.stringify([["scope:tick", "record", 0], ["scope:note", "print", 1]]),
        "fdr:switch events " + JSON.stringify(sw.map((e) => e.fields)));
  check(own.indexOf(sw[0]) > own.indexOf(tunEv[tunEv.length - 1]), "the switch before the slider's values");
  const swMono = Number(sw[0].ts_ns - off - t0) / 1e6;
  check(swMono > -1 && sw[0].ts_ns - off < t1 + 200000000n,
        `fdr:switch scope:tick off at ${swMono} ms after the click, the answer after ${Number(t1 - t0) / 1e6} ms`);
  log(`controls recorded: ${tunEv.length} fdr:tunable (gain, the slider's values), fdr:switch ` +
      `scope:tick off ${swMono.toFixed(1)} ms after the click, scope:note printed`);

  // ---- the chart's last points are the program's last events
  const lastLevel = lastEvents(events, "scope:level", 1)[0];
  const levelState = async () => {
    const [shown, held] = await page.evaluate(([k, n]) => [window.fdrScope.lastPoints(k, n), window.fdrScope.held(k, n)],
                                              [LEVEL, N]);
    const f = (p) => p.length + " points" + (p.length ? ` up to ${p[p.length - 1][1]}` : "");
    return {shown, text: `the chart shows ${f(shown)}, the page holds ${f(held)}`};
  };
  try {
    await waitFor(async () => {
      const p = (await levelState()).shown;
      return p.length === N && p[N - 1][1] === lastLevel[1];
    }, `the chart's last ${N} points, up to the program's last value ${lastLevel[1]}`);
  } catch (e) {
    throw new Error(e.message + ": " + (await levelState()).text);
  }
  const livePoints = await page.evaluate(([k, n]) => window.fdrScope.lastPoints(k, n), [LEVEL, N]);
  samePoints(livePoints, lastEvents(events, "scope:level", N), "live chart vs trace");
  log(`the live chart's last ${N} points are the program's last ${N} scope:level events`);
  const deskTitle = await chartLocator(page, LEVEL).first().locator(".chart-title").textContent();
  check(!/dropped/.test(deskTitle), `the desk page's chart holds ${LEVEL_MAX} points and says: ${deskTitle}`);

  // ---- the phone page's cap (points=200): past it the chart's title says
  // that the oldest points were dropped, and what the page keeps is the
  // newest: the program's last K scope:level events (160 <= K <= 200: it
  // cuts to 80% of the cap)
  const phoneHeld = () => phone.page.evaluate((k) => window.fdrScope.held(k, 1e9), LEVEL);
  await waitFor(async () => {
    const h = await phoneHeld();
    return h.length && h[h.length - 1][1] === lastLevel[1];
  }, `the phone page's last scope:level point, the program's last value ${lastLevel[1]}`);
  const kept = await phoneHeld();
  check(kept.length >= 0.8 * PHONE_POINTS && kept.length <= PHONE_POINTS,
        `the phone page keeps ${kept.length} points of ${LEVEL} (points=${PHONE_POINTS})`);
  samePoints(kept, lastEvents(events, "scope:level", kept.length), `the phone page's ${LEVEL} (points=${PHONE_POINTS})`);
  const phoneTitle = await chartLocator(phone.page, LEVEL).first().locator(".chart-title").textContent();
  check(phoneTitle.includes(`the oldest points dropped: ${PHONE_POINTS} kept per series`),
        "the phone page's chart title: " + phoneTitle);
  log(`points=${PHONE_POINTS}: the phone page keeps the last ${kept.length} of ${LEVEL_MAX} and says "${phoneTitle}"`);

  // ---- zoom, pan, reset, statistics, CSV, PNG
  // the 10 s window, up to the program's end: scope:wave's points cover
  // it (its stream was reopened by the tail's filter: the page holds what
  // the server kept, 4,096 points, 40 s of wave), whereas "all" spans the
  // whole run, however long the machine made it
  await page.selectOption("#window", "10");
  const lc = chartLocator(page, WAVE);
  await lc.scrollIntoViewIfNeeded();
  const before0 = await waitFor(async () => {
    const c = await chartInfo(page, WAVE);
    return Math.abs(c.xmax - c.xmin - 10) < 1e-6 && c;
  }, "the 10 s window");
  const ob = await lc.locator(".u-over").boundingBox();
  await page.mouse.move(ob.x + ob.width * 0.3, ob.y + ob.height / 2);
  await page.mouse.down();
  await page.mouse.move(ob.x + ob.width * 0.6, ob.y + ob.height / 2, {steps: 6});
  await page.mouse.up();
  await waitFor(() => page.evaluate(() => window.fdrScope.paused), "paused by the zoom");
  const zoomed = await chartInfo(page, WAVE);
  const w0 = before0.xmax - before0.xmin, w1 = zoomed.xmax - zoomed.xmin;
  check(Math.abs(w1 / w0 - 0.3) < 0.05, `zoom to 30% of the view: ${w1} s of ${w0} s`);
  // statistics of the visible window = those of the CSV's rows
  const csvText = await page.evaluate((id) => window.fdrScope.csv(id), zoomed.id);
  const rows = csvText.trim().split("\n");
  check(rows[0] === "time_s," + WAVE, "CSV header: " + rows[0]);
  const vals = rows.slice(1).map((r) => Number(r.split(",")[1]));
  const times = rows.slice(1).map((r) => Number(r.split(",")[0]));
  check(vals.length > 5, `${vals.length} CSV rows in the zoomed view`);
  check(times.every((t) => t >= zoomed.xmin - 1e-6 && t <= zoomed.xmax + 1e-6), "CSV rows within the view");
  const statCells = await lc.locator(`tr[data-series="${WAVE}"] td.num`).allTextContents();
  const [sLast, sMin, sMax, sMean, sN] = statCells;
  const mean = vals.reduce((a, b) => a + b, 0) / vals.length;
  // the page shows 4 decimals (or 4 digits when tiny)
  const near = (a, b) => Math.abs(Number(a) - b) <= 1e-3 * Math.max(1, Math.abs(b)) + 1e-4;
  check(near(sMin, Math.min(...vals)) && near(sMax, Math.max(...vals)) && Number(sN) === vals.length &&
        near(sMean, mean) && near(sLast, vals[vals.length - 1]) && Math.max(...vals) - Math.min(...vals) > 0.01,
        `view statistics ${statCells.join(" ")} vs the CSV's min ${Math.min(...vals)} max ${Math.max(...vals)} mean ${mean} n ${vals.length}`);
  // the CSV download is that text
  const [csvDl] = await Promise.all([page.waitForEvent("download"), lc.locator("button", {hasText: "CSV"}).click()]);
  const csvPath = path.join(s.work, "wave.csv");
  await csvDl.saveAs(csvPath);
  check(fs.readFileSync(csvPath, "utf8") === csvText, "the downloaded CSV is the view's");
  const [pngDl] = await Promise.all([page.waitForEvent("download"), lc.locator("button", {hasText: "PNG"}).click()]);
  const pngPath = path.join(s.work, "wave.png");
  await pngDl.saveAs(pngPath);
  const png = fs.readFileSync(pngPath);
  const dims = await page.evaluate((id) => window.fdrScope.pngSize(id), zoomed.id);
  check(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), "the PNG download is a PNG");
  check(png.readUInt32BE(16) === dims[0] && png.readUInt32BE(20) === dims[1] && png.length > 2000,
        `PNG ${png.readUInt32BE(16)}x${png.readUInt32BE(20)} (${png.length} bytes), chart canvas ${dims}`);
  // pan: the button moves the view half its width back; shift+wheel 10% on
  await page.click("#pan-left");
  const panned = await chartInfo(page, WAVE);
  check(Math.abs((zoomed.xmin - panned.xmin) / w1 - 0.5) < 0.01 && Math.abs(panned.xmax - panned.xmin - w1) < 1e-6,
        `pan left: [${panned.xmin}, ${panned.xmax}] from [${zoomed.xmin}, ${zoomed.xmax}]`);
  // (the click on the toolbar may have scrolled the page: where is the chart now)
  await lc.locator(".u-over").scrollIntoViewIfNeeded();
  const ob2 = await lc.locator(".u-over").boundingBox();
  await page.mouse.move(ob2.x + ob2.width / 2, ob2.y + ob2.height / 2);
  await page.keyboard.down("Shift");
  await page.mouse.wheel(0, 100);
  await page.keyboard.up("Shift");
  await waitFor(async () => (await chartInfo(page, WAVE)).xmin > panned.xmin, "shift+wheel pans");
  const wheeled = await chartInfo(page, WAVE);
  check(Math.abs((wheeled.xmin - panned.xmin) / w1 - 0.1) < 0.01, `shift+wheel: ${wheeled.xmin - panned.xmin} s of ${w1}`);
  // double-click: back to the live window (the zoom had paused it)
  await page.mouse.dblclick(ob2.x + ob2.width / 2, ob2.y + ob2.height / 2);
  await waitFor(() => page.evaluate(() => !window.fdrScope.paused), "double-click resumes");
  const reset = await chartInfo(page, WAVE);
  check(Math.abs(reset.xmax - reset.xmin - w0) < 1e-6, `reset to the ${w0} s window: ${reset.xmax - reset.xmin}`);
  log("zoom, pan, reset, statistics, CSV and PNG checked");

  check(desk.errors.length === 0, "console errors (1280x800):\n" + desk.errors.join("\n"));
  check(phone.errors.length === 0, "console errors (390x844):\n" + phone.errors.join("\n"));
  await desk.ctx.close();
  await phone.ctx.close();
  const st = await s.stopScope(sc);
  log("fdr scope ended:", JSON.stringify(st));

  // ---- replay of the program's trace
  const rp = await s.scope([out]);
  const rinfo = await getJSON(rp, "/api/info");
  check(rinfo.mode === "replay" && !rinfo.control, "replay api/info: " + JSON.stringify(rinfo));
  const rep = await s.page(browser, rp.url, {width: 1280, height: 800});
  // the chart the page opens by itself: the busiest numeric field (the
  // largest count in a replay, ties by name), not the first by name (here
  // fdr:switch's field on, 2 points, or fdr:tunable's)
  const first = await waitFor(async () => (await rep.page.evaluate(() => window.fdrScope.charts()))[0],
                              "the replay's first chart");
  const rev = (await getJSON(rp, "/api/events")).events
    .filter((e) => e.count > 0 && e.fields.some((f) => f.numeric))
    .sort((a, b) => b.count - a.count || a.id.localeCompare(b.id));
  const busiest = rev[0].id + "." + rev[0].fields.find((f) => f.numeric).name;
  const byName = rev.slice().sort((a, b) => a.id.localeCompare(b.id))[0];
  check(JSON.stringify(first.fields) === JSON.stringify([busiest]) && byName.count < rev[0].count,
        `the replay's first chart is ${first.fields}, the busiest field ${busiest} (${rev[0].count} events), ` +
        `the first by name ${byName.id} (${byName.count})`);
  log(`the first chart: ${busiest} (${rev[0].count} events), not ${byName.id} (${byName.count})`);
  await rep.page.selectOption("#window", "0");
  const rb = rep.page.locator(`input[data-field="${LEVEL}"]`);
  await rb.waitFor();
  if (!(await rb.isChecked()))
    await rb.check();
  await waitFor(() => rep.page.evaluate(() => window.fdrScope.done), "the replay's end (done)");
  check(await rep.page.locator('input[data-what="recorded"][data-event="scope:tick"]').isDisabled(),
        "switches are read-only in a replay");
  // the tunables' values over time: fdr:tunable's field gain, charted
  const TUN = "fdr:tunable.gain";
  await rep.page.locator(`input[data-field="${TUN}"]`).check();
  const tunTrace = tunEv.map((e) => [e.ts_ns, e.fields.value]);
  await waitFor(async () => (await rep.page.evaluate(([k, n]) => window.fdrScope.lastPoints(k, n),
                                                     [TUN, tunTrace.length])).length === tunTrace.length,
                `the replay's chart of ${TUN} with ${tunTrace.length} points`);
  samePoints(await rep.page.evaluate(([k, n]) => window.fdrScope.lastPoints(k, n), [TUN, tunTrace.length]),
             tunTrace, "replayed " + TUN + " vs the trace's fdr:tunable");
  const rg = rep.page.locator('[data-tunable="gain"] input').first();
  check(Number(await rg.inputValue()) === want && (await rg.isDisabled()),
        `the replay's tunable gain: ${await rg.inputValue()}, read only`);
  // the replay knows the values set, not the program's default (5)
  const rdef = await rep.page.locator('[data-tunable="gain"] .default').textContent();
  check(rdef === "first set " + tunEv[0].fields.value, `the replay's tunable gain says "${rdef}"`);
  await waitFor(async () => {
    const p = await rep.page.evaluate((k) => window.fdrScope.lastPoints(k, 1), LEVEL);
    return p.length && p[0][1] === lastLevel[1];
  }, "the replayed chart's last point");
  const replayPoints = await rep.page.evaluate(([k, n]) => window.fdrScope.lastPoints(k, n), [LEVEL, N]);
  const levelCount = events.filter((e) => e.name === "scope:level").length;
  if (levelCount > 4000) {
    // a slow machine ran the program long: the replay's series filled up
    // (4,096 points) and was thinned to min/max pairs; every point is still
    // one of the program's events, the last one the last event
    const byValue = new Map(events.filter((e) => e.name === "scope:level").map((e) => [e.fields.value, e.ts_ns]));
    for (const [t, v] of replayPoints)
      check(byValue.has(v) && Math.abs(t * 1e9 - Number(byValue.get(v))) < TIME_TOLERANCE_NS,
            `replayed point (${t}, ${v}) is no event of the program`);
    check(replayPoints[N - 1][1] === lastLevel[1], "the replay's last point is the last event");
    log(`replay: ${levelCount} events thinned; the last ${N} points are events of the program, the last the last`);
    await rep.ctx.close();
    await browser.close();
    await s.stopScope(rp);
    return;
  }
  samePoints(replayPoints, lastEvents(events, "scope:level", N), "replayed chart vs trace");
  let maxDt = 0;
  for (let i = 0; i < N; i++) {
    check(replayPoints[i][1] === livePoints[i][1], `replay point ${i}: value ${replayPoints[i][1]}, live ${livePoints[i][1]}`);
    maxDt = Math.max(maxDt, Math.abs(replayPoints[i][0] - livePoints[i][0]));
  }
  log(`replay vs live: same values, times within ${(maxDt * 1e9).toFixed(0)} ns`);
  check(maxDt * 1e9 < TIME_TOLERANCE_NS, `the replayed chart's times differ from the live ones by up to ${maxDt} s`);
  await rep.page.screenshot({path: path.join(s.work, "scope-replay-1280x800.png")});
  console.log("screenshot: " + path.join(s.work, "scope-replay-1280x800.png"));
  check(rep.errors.length === 0, "console errors (replay):\n" + rep.errors.join("\n"));
  log(`replay: the same last ${N} points`);
  await rep.ctx.close();
  await browser.close();
  await s.stopScope(rp);
});
