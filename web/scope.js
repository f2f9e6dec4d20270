// SPDX-License-Identifier: MIT
// scope.js - the page of `fdr scope`: the event list with its switches,
// charts of numeric fields (uPlot), tunables, the live tail. It speaks the
// HTTP contract of docs/scope-api.md: JSON under api/, Server-Sent Events
// from api/stream, form posts to api/control; every request carries the
// token of the page's URL. No framework, no build step.
(function () {
  "use strict";

  const token = new URLSearchParams(location.search).get("token") || document.body.dataset.token || "";
  const $ = (id) => document.getElementById(id);

  // ---------------------------------------------------------------- state
  const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                   "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
  // per series kept in the page (beyond, the oldest are dropped): the
  // page's memory budget, 200,000 unless the URL says points=N
  const POINTS_ASKED = new URLSearchParams(location.search).get("points");
  const MAX_POINTS = /^[0-9]+$/.test(POINTS_ASKED || "") && Number(POINTS_ASKED) >= 100
    ? Number(POINTS_ASKED) : 200000;
  const MAX_FIELDS = 32;       // the stream's limit
  const TAIL_LINES = 500;
  // A change the program took shows in the state it reports next, which
  // reaches the page some time later (a second or more on a busy machine);
  // until then a state of before it is stale: a switch or tunable keeps
  // showing the value taken until the state has it, or this long.
  const STATE_WAIT_MS = 10000;

  const S = {
    info: null,              // /api/info
    events: new Map(),       // id -> event JSON (latest)
    rows: new Map(),         // id -> {tr, cells...}
    tunables: new Map(),     // name -> {t, input, number, lastSent, busyUntil}
    store: new Map(),        // series key -> {t: [], v: []}
    charts: [],              // chart objects (see makeChart)
    nextChartId: 1,
    tmax: -Infinity,         // newest time seen in any series
    window: 10,              // seconds, 0 = all
    paused: false,
    pausedByZoom: false,
    pausedAt: 0,             // tmax when paused
    view: null,              // [min, max] while paused
    es: null,                // EventSource
    streamKey: "",
    tailPattern: "*",
    ready: false,
    draws: 0,
    pointsReceived: 0,
    done: false,
    errors: [],
    refineGen: 0,            // replay: views asked of api/range
    refined: 0,              // replay: the last of them put in place
    refining: 0,             // replay: requests under way
    refineTimer: null,
    rangeAnswers: 0,         // replay: answers of api/range handled (put in place or stale)
    hellos: 0,               // streams' hello messages handled
    infoAsked: 0,            // api/info polls asked,
    infoShown: 0,            // the newest shown,
    infoAnswers: 0,          // and answers handled (pollInfo)
    thinned: false,          // replay: the server thinned a series (memory budget)
    cut: new Set(),          // series whose oldest points the page dropped (MAX_POINTS)
    since: new Map(),        // series key -> newest time held when the stream opened
    threads: new Map(),      // tid (string) -> thread name
    hists: new Map(),        // span id -> histogram panel (see addHist)
  };

  // ------------------------------------------------------------- requests
  function api(path) {
    return path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
  }

  async function getJSON(path) {
    const r = await fetch(api(path), {headers: {"X-Fdr-Token": token}, cache: "no-store"});
    if (!r.ok)
      throw new Error(path + ": HTTP " + r.status);
    return r.json();
  }

  async function control(params) {
    const body = new URLSearchParams(params).toString();
    let r;
    try {
      r = await fetch(api("api/control"), {
        method: "POST",
        headers: {"Content-Type": "application/x-www-form-urlencoded", "X-Fdr-Token": token},
        body,
      });
    } catch (e) {
      showControl("not sent: " + e.message, true);
      return {ok: false, error: e.message};
    }
    let j = {};
    try { j = await r.json(); } catch (e) { j = {}; }
    if (!r.ok || !j.ok) {
      const msg = j.error || ("HTTP " + r.status);
      showControl(msg, true);
      return {ok: false, error: msg};
    }
    showControl("", false);
    return {ok: true};
  }

  function showControl(msg, bad) {
    const el = $("control-msg");
    el.textContent = msg;
    el.classList.toggle("bad", !!bad);
  }

  // --------------------------------------------------------------- header
  function renderInfo() {
    const i = S.info;
    if (!i)
      return;
    $("target").textContent = i.target;
    $("target").title = i.pid ? "pid " + i.pid : i.target;
    $("mode").textContent = i.mode;
    $("mode").className = "badge mode-" + i.mode;
    let run;
    if (i.mode === "replay")
      run = S.done ? "replayed" : "replaying";
    else
      run = i.running ? "running" : "ended";
    $("running").textContent = run;
    $("running").className = "badge " + (i.running || (i.mode === "replay" && !S.done) ? "on" : "off");
    const note = i.mode === "replay" ? "Replay: switches and tunables are read-only."
      : !i.control ? "No control: switches and tunables are read-only."
      : !i.running ? "The program has ended: switches and tunables are read-only." : "";
    $("events-note").textContent = note;
    for (const row of S.rows.values()) {
      row.rec.disabled = !canSwitch(row.ev, "recorded");
      row.prn.disabled = !canSwitch(row.ev, "printed");
    }
    for (const tu of S.tunables.values())
      setTunableDisabled(tu);
  }

  function setConn(text, cls) {
    const el = $("conn");
    el.textContent = text;
    el.className = "badge " + cls;
  }

  // api/info every 2 s: on a busy machine an answer can take longer, and
  // an older one (running) come after a newer one (ended) and enable the
  // controls of a program that is gone; it is dropped
  async function pollInfo() {
    const n = ++S.infoAsked;
    try {
      const i = await getJSON("api/info");
      S.infoAnswers++;
      if (n < S.infoShown)
        return;
      S.infoShown = n;
      S.info = i;
      renderInfo();
    } catch (e) {
      // the stream's state says more; nothing to show twice
    }
  }

  // --------------------------------------------------------------- events
  function fmtRate(r) {
    if (r == null)
      return "";
    if (r >= 1e6) return (r / 1e6).toFixed(2) + "M";
    if (r >= 1e4) return (r / 1e3).toFixed(1) + "k";
    if (r >= 100) return Math.round(r).toString();
    return (Math.round(r * 10) / 10).toString();
  }

  function fmtCount(n) {
    return n == null ? "" : Number(n).toLocaleString("en-US");
  }

  // a name that may wrap after ':', '.' and '@' only (narrow windows)
  function breakable(text) {
    const f = document.createDocumentFragment();
    for (const part of text.split(/(?<=[:.@])/)) {
      f.append(document.createTextNode(part));
      f.append(document.createElement("wbr"));
    }
    f.lastChild.remove();
    return f;
  }

  // the program can be steered: live, with control, and still running
  function controllable() {
    return !!(S.info && S.info.control && S.info.running);
  }

  function canSwitch(ev, what) {
    return controllable() && ev[what] !== null && ev[what] !== undefined;
  }

  function fieldKey(ev, f) {
    return ev.id + "." + f.name;
  }

  // A field named NAME__UNIT carries its unit (docs/api.md, Units):
  // "prov:ev.NAME (UNIT)"
  function fieldLabel(field) {
    const m = /^(.*\.[^.]*?)__([^_.][^.]*)$/.exec(field);
    return m ? m[1] + " (" + m[2] + ")" : field;
  }

  // A series as a person reads it: its field, and per thread the thread's
  // name (its tid on hover: seriesTitle)
  function seriesLabel(key) {
    const at = key.indexOf("@");
    if (at < 0)
      return fieldLabel(key);
    const tid = key.slice(at + 1);
    return fieldLabel(key.slice(0, at)) + " @ " + (S.threads.get(tid) || "tid " + tid);
  }

  function seriesTitle(key) {
    const at = key.indexOf("@");
    return at < 0 ? key : key.slice(0, at) + ", thread " + (S.threads.get(key.slice(at + 1)) || "?") +
      ", tid " + key.slice(at + 1);
  }

  function makeSwitch(ev, what, label) {
    const lab = document.createElement("label");
    lab.className = "switch";
    const cb = document.createElement("input");
    cb.type = "checkbox";
    cb.setAttribute("aria-label", label + " " + ev.id);
    cb.dataset.event = ev.id;
    cb.dataset.what = what;
    cb.checked = !!ev[what];
    cb.disabled = !canSwitch(ev, what);
    const knob = document.createElement("span");
    knob.className = "knob";
    lab.append(cb, knob);
    cb.addEventListener("change", async () => {
      const want = cb.checked;
      cb.dataset.pending = "1";
      const r = await control({what: what === "recorded" ? "record" : "print", event: ev.id, on: want ? "1" : "0"});
      delete cb.dataset.pending;
      if (!r.ok) {
        cb.checked = !want;
      } else {
        cb.dataset.want = want ? "1" : "0";
        cb.dataset.sentAt = String(Date.now());
      }
    });
    return {lab, cb};
  }

  function buildRow(ev) {
    const tr = document.createElement("tr");
    tr.dataset.event = ev.id;
    const name = document.createElement("td");
    name.className = "ev-name";
    name.append(breakable(ev.id));
    name.title = ev.format || "";
    const rate = document.createElement("td");
    rate.className = "num";
    const count = document.createElement("td");
    count.className = "num";
    const recTd = document.createElement("td");
    const rec = makeSwitch(ev, "recorded", "record");
    recTd.append(rec.lab);
    const prnTd = document.createElement("td");
    const prn = makeSwitch(ev, "printed", "print");
    prnTd.append(prn.lab);
    const fieldsTd = document.createElement("td");
    fieldsTd.className = "fields";
    const plots = new Map();
    for (const f of ev.fields || []) {
      if (!f.numeric) {
        const span = document.createElement("span");
        span.className = "field nonnum";
        span.textContent = f.name;
        span.title = f.type + " (not plotted)";
        fieldsTd.append(span);
        continue;
      }
      const key = fieldKey(ev, f);
      const lab = document.createElement("label");
      lab.className = "field";
      const cb = document.createElement("input");
      cb.type = "checkbox";
      cb.dataset.field = key;
      cb.setAttribute("aria-label", "plot " + key);
      cb.checked = chartOf(key) != null;
      cb.addEventListener("change", () => {
        if (cb.checked) {
          if (plottedFields().length >= MAX_FIELDS) {
            cb.checked = false;
            showControl("at most " + MAX_FIELDS + " fields plotted", true);
            return;
          }
          addChart([key]);
        } else {
          removeField(key);
        }
      });
      lab.append(cb, document.createTextNode(" " + f.name));
      lab.title = key + " (" + f.type + ")";
      fieldsTd.append(lab);
      plots.set(key, cb);
      if (f.name === "span_ns")
        fieldsTd.append(histBox(ev));
    }
    tr.append(name, rate, count, recTd, prnTd, fieldsTd);
    return {tr, ev, rate, count, rec: rec.cb, prn: prn.cb, plots};
  }

  function updateRow(row, ev) {
    row.ev = ev;
    row.rate.textContent = fmtRate(ev.rate);
    row.count.textContent = fmtCount(ev.count);
    for (const [cb, what] of [[row.rec, "recorded"], [row.prn, "printed"]]) {
      cb.disabled = !canSwitch(ev, what);
      // the server's word, unless a change of ours is in flight or taken
      // and not in the server's state yet (awaited: see STATE_WAIT_MS)
      if (cb.dataset.want !== undefined &&
          (!!ev[what] === (cb.dataset.want === "1") || Date.now() - Number(cb.dataset.sentAt) > STATE_WAIT_MS))
        delete cb.dataset.want;
      if (!cb.dataset.pending && cb.dataset.want === undefined)
        cb.checked = !!ev[what];
      cb.indeterminate = ev[what] === null || ev[what] === undefined;
    }
  }

  function applyFilter() {
    const q = $("event-filter").value.trim().toLowerCase();
    for (const row of S.rows.values()) {
      const hay = (row.ev.id + " " + (row.ev.fields || []).map((f) => f.name).join(" ")).toLowerCase();
      row.tr.hidden = q !== "" && !q.split(/\s+/).every((w) => hay.includes(w));
    }
  }

  // a first chart, once, so that a new page shows something: a numeric
  // field of the busiest event (the highest rate live, the largest count
  // in a replay; ties by name), as soon as one has occurred; the person
  // picks others
  function autoChart() {
    if (S.autoCharted || S.charts.length)
      return;
    let best = null, bestKey = null;
    for (const ev of [...S.events.values()].sort((a, b) => a.id.localeCompare(b.id))) {
      const f = (ev.fields || []).find((x) => x.numeric);
      if (!f || !(ev.count > 0))
        continue;
      if (!best || (ev.rate || 0) > (best.rate || 0) ||
          ((ev.rate || 0) === (best.rate || 0) && ev.count > best.count)) {
        best = ev;
        bestKey = fieldKey(ev, f);
      }
    }
    if (bestKey) {
      S.autoCharted = true;
      addChart([bestKey]);
    }
  }

  function renderEvents(st) {
    const tbody = $("events").tBodies[0];
    const list = (st.events || []).slice().sort((a, b) => a.id.localeCompare(b.id));
    let added = false;
    for (const ev of list) {
      S.events.set(ev.id, ev);
      let row = S.rows.get(ev.id);
      const shape = JSON.stringify(ev.fields || []);
      if (row && row.shape !== shape) {
        row.tr.remove();
        S.rows.delete(ev.id);
        row = null;
      }
      if (!row) {
        row = buildRow(ev);
        row.shape = shape;
        S.rows.set(ev.id, row);
        added = true;
      }
      updateRow(row, ev);
    }
    if (added) {
      for (const ev of list)
        tbody.append(S.rows.get(ev.id).tr);
      applyFilter();
    }
    for (const th of st.threads || [])
      if (th.name)
        S.threads.set(String(th.tid), th.name);
    $("discarded").textContent = "discarded " + fmtCount(st.discarded || 0);
    $("discarded").classList.toggle("bad", (st.discarded || 0) > 0);
    renderTunables(st.tunables || []);
    autoChart();
  }

  // ------------------------------------------------------------- tunables
  function fmtNum(x, isDouble) {
    if (!isDouble)
      return String(Math.round(x));
    return String(Math.round(x * 1e6) / 1e6);
  }

  function setTunableDisabled(tu) {
    const off = !controllable();
    tu.input.disabled = off;
    if (tu.number)
      tu.number.disabled = off;
  }

  function buildTunable(t) {
    const div = document.createElement("div");
    div.className = "tunable";
    div.dataset.tunable = t.name;
    const lab = document.createElement("label");
    lab.textContent = t.name;
    lab.htmlFor = "tunable-" + t.name;
    div.append(lab);
    const tu = {t, div, lastSent: 0, timer: null, busyUntil: 0, pendingValue: null, want: null, wantAt: 0};
    const step = t.double ? (t.range ? (t.max - t.min) / 1000 || "any" : "any") : 1;
    if (t.range) {
      const r = document.createElement("input");
      r.type = "range";
      r.id = "tunable-" + t.name;
      r.min = t.min;
      r.max = t.max;
      r.step = step;
      r.value = t.value;
      r.setAttribute("aria-label", "tunable " + t.name);
      const num = document.createElement("input");
      num.type = "number";
      num.min = t.min;
      num.max = t.max;
      num.step = step;
      num.value = fmtNum(t.value, t.double);
      num.className = "tunable-value";
      num.setAttribute("aria-label", "value of " + t.name);
      const range = document.createElement("span");
      range.className = "range";
      range.textContent = fmtNum(t.min, t.double) + " … " + fmtNum(t.max, t.double);
      div.append(r, num, range);
      tu.input = r;
      tu.number = num;
      r.addEventListener("input", () => {
        num.value = fmtNum(Number(r.value), t.double);
        sendTunable(tu, r.value, false);
      });
      r.addEventListener("change", () => sendTunable(tu, r.value, true));
      num.addEventListener("change", () => {
        let v = Number(num.value);
        if (!Number.isFinite(v))
          return;
        v = Math.min(t.max, Math.max(t.min, v));
        r.value = v;
        num.value = fmtNum(v, t.double);
        sendTunable(tu, String(v), true);
      });
    } else {
      const num = document.createElement("input");
      num.type = "number";
      num.id = "tunable-" + t.name;
      num.step = step;
      num.value = fmtNum(t.value, t.double);
      num.setAttribute("aria-label", "tunable " + t.name);
      div.append(num);
      tu.input = num;
      num.addEventListener("change", () => {
        if (num.value.trim() === "" || !Number.isFinite(Number(num.value)))
          return;
        sendTunable(tu, num.value, true);
      });
    }
    const def = document.createElement("span");
    def.className = "default";
    // (a replay knows the values set, not the program's default: its
    // "default" is the first value set)
    def.textContent = (S.info && S.info.mode === "replay" ? "first set " : "default ") + fmtNum(t.default, t.double);
    div.append(def);
    setTunableDisabled(tu);
    return tu;
  }

  // At most one request per 100 ms while a slider moves, and one at a time:
  // requests on several connections could be applied out of order, and the
  // program left at a value the slider passed, not the one it stopped at.
  // The last value is always sent (final = the change event: at once, or
  // as soon as the request in flight is answered).
  function sendTunable(tu, value, final) {
    tu.busyUntil = Date.now() + 1500;
    tu.pendingValue = value;
    const now = Date.now();
    const go = () => {
      tu.timer = null;
      const v = tu.pendingValue;
      if (v === null || tu.inFlight)
        return;
      tu.pendingValue = null;
      tu.lastSent = Date.now();
      tu.inFlight = true;
      control({what: "tunable", name: tu.t.name, value: v}).then((r) => {
        if (r.ok) {
          tu.want = Number(v);
          tu.wantAt = Date.now();
        }
      }).finally(() => {
        tu.inFlight = false;
        if (tu.pendingValue !== null && !tu.timer)
          go();
      });
    };
    if (final || now - tu.lastSent >= 100) {
      if (tu.timer) {
        clearTimeout(tu.timer);
        tu.timer = null;
      }
      go();
    } else if (!tu.timer) {
      tu.timer = setTimeout(go, 100 - (now - tu.lastSent));
    }
  }

  function renderTunables(list) {
    const box = $("tunables");
    let rebuilt = false;
    const names = new Set(list.map((t) => t.name));
    for (const [name, tu] of S.tunables)
      if (!names.has(name)) {
        tu.div.remove();
        S.tunables.delete(name);
        rebuilt = true;
      }
    for (const t of list) {
      let tu = S.tunables.get(t.name);
      if (tu && (tu.t.min !== t.min || tu.t.max !== t.max || tu.t.double !== t.double || tu.t.range !== t.range)) {
        tu.div.remove();
        S.tunables.delete(t.name);
        tu = null;
      }
      if (!tu) {
        tu = buildTunable(t);
        S.tunables.set(t.name, tu);
        rebuilt = true;
        continue;
      }
      tu.t = t;
      const active = document.activeElement === tu.input || document.activeElement === tu.number;
      if (tu.want !== null && (Math.abs(t.value - tu.want) <= 1e-6 * Math.max(1, Math.abs(tu.want)) ||
                               Date.now() - tu.wantAt > STATE_WAIT_MS))
        tu.want = null;
      if (Date.now() > tu.busyUntil && !active && tu.pendingValue === null && tu.want === null) {
        tu.input.value = t.range ? t.value : fmtNum(t.value, t.double);
        if (tu.number)
          tu.number.value = fmtNum(t.value, t.double);
      }
    }
    if (rebuilt) {
      box.textContent = "";
      const sorted = [...S.tunables.values()].sort((a, b) => a.t.name.localeCompare(b.t.name));
      for (const tu of sorted)
        box.append(tu.div);
      if (!sorted.length) {
        const p = document.createElement("p");
        p.className = "empty";
        p.textContent = "No tunable.";
        box.append(p);
      }
    }
  }

  // --------------------------------------------------------------- series
  function seriesOf(key) {
    let s = S.store.get(key);
    if (!s) {
      s = {t: [], v: []};
      S.store.set(key, s);
    }
    return s;
  }

  // Points of a stream. A stream opened again (a chart changed, or the
  // connection came back) starts with the history the server keeps: what
  // the page holds already (up to the newest time it had then, S.since) is
  // kept, not cleared, so "all" shows everything since the page opened;
  // such points are skipped, but those of a merged series' late thread
  // (up to 100 ms behind), which are looked up and put in their place.
  function addPoints(msg) {
    let n = 0;
    for (const ser of msg.series || []) {
      const s = seriesOf(ser.key);
      const t = ser.t || [], v = ser.v || [];
      const len = Math.min(t.length, v.length);
      const since = S.since.get(ser.key);
      let last = s.t.length ? s.t[s.t.length - 1] : -Infinity;
      for (let i = 0; i < len; i++) {
        const ti = t[i];
        if (since !== undefined && ti <= since) {
          // (older than what the page kept of a series it cut: dropped
          // already, not put back before the points kept)
          if (ti < since - 0.5 || (S.cut.has(ser.key) && ti < s.t[0]))
            continue;
          let j = lowerBound(s.t, ti), dup = false;
          for (; j < s.t.length && s.t[j] === ti; j++)
            dup = dup || s.v[j] === v[i];
          if (dup)
            continue;
        }
        if (ti >= last) {
          s.t.push(ti);
          s.v.push(v[i]);
          last = ti;
        } else {
          // an older point after a newer one (a merged series gathers
          // threads read at different moments): put it in its place
          let j = s.t.length - 1;
          while (j > 0 && s.t[j - 1] > ti)
            j--;
          s.t.splice(j, 0, ti);
          s.v.splice(j, 0, v[i]);
        }
      }
      n += len;
      if (s.t.length > MAX_POINTS) {
        const cut = s.t.length - Math.floor(MAX_POINTS * 0.8);
        s.t.splice(0, cut);
        s.v.splice(0, cut);
        if (!S.cut.has(ser.key)) {
          S.cut.add(ser.key);
          for (const c of S.charts)
            if (c.keys.includes(ser.key))
              c.needsRebuild = true;   // the title says so
        }
      }
      if (last > S.tmax)
        S.tmax = last;
      if (ser.key.includes("@"))
        noteThreadSeries(ser.key);
    }
    S.pointsReceived += n;
    scheduleDraw();
  }

  // what the page holds when a stream (re)opens: the newest time per series
  function markHeld() {
    S.since = new Map();
    for (const [k, s] of S.store)
      if (s.t.length)
        S.since.set(k, s.t[s.t.length - 1]);
  }

  function noteThreadSeries(key) {
    const field = key.slice(0, key.indexOf("@"));
    for (const c of S.charts)
      if (c.split && c.fields.includes(field) && !c.keys.includes(key))
        c.needsRebuild = true;
  }

  // first index with t[i] >= x
  function lowerBound(arr, x) {
    let lo = 0, hi = arr.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (arr[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // the first index past every element <= x: the end of a view [a, x]
  // holds every point at x (several events share a time: a time of ~1.8e9
  // s as a double steps by 238 ns, and x + 1e-9 is x again)
  function upperBound(arr, x) {
    let lo = 0, hi = arr.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (arr[mid] <= x) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // --------------------------------------------------------------- charts
  function plottedFields() {
    return S.charts.flatMap((c) => c.fields);
  }

  function chartOf(field) {
    return S.charts.find((c) => c.fields.includes(field)) || null;
  }

  function keysOfChart(c) {
    const keys = [];
    for (const f of c.fields) {
      if (c.split) {
        const per = [...S.store.keys()].filter((k) => k.startsWith(f + "@")).sort();
        keys.push(...per);
      } else {
        keys.push(f);
      }
    }
    return keys;
  }

  function addChart(fields) {
    S.autoCharted = true;
    const c = {
      id: S.nextChartId++,
      fields: fields.slice(),
      split: false,
      keys: [],
      u: null,
      given: null,
      needsRebuild: true,
    };
    const el = document.createElement("div");
    el.className = "chart";
    el.dataset.chart = String(c.id);
    const head = document.createElement("div");
    head.className = "chart-head";
    const title = document.createElement("span");
    title.className = "chart-title";
    const add = document.createElement("select");
    add.className = "chart-add";
    add.setAttribute("aria-label", "add a field to this chart");
    add.addEventListener("focus", () => fillAddSelect(c));
    add.addEventListener("mousedown", () => fillAddSelect(c));
    add.addEventListener("change", () => {
      const f = add.value;
      add.value = "";
      if (!f)
        return;
      moveFieldTo(f, c);
    });
    const split = document.createElement("label");
    split.className = "chart-split";
    const scb = document.createElement("input");
    scb.type = "checkbox";
    scb.setAttribute("aria-label", "per thread");
    scb.addEventListener("change", () => {
      c.split = scb.checked;
      c.needsRebuild = true;
      openStream();
      scheduleDraw();
    });
    split.append(scb, document.createTextNode(" per thread"));
    const csv = document.createElement("button");
    csv.type = "button";
    csv.textContent = "CSV";
    csv.title = "the visible window as CSV";
    csv.addEventListener("click", () => exportCSV(c));
    const png = document.createElement("button");
    png.type = "button";
    png.textContent = "PNG";
    png.title = "the chart as a PNG image";
    png.addEventListener("click", () => exportPNG(c));
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "×";
    close.title = "remove this chart";
    close.setAttribute("aria-label", "remove chart");
    close.addEventListener("click", () => removeChart(c));
    const o0 = document.createElement("option");
    o0.value = "";
    o0.textContent = "+ field…";
    add.append(o0);
    head.append(title, add, split, csv, png, close);
    const plot = document.createElement("div");
    plot.className = "plot";
    const stats = document.createElement("table");
    stats.className = "stats";
    stats.innerHTML = "<thead><tr><th>series</th><th class=num>last</th><th class=num>min</th>" +
                      "<th class=num>max</th><th class=num>mean</th><th class=num>n</th><th></th></tr></thead><tbody></tbody>";
    el.append(head, plot, stats);
    c.el = el;
    c.title = title;
    c.addSel = add;
    c.plotEl = plot;
    c.statsEl = stats.tBodies[0];
    plot.addEventListener("wheel", (e) => {
      if (!e.shiftKey)
        return;
      e.preventDefault();
      const d = e.deltaY || e.deltaX;
      if (!S.paused)
        pause(false);
      pan(d > 0 ? 0.1 : -0.1);
    }, {passive: false});
    c.ro = new ResizeObserver(() => {
      if (c.u) {
        const w = chartWidth(c);
        if (Math.abs(w - c.u.width) > 1)
          c.u.setSize({width: w, height: chartHeight()});
      }
    });
    c.ro.observe(plot);
    $("no-charts").hidden = true;
    $("charts").append(el);
    S.charts.push(c);
    syncPlotBoxes();
    openStream();
    scheduleDraw();
    return c;
  }

  function fillAddSelect(c) {
    const sel = c.addSel;
    const cur = sel.value;
    sel.textContent = "";
    const o0 = document.createElement("option");
    o0.value = "";
    o0.textContent = "+ field…";
    sel.append(o0);
    const all = [];
    for (const ev of [...S.events.values()].sort((a, b) => a.id.localeCompare(b.id)))
      for (const f of ev.fields || [])
        if (f.numeric && !c.fields.includes(fieldKey(ev, f)))
          all.push(fieldKey(ev, f));
    for (const k of all) {
      const o = document.createElement("option");
      o.value = k;
      o.textContent = k;
      sel.append(o);
    }
    sel.value = cur;
  }

  function moveFieldTo(field, c) {
    const from = chartOf(field);
    if (from === c)
      return;
    if (!from && plottedFields().length >= MAX_FIELDS) {
      showControl("at most " + MAX_FIELDS + " fields plotted", true);
      return;
    }
    if (from) {
      from.fields = from.fields.filter((f) => f !== field);
      from.needsRebuild = true;
      if (!from.fields.length)
        removeChart(from, true);
    }
    c.fields.push(field);
    c.needsRebuild = true;
    syncPlotBoxes();
    openStream();
    scheduleDraw();
  }

  function removeField(field) {
    const c = chartOf(field);
    if (!c)
      return;
    c.fields = c.fields.filter((f) => f !== field);
    if (!c.fields.length) {
      removeChart(c);
      return;
    }
    c.needsRebuild = true;
    syncPlotBoxes();
    openStream();
    scheduleDraw();
  }

  function removeChart(c, quiet) {
    S.charts = S.charts.filter((x) => x !== c);
    if (c.u)
      c.u.destroy();
    c.ro.disconnect();
    c.el.remove();
    $("no-charts").hidden = S.charts.length > 0;
    if (!quiet) {
      syncPlotBoxes();
      openStream();
    }
  }

  function syncPlotBoxes() {
    const on = new Set(plottedFields());
    for (const row of S.rows.values())
      for (const [k, cb] of row.plots)
        cb.checked = on.has(k);
  }

  function chartWidth(c) {
    return Math.max(200, Math.floor(c.plotEl.clientWidth || c.el.clientWidth || 600));
  }

  function chartHeight() {
    return window.innerWidth < 700 ? 180 : 220;
  }

  function makeUPlot(c) {
    if (c.u) {
      c.u.destroy();
      c.u = null;
    }
    c.keys = keysOfChart(c);
    c.title.textContent = c.fields.join(", ") + (S.thinned ? " (thinned: the replay's memory budget)" : "") +
      (c.keys.some((k) => S.cut.has(k))
        ? " (the oldest points dropped: " + fmtCount(MAX_POINTS) + " kept per series)" : "");
    // the first field on the left axis, the second (when there is one) on
    // a right axis of its own scale; more fields share the left one
    const fieldOfKey = (k) => (k.includes("@") ? k.slice(0, k.indexOf("@")) : k);
    const scaleOf = (k) => (c.fields.length > 1 && fieldOfKey(k) === c.fields[1] ? "y2" : "y");
    const series = [{label: "time"}];
    c.keys.forEach((k, i) => series.push({
      label: seriesLabel(k),
      scale: scaleOf(k),
      stroke: PALETTE[i % PALETTE.length],
      width: 1.25,
      // a null (breakGaps) breaks the line; points are drawn when the
      // view is sparse enough, and beside each break (uPlot's defaults)
      spanGaps: false,
      points: {size: 5},
    }));
    // axis width from its longest label (uPlot calls it as labels change)
    const axisSize = (u, values) => {
      if (!values || !values.length)
        return 40;
      const chars = Math.max(...values.map((v) => String(v).length));
      return Math.ceil(chars * 7.5) + 18;
    };
    // each y axis says its field (and unit)
    const axes = [{}, {scale: "y", size: axisSize, label: fieldLabel(c.fields[0])}];
    const scales = {x: {time: true, auto: false}, y: {auto: true}};
    if (c.keys.some((k) => scaleOf(k) === "y2")) {
      scales.y2 = {auto: true};
      axes.push({scale: "y2", side: 1, size: axisSize, grid: {show: false}, label: fieldLabel(c.fields[1]), stroke: PALETTE[c.keys.findIndex((k) => scaleOf(k) === "y2") % PALETTE.length]});
    }
    const opts = {
      width: chartWidth(c),
      height: chartHeight(),
      legend: {show: false},
      scales,
      series,
      axes,
      cursor: {
        // a drag selects; setSelect (below) turns it into a zoom of every
        // chart (the scale is set by us, never by uPlot on its own)
        drag: {x: true, y: false, setScale: false},
        bind: {
          dblclick: () => () => { resetZoom(); return null; },
        },
      },
      hooks: {
        setSelect: [(u) => {
          if (u.select.width < 2)
            return;
          const min = u.posToVal(u.select.left, "x");
          const max = u.posToVal(u.select.left + u.select.width, "x");
          u.setSelect({left: 0, top: 0, width: 0, height: 0}, false);
          userZoom(min, max);
        }],
      },
    };
    c.u = new uPlot(opts, emptyData(c.keys.length), c.plotEl);
    c.needsRebuild = false;
    c.statsRows = null;
  }

  function emptyData(n) {
    const d = [[]];
    for (let i = 0; i < n; i++)
      d.push([]);
    return d;
  }

  // The time span shown: live, the last `window` seconds up to the newest
  // point; paused, the frozen or zoomed view.
  function currentView() {
    if (S.paused && S.view)
      return S.view;
    const max = S.tmax;
    if (!Number.isFinite(max))
      return null;
    if (S.window > 0)
      return [max - S.window, max];
    let min = Infinity;
    for (const c of S.charts)
      for (const k of c.keys) {
        const s = S.store.get(k);
        if (s && s.t.length && s.t[0] < min)
          min = s.t[0];
      }
    if (!Number.isFinite(min) || min >= max)
      min = max - 1;
    return [min, max];
  }

  // A line breaks where its series has no data for much longer than its
  // usual spacing (its record switch off, its thread quiet): a null is put
  // between two points further apart than 10 times the median spacing in
  // the view (sampled) and than a thousandth of the view.
  function breakGaps(t, v, view) {
    const n = t.length;
    if (n < 3)
      return [t, v];
    const step = Math.max(1, Math.floor((n - 1) / 2000)), g = [];
    for (let i = 1; i < n; i += step)
      g.push(t[i] - t[i - 1]);
    g.sort((a, b) => a - b);
    const span = view ? view[1] - view[0] : t[n - 1] - t[0];
    const lim = Math.max(10 * g[g.length >> 1], span / 1000);
    let tt = null, vv = null, from = 0;
    for (let i = 1; i < n; i++) {
      if (t[i] - t[i - 1] <= lim)
        continue;
      tt = tt || [];
      vv = vv || [];
      for (; from < i; from++) {
        tt.push(t[from]);
        vv.push(v[from]);
      }
      tt.push((t[i - 1] + t[i]) / 2);
      vv.push(null);
    }
    if (!tt)
      return [t, v];
    for (; from < n; from++) {
      tt.push(t[from]);
      vv.push(v[from]);
    }
    return [tt, vv];
  }

  function sliceFor(c, view) {
    const cols = [];
    for (const k of c.keys) {
      const s = S.store.get(k) || {t: [], v: []};
      let lo = 0, hi = s.t.length;
      if (view) {
        lo = Math.max(0, lowerBound(s.t, view[0]) - 1);           // one before: lines enter the view
        hi = Math.min(s.t.length, upperBound(s.t, view[1]) + 1);        // and one after
      }
      cols.push(breakGaps(s.t.slice(lo, hi), s.v.slice(lo, hi), view));
    }
    if (cols.length === 1)
      return [cols[0][0], cols[0][1]];
    if (!cols.length)
      return [[]];
    return joinCols(cols);
  }

  // Several series on one x axis. uPlot.join keeps one row per time (a
  // Set of the times), so of two points of a series at one time it drew
  // the last only: events of a tight loop a few ns apart share a time (a
  // double steps by 238 ns at today's dates), and a spike among them was
  // lost once the chart had a second field. Here a time has as many rows
  // as the series that has it most often; the others have no point there
  // (undefined: the line goes on), a break (null) stays one.
  function joinCols(cols) {
    const x = [], ys = cols.map(() => []), at = cols.map(() => 0);
    for (;;) {
      let t = null;
      for (let i = 0; i < cols.length; i++)
        if (at[i] < cols[i][0].length && (t === null || cols[i][0][at[i]] < t))
          t = cols[i][0][at[i]];
      if (t === null)
        return [x, ...ys];
      const n = cols.map(([ct], i) => {
        let k = at[i];
        while (k < ct.length && ct[k] === t)
          k++;
        return k - at[i];
      });
      const rows = Math.max(...n);
      for (let r = 0; r < rows; r++) {
        x.push(t);
        for (let i = 0; i < cols.length; i++)
          ys[i].push(r < n[i] ? cols[i][1][at[i] + r] : undefined);
      }
      for (let i = 0; i < cols.length; i++)
        at[i] += n[i];
    }
  }

  function drawChart(c, view) {
    if (c.needsRebuild || !c.u || keysOfChart(c).join("\n") !== c.keys.join("\n"))
      makeUPlot(c);
    const data = sliceFor(c, view);
    c.given = {keys: c.keys.slice(), data};
    c.u.setData(data, false);
    if (view && view[1] > view[0])
      c.u.setScale("x", {min: view[0], max: view[1]});
    renderStats(c, view);
    if (data[0].length)
      S.draws++;
  }

  function renderStats(c, view) {
    const d = c.given.data;
    if (!c.statsRows || c.statsRows.length !== c.keys.length) {
      c.statsEl.textContent = "";
      c.statsRows = c.keys.map((k, i) => {
        const tr = document.createElement("tr");
        tr.dataset.series = k;
        const name = document.createElement("td");
        const sw = document.createElement("span");
        sw.className = "swatch";
        sw.style.background = PALETTE[i % PALETTE.length];
        const label = document.createElement("span");
        label.className = "series-name";
        name.append(sw, label);
        const cells = [0, 1, 2, 3, 4].map(() => {
          const td = document.createElement("td");
          td.className = "num";
          return td;
        });
        const rm = document.createElement("td");
        const field = k.includes("@") ? k.slice(0, k.indexOf("@")) : k;
        const b = document.createElement("button");
        b.type = "button";
        b.className = "small";
        b.textContent = "×";
        b.title = "remove " + field + " from this chart";
        b.addEventListener("click", () => removeField(field));
        rm.append(b);
        tr.append(name, ...cells, rm);
        c.statsEl.append(tr);
        cells.label = label;
        return cells;
      });
    }
    // thread names come with the state, maybe after the series
    c.keys.forEach((k, i) => {
      const label = c.statsRows[i].label, text = seriesLabel(k);
      if (label.dataset.text !== text) {
        label.dataset.text = text;
        label.textContent = "";
        label.append(breakable(text));
        label.title = seriesTitle(k);
      }
    });
    const x = d[0];
    const lo = view ? lowerBound(x, view[0]) : 0;
    const hi = view ? upperBound(x, view[1]) : x.length;
    c.keys.forEach((k, i) => {
      const col = d[i + 1] || [];
      let mn = Infinity, mx = -Infinity, sum = 0, n = 0, last = null;
      for (let j = lo; j < hi; j++) {
        const v = col[j];
        if (v == null)
          continue;
        if (v < mn) mn = v;
        if (v > mx) mx = v;
        sum += v;
        n++;
        last = v;
      }
      const cells = c.statsRows[i];
      const f = (v) => (v == null || !Number.isFinite(v) ? "–" : fmtVal(v));
      cells[0].textContent = f(last);
      cells[1].textContent = n ? f(mn) : "–";
      cells[2].textContent = n ? f(mx) : "–";
      cells[3].textContent = n ? f(sum / n) : "–";
      cells[4].textContent = String(n);
    });
  }

  function fmtVal(v) {
    if (Number.isInteger(v))
      return String(v);
    const a = Math.abs(v);
    if (a !== 0 && (a >= 1e6 || a < 1e-3))
      return v.toExponential(3);
    return v.toFixed(4).replace(/\.?0+$/, "");
  }

  let drawPending = false;
  function scheduleDraw() {
    if (drawPending)
      return;
    drawPending = true;
    requestAnimationFrame(() => {
      drawPending = false;
      drawAll();
    });
  }

  function drawAll(force) {
    if (S.paused && !force)
      return;
    const view = currentView();
    for (const c of S.charts)
      drawChart(c, view);
    if (!S.ready && S.charts.some((c) => c.given && c.given.data[0].length > 0))
      S.ready = true;
  }

  // ----------------------------------------------------- pause, zoom, pan
  function pause(byZoom) {
    if (S.paused)
      return;
    S.paused = true;
    S.pausedByZoom = !!byZoom;
    S.pausedAt = S.tmax;
    S.view = currentViewLive();
    updatePauseUI();
  }

  function currentViewLive() {
    const was = S.paused;
    S.paused = false;
    const v = currentView();
    S.paused = was;
    return v;
  }

  function resume() {
    S.paused = false;
    S.pausedByZoom = false;
    S.view = null;
    updatePauseUI();
    drawAll();
  }

  function updatePauseUI() {
    const b = $("pause");
    b.textContent = S.paused ? "Resume" : "Pause";
    b.setAttribute("aria-pressed", S.paused ? "true" : "false");
    $("pan-left").disabled = !S.paused;
    $("pan-right").disabled = !S.paused;
    document.body.classList.toggle("paused", S.paused);
  }

  function userZoom(min, max) {
    if (!(max > min))
      return;
    if (!S.paused)
      pause(true);
    S.view = [min, max];
    drawAll(true);
    refine();
  }

  function resetZoom() {
    refine();
    if (!S.paused)
      return drawAll();
    if (S.pausedByZoom)
      return resume();
    const max = S.pausedAt;
    S.view = S.window > 0 ? [max - S.window, max] : currentViewLive();
    drawAll(true);
  }

  function pan(fraction) {
    if (!S.paused || !S.view)
      return;
    const w = S.view[1] - S.view[0];
    S.view = [S.view[0] + w * fraction, S.view[1] + w * fraction];
    drawAll(true);
    refine();
  }

  // ------------------------------------------------ replay: full fidelity
  // A replay's stream brings each series reduced over its whole span. The
  // span a person looks at (the window, a zoom, a pan) is asked again of
  // the server at the chart's width (api/range: per pixel column the
  // first, min, max and last point, M4; the points themselves once there
  // are few enough) and put in place of what the page held over that
  // span: every edge and every extreme at any zoom, real points zoomed in.
  function refine() {
    if (!S.info || S.info.mode !== "replay" || !S.done)
      return;
    clearTimeout(S.refineTimer);
    S.refineTimer = setTimeout(refineNow, 30);
  }

  async function refineNow() {
    S.refineTimer = null;
    const view = S.paused && S.view ? S.view : currentView();
    if (!view)
      return;
    const gen = ++S.refineGen;
    const asks = [];
    for (const c of S.charts)
      for (const k of keysOfChart(c)) {
        const p = new URLSearchParams({key: k, from: String(view[0]), to: String(view[1]),
                                       width: String(chartWidth(c))});
        asks.push(getJSON("api/range?" + p.toString()));
      }
    S.refining++;
    try {
      const got = await Promise.all(asks);
      S.rangeAnswers++;
      if (gen !== S.refineGen)
        return;                  // a newer view was asked for, or the stream reopened
      for (const r of got) {
        const s = seriesOf(r.key);
        if (!r.t.length)
          continue;
        const lo = lowerBound(s.t, r.t[0]), hi = upperBound(s.t, r.t[r.t.length - 1]);
        s.t.splice(lo, hi - lo, ...r.t);
        s.v.splice(lo, hi - lo, ...r.v);
        S.thinned = S.thinned || r.thinned;
      }
      S.refined = gen;
      drawAll(true);
    } catch (e) {
      S.errors.push("range: " + e.message);
    } finally {
      S.refining--;
    }
  }

  // --------------------------------------------------------------- export
  function download(blob, name) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  }

  function fileStem(c) {
    return "fdr-scope-" + c.fields.join("+").replace(/[^A-Za-z0-9_.+-]+/g, "_");
  }

  function csvOf(c) {
    const d = c.given ? c.given.data : [[]];
    const keys = c.given ? c.given.keys : [];
    const u = c.u;
    const min = u && u.scales.x.min != null ? u.scales.x.min : -Infinity;
    const max = u && u.scales.x.max != null ? u.scales.x.max : Infinity;
    const q = (s) => (/[",\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s);
    const lines = [["time_s"].concat(keys).map(q).join(",")];
    for (let j = 0; j < d[0].length; j++) {
      const t = d[0][j];
      if (t < min || t > max)
        continue;
      const row = [t.toFixed(9)];
      for (let i = 1; i < d.length; i++)
        row.push(d[i][j] == null ? "" : String(d[i][j]));
      if (row.some((x, i) => i > 0 && x !== ""))   // not a line's break
        lines.push(row.join(","));
    }
    return lines.join("\n") + "\n";
  }

  function exportCSV(c) {
    download(new Blob([csvOf(c)], {type: "text/csv"}), fileStem(c) + ".csv");
  }

  function pngCanvas(c) {
    const src = c.u.ctx.canvas;
    const pad = 28 * devicePixelRatio;
    const out = document.createElement("canvas");
    out.width = src.width;
    out.height = src.height + pad;
    const g = out.getContext("2d");
    g.fillStyle = "#ffffff";
    g.fillRect(0, 0, out.width, out.height);
    g.fillStyle = "#222";
    g.font = (13 * devicePixelRatio) + "px sans-serif";
    g.fillText(c.keys.join(", ") + "  (" + (S.info ? S.info.target : "") + ")", 8 * devicePixelRatio, 19 * devicePixelRatio);
    g.drawImage(src, 0, pad);
    return out;
  }

  function exportPNG(c) {
    if (!c.u)
      return;
    pngCanvas(c).toBlob((b) => b && download(b, fileStem(c) + ".png"), "image/png");
  }

  // --------------------------------------------------------------- stream
  function streamURL() {
    const fields = [...new Set(plottedFields())];
    const split = S.charts.some((c) => c.split) ? 1 : 0;
    const widths = S.charts.map((c) => chartWidth(c));
    const width = Math.min(4000, Math.max(200, ...widths, 200));
    const p = new URLSearchParams({fields: fields.join(","), split: String(split),
                                   tail: S.tailPattern, width: String(width)});
    return api("api/stream?" + p.toString());
  }

  function forgetOrMark() {
    markTail();
    if (S.info && S.info.mode === "replay") {
      S.store.clear();
      S.cut = new Set();
      S.tmax = -Infinity;
      S.since = new Map();
      // a range answer asked for before is stale: put into the cleared
      // store, the stream's points would land beside it, each point twice
      // (scope-live under TSan: the last 20 points were 10, twice each)
      clearTimeout(S.refineTimer);
      S.refineTimer = null;
      S.refineGen++;
    } else {
      markHeld();
    }
  }

  function openStream() {
    const url = streamURL();
    if (S.es && S.streamKey === url && S.es.readyState !== EventSource.CLOSED)
      return;
    if (S.es)
      S.es.close();
    if (S.done && S.info && S.info.mode === "replay") {
      S.done = false;
    }
    S.streamKey = url;
    // the new stream sends its history again: a replay's is the whole
    // trace (start over); live, the page keeps what it holds (addPoints)
    forgetOrMark();
    const es = new EventSource(url);
    S.es = es;
    setConn("connecting", "conn-wait");
    es.addEventListener("open", () => {
      if (S.es === es)
        setConn("connected", "conn-ok");
    });
    es.addEventListener("error", (e) => {
      // a connection error is a plain Event; a server `event: error`
      // message is a MessageEvent with data (handled below)
      if (S.es !== es || S.done || e.data !== undefined)
        return;
      if (es.readyState === EventSource.CLOSED) {
        setConn("disconnected", "conn-bad");
        setTimeout(() => { if (S.es === es) { S.streamKey = ""; openStream(); } }, 2000);
      } else {
        setConn("disconnected (reconnecting)", "conn-bad");
      }
    });
    es.addEventListener("hello", (e) => {
      if (S.es !== es)
        return;
      // the server sends its history of the chosen series again (also
      // after the reconnections EventSource makes by itself)
      forgetOrMark();
      S.hellos++;
      setConn("connected", "conn-ok");
      try {
        const h = JSON.parse(e.data);
        S.hello = h;
      } catch (err) { /* ignored */ }
      scheduleDraw();
    });
    es.addEventListener("points", (e) => {
      if (S.es !== es)
        return;
      addPoints(JSON.parse(e.data));
    });
    es.addEventListener("state", (e) => {
      if (S.es !== es)
        return;
      renderEvents(JSON.parse(e.data));
    });
    es.addEventListener("tail", (e) => {
      if (S.es !== es)
        return;
      addTail(JSON.parse(e.data));
    });
    es.addEventListener("error", (e) => {
      // a server `event: error` message (a MessageEvent with data), not a
      // connection error (a plain Event)
      if (S.es !== es || !e.data)
        return;
      let m = "";
      try { m = JSON.parse(e.data).error; } catch (err) { m = String(e.data); }
      $("tail-msg").textContent = m;
      $("tail-msg").classList.add("bad");
      S.errors.push(m);
    });
    es.addEventListener("done", () => {
      if (S.es !== es)
        return;
      S.done = true;
      es.close();
      setConn("replay complete", "conn-ok");
      renderInfo();
      scheduleDraw();
      refine();
    });
  }

  // ----------------------------------------------------------------- tail
  // The tail's lines in time order: each message is sorted by the server,
  // and a line of a thread read late (its time, the line's first field,
  // older than lines shown) is put in its place.
  let tailBuf = [];
  let tailPending = false;
  // A stream opened again starts with the newest events the server kept
  // (live, those of its last 1,024; a replay's, the trace's end), which the
  // page may show already: a line up to the newest time shown then
  // (tailSince) that is one of the lines shown (tailHeld) is not added twice.
  let tailSince = -Infinity, tailHeld = new Set();
  function markTail() {
    tailHeld = new Set(tailBuf);
    tailSince = tailBuf.length ? parseFloat(tailBuf[tailBuf.length - 1]) : -Infinity;
  }

  function addTail(msg) {
    const at = (l) => parseFloat(l);
    for (const line of msg.lines || []) {
      let j = tailBuf.length;
      const t = at(line);
      if (t <= tailSince && tailHeld.has(line))
        continue;
      while (j > 0 && at(tailBuf[j - 1]) > t)
        j--;
      tailBuf.splice(j, 0, line);
    }
    if (tailBuf.length > TAIL_LINES)
      tailBuf = tailBuf.slice(-TAIL_LINES);
    const note = $("tail-msg");
    if (!note.classList.contains("bad"))
      note.textContent = !msg.sampled ? ""
        : S.info && S.info.mode === "replay"
        ? "the trace's last " + (msg.lines || []).length + " matching events (of the last " +
          fmtCount(msg.events) + " matching among the 1,024 kept)"
        : "sampled: " + (msg.lines || []).length + " lines of about " + fmtCount(msg.events) +
          " events in the last tenth of a second, evenly";
    if (tailPending)
      return;
    tailPending = true;
    requestAnimationFrame(() => {
      tailPending = false;
      const pre = $("tail");
      const stick = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      pre.textContent = tailBuf.join("\n");
      if (stick)
        pre.scrollTop = pre.scrollHeight;
    });
  }

  let tailTimer = null;
  function onTailInput() {
    clearTimeout(tailTimer);
    tailTimer = setTimeout(() => {
      const p = $("tail-filter").value.trim();
      if (p === S.tailPattern)
        return;
      S.tailPattern = p;
      tailBuf = [];
      $("tail").textContent = "";
      $("tail-msg").textContent = p ? "" : "tail off (no pattern)";
      $("tail-msg").classList.remove("bad");
      openStream();
    }, 300);
  }

  // ----------------------------------------------------------------- wire
  function wire() {
    $("window").addEventListener("change", () => {
      S.window = Number($("window").value);
      refine();
      if (S.paused) {
        const max = S.view ? S.view[1] : S.pausedAt;
        S.view = S.window > 0 ? [max - S.window, max] : currentViewLive();
        drawAll(true);
      } else {
        drawAll();
      }
    });
    $("pause").addEventListener("click", () => (S.paused ? resume() : pause(false)));
    $("pan-left").addEventListener("click", () => pan(-0.5));
    $("pan-right").addEventListener("click", () => pan(0.5));
    $("event-filter").addEventListener("input", applyFilter);
    $("tail-filter").value = S.tailPattern;
    $("tail-filter").addEventListener("input", onTailInput);
    $("tail-clear").addEventListener("click", () => {
      tailBuf = [];
      $("tail").textContent = "";
    });
    window.addEventListener("resize", () => scheduleDraw());
    updatePauseUI();
  }

  async function start() {
    wire();
    if (POINTS_ASKED !== null && MAX_POINTS !== Number(POINTS_ASKED))
      showControl("points=" + POINTS_ASKED + " ignored (a whole number, at least 100): " +
                  fmtCount(MAX_POINTS) + " points kept per series", true);
    try {
      S.info = await getJSON("api/info");
      renderInfo();
    } catch (e) {
      setConn("no server: " + e.message, "conn-bad");
    }
    try {
      renderEvents(await getJSON("api/events"));
    } catch (e) { /* the stream's state brings them */ }
    autoChart();
    openStream();
    setInterval(pollInfo, 2000);
    setInterval(pollHists, 1000);
  }

  // ------------------------------------------------- span histograms
  // A span's durations as a histogram: the server counts every span that
  // ended since it began reading (live) or in the whole trace (replay),
  // in log-spaced buckets, 8 per power of two (api/hist); the page draws
  // them on a log axis and marks p50, p90 and p99: the bucket that holds
  // the nearest-rank percentile, as fdr stats ranks. Live it is fetched
  // again every second; a replay's once it is complete.
  const HIST_QS = [["p50", 0.5], ["p90", 0.9], ["p99", 0.99]];

  function histBox(ev) {
    const lab = document.createElement("label");
    lab.className = "field";
    const cb = document.createElement("input");
    cb.type = "checkbox";
    cb.dataset.hist = ev.id;
    cb.setAttribute("aria-label", "histogram of " + ev.id + ".span_ns");
    cb.checked = S.hists.has(ev.id);
    cb.addEventListener("change", () => (cb.checked ? addHist(ev.id) : removeHist(ev.id)));
    lab.append(cb, document.createTextNode(" hist"));
    lab.title = "histogram of the durations of " + ev.id;
    return lab;
  }

  function fmtDur(ns) {
    const u = [[1e9, "s"], [1e6, "ms"], [1e3, "µs"]];
    for (const [k, name] of u)
      if (ns >= k)
        return +(ns / k).toPrecision(3) + " " + name;
    return +ns.toPrecision(3) + " ns";
  }

  // [lo, hi) of the bucket holding the nearest-rank q-quantile
  function histQuantile(h, q) {
    const want = Math.max(Math.ceil(q * h.count), 1);
    let seen = 0;
    for (const [lo, hi, n] of h.buckets) {
      seen += n;
      if (seen >= want)
        return [lo, hi];
    }
    return null;
  }

  function addHist(id) {
    if (S.hists.has(id))
      return;
    const el = document.createElement("div");
    el.className = "hist";
    el.dataset.hist = id;
    const head = document.createElement("div");
    head.className = "chart-head";
    const title = document.createElement("span");
    title.className = "chart-title";
    title.textContent = id + ".span_ns — histogram";
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "×";
    close.title = "close";
    close.addEventListener("click", () => removeHist(id));
    head.append(title, close);
    const canvas = document.createElement("canvas");
    canvas.className = "hist-plot";
    const summary = document.createElement("p");
    summary.className = "hist-summary note";
    el.append(head, canvas, summary);
    $("hists").append(el);
    const h = {id, el, canvas, summary, data: null, final: false, busy: false};
    S.hists.set(id, h);
    syncHistBoxes();
    fetchHist(h);
  }

  function removeHist(id) {
    const h = S.hists.get(id);
    if (!h)
      return;
    h.el.remove();
    S.hists.delete(id);
    syncHistBoxes();
  }

  function syncHistBoxes() {
    for (const cb of document.querySelectorAll("input[data-hist]"))
      cb.checked = S.hists.has(cb.dataset.hist);
  }

  async function fetchHist(h) {
    if (h.busy || h.final)
      return;
    h.busy = true;
    const complete = S.info && S.info.mode === "replay" && S.done;
    try {
      const d = await getJSON("api/hist?event=" + encodeURIComponent(h.id));
      h.data = {count: d.count, buckets: d.buckets};
      for (const [name, q] of HIST_QS)
        h.data[name] = d.count ? histQuantile(d, q) : null;
      h.final = complete; // a replay read to its end does not change
      drawHist(h);
    } catch (e) {
      h.summary.textContent = "histogram: " + e.message;
    } finally {
      h.busy = false;
    }
  }

  function drawHist(h) {
    const d = h.data, cv = h.canvas;
    const w = Math.max(200, Math.floor(h.el.clientWidth - 12 || 600)), ht = 160;
    const dpr = window.devicePixelRatio || 1;
    cv.width = w * dpr;
    cv.height = ht * dpr;
    cv.style.width = w + "px";
    cv.style.height = ht + "px";
    const g = cv.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, ht);
    const parts = ["n = " + fmtCount(d.count)];
    for (const [name] of HIST_QS)
      if (d[name])
        parts.push(name + " " + fmtDur(d[name][0]) + " – " + fmtDur(d[name][1]));
    h.summary.textContent = d.count ? parts.join(" · ") + " (the bucket holding each)"
                                    : "no span ended yet";
    if (!d.count)
      return;
    // x: log10 of ns over the buckets held, one decade at least
    const lo = Math.max(1, d.buckets[0][0]), hi = d.buckets[d.buckets.length - 1][1];
    let x0 = Math.floor(Math.log10(lo)), x1 = Math.ceil(Math.log10(hi));
    if (x1 <= x0)
      x1 = x0 + 1;
    const L = 40, R = w - 8, T = 14, B = ht - 20;
    const X = (ns) => L + (Math.log10(Math.max(ns, 1)) - x0) / (x1 - x0) * (R - L);
    const top = Math.max(...d.buckets.map((b) => b[2]));
    g.fillStyle = PALETTE[0];
    for (const [a, b, n] of d.buckets) {
      const xa = X(Math.max(a, 1)), xb = Math.max(X(b), xa + 1);
      const y = B - n / top * (B - T);
      g.fillRect(xa, y, xb - xa, B - y);
    }
    g.strokeStyle = "#888";
    g.fillStyle = "#333";
    g.font = "11px sans-serif";
    g.beginPath();
    g.moveTo(L, B + 0.5);
    g.lineTo(R, B + 0.5);
    g.stroke();
    for (let k = x0; k <= x1; k++) {
      const x = X(10 ** k);
      g.fillText(fmtDur(10 ** k), Math.min(x, R - 30), ht - 5);
      g.fillRect(x, B, 1, 4);
    }
    g.fillText(fmtCount(top), 2, T + 4);
    g.fillText("0", 2, B);
    const colours = {p50: "#2ca02c", p90: "#ff7f0e", p99: "#d62728"};
    for (const [name] of HIST_QS) {
      const q = d[name];
      const x = Math.round(X(Math.sqrt(Math.max(q[0], 1) * q[1])));
      g.fillStyle = colours[name];
      g.fillRect(x, T, 1.5, B - T);
      g.fillText(name, x + 3, T + 10 + 11 * HIST_QS.findIndex((e) => e[0] === name));
    }
  }

  function pollHists() {
    for (const h of S.hists.values())
      fetchHist(h);
  }

  // ---------------------------------------------- read-only hook (tests)
  window.fdrScope = Object.freeze({
    get ready() { return S.ready; },
    get paused() { return S.paused; },
    get draws() { return S.draws; },
    get pointsReceived() { return S.pointsReceived; },
    get done() { return S.done; },
    // replay: the view on screen is the server's answer for it (api/range)
    get settled() { return !S.refineTimer && S.refining === 0 && S.refined === S.refineGen; },
    // replay: how many answers of api/range were handled (put in place, or
    // dropped as stale); how many hello messages the streams brought
    get rangeAnswers() { return S.rangeAnswers; },
    get hellos() { return S.hellos; },
    get infoAnswers() { return S.infoAnswers; },
    get thinned() { return S.thinned; },
    // the breaks of key's line in the data given to uPlot: [before, after]
    gaps(key) {
      const out = [];
      for (const c of S.charts) {
        const i = c.given ? c.given.keys.indexOf(key) : -1;
        if (i < 0)
          continue;
        const x = c.given.data[0], y = c.given.data[i + 1];
        let prev = null;
        for (let j = 0; j < x.length; j++) {
          if (y[j] === null) {
            let k = j + 1;
            while (k < x.length && y[k] == null)
              k++;
            if (prev !== null && k < x.length)
              out.push([prev, x[k]]);
          } else if (y[j] !== undefined) {
            prev = x[j];
          }
        }
      }
      return out;
    },
    // whether uPlot draws key's points (a sparse view)
    pointsShown(key) {
      for (const c of S.charts) {
        const i = c.given && c.u ? c.given.keys.indexOf(key) : -1;
        if (i >= 0)
          return !!c.u.series[i + 1].points.show(c.u, i + 1);
      }
      return null;
    },
    get connected() { return !!S.es && S.es.readyState === EventSource.OPEN; },
    info: () => (S.info ? JSON.parse(JSON.stringify(S.info)) : null),
    series: () => S.charts.flatMap((c) => (c.given ? c.given.keys : [])),
    charts: () => S.charts.map((c) => ({id: c.id, fields: c.fields.slice(), split: c.split,
                                        keys: c.given ? c.given.keys.slice() : [],
                                        points: c.given ? c.given.data[0].length : 0,
                                        labels: c.statsRows ? c.statsRows.map((r) => [r.label.textContent, r.label.title]) : [],
                                        axes: c.u ? c.u.axes.slice(1).map((a) => a.label) : [],
                                        xmin: c.u ? c.u.scales.x.min : null,
                                        xmax: c.u ? c.u.scales.x.max : null})),
    lastPoints(key, n) {
      for (const c of S.charts) {
        if (!c.given)
          continue;
        const i = c.given.keys.indexOf(key);
        if (i < 0)
          continue;
        const x = c.given.data[0], y = c.given.data[i + 1], out = [];
        for (let j = x.length - 1; j >= 0 && out.length < n; j--)
          if (y[j] != null)
            out.push([x[j], y[j]]);
        return out.reverse();
      }
      return [];
    },
    // the last n points the page holds for key, whatever the view shows
    // (a series that stopped long ago is outside a short window)
    held(key, n) {
      const s = S.store.get(key);
      if (!s)
        return [];
      const lo = Math.max(0, s.t.length - n);
      return s.t.slice(lo).map((t, i) => [t, s.v[lo + i]]);
    },
    csv: (chartId) => {
      const c = S.charts.find((x) => x.id === chartId);
      return c ? csvOf(c) : null;
    },
    pngSize: (chartId) => {
      const c = S.charts.find((x) => x.id === chartId);
      if (!c || !c.u)
        return null;
      const cv = pngCanvas(c);
      return [cv.width, cv.height];
    },
    errors: () => S.errors.slice(),
    tail: () => tailBuf.slice(),
    // the span histograms on the page: what they were drawn from, and the
    // line printed under each
    hists: () => [...S.hists.values()].map((h) => ({
      id: h.id, final: h.final, text: h.summary.textContent,
      ...(h.data ? JSON.parse(JSON.stringify(h.data)) : {count: null})})),
  });

  start();
})();
