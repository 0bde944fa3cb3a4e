// mcptrace HTML report: draws the embedded data (schema mcptrace.htmlreport/v1)
// as hand-made SVG. No network, no library: the page works from a file URL.
"use strict";
(function () {
  var t0 = performance.now();
  var D = JSON.parse(document.getElementById("mcptrace-data").textContent);
  var root = document.getElementById("report");
  var SVG = "http://www.w3.org/2000/svg";
  var CAUSES = ["hit"].concat(D.miss_causes.map(function (c) { return c.name; }));

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function sv(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  function pct(v) { return v === null || v === undefined ? "n/a" : (100 * v).toFixed(1) + "%"; }
  function ms(v) {
    if (v === null || v === undefined) return "n/a";
    if (v >= 1000) return (v / 1000).toFixed(2) + " s";
    if (v >= 1) return v.toFixed(2) + " ms";
    return (v * 1000).toFixed(0) + " µs";
  }
  function color(name) { return "var(--" + name + ")"; }
  function link(traceID) {
    if (!D.trace_url) return null;
    return D.trace_url.split("{trace_id}").join(encodeURIComponent(traceID));
  }

  var tip = add(document.body, el("div", { id: "tip", role: "tooltip" })).lastChild;
  function showTip(ev, text) {
    tip.textContent = text;
    tip.style.display = "block";
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 360) + "px";
    tip.style.top = (ev.clientY + 12) + "px";
  }
  function hideTip() { tip.style.display = "none"; }

  // Header and verdict.
  add(root, el("h1", {}, "mcptrace report"));
  add(root, el("div", { "class": "muted" }, (D.inputs.length ? D.inputs.join(", ") : "no input") +
    (D.window.start ? " · " + D.window.start + " → " + D.window.end + " (" + ms(D.window.duration_ms) + ")" : "")));
  if (D.verdict) {
    var v = D.verdict, c = v.counts;
    add(root, el("div", { "class": "verdict " + v.verdict, id: "verdict", "data-verdict": v.verdict },
      "verdict: " + v.verdict.toUpperCase() + " (exit " + v.exit_code + ") · " + c.pass + " passed, " + c.fail + " failed, " +
      c.incomplete + " incomplete" + (c.regressions ? ", " + c.regressions + " regressed" : "")));
  } else {
    add(root, el("div", { "class": "verdict none", id: "verdict", "data-verdict": "none" },
      "Analysis only: no rules were judged (mcptrace check --html FILE puts a verdict here)."));
  }
  if (D.partial) add(root, el("div", { "class": "note warn" }, "Partial: an input was damaged; only the spans read before the damage are shown."));

  // Headline figures.
  var H = D.headline;
  var tiles = el("div", { "class": "tiles", id: "headline" });
  function tile(k, v, title) { add(tiles, add(el("div", { "class": "tile", title: title || "" }), el("div", { "class": "v" }, v), el("div", { "class": "k" }, k))); }
  tile("acquires", H.acquires, H.hits + " hits, " + H.misses + " misses");
  tile("hit rate", pct(H.hit_rate));
  tile("ceiling (1 − cold-start floor)", H.cold_start_floor === null ? "n/a" : pct(1 - H.cold_start_floor), "the best hit rate any pool could reach on this traffic");
  tile("excess misses", H.excess_misses, "misses above the cold-start floor");
  tile("unexplained misses", H.unexplained_misses);
  tile("handshakes", H.handshakes);
  if (H.executions_measurable === false) tile("executions on several sessions", "not measurable", H.executions_why_not);
  else tile("executions on several sessions", H.multi_session_executions + " / " + H.executions);
  H.reads_per_request.forEach(function (r) {
    tile("reads per request: " + r.name, r.mean === null ? "n/a" : r.mean.toFixed(2), r.requests + " requests, " + r.unexpected + " unexpected" + (r.expect !== null ? " (expected " + r.expect + ")" : ""));
  });
  tile("spans / traces", H.spans + " / " + H.traces, H.incomplete_traces + " incomplete traces");
  add(root, tiles);
  add(root, el("div", { "class": "note", id: "sampling", "data-hit-stride": D.sampling.hit_stride }, D.sampling.note));

  // Offenders.
  add(root, el("h2", {}, "Offenders"));
  var offs = el("div", { id: "offenders" });
  if (!D.offenders.length) add(offs, el("p", { "class": "muted" }, D.verdict ? "Every rule passed." : "No unexplained misses and no execution on several sessions."));
  D.offenders.forEach(function (o) {
    var box = el("div", { "class": "offender " + o.severity, "data-rule": o.id });
    add(box, el("h3", {}, o.id + " — " + o.status + " (" + o.severity + ")"));
    if (o.expected) add(box, el("div", {}, "expected: " + o.expected));
    if (o.found) add(box, el("div", {}, "found: " + o.found));
    if (o.traceql) add(box, el("div", { "class": "muted" }, "TraceQL:"), el("code", { "class": "query" }, o.traceql));
    var ul = el("ul");
    o.examples.forEach(function (x) {
      var li = el("li", { "class": "offender-trace", "data-trace-id": x.trace_id });
      if (x.url) add(li, el("a", { href: x.url, target: "_blank", rel: "noopener noreferrer", "class": "mono" }, x.trace_id));
      else add(li, el("span", { "class": "mono" }, x.trace_id));
      if (x.span_id) add(li, el("span", { "class": "mono muted" }, " span " + x.span_id));
      add(li, el("code", { "class": "query" }, x.traceql));
      add(ul, li);
    });
    if (!o.examples.length) add(ul, el("li", { "class": "muted" }, "no example traces"));
    add(offs, add(box, ul));
  });
  add(root, offs);

  // Misses by cause, over all scopes.
  add(root, el("h2", {}, "Misses by cause"));
  add(root, add(el("div", { "class": "chart narrow" }), bars(D.miss_causes, "misses-by-cause")));

  // Per scope: the session timeline, hit rate over time, causes.
  add(root, el("h2", {}, "Pool scopes"));
  var legend = el("div", { "class": "legend" });
  CAUSES.forEach(function (c) { add(legend, el("span", { style: "--c:" + color(c) }, c)); });
  add(legend, el("span", { style: "--c:" + color("handshake") }, "handshake"), el("span", { style: "--c:" + color("handshake-failed") }, "failed handshake"));
  add(root, legend);
  if (!D.scopes.length) add(root, el("p", { "class": "muted" }, "No pool spans in this dump."));
  var rest = null;
  D.scopes.forEach(function (sc, i) {
    var sec = el(sc.timeline ? "section" : "details", { "class": "scope" + (sc.timeline ? "" : " undrawn"), "data-scope": sc.scope, id: "scope-" + i });
    if (!sc.timeline) {
      if (!rest) {
        rest = el("div", { id: "undrawn-scopes" });
        add(rest, el("h3", {}, "Other scopes (no timeline: outside the " + D.sampling.scopes_drawn + " busiest)"));
        add(root, rest);
      }
      add(sec, el("summary", {}, "scope " + (sc.scope || "(unnamed)") + " — " + sc.acquires + " acquires, hit rate " + pct(sc.hit_rate) + ", " + sc.sessions + " sessions"));
      var ch = el("div", { "class": "charts" });
      add(ch, add(el("div", { "class": "chart" }), el("h4", {}, "Hit rate and ceiling over time"), rateChart(sc)));
      add(ch, add(el("div", { "class": "chart" }), el("h4", {}, "Misses by cause"), bars(sc.miss_causes)));
      add(rest, add(sec, ch));
      return;
    }
    add(sec, el("h3", {}, "scope " + (sc.scope || "(unnamed)") + " — " + sc.acquires + " acquires, hit rate " + pct(sc.hit_rate) +
      ", ceiling " + (sc.cold_start_floor === null ? "n/a" : pct(1 - sc.cold_start_floor)) + ", " + sc.sessions + " sessions" +
      (sc.lanes.length < sc.sessions ? " (" + sc.lanes.length + " busiest drawn)" : "")));
    add(sec, timeline(sc));
    var charts = el("div", { "class": "charts" });
    add(charts, add(el("div", { "class": "chart" }, null), el("h4", {}, "Hit rate and ceiling over time"), rateChart(sc)));
    add(charts, add(el("div", { "class": "chart" }), el("h4", {}, "Misses by cause"), bars(sc.miss_causes)));
    add(sec, charts);
    add(root, sec);
  });
  if (D.sampling.scopes_left_out > 0) {
    add(rest || root, el("p", { "class": "muted", id: "scopes-left-out" }, "… and " + D.sampling.scopes_left_out + " more scopes, not listed (the least busy): every count, rate and cause above uses them."));
  }

  // Latency distributions.
  add(root, el("h2", {}, "Latency"));
  var lat = el("div", { "class": "charts", id: "latency" });
  D.latency.forEach(function (l) { add(lat, latencyChart(l)); });
  add(root, lat);

  function timeline(sc) {
    var wrap = el("div", { "class": "timeline" });
    var labels = el("div", { "class": "labels" });
    var laneH = 18, axisH = 20, width = 1000;
    var H = sc.lanes.length * laneH + axisH;
    var svg = sv("svg", { viewBox: "0 0 " + width + " " + H, preserveAspectRatio: "none", height: H, role: "img", "aria-label": "session timeline of scope " + sc.scope });
    // Each timeline spans its own scope's activity (times stay relative to
    // the dump's start), so a scope busy for a moment is not a sliver.
    var lo = Infinity, hi = -Infinity;
    sc.lanes.forEach(function (lane) {
      lane.marks.concat(lane.handshakes).forEach(function (m) { lo = Math.min(lo, m[0]); hi = Math.max(hi, m[0] + m[1]); });
    });
    if (!(hi > lo)) { lo = 0; hi = Math.max(D.window.duration_ms * 1000, 1); }
    var pad = (hi - lo) * 0.02;
    lo = Math.max(0, lo - pad); hi = hi + pad;
    function x(us) { return ((us - lo) / (hi - lo)) * width; }
    function w(us) { return (us / (hi - lo)) * width; }
    var bg = sv("g");
    add(svg, bg);
    sc.lanes.forEach(function (lane, li) {
      var y = li * laneH;
      add(labels, el("div", { title: lane.session || "(session unknown)" }, (lane.session || "(session unknown)") + " · " + lane.acquires));
      add(bg, sv("rect", { "class": "lane-bg", x: 0, y: y, width: width, height: laneH }));
      var g = sv("g", { "class": "lane", "data-session": lane.session, "data-acquires": lane.acquires });
      lane.handshakes.forEach(function (h, hi) {
        add(g, sv("rect", { "class": "mark handshake", x: x(h[0]), y: y + 11, width: Math.max(w(h[1]), 1.5), height: 5,
          fill: color(h[2] ? "handshake-failed" : "handshake"), "data-k": li + ":h:" + hi }));
      });
      lane.marks.forEach(function (m, mi) {
        var name = CAUSES[m[2]] || "unexplained";
        add(g, sv("rect", { "class": "mark acquire " + name, x: x(m[0]), y: y + 2, width: Math.max(w(m[1]), 2.5), height: 8, fill: color(name), "data-k": li + ":m:" + mi }));
      });
      add(svg, g);
    });
    // One listener per timeline: hovering a mark shows its ids, clicking it
    // opens the trace (with --trace-url).
    function markOf(ev) {
      var k = ev.target.getAttribute && ev.target.getAttribute("data-k");
      if (!k) return null;
      var p = k.split(":"), lane = sc.lanes[+p[0]], it = p[1] === "h" ? lane.handshakes[+p[2]] : lane.marks[+p[2]];
      var what = p[1] === "h" ? (it[2] ? "failed handshake " : "handshake ") + ms(it[1] / 1000)
        : (it[2] ? "miss: " + (CAUSES[it[2]] || "unexplained") : "hit") + " " + ms(it[1] / 1000);
      return { traceID: D.traces[it[3]], text: what + "\nsession " + (lane.session || "(unknown)") + "\ntrace " + D.traces[it[3]] + "\nspan  " + it[4] };
    }
    svg.addEventListener("mousemove", function (ev) {
      var m = markOf(ev);
      if (m) showTip(ev, m.text + (D.trace_url ? "\n(click to open the trace)" : "")); else hideTip();
    });
    svg.addEventListener("mouseleave", hideTip);
    svg.addEventListener("click", function (ev) {
      var m = markOf(ev), url = m && link(m.traceID);
      if (url) window.open(url, "_blank", "noopener");
    });
    var yAxis = sc.lanes.length * laneH;
    add(svg, sv("line", { "class": "axis", x1: 0, x2: width, y1: yAxis, y2: yAxis }));
    for (var t = 0; t <= 4; t++) {
      var tx = sv("text", { x: t * width / 4, y: yAxis + 14, "text-anchor": t === 0 ? "start" : t === 4 ? "end" : "middle" });
      tx.textContent = "+" + ms((lo + (hi - lo) * t / 4) / 1000);
      add(svg, tx);
    }
    add(labels, el("div", {}, ""));
    return add(wrap, labels, add(el("div"), svg));
  }

  function rateChart(sc) {
    var w = 360, h = 140, pad = 24;
    var svg = sv("svg", { viewBox: "0 0 " + w + " " + h, width: "100%", role: "img", "aria-label": "hit rate over time" });
    var n = sc.buckets.length;
    function X(i) { return pad + (i + 0.5) * (w - pad - 4) / n; }
    function Y(v) { return 4 + (1 - v) * (h - pad - 4); }
    add(svg, sv("line", { "class": "axis", x1: pad, x2: w - 4, y1: Y(0), y2: Y(0) }));
    [0, 0.5, 1].forEach(function (v) { var t = sv("text", { x: 0, y: Y(v) + 3 }); t.textContent = (100 * v) + "%"; add(svg, t); });
    var per = [], cum = [], ceil = [], acq = 0, hits = 0, cold = 0;
    sc.buckets.forEach(function (b, i) {
      acq += b[0]; hits += b[1]; cold += b[2];
      if (b[0] > 0) per.push(X(i) + "," + Y(b[1] / b[0]));
      if (acq > 0) { cum.push(X(i) + "," + Y(hits / acq)); ceil.push(X(i) + "," + Y(1 - cold / acq)); }
    });
    function line(pts, c, dash, label) {
      if (!pts.length) return;
      var p = sv("polyline", { points: pts.join(" "), fill: "none", stroke: color(c), "stroke-width": 1.5 });
      if (dash) p.setAttribute("stroke-dasharray", "4 3");
      var t = sv("title"); t.textContent = label; add(p, t);
      add(svg, p);
    }
    line(per, "rate", false, "hit rate per bucket");
    line(cum, "cum", false, "hit rate since start");
    line(ceil, "ceiling", true, "ceiling: 1 − cold-start floor since start");
    var lg = el("div", { "class": "legend" });
    add(lg, el("span", { style: "--c:" + color("rate") }, "per bucket"), el("span", { style: "--c:" + color("cum") }, "since start"), el("span", { style: "--c:" + color("ceiling") }, "ceiling"));
    return add(el("div"), svg, lg);
  }

  function bars(counts, id) {
    var max = 0;
    counts.forEach(function (c) { max = Math.max(max, c.count); });
    var w = 360, rowH = 16, h = counts.length * rowH + 4, lab = 90;
    var svg = sv("svg", { viewBox: "0 0 " + w + " " + h, width: "100%", role: "img", "aria-label": "misses by cause" });
    if (id) svg.setAttribute("id", id);
    counts.forEach(function (c, i) {
      var t = sv("text", { x: 0, y: i * rowH + 12 }); t.textContent = c.name; add(svg, t);
      var bw = max ? (w - lab - 50) * c.count / max : 0;
      add(svg, sv("rect", { x: lab, y: i * rowH + 3, width: Math.max(bw, c.count ? 1 : 0), height: rowH - 5, fill: color(c.name), "data-cause": c.name, "data-count": c.count }));
      var n = sv("text", { x: lab + bw + 4, y: i * rowH + 12 }); n.textContent = c.count; add(svg, n);
    });
    return svg;
  }

  function latencyChart(l) {
    var box = el("div", { "class": "chart", "data-series": l.name });
    add(box, el("h4", {}, l.name + " — " + l.count + " samples"));
    if (!l.count) return add(box, el("div", { "class": "muted" }, "no samples"));
    var w = 360, h = 110, pad = 4;
    var svg = sv("svg", { viewBox: "0 0 " + w + " " + (h + 16), width: "100%", role: "img", "aria-label": "latency histogram of " + l.name });
    var lo = Math.log10(l.buckets[0][0]) - 0.2, hi = Math.log10(l.buckets[l.buckets.length - 1][0]) + 0.2, top = 0;
    l.buckets.forEach(function (b) { top = Math.max(top, b[1]); });
    function X(v) { return pad + (Math.log10(Math.max(v, 1e-6)) - lo) / Math.max(hi - lo, 1e-9) * (w - 2 * pad); }
    l.buckets.forEach(function (b) {
      var x1 = X(b[0] / Math.pow(10, 0.2)), x2 = X(b[0]), bh = (h - 10) * b[1] / top;
      var r = sv("rect", { x: x1, y: h - bh, width: Math.max(x2 - x1 - 1, 1), height: bh, fill: color("cum") });
      var t = sv("title"); t.textContent = "≤ " + ms(b[0]) + ": " + b[1]; add(r, t);
      add(svg, r);
    });
    l.quantiles.forEach(function (q) {
      add(svg, sv("rect", { x: X(q.lo), y: 0, width: Math.max(X(q.hi) - X(q.lo), 1), height: h, fill: color("concurrent"), opacity: 0.15 }));
      add(svg, sv("line", { x1: X(q.ms), x2: X(q.ms), y1: 0, y2: h, stroke: color("concurrent") }));
      var t = sv("text", { x: Math.min(X(q.ms) + 2, w - 30), y: 10 }); t.textContent = "p" + Math.round(q.q * 100); add(svg, t);
    });
    [lo, (lo + hi) / 2, hi].forEach(function (v, i) {
      var t = sv("text", { x: i === 2 ? w - 50 : X(Math.pow(10, v)), y: h + 13 }); t.textContent = ms(Math.pow(10, v)); add(svg, t);
    });
    add(box, svg);
    var tb = el("table");
    add(tb, add(el("tr"), el("th", {}, "quantile"), el("th", {}, "value"), el("th", {}, "95% interval")));
    l.quantiles.forEach(function (q) {
      add(tb, add(el("tr"), el("td", {}, "p" + Math.round(q.q * 100)), el("td", {}, ms(q.ms)), el("td", {}, ms(q.lo) + " – " + ms(q.hi))));
    });
    return add(box, tb);
  }

  document.body.setAttribute("data-render-ms", (performance.now() - t0).toFixed(1));
  document.body.setAttribute("data-rendered", "true");
})();
