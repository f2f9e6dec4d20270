// SPDX-License-Identifier: MIT
// test-scope-gaps.mjs - live, what the page keeps and how it draws it
// (issue 28, items 2 and 3), with `fdr scope --window 1 -- scope-prog
// --period-us 500 --quiet` (the server's ring of 4,096 points holds about
// 2 s of scope:level):
//   - history across a chart change: once the page holds more than 6,000
//     points of scope:level (more than the server keeps), ticking another
//     field's plot box opens the stream again, and the page still holds
//     them all, from the same first point (before, it started over from
//     the server's 4,096);
//   - a gap drawn as a break: scope:level's record switch off for 1,000
//     of the program's loops (at least 0.25 s: loops are never closer than
//     half a period), then on: the largest gap between the page's points
//     of scope:level is at least that long, and the line breaks there (a
//     null between the two points in the data given to uPlot), while the
//     dense series is drawn as a line without points;
//   - sparse series draw points: the one event of scope:start (the quiet
//     thread, at SIGUSR2) is drawn as a point.
import {A, Session, check, log, waitFor, getJSON, livePage, main} from "./lib.mjs";

const LEVEL = "scope:level.value";
const WAVE = "scope:wave.x";
const START = "scope:start.value";

main("scope-gaps", async () => {
  const s = new Session();
  s.startDaemon();
  const sc = await s.scope(["--window", "1", "--", A.prog, "--period-us", "500", "--quiet"]);
  const {info, browser, page, errors, charts} = await livePage(s, sc);
  const plot = async (key) => {
    const b = page.locator(`input[data-field="${key}"]`);
    await b.waitFor();
    if (!(await b.isChecked()))
      await b.check();
  };
  await plot(LEVEL);
  const held = () => page.evaluate((k) => {
    const h = window.fdrScope.held(k, 1e9);
    return {n: h.length, first: h[0], t: h.map((p) => p[0])};
  }, LEVEL);

  // ---- history across a chart change
  await waitFor(async () => (await held()).n > 6000, "more than 6,000 points of scope:level on the page");
  const before = await held();
  await plot(WAVE);
  await waitFor(async () => (await charts()).some((c) => c.fields.includes(WAVE) && c.points > 0),
                "the chart of scope:wave.x");
  await waitFor(async () => (await held()).t.length > before.n, "scope:level's points after the change");
  const after = await held();
  check(after.first[0] === before.first[0] && after.first[1] === before.first[1],
        `scope:level's first point was (${before.first}), after the chart change (${after.first})`);
  for (let i = 1; i < after.t.length; i++)
    check(after.t[i] >= after.t[i - 1], `scope:level's points out of order at ${i}`);
  // distinct times: one thread's loops are at least 250 us apart (a
  // double of ~1.8e9 s steps by 238 ns), so a time held twice is a point
  // held twice
  const kept = new Set(after.t);
  check(before.t.every((t) => kept.has(t)), "points held before the chart change are gone");
  check(after.t.length === kept.size, `${after.t.length - kept.size} points held twice`);
  log(`history: ${before.n} points before the chart change, ${after.n} after, from the same first one`);

  // ---- a gap: scope:level not recorded for 1,000 loops
  const count = async (id) => ((await getJSON(sc, "/api/events")).events.find((e) => e.id === id) || {});
  const rec = page.locator('input[data-what="recorded"][data-event="scope:level"]');
  await waitFor(() => rec.isChecked(), "scope:level shows as recorded");
  await rec.uncheck();
  await waitFor(async () => (await count("scope:level")).recorded === false, "scope:level not recorded");
  const ticks = (await count("scope:tick")).count;
  await waitFor(async () => (await count("scope:tick")).count > ticks + 1000, "1,000 loops without scope:level");
  await rec.check();
  const again = async () => (await count("scope:level")).recorded === true;
  try {
    await waitFor(again, "scope:level recorded again", 30000);
  } catch (e) {
    // Seen once in a CI run under ASan at -j2 (the program never said
    // recorded again within 90 s; not reproduced since): said with what
    // the page showed, and the switch used once more. The subject here is
    // the gap; scope-live checks the switches themselves.
    const msg = await page.locator("#control-msg").textContent();
    log(`scope:level not recorded again 30 s after the switch (the page says "${msg}", ` +
        `the checkbox is ${(await rec.isChecked()) ? "on" : "off"}): switched once more`);
    if (await rec.isChecked())
      await rec.uncheck();
    await rec.check();
    await waitFor(again, "scope:level recorded again, after the switch was used twice");
  }
  const n1 = (await held()).n;
  await waitFor(async () => (await held()).n > n1 + 100, "scope:level's points after the gap");
  const h = await held();
  let gap = [0, 0];
  for (let i = 1; i < h.t.length; i++)
    if (h.t[i] - h.t[i - 1] > gap[1] - gap[0])
      gap = [h.t[i - 1], h.t[i]];
  check(gap[1] - gap[0] >= 0.25, `the largest gap of scope:level is ${gap[1] - gap[0]} s`);
  await waitFor(async () => {
    const breaks = await page.evaluate((k) => window.fdrScope.gaps(k), LEVEL);
    return breaks.some(([a, b]) => a === gap[0] && b === gap[1]);
  }, `a break of scope:level's line between ${gap[0]} and ${gap[1]}`);
  check((await page.evaluate((k) => window.fdrScope.pointsShown(k), LEVEL)) === false,
        "the dense scope:level is drawn with points");
  log(`gap: scope:level's line breaks over ${(gap[1] - gap[0]).toFixed(3)} s without it`);

  // ---- a sparse series: one point
  await plot(START);
  process.kill(info.pid, "SIGUSR2");
  await waitFor(async () => (await page.evaluate((k) => window.fdrScope.lastPoints(k, 5), START)).length === 1,
                "scope:start's point");
  await waitFor(() => page.evaluate((k) => window.fdrScope.pointsShown(k), START), "scope:start drawn as a point");
  check(!errors.length, "console errors: " + errors.join("; "));
  process.kill(info.pid, "SIGTERM");
  await browser.close();
  await s.stopScope(sc);
});
