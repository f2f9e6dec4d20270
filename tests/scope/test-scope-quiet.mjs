// SPDX-License-Identifier: MIT
// test-scope-quiet.mjs - an event of a thread that records once and then
// sleeps reaches the page live (issue 28, item 2), in a real headless
// Chromium: `fdr scope -- scope-prog --quiet`, whose "quiet" thread records
// scope:start once when the test sends SIGUSR2 (after the page shows the
// program's other events: its route and rings are there) and then sleeps.
// Nothing else ever closes that thread's packet: only fdrd's live period,
// which writes the committed part of open packets, brings the event to
// the scope. While the program still runs:
//   - the event list shows scope:start with count 1;
//   - its chart (plot box of scope:start.value) shows its one point, value 1;
// then, the program ended, its own trace (FDR_OUTPUT, bt2) has exactly
// that one event, at the page's time (within 1 ms: the live clock
// conversion, docs/scope.md), from the thread named "quiet".
import path from "node:path";
import {A, Session, check, log, waitFor, readTrace, getJSON, pidAlive, main} from "./lib.mjs";

const START = "scope:start.value";

main("scope-quiet", async () => {
  const s = new Session();
  s.startDaemon();
  const out = path.join(s.work, "trace");
  const sc = await s.scope(["--", A.prog, "--period-us", "10000", "--quiet"], {FDR_OUTPUT: out});
  const info = await getJSON(sc, "/api/info");
  s.note(info.pid);
  const browser = await s.browser();
  const {page, errors} = await s.page(browser, sc.url);
  // the program's other events are on the page: the scope's trace gets them
  await waitFor(async () => {
    const st = await getJSON(sc, "/api/events");
    const lv = st.events.find((e) => e.id === "scope:level");
    return lv && lv.count > 10;
  }, "scope:level events in the scope");
  await waitFor(() => page.evaluate(() => window.fdrScope.ready), "the page's first points");
  const row = page.locator('#events tr[data-event="scope:start"]');
  await row.waitFor();
  check((await row.locator("td.num").nth(1).textContent()) === "0", "scope:start counted before SIGUSR2");
  const box = page.locator(`input[data-field="${START}"]`);
  await box.check();

  // the quiet thread records once, then sleeps
  process.kill(info.pid, "SIGUSR2");
  try {
    await waitFor(async () => (await row.locator("td.num").nth(1).textContent()) === "1",
                  "scope:start counted 1 on the page");
    await waitFor(() => page.evaluate((k) => window.fdrScope.lastPoints(k, 2).length === 1, START),
                  "the point of scope:start on its chart");
  } catch (e) {
    const st = await getJSON(sc, "/api/events");
    throw new Error(`${e.message}; the scope counts scope:start ${st.events.find((x) => x.id === "scope:start").count}` +
                    `, threads ${JSON.stringify(st.threads)}`);
  }
  // ... while the program runs (it was not its end that flushed the event)
  check(pidAlive(info.pid) && (await getJSON(sc, "/api/info")).running, "scope-prog still runs");
  const [[t, v]] = await page.evaluate((k) => window.fdrScope.lastPoints(k, 1), START);
  check(v === 1, `scope:start's value on the page: ${v}`);
  log("scope:start (one event of a thread that then sleeps) shown live: count 1, its point on the chart");

  process.kill(info.pid, "SIGTERM");
  await waitFor(() => !pidAlive(info.pid), "scope-prog ends");
  const starts = readTrace(out).filter((e) => e.name === "scope:start");
  check(starts.length === 1, `${starts.length} scope:start events in the program's trace`);
  const dt = Math.abs(t * 1e9 - Number(starts[0].ts_ns));
  check(starts[0].thread_name === "quiet", `scope:start from thread "${starts[0].thread_name}"`);
  check(starts[0].fields.value === 1 && dt < 1e6,
        `the trace's scope:start (${Number(starts[0].ts_ns) / 1e9}, ${starts[0].fields.value}), the page's (${t}, ${v})`);
  check(errors.length === 0, "console errors:\n" + errors.join("\n"));
  log(`the program's trace: the same event, ${(dt / 1000).toFixed(1)} us apart`);
  await browser.close();
  await s.stopScope(sc);
});
