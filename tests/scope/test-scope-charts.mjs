// SPDX-License-Identifier: MIT
// test-scope-charts.mjs - several fields in one chart, per thread or
// merged, with scope-prog --threads 2 under `fdr scope --window 2`:
//   - "+ field…" moves scope:wave.x into the chart of scope:level.value
//     (one chart, two series; wave's own chart is gone, its plot box stays
//     ticked);
//   - "per thread" turns the chart into one series per thread and field
//     (key field@TID), for the program's two threads;
//   - once the program has ended, each per-thread series ends with that
//     thread's last 10 events in the program's trace (bt2), and the merged
//     series (back to merged) with the last 10 of both threads;
//   - the tunables offset (a number box) and amp (a double slider) reach
//     the program (its scope:wave); the event filter; the 1 s window;
//   - removing a field from the chart (its × in the statistics) and closing
//     the chart untick the plot boxes; no console error.
import path from "node:path";
import {A, Session, check, log, waitFor, readTrace, getJSON, pidAlive, main} from "./lib.mjs";

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

// Waits until the page's last N points of key are the trace's (the
// history of a stream opened again arrives in a few messages), then checks
// them; on failure prints both ends.
async function settle(page, key, trace, what) {
  const get = () => page.evaluate(([k, n]) => window.fdrScope.lastPoints(k, n), [key, N]);
  try {
    await waitFor(async () => {
      try {
        same(await get(), trace, what);
        return true;
      } catch (e) {
        return false;
      }
    }, what + ": the trace's last points", 30000);
  } catch (e) {
    console.error("page:  " + (await get()).map(([t, v]) => `${t.toFixed(6)}=${v}`).join(" "));
    console.error("trace: " + trace.map(([t, v]) => `${(Number(t) / 1e9).toFixed(6)}=${v}`).join(" "));
  }
  same(await get(), trace, what);
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
  const info = await getJSON(sc, "/api/info");
  s.note(info.pid);
  const browser = await s.browser();
  const {page, errors} = await s.page(browser, sc.url);
  const charts = () => page.evaluate(() => window.fdrScope.charts());
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
  await page.selectOption("#window", "10");

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
