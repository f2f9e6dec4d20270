// SPDX-License-Identifier: MIT
// test-scope-hist.mjs - a span's histogram on the page (issue 33): scope-prog
// --spans 200 records 200 spans scope:op of known, varied lengths (sleeps
// of 30 us to 2.1 ms), the first 100, then (at SIGUSR2) the rest, watched
// live by `fdr scope -- scope-prog` with its own trace (FDR_OUTPUT), then
// that trace replayed by `fdr scope DIR`. The page's histogram (ticked
// "hist" beside scope:op's span_ns) is checked against what the test
// computes from the trace read by bt2 (the spans paired in order on their
// one thread, durations in the line clock as fdr computes them, bucketed
// as series.h's scope_hist_bucket says):
//   - live, while the program waits: 100 spans counted, not final, drawn;
//     then, after SIGUSR2 and the program's end, without reloading: the
//     trace's 200 spans (the panel updates itself);
//   - live at the end and in the replay: every bucket's count equal to the
//     trace's, and p50, p90 and p99 each the bucket that holds the trace's
//     nearest-rank percentile (as fdr stats ranks), printed under it;
//   - live, the series scope:op.span_ns charted: each of its points is one
//     of the trace's durations, the shortest and the longest among them.
import fs from "node:fs";
import path from "node:path";
import {spawn} from "node:child_process";
import {A, Session, check, log, waitFor, readTrace, livePage, pidAlive, main} from "./lib.mjs";

const N = 200;
const ID = "scope:op";
const QS = [["p50", 0.5], ["p90", 0.9], ["p99", 0.99]];

// series.h, scope_hist_bucket / scope_hist_bounds, for BigInt ns
function bucket(ns) {
  if (ns < 8n)
    return [ns, ns + 1n];
  const e = BigInt(ns.toString(2).length - 1);
  const sub = (ns >> (e - 3n)) & 7n;
  return [(8n + sub) << (e - 3n), (9n + sub) << (e - 3n)];
}

// The durations of scope:op in trace dir (one process, one thread), in ns
// of the line clock (test-fdr-spans.py's line_ns).
function durations(dir) {
  const procs = fs.readdirSync(dir).filter((p) => fs.existsSync(path.join(dir, p, ".fdr-classes")));
  check(procs.length === 1, `one process in the trace: ${procs}`);
  const cf = fs.readFileSync(path.join(dir, procs[0], ".fdr-classes"));
  const start = cf.readBigUInt64LE(16), freq = cf.readBigUInt64LE(24);
  const ns = (cyc) => BigInt(Math.trunc(Number(BigInt(cyc) - start) * 1e9 / Number(freq)));
  const evs = readTrace(dir).filter((e) => e.name === ID);
  const out = [];
  let open = null;
  for (const e of evs) {
    if ("span_begin" in e.fields) {
      check(open === null && e.fields.span_begin === 1, "scope:op spans do not nest: " + JSON.stringify(e.fields));
      open = ns(e.cycles);
    } else {
      check(open !== null && e.fields.span_end === 1, "scope:op end without begin: " + JSON.stringify(e.fields));
      out.push(ns(e.cycles) - open);
      open = null;
    }
  }
  check(out.length === N, `the trace has ${out.length} scope:op spans, expected ${N}`);
  return out;
}

// What the page must show for durations d: {count, buckets, p50, ...}.
function expected(d) {
  const m = new Map();
  for (const v of d) {
    const [lo, hi] = bucket(v);
    const k = lo.toString();
    m.set(k, m.has(k) ? [lo, hi, m.get(k)[2] + 1] : [lo, hi, 1]);
  }
  const want = {count: d.length,
                buckets: [...m.values()].sort((a, b) => (a[0] < b[0] ? -1 : 1))
                  .map(([lo, hi, n]) => [Number(lo), Number(hi), n])};
  const s = d.slice().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, q] of QS)
    want[name] = bucket(s[Math.max(Math.ceil(q * s.length), 1) - 1]).map(Number);
  return want;
}

function same(got, want, what) {
  const g = {count: got.count, buckets: got.buckets, p50: got.p50, p90: got.p90, p99: got.p99};
  check(JSON.stringify(g) === JSON.stringify(want),
        `${what}: the page shows\n  ${JSON.stringify(g)}\nthe trace says\n  ${JSON.stringify(want)}`);
  for (const [name] of QS)
    check(got.text.includes(name + " "), `${what}: the line under the histogram names ${name}: ${got.text}`);
}

async function openHist(page) {
  const cb = page.locator(`input[data-hist="${ID}"]`);
  await cb.waitFor();
  await cb.check();
  const hist = async () => (await page.evaluate(() => window.fdrScope.hists()))
    .find((h) => h.id === ID) || null;
  return hist;
}

main("scope-hist", async () => {
  const s = new Session();
  s.startDaemon();
  const out = path.join(s.work, "trace");
  const sc = await s.scope(["--", A.prog, "--spans", String(N)], {FDR_OUTPUT: out});
  const {info, page, errors} = await livePage(s, sc);
  const hist = await openHist(page);
  // the duration as a series too, charted live
  const plot = page.locator(`input[data-field="${ID}.span_ns"]`);
  if (!(await plot.isChecked()))
    await plot.check();
  // the first half, while the program waits for SIGUSR2
  const half = await waitFor(async () => {
    const h = await hist();
    return h && h.count === N / 2 ? h : null;
  }, `the live histogram counting the first ${N / 2} spans`);
  check(!half.final && half.buckets.reduce((a, b) => a + b[2], 0) === N / 2,
        "live, first half: " + JSON.stringify(half));
  await page.locator(`.hist[data-hist="${ID}"] canvas`).screenshot({path: path.join(s.work, "hist-half.png")});
  process.kill(info.pid, "SIGUSR2");
  await waitFor(() => !pidAlive(info.pid), "scope-prog's end after SIGUSR2");
  const want = expected(durations(out));
  log(`trace: ${N} spans in ${want.buckets.length} buckets, p50 ${want.p50}, p90 ${want.p90}, p99 ${want.p99}`);
  const live = await waitFor(async () => {
    const h = await hist();
    return h && h.count === N ? h : null;
  }, `the live histogram counting all ${N} spans (no reload)`);
  same(live, want, "live");
  // the live series span_ns: its points are the trace's durations (the
  // server may keep only a slice's min and max, never a value of its own),
  // with the shortest and the longest among them
  const durs = durations(out).map(Number);
  const pts = await waitFor(async () => {
    const h = await page.evaluate((k) => window.fdrScope.held(k, 100000), `${ID}.span_ns`);
    return h.length && Math.max(...h.map((x) => x[1])) === Math.max(...durs) &&
      Math.min(...h.map((x) => x[1])) === Math.min(...durs) ? h : null;
  }, "the live span_ns series with the trace's shortest and longest span");
  const known = new Set(durs);
  check(pts.every((x) => known.has(x[1])),
        "live span_ns: values not in the trace: " + pts.filter((x) => !known.has(x[1])).slice(0, 5));
  await page.screenshot({path: path.join(s.work, "live.png"), fullPage: true});
  check(errors.length === 0, "live page errors: " + errors.join("; "));
  await s.stopScope(sc);

  const rp = await s.scope([out]);
  const b = await s.browser();
  const r = await s.page(b, rp.url);
  await waitFor(() => r.page.evaluate(() => window.fdrScope.done), "the replay's end");
  const rhist = await openHist(r.page);
  const replay = await waitFor(async () => {
    const h = await rhist();
    return h && h.final ? h : null;
  }, "the replay's histogram, complete");
  same(replay, want, "replay");
  await r.page.locator(`.hist[data-hist="${ID}"]`).screenshot({path: path.join(s.work, "replay.png")});
  check(r.errors.length === 0, "replay page errors: " + r.errors.join("; "));
  await s.stopScope(rp);
});
