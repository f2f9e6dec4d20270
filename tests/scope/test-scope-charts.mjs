// SPDX-License-Identifier: MIT
// test-scope-charts.mjs - several fields in one chart, per thread or
// merged, with scope-prog --threads 2 under `fdr scope --window 2`:
//   - "+ field…" moves scope:wave.x into the chart of scope:level.value
//     (one chart, two series; wave's own chart is gone, its plot box stays
//     ticked);
//   - "per thread" turns the chart into one series per thread and field
//     (key field@TID), for the program's two threads, each named by its
//     thread's name (scope-prog, worker-1) with its tid on hover, the
//     axes labelled with their fields; a field NAME__UNIT is labelled
//     "NAME (UNIT)";
//   - once the program has ended, each per-thread series ends with that
//     thread's last 10 events in the program's trace (bt2), and the merged
//     series (back to merged) with the last 10 of both threads;
//   - the tail, filtered to scope:gain: its lines in time order, both
//     threads there (not packets of one thread, then of the other);
//   - the tunables offset (a number box) and amp (a double slider) reach
//     the program (its scope:wave); a change the program took keeps
//     showing when states of before come late (staleState); the event
//     filter; the 1 s window;
//   - removing a field from the chart (its × in the statistics) and closing
//     the chart untick the plot boxes; no console error.
import path from "node:path";
import {A, Session, check, log, waitFor, sleep, readTrace, getJSON, pidAlive, livePage, main} from "./lib.mjs";

const LEVEL = "scope:level.value";
const WAVE = "scope:wave.x";
const N = 10;

function same(page, trace, what) {
  check(page.length === trace.length, `${what}: ${page.length} points on the page, ${trace.length} in the trace`);
  for (let i = 0; i < page.length; i++)
    check(Math.abs(page[i][0] * 1e9 - Number(trace[i][0])) < 1000000 && page[i][1] === trace[i][1],
          `${what}: point ${i} is (${page[i][0]}, ${page[i][1]}) on the page, ` +
          `(${Number(trace[i][0]) / 1e9}, ${trace[i][1]}) in the trace`);
}

// Waits until the chart's last N points of key are the trace's (the
// history of a stream opened again arrives in a few messages), then checks
// them; on failure prints the chart's, the page's store's and the trace's.
async function settle(page, key, trace, what) {
  const get = () => page.evaluate(([k, n]) => window.fdrScope.lastPoints(k, n), [key, N]);
  const pts = (p) => p.map(([t, v]) => `${t.toFixed(6)}=${v}`).join(" ");
  try {
    await waitFor(async () => {
      try {
        same(await get(), trace, what);
        return true;
      } catch (e) {
        return false;
      }
    }, what + ": the trace's last points");
  } catch (e) {
    console.error("chart: " + pts(await get()));
    console.error("held:  " + pts(await page.evaluate(([k, n]) => window.fdrScope.held(k, n), [key, N])));
    console.error("trace: " + trace.map(([t, v]) => `${(Number(t) / 1e9).toFixed(6)}=${v}`).join(" "));
  }
  same(await get(), trace, what);
}

// A state of before a change, late: the program took amp=3 and printing
// scope:note, but the states a page gets say amp 10 and not printed (its
// stream is one of the test's: a hello and the state of before, again and
// again, the stream reopened every 50 ms). Past the page's old guard
// (1.5 s after the answer) and two such states later, the page still shows
// what the program took (before, it went back to 10 and unticked).
// Tried up to three times, in case the machine took the page's whole wait
// (10 s) to get there.
async function staleState(s, browser, sc) {
  const {page, ctx, errors} = await s.page(browser, sc.url);
  await waitFor(() => page.evaluate(() => window.fdrScope.ready), "the stale page's first points");
  const stale = await getJSON(sc, "/api/events");
  const was = stale.tunables.find((t) => t.name === "amp").value;
  check(!stale.events.find((e) => e.id === "scope:note").printed, "scope:note printed already");
  await page.route("**/api/stream?*", (route) => route.fulfill({
    status: 200, headers: {"Content-Type": "text/event-stream", "Cache-Control": "no-store"},
    body: "retry: 50\n\nevent: hello\ndata: {}\n\nevent: state\ndata: " + JSON.stringify(stale) + "\n\n"}));
  const hellos = () => page.evaluate(() => window.fdrScope.hellos);
  const h0 = await hellos();
  await page.fill("#tail-filter", "scope:gain");       // the stream reopens, now the test's
  await waitFor(async () => (await hellos()) > h0, "the test's stream");
  const num = page.locator('[data-tunable="amp"] input[type=number]');
  const prn = page.locator('input[data-what="printed"][data-event="scope:note"]');
  for (let attempt = 1; ; attempt++) {
    const want = attempt + 2;                          // 3, 4, 5: never amp's value of before
    const t0 = Date.now();
    await num.fill(String(want));
    await num.press("Enter");
    if (attempt === 1)
      await prn.check();
    await waitFor(async () => {
      const st = await getJSON(sc, "/api/events");
      return st.tunables.find((t) => t.name === "amp").value === want &&
             st.events.find((e) => e.id === "scope:note").printed;
    }, `the program's amp at ${want}, scope:note printed`);
    await sleep(1600);
    const h = await hellos();
    await waitFor(async () => (await hellos()) >= h + 2, "two more stale states");
    const shown = [Number(await num.inputValue()), await prn.isChecked()];
    if (Date.now() - t0 > 9000 && attempt < 3) {
      log(`stale state: ${Date.now() - t0} ms after the change (the page waits 10 s): again`);
      continue;
    }
    check(shown[0] === want && shown[1],
          `the program took amp ${want} and printing scope:note; after late states of before (amp ${was}, ` +
          `not printed) the page shows amp ${shown[0]}, print ${shown[1] ? "on" : "off"}`);
    log(`stale state: the page keeps amp ${want} and scope:note printed after late states of before`);
    break;
  }
  check(!errors.length, "console errors (stale page): " + errors.join("; "));
  await ctx.close();
}

main("scope-charts", async () => {
  const s = new Session();
  s.startDaemon();
  const out = path.join(s.work, "trace");
  // 2 x 300 scope:level events at most: fewer than the chart's width in
  // pixels, so that the history sent again when the chart turns per thread
  // or merged is not thinned however long the test runs; --window 2: one
  // event per thread and 1 ms slice at most, kept exactly
  const sc = await s.scope(["--window", "2", "--", A.prog, "--threads", "2", "--period-us", "10000",
                            "--level-max", "300"], {FDR_OUTPUT: out});
  // the window "all": scope:level stops after 300 loops while the test
  // goes on for as long as the machine takes, so a window of seconds would
  // soon show none of it
  const {info, browser, page, errors, charts} = await livePage(s, sc);
  const lb = page.locator(`input[data-field="${LEVEL}"]`);
  await lb.waitFor();
  if (!(await lb.isChecked()))
    await lb.check();
  const wb = page.locator(`input[data-field="${WAVE}"]`);
  if (!(await wb.isChecked()))
    await wb.check();
  await waitFor(async () => (await charts()).filter((c) => c.fields.includes(LEVEL) || c.fields.includes(WAVE))
    .every((c) => c.points > 5), "charts of level and wave with points");
  const levelChart = page.locator(".chart", {has: page.locator(".chart-title", {hasText: LEVEL})});

  // wave into level's chart
  await levelChart.locator("select.chart-add").focus();
  await levelChart.locator("select.chart-add").selectOption(WAVE);
  await waitFor(async () => {
    const cs = await charts();
    const c = cs.find((x) => x.fields.includes(LEVEL));
    return c && c.fields.includes(WAVE) && c.keys.length === 2 && cs.filter((x) => x.fields.includes(WAVE)).length === 1;
  }, "level and wave in one chart");
  check(await wb.isChecked(), "wave's plot box stays ticked");
  check(await levelChart.locator("tr[data-series]").count() === 2, "two rows of statistics");
  log("two fields in one chart");

  // per thread
  await levelChart.locator(".chart-split input").check();
  await waitFor(async () => {
    const c = (await charts()).find((x) => x.fields.includes(LEVEL));
    return c.split && c.keys.filter((k) => k.startsWith(LEVEL + "@")).length === 2 &&
           c.keys.filter((k) => k.startsWith(WAVE + "@")).length === 2 && c.keys.length === 4;
  }, "four per-thread series (2 fields x 2 threads)");
  const keys = (await charts()).find((x) => x.fields.includes(LEVEL)).keys;
  log("per thread:", keys.join(" "));
  await waitFor(async () => (await charts()).find((x) => x.fields.includes(LEVEL)).points > 20, "per-thread points");
  const shot = path.join(s.work, "scope-per-thread.png");
  await levelChart.screenshot({path: shot});
  console.log("screenshot: " + shot);
  const tids = keys.filter((k) => k.startsWith(LEVEL + "@")).map((k) => Number(k.split("@")[1]));
  // names: per thread by the thread's name (scope-prog's main thread and
  // worker-1), the tid on hover; the axes say their fields
  await waitFor(async () => {
    const c = (await charts()).find((x) => x.fields.includes(LEVEL));
    const names = c.labels.map(([text]) => text).sort().join("|");
    return names === [LEVEL, WAVE].flatMap((f) => [f + " @ scope-prog", f + " @ worker-1"]).sort().join("|") &&
      c.labels.every(([, title]) => tids.some((t) => title.endsWith(", tid " + t))) &&
      JSON.stringify(c.axes) === JSON.stringify([LEVEL, WAVE]);
  }, "series named by thread name (tid on hover), axes by field");
  log("per thread: series named by thread, axes by field");

  // the tail in time order across the two threads: scope:gain only (the
  // page's filter box), lines sorted by their time, both threads there
  // (before: whole packets of one thread, then of the other, out of order)
  await page.fill("#tail-filter", "scope:gain");
  const tailOk = await waitFor(async () => {
    const lines = await page.evaluate(() => window.fdrScope.tail());
    if (lines.length < 60 || !lines.every((l) => / scope:gain value=\d+$/.test(l)))
      return null;
    return lines;
  }, "60 lines of scope:gain in the tail");
  const times = tailOk.map((l) => parseFloat(l));
  for (let i = 1; i < times.length; i++)
    check(times[i] >= times[i - 1], `the tail's line ${i} is older than the one before: ${tailOk[i - 1]} / ${tailOk[i]}`);
  const threads = tailOk.map((l) => /\[(\d+)/.exec(l)[1]);
  let turns = 0;
  for (let i = 1; i < threads.length; i++)
    turns += threads[i] !== threads[i - 1];
  // (how often they take turns is the scheduler's: only both are there)
  check(new Set(threads).size === 2, `the tail shows ${new Set(threads).size} threads`);
  log(`tail: ${tailOk.length} lines in time order, the two threads taking turns ${turns} times`);

  // the other tunables: offset (no range: a number box) and amp (a double
  // range: a slider of 1,000 steps, End = its max); the program's wave
  // x = amp * sin(n / 25) + offset follows
  const off = page.locator('[data-tunable="offset"] input[type=number]');
  check(await page.locator('[data-tunable="offset"] input[type=range]').count() === 0, "offset has no slider");
  await off.fill("100");
  await off.press("Enter");
  const amp = page.locator('[data-tunable="amp"] input[type=range]');
  check(await amp.getAttribute("step") === "0.01", "amp's step: " + await amp.getAttribute("step"));
  await amp.focus();
  await amp.press("End");
  await waitFor(async () => (await getJSON(sc, "/api/events")).tunables.find((t) => t.name === "amp").value === 10,
                "amp at 10");
  const waveKey = keys.find((k) => k.startsWith(WAVE + "@"));
  await waitFor(() => page.evaluate((k) => {
    const p = window.fdrScope.lastPoints(k, 200);
    return p.length === 200 && p.every(([, v]) => v >= 89.99 && v <= 110.01) &&
           Math.max(...p.map(([, v]) => v)) - Math.min(...p.map(([, v]) => v)) > 10;
  }, waveKey), "wave between 90 and 110, swinging by more than 10 (offset 100, amp 10)");
  log("tunables: offset 100 (number box), amp 10 (slider, End): the program's wave follows");
  await staleState(s, browser, sc);

  // the event filter, the 1 s window
  await page.locator("#event-filter").fill("wav");
  await waitFor(async () => (await page.locator("#events tbody tr:not([hidden])").count()) === 1 &&
                (await page.locator('#events tbody tr[data-event="scope:wave"]').isVisible()), "the filter keeps scope:wave");
  await page.locator("#event-filter").fill("");
  await page.selectOption("#window", "1");
  await waitFor(async () => {
    const c = (await charts()).find((x) => x.fields.includes(LEVEL));
    return Math.abs(c.xmax - c.xmin - 1) < 1e-6;
  }, "a 1 s window");
  await page.selectOption("#window", "0");

  // the program ends; the per-thread series end with each thread's events
  process.kill(info.pid, "SIGTERM");
  await waitFor(() => !pidAlive(info.pid), "scope-prog ends");
  await waitFor(async () => !(await getJSON(sc, "/api/info")).running, "api/info: not running");
  const events = readTrace(out).filter((e) => e.name === "scope:level");
  const traceTids = [...new Set(events.map((e) => e.tid))].sort();
  check(JSON.stringify(traceTids) === JSON.stringify(tids.slice().sort()), `threads: trace ${traceTids}, page ${tids}`);
  for (const tid of tids) {
    const mine = events.filter((e) => e.tid === tid).slice(-N).map((e) => [e.ts_ns, e.fields.value]);
    const key = `${LEVEL}@${tid}`;
    await settle(page, key, mine, key);
  }
  log(`per thread: each series ends with its thread's last ${N} events`);
  // merged again: both threads' events in time order
  await levelChart.locator(".chart-split input").uncheck();
  const last = events.slice(-N).map((e) => [e.ts_ns, e.fields.value]);
  await settle(page, LEVEL, last, "merged");
  log(`merged: the last ${N} events of both threads`);

  // a field with a unit
  const TEMP = "scope:temp.t__degC";
  await page.locator(`input[data-field="${TEMP}"]`).check();
  await waitFor(async () => {
    const c = (await charts()).find((x) => x.fields.includes(TEMP));
    return c && c.points > 0 && c.axes[0] === "scope:temp.t (degC)" && c.labels[0][0] === "scope:temp.t (degC)";
  }, "scope:temp.t__degC labelled scope:temp.t (degC)");

  // remove wave from the chart, then close the chart
  await levelChart.locator(`tr[data-series="${WAVE}"] button`).click();
  await waitFor(async () => !(await wb.isChecked()) && (await charts()).every((c) => !c.fields.includes(WAVE)),
                "wave removed, its plot box unticked");
  await levelChart.locator("button[aria-label='remove chart']").click();
  await waitFor(async () => !(await lb.isChecked()) && (await charts()).every((c) => !c.fields.includes(LEVEL)),
                "the chart closed, level's plot box unticked");
  check(errors.length === 0, "console errors:\n" + errors.join("\n"));
  await browser.close();
  await s.stopScope(sc);
});
