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
  const MAX_POINTS = 200000;   // per series kept in the page (oldest dropped)
  const MAX_FIELDS = 32;       // the stream's limit
  const TAIL_LINES = 500;

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
    const note = i.control ? "" : (i.mode === "replay" ? "Replay: switches and tunables are read-only."
                                                          : "No control: switches and tunables are read-only.");
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

  async function pollInfo() {
    try {
      S.info = await getJSON("api/info");
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

  function canSwitch(ev, what) {
    return !!(S.info && S.info.control && ev[what] !== null && ev[what] !== undefined);
  }

  function fieldKey(ev, f) {
    return ev.id + "." + f.name;
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
      if (!r.ok)
        cb.checked = !want;
      else
        cb.dataset.sentAt = String(Date.now());
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
      // the server's word, unless a change of ours is in flight or just sent
      const recent = cb.dataset.sentAt && Date.now() - Number(cb.dataset.sentAt) < 1500;
      if (!cb.dataset.pending && !recent)
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

  // a first chart: the first numeric field, once, as soon as one is known,
  // so that a new page shows something; the person picks others
  function autoChart() {
    if (S.autoCharted || S.charts.length)
      return;
    const first = [...S.events.values()].sort((a, b) => a.id.localeCompare(b.id))
      .flatMap((ev) => (ev.fields || []).filter((f) => f.numeric).map((f) => fieldKey(ev, f)))[0];
    if (first) {
      S.autoCharted = true;
      addChart([first]);
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
    const off = !(S.info && S.info.control);
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
    const tu = {t, div, lastSent: 0, timer: null, busyUntil: 0, pendingValue: null};
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
    def.textContent = "default " + fmtNum(t.default, t.double);
    div.append(def);
    setTunableDisabled(tu);
    return tu;
  }

  // At most one request per 100 ms while a slider moves; the last value is
  // always sent (final = the change event: at once).
  function sendTunable(tu, value, final) {
    tu.busyUntil = Date.now() + 1500;
    tu.pendingValue = value;
    const now = Date.now();
    const go = () => {
      tu.timer = null;
      const v = tu.pendingValue;
      if (v === null)
        return;
      tu.pendingValue = null;
      tu.lastSent = Date.now();
      control({what: "tunable", name: tu.t.name, value: v});
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
      if (Date.now() > tu.busyUntil && !active && tu.pendingValue === null) {
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

  function addPoints(msg) {
    let n = 0;
    for (const ser of msg.series || []) {
      const s = seriesOf(ser.key);
      const t = ser.t || [], v = ser.v || [];
      const len = Math.min(t.length, v.length);
      let last = s.t.length ? s.t[s.t.length - 1] : -Infinity;
      for (let i = 0; i < len; i++) {
        const ti = t[i];
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
      }
      if (last > S.tmax)
        S.tmax = last;
      if (ser.key.includes("@"))
        noteThreadSeries(ser.key);
    }
    S.pointsReceived += n;
    scheduleDraw();
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
    c.title.textContent = c.fields.join(", ");
    // the first field on the left axis, the second (when there is one) on
    // a right axis of its own scale; more fields share the left one
    const fieldOfKey = (k) => (k.includes("@") ? k.slice(0, k.indexOf("@")) : k);
    const scaleOf = (k) => (c.fields.length > 1 && fieldOfKey(k) === c.fields[1] ? "y2" : "y");
    const series = [{label: "time"}];
    c.keys.forEach((k, i) => series.push({
      label: k,
      scale: scaleOf(k),
      stroke: PALETTE[i % PALETTE.length],
      width: 1.25,
      spanGaps: true,
      points: {show: false},
    }));
    // axis width from its longest label (uPlot calls it as labels change)
    const axisSize = (u, values) => {
      if (!values || !values.length)
        return 40;
      const chars = Math.max(...values.map((v) => String(v).length));
      return Math.ceil(chars * 7.5) + 18;
    };
    const axes = [{}, {scale: "y", size: axisSize}];
    const scales = {x: {time: true, auto: false}, y: {auto: true}};
    if (c.keys.some((k) => scaleOf(k) === "y2")) {
      scales.y2 = {auto: true};
      axes.push({scale: "y2", side: 1, size: axisSize, grid: {show: false}, stroke: PALETTE[c.keys.findIndex((k) => scaleOf(k) === "y2") % PALETTE.length]});
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

  function sliceFor(c, view) {
    const cols = [];
    for (const k of c.keys) {
      const s = S.store.get(k) || {t: [], v: []};
      let lo = 0, hi = s.t.length;
      if (view) {
        lo = Math.max(0, lowerBound(s.t, view[0]) - 1);           // one before: lines enter the view
        hi = Math.min(s.t.length, lowerBound(s.t, view[1] + 1e-9) + 1);
      }
      cols.push([s.t.slice(lo, hi), s.v.slice(lo, hi)]);
    }
    if (cols.length === 1)
      return [cols[0][0], cols[0][1]];
    if (!cols.length)
      return [[]];
    return uPlot.join(cols.map((col) => [col[0], col[1]]));
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
        name.append(sw, breakable(k));
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
        return cells;
      });
    }
    const x = d[0];
    const lo = view ? lowerBound(x, view[0]) : 0;
    const hi = view ? lowerBound(x, view[1] + 1e-9) : x.length;
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
  }

  function resetZoom() {
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
    // the new stream sends its history again (hello clears too, for the
    // reconnections EventSource makes by itself)
    S.store.clear();
    S.tmax = -Infinity;
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
      // the server sends its history of the chosen series again: start over
      S.store.clear();
      S.tmax = -Infinity;
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
      addTail(JSON.parse(e.data).lines || []);
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
    });
  }

  // ----------------------------------------------------------------- tail
  let tailBuf = [];
  let tailPending = false;
  function addTail(lines) {
    tailBuf.push(...lines);
    if (tailBuf.length > TAIL_LINES)
      tailBuf = tailBuf.slice(-TAIL_LINES);
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
  }

  // ---------------------------------------------- read-only hook (tests)
  window.fdrScope = Object.freeze({
    get ready() { return S.ready; },
    get paused() { return S.paused; },
    get draws() { return S.draws; },
    get pointsReceived() { return S.pointsReceived; },
    get done() { return S.done; },
    get connected() { return !!S.es && S.es.readyState === EventSource.OPEN; },
    info: () => (S.info ? JSON.parse(JSON.stringify(S.info)) : null),
    series: () => S.charts.flatMap((c) => (c.given ? c.given.keys : [])),
    charts: () => S.charts.map((c) => ({id: c.id, fields: c.fields.slice(), split: c.split,
                                        keys: c.given ? c.given.keys.slice() : [],
                                        points: c.given ? c.given.data[0].length : 0,
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
  });

  start();
})();
