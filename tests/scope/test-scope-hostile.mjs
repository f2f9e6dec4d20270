// SPDX-License-Identifier: MIT
// test-scope-hostile.mjs - bad input to `fdr scope -- scope-prog`, from
// plain HTTP clients and from a browser, changes nothing for the program:
//   - without the token, with a wrong one (another case, one digit short,
//     one digit changed), in the query or the X-Fdr-Token header: 403 on
//     every path, the control posts included (a switch and a tunable);
//   - a foreign page in Chromium posting a form or a no-cors fetch to
//     api/control (CSRF), and a page of the scope's origin without the
//     token: refused;
//   - malformed control bodies (400), a body over 4 KiB (413), other
//     methods (405), unknown paths (404), a 20 KB URL and a 9 KB header
//     (431 or the connection closed), streams closed mid-way, a 17th
//     stream (503);
// then the server still answers, the program still runs, and its own trace
// (FDR_OUTPUT, bt2) shows scope:tick recorded to the end and gain at its
// default 5 all along. Last, the same posts with the token do take effect
// (the refusals above were not a broken control path).
import net from "node:net";
import path from "node:path";
import {A, Session, check, log, waitFor, sleep, readTrace, getJSON, pidAlive, main} from "./lib.mjs";

// One raw HTTP request on its own connection; resolves with the status
// (0 when the server closed the connection without an answer) and body.
function raw(port, text, {readMs = 0} = {}) {
  return new Promise((resolve) => {
    const sock = net.connect(port, "127.0.0.1");
    let buf = "";
    let done = false;
    const finish = () => {
      if (done)
        return;
      done = true;
      sock.destroy();
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(buf);
      resolve({status: m ? Number(m[1]) : 0, text: buf});
    };
    sock.setEncoding("latin1");
    sock.on("data", (d) => {
      buf += d;
      if (readMs && buf.length > 0)
        setTimeout(finish, readMs);
    });
    sock.on("end", finish);
    sock.on("close", finish);
    sock.on("error", finish);
    sock.write(text);
  });
}

function req(method, target, {headers = {}, body = null} = {}) {
  let h = `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`;
  for (const [k, v] of Object.entries(headers))
    h += `${k}: ${v}\r\n`;
  if (body !== null)
    h += `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  return h + "\r\n" + (body || "");
}

main("scope-hostile", async () => {
  const s = new Session();
  s.startDaemon();
  const out = path.join(s.work, "trace");
  const sc = await s.scope(["--", A.prog, "--period-us", "10000"], {FDR_OUTPUT: out});
  const info = await getJSON(sc, "/api/info");
  check(info.running && info.control, "api/info: " + JSON.stringify(info));
  s.note(info.pid);
  const T = sc.token;
  const port = sc.port;
  const bad = [
    ["no token", ""],
    ["upper case", "?token=" + T.toUpperCase()],
    ["one digit short", "?token=" + T.slice(0, 31)],
    ["one digit changed", "?token=" + T.slice(0, 31) + (T[31] === "0" ? "1" : "0")],
    ["twice, first wrong", "?token=" + "0".repeat(32) + "&token=" + T],
    ["empty", "?token="],
  ];
  const switchOff = "what=record&event=scope:tick&on=0";
  const gain77 = "what=tunable&name=gain&value=77";
  let n = 0;
  for (const [what, q] of bad) {
    for (const p of ["/", "/static/scope.js", "/static/uPlot.iife.min.js", "/api/info", "/api/events", "/api/stream"]) {
      const r = await raw(port, req("GET", p + q));
      check(r.status === 403, `GET ${p} (${what}): ${r.status}`);
      n++;
    }
    for (const body of [switchOff, gain77, "what=print&event=scope:level&on=1"]) {
      const r = await raw(port, req("POST", "/api/control" + q, {body}));
      check(r.status === 403, `POST api/control ${body} (${what}): ${r.status}`);
      n++;
    }
  }
  for (const hdr of [T.toUpperCase(), T.slice(1), "x".repeat(32), T + "0"]) {
    const r = await raw(port, req("POST", "/api/control", {headers: {"X-Fdr-Token": hdr}, body: switchOff}));
    check(r.status === 403, `POST api/control with X-Fdr-Token ${hdr}: ${r.status}`);
    n++;
  }
  log(`${n} requests without a valid token: all 403`);

  // malformed, with the token
  const tq = "?token=" + T;
  const cases = [
    ["POST", "/api/control", "what=bogus", [400]],
    ["POST", "/api/control", "what=record&event=no:such&on=0", [400]],
    ["POST", "/api/control", "what=record&event=scope:tick&on=2", [400]],
    ["POST", "/api/control", "what=record&event=scope:tick", [400]],
    ["POST", "/api/control", "what=tunable&name=gain&value=1000", [400]],
    ["POST", "/api/control", "what=tunable&name=gain&value=-1", [400]],
    ["POST", "/api/control", "what=tunable&name=gain&value=abc", [400]],
    ["POST", "/api/control", "what=tunable&name=gain&value=7.5", [400]],
    ["POST", "/api/control", "what=tunable&name=nope&value=1", [400]],
    ["POST", "/api/control", "what=tunable&name=gain&value=77&" + "x=" + "a".repeat(5000), [413, 400]],
    ["POST", "/api/control", "%%%&&&===", [400]],
    ["GET", "/api/control", null, [405]],
    ["PUT", "/", "what=tunable&name=gain&value=77", [405]],
    ["DELETE", "/api/info", null, [405]],
    ["GET", "/nope", null, [404]],
    ["GET", "/static/../../etc/passwd", null, [404, 400]],
    ["GET", "/static/nope.js", null, [404]],
    ["GET", "/api/info?x=" + "a".repeat(20000), null, [431, 414, 400, 0]],
  ];
  for (const [m, p, body, ok] of cases) {
    const t = Date.now();
    const r = await raw(port, req(m, p + (p.includes("?") ? "&token=" + T : tq), {body}));
    check(ok.includes(r.status), `${m} ${p.slice(0, 60)} ${body ? body.slice(0, 60) : ""}: ${r.status}, expected ${ok}`);
    if (Date.now() - t > 2000)
      log(`slow answer (${Date.now() - t} ms): ${m} ${p.slice(0, 60)}`);
  }
  const big = await raw(port, req("GET", "/api/info" + tq, {headers: {"X-Big": "a".repeat(9000)}}));
  check([431, 400, 0].includes(big.status), "a 9 KB header: " + big.status);
  // a body cut short, the connection dropped
  await new Promise((resolve) => {
    const sock = net.connect(port, "127.0.0.1", () => {
      sock.write(`POST /api/control${tq} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
                 `Content-Length: 100\r\n\r\nwhat=tunable&name=gain&val`);
      setTimeout(() => { sock.destroy(); resolve(); }, 100);
    });
    sock.on("error", resolve);
  });
  log(`${cases.length + 2} malformed requests refused`);

  // streams closed mid-way; the 17th of 17 open streams refused
  // (a slot is freed once the server notices the close, within a round:
  // under a busy machine a later stream may find all 16 still taken)
  let opened = 0;
  for (let i = 0; i < 20; i++) {
    const r = await raw(port, req("GET", "/api/stream" + tq + "&fields=scope:level.value,scope:wave.x&split=1&tail=*"), {readMs: 30});
    check(r.status === 200 || r.status === 503, "a stream: " + r.status);
    opened += r.status === 200;
  }
  check(opened >= 10, `${opened} of 20 streams opened and dropped`);
  // 16 streams held open (the server frees the slots of the streams
  // dropped above once it notices: until all 16 open, start again), then a
  // 17th: 503
  const openStream = () => new Promise((resolve) => {
    const sock = net.connect(port, "127.0.0.1");
    let buf = "";
    sock.setEncoding("latin1");
    sock.on("data", (d) => {
      buf += d;
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(buf);
      if (m)
        resolve({sock, status: Number(m[1])});
    });
    sock.on("error", () => resolve({sock, status: 0}));
    sock.on("close", () => resolve({sock, status: 0}));
    sock.write(req("GET", "/api/stream" + tq + "&fields=scope:level.value"));
  });
  const r17 = await waitFor(async () => {
    const held = [];
    let r = null;
    for (let i = 0; i < 16; i++) {
      const h = await openStream();
      held.push(h);
      if (h.status !== 200)
        break;
    }
    if (held.length === 16 && held[15].status === 200)
      r = await openStream();
    for (const h of held)
      h.sock.destroy();
    if (!r)
      await sleep(1000);                  // a slot not yet freed: again
    return r;
  }, "16 streams open at once");
  r17.sock.destroy();
  check(r17.status === 503, "the 17th stream: " + r17.status);
  await waitFor(async () => (await raw(port, req("GET", "/api/stream" + tq), {readMs: 20})).status === 200,
                "a stream again once the 16 are closed");
  log("streams closed mid-way; 17th refused with 503");

  // from a browser: a foreign page (CSRF) and the scope's origin without token
  const browser = await s.browser();
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.setContent(`<form id=f method=post action="${sc.base}/api/control">` +
                        `<input name=what value=tunable><input name=name value=gain><input name=value value=77></form>`);
  const [nav] = await Promise.all([page.waitForNavigation(), page.evaluate(() => document.getElementById("f").submit())]);
  check(nav && nav.status() === 403, "a foreign form's post: " + (nav && nav.status()));
  await page.goto("about:blank");
  await page.evaluate(async ([base, body]) => {
    await fetch(base + "/api/control", {method: "POST", mode: "no-cors", body,
                                        headers: {"Content-Type": "application/x-www-form-urlencoded"}}).catch(() => null);
  }, [sc.base, switchOff]);
  const home = await page.goto(sc.base + "/");
  check(home.status() === 403, "the page without its token: " + home.status());
  const same = await page.evaluate(async ([a, b]) => {
    const out = [];
    for (const body of [a, b]) {
      const r = await fetch("/api/control", {method: "POST", body,
                                             headers: {"Content-Type": "application/x-www-form-urlencoded"}});
      out.push(r.status);
    }
    const es = await new Promise((res) => {
      const e = new EventSource("/api/stream?fields=scope:level.value");
      e.onerror = () => { res(e.readyState); e.close(); };
      e.onopen = () => { res("open"); e.close(); };
    });
    out.push(es);
    return out;
  }, [switchOff, gain77]);
  check(same[0] === 403 && same[1] === 403 && same[2] === 2, "same-origin requests without the token: " + JSON.stringify(same));
  await ctx.close();
  await browser.close();
  log("browser: foreign form post, no-cors fetch, token-less page, fetches and EventSource refused");

  // nothing changed: the server answers, the program runs, the state is intact
  const st = await getJSON(sc, "/api/events");
  const tick = st.events.find((e) => e.id === "scope:tick");
  check(tick && tick.recorded === true, "scope:tick still recorded: " + JSON.stringify(tick));
  const gain = st.tunables.find((t) => t.name === "gain");
  check(gain && gain.value === 5, "gain still 5: " + JSON.stringify(gain));
  check(pidAlive(info.pid), "scope-prog still runs");
  const countAt = tick.count;
  await waitFor(async () => (await getJSON(sc, "/api/events")).events.find((e) => e.id === "scope:tick").count > countAt + 20,
                "scope:tick goes on being recorded");

  // the same requests with the token do act (then the program ends)
  const ok1 = await raw(port, req("POST", "/api/control" + tq, {body: gain77}));
  check(ok1.status === 200, "gain=77 with the token: " + ok1.status + " " + ok1.text.slice(-80));
  await waitFor(async () => (await getJSON(sc, "/api/events")).tunables.find((t) => t.name === "gain").value === 77,
                "gain 77 once posted with the token");
  process.kill(info.pid, "SIGTERM");
  await waitFor(() => !pidAlive(info.pid), "scope-prog ends");
  await waitFor(async () => !(await getJSON(sc, "/api/info")).running, "api/info: not running");
  const events = readTrace(out);
  const gains = events.filter((e) => e.name === "scope:gain").map((e) => e.fields.value);
  const first77 = gains.indexOf(77);
  check(first77 > 0 && gains.slice(0, first77).every((v) => v === 5),
        "the program read gain 5 until the post with the token, then 77");
  const levels = events.filter((e) => e.name === "scope:level").length;
  const ticks = events.filter((e) => e.name === "scope:tick").length;
  check(ticks === levels, `scope:tick recorded all along: ${ticks} ticks, ${levels} levels`);
  check(errors.length === 0, "page errors: " + errors.join("; "));
  log(`trace: ${levels} loops, every tick recorded, gain 5 until the valid post`);
  await s.stopScope(sc);
});
