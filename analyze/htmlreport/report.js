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
    for (var i = 1; i < arguments.length; i++) {
      var c = arguments[i];
      if (typeof c === "string") c = document.createTextNode(c);
      if (c) parent.appendChild(c);
    }
    return parent;
  }
  // copyButton copies a query to the clipboard; where the page may not
  // (some browsers refuse file URLs), it selects the query in a prompt.
  function copyButton(query) {
    var b = el("button", { type: "button", "class": "copy", title: query, "data-traceql": query }, "copy TraceQL");
    b.addEventListener("click", function () {
      var done = function () { b.textContent = "copied"; setTimeout(function () { b.textContent = "copy TraceQL"; }, 1500); };
      if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(query).then(done, function () { window.prompt("TraceQL", query); });
      else window.prompt("TraceQL", query);
    });
    return b;
  }
  // pct draws a ratio as a percentage with one decimal, or as many more
  // (up to four) as it takes never to read 0% above 0 nor 100% below 1:
  // the rule of the text reports (textfmt.Percent in Go).
  function pct(v) {
    if (v === null || v === undefined) return "n/a";
    var p = 100 * v;
    for (var d = 1; d <= 4; d++) {
      var s = p.toFixed(d), f = +s;
      if ((f === 0 && p > 0) || (f === 100 && p < 100)) continue;
      return s + "%";
    }
    return p < 50 ? "<0.0001%" : ">99.9999%";
  }
  // num draws a count with thousands separators: 12,345.
  function num(n) {
    if (n === null || n === undefined) return "n/a";
    var s = String(n), i = s.indexOf("."), head = i < 0 ? s : s.slice(0, i), tail = i < 0 ? "" : s.slice(i);
    return head.replace(/\B(?=(\d{3})+$)/g, ",") + tail;
  }
  // plural counts a noun: "1 session", "2 sessions", "3,584 acquires".
  function plural(n, one, many) { return num(n) + " " + (n === 1 ? one : (many || one + "s")); }
  // ms draws a duration in milliseconds in one unit a person reads: µs, ms,
  // s, min or h.
  function ms(v) {
    if (v === null || v === undefined) return "n/a";
    if (v >= 3600000) return num(+(v / 3600000).toFixed(1)) + " h";
    if (v >= 60000) return (v / 60000).toFixed(1) + " min";
    if (v >= 1000) return (v / 1000).toFixed(2) + " s";
    if (v >= 1) return v.toFixed(2) + " ms";
    return (v * 1000).toFixed(0) + " µs";
  }
  // utc draws an RFC 3339 time (the data's, in UTC, to the nanosecond) as
  // people read it: 2026-11-30 09:00:30.158 UTC.
  function utc(t) {
    var m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?Z$/.exec(t || "");
    if (!m) return t;
    return m[1] + " " + m[2] + (m[3] ? m[3].slice(0, 4) : "") + " UTC";
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
  add(root, el("div", { "class": "muted", id: "window" }, (D.inputs.length ? D.inputs.join(", ") : "no input") +
    (D.window.start ? " · " + utc(D.window.start) + " → " + utc(D.window.end) + " (" + ms(D.window.duration_ms) + ")" : "")));
  if (D.verdict) {
    var v = D.verdict, c = v.counts;
    add(root, el("div", { "class": "verdict " + v.verdict, id: "verdict", "data-verdict": v.verdict },
      "verdict: " + v.verdict.toUpperCase() + " (exit " + v.exit_code + ") · " + num(c.pass) + " passed, " + num(c.fail) + " failed, " +
      num(c.incomplete) + " incomplete" + (c.not_applicable ? ", " + num(c.not_applicable) + " not applicable" : "") + (c.regressions ? ", " + num(c.regressions) + " regressed" : "")));
  } else {
    add(root, el("div", { "class": "verdict none", id: "verdict", "data-verdict": "none" },
      "Analysis only: no rules were judged (mcptrace check --html FILE puts a verdict here)."));
  }
  if (D.partial) add(root, el("div", { "class": "note warn" }, "Partial: an input was damaged; only the spans read before the damage are shown."));
  if (D.runs_note) add(root, el("div", { "class": "note warn", id: "runs-note" }, D.runs_note));

  // Headline figures.
  var H = D.headline;
  var tiles = el("div", { "class": "tiles", id: "headline" });
  function tile(k, v, title) { add(tiles, add(el("div", { "class": "tile", title: title || "" }), el("div", { "class": "v" }, v), el("div", { "class": "k" }, k))); }
  // shown draws a figure as what it is worth (figures: a bound, or not
  // measurable); flip turns a bound around (the ceiling is 1 − floor).
  function shown(name, text, flip) {
    var f = H.figures[name];
    if (!f) return text;
    if (f.state === "not_measurable") return "not measurable";
    return ((f.state === "lower_bound") !== !!flip ? "≥ " : "≤ ") + text;
  }
  function why(name, title) { var f = H.figures[name]; return f ? f.why : (title || ""); }
  tile("acquires", shown("acquires", num(H.acquires)), why("acquires", plural(H.hits, "hit") + ", " + plural(H.misses, "miss", "misses")));
  tile("hit rate", shown("hit_rate", pct(H.hit_rate)), why("hit_rate"));
  tile("hit-rate ceiling (1 − cold-start floor)", shown("cold_start_floor", H.cold_start_floor === null ? "n/a" : pct(1 - H.cold_start_floor), true), why("cold_start_floor", "the best hit rate any pool could reach on this traffic"));
  tile("excess misses", shown("excess_misses", num(H.excess_misses)), why("excess_misses", "misses above the cold-start floor"));
  tile("unexplained misses", shown("unexplained_misses", num(H.unexplained_misses)), why("unexplained_misses"));
  tile("handshakes", shown("handshakes", num(H.handshakes)), why("handshakes"));
  if (H.executions_measurable === false) tile("executions on several sessions", "not measurable", H.executions_why_not);
  else tile("executions on several sessions", shown("multi_session_executions", num(H.multi_session_executions) + " / " + num(H.executions)), why("multi_session_executions"));
  H.reads_per_request.forEach(function (r) {
    tile("reads per request: " + r.name, r.mean === null ? "n/a" : r.mean.toFixed(2), r.unmatched || (plural(r.requests, "request") + ", " + num(r.unexpected) + " unexpected" + (r.expect !== null ? " (expected " + num(r.expect) + ")" : "")));
  });
  tile("spans / traces", num(H.spans) + " / " + num(H.traces), plural(H.incomplete_traces, "incomplete trace"));
  add(root, tiles);
  add(root, el("div", { "class": "note", id: "sampling", "data-hit-stride": D.sampling.hit_stride }, D.sampling.note));

  // Rules: every rule the check judged, passing ones too, with what it
  // found against what it expects.
  if (D.rules) {
    add(root, el("h2", {}, "Rules"));
    var rt = el("table", { id: "rules", "class": "rules" });
    add(rt, add(el("thead"), add(el("tr"), el("th", {}, "rule"), el("th", {}, "status"), el("th", {}, "severity"),
      el("th", {}, "observed"), el("th", {}, "threshold"))));
    var rb = el("tbody");
    D.rules.forEach(function (r) {
      add(rb, add(el("tr", { "class": "rule " + r.status, "data-rule": r.id }), el("td", { "class": "mono" }, r.id),
        el("td", { "class": "status" }, r.status), el("td", {}, r.severity), el("td", {}, r.found), el("td", {}, r.expected)));
    });
    if (!D.rules.length) add(rb, add(el("tr"), el("td", { colspan: 5, "class": "muted" }, "No rules were judged.")));
    add(root, add(el("div", { "class": "scroll" }), add(rt, rb)));
  }

  // Offenders.
  add(root, el("h2", {}, "Offenders"));
  var offs = el("div", { id: "offenders" });
  var unknown = ["unexplained_misses", "multi_session_executions"].filter(function (n) { return H.figures[n] && H.figures[n].state === "not_measurable"; });
  if (!D.offenders.length) add(offs, el("p", { "class": "muted" }, D.verdict ? "Every rule passed." : unknown.length ?
    "No offenders to show: " + unknown.join(" and ").replace(/_/g, " ") + " cannot be measured on these spans (see the headline)." :
    "No unexplained misses and no execution on several sessions."));
  D.offenders.forEach(function (o) {
    var box = el("div", { "class": "offender " + o.severity, "data-rule": o.id });
    add(box, el("h3", {}, o.id + " — " + o.status + " (" + o.severity + ")"));
    if (o.expected) add(box, el("div", {}, "expected: " + o.expected));
    if (o.found) add(box, el("div", {}, "found: " + o.found));
    if (o.traceql) add(box, el("div", { "class": "muted" }, "TraceQL:"), el("code", { "class": "query" }, o.traceql));
    var ul = el("ul");
    o.examples.forEach(function (x) {
      // The trace id once: its query (which repeats the id) is a button
      // that copies it, with the query as its tooltip.
      var li = el("li", { "class": "offender-trace", "data-trace-id": x.trace_id });
      if (x.url) add(li, el("a", { href: x.url, target: "_blank", rel: "noopener noreferrer", "class": "mono" }, x.trace_id));
      else add(li, el("span", { "class": "mono" }, x.trace_id));
      if (x.span_id) add(li, el("span", { "class": "mono muted" }, " span " + x.span_id));
      if (x.traceql) add(li, " ", copyButton(x.traceql));
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
        add(rest, el("h3", {}, "Other scopes (no timeline: outside the " + num(D.sampling.scopes_drawn) + " busiest)"));
        add(root, rest);
      }
      add(sec, el("summary", {}, "scope " + (sc.scope || "(unnamed)") + " — " + scopeFigures(sc) + ", " + plural(sc.sessions, "session")));
      var ch = el("div", { "class": "charts" });
      add(ch, add(el("div", { "class": "chart" }), el("h4", {}, "Hit rate and ceiling over time"), rateChart(sc)));
      add(ch, add(el("div", { "class": "chart" }), el("h4", {}, "Misses by cause"), bars(sc.miss_causes)));
      add(rest, add(sec, ch));
      return;
    }
    add(sec, el("h3", {}, "scope " + (sc.scope || "(unnamed)") + " — " + scopeFigures(sc) +
      ", ceiling " + figureOrNA("cold_start_floor", sc.cold_start_floor, function (v) { return pct(1 - v); }, true) + ", " + plural(sc.sessions, "session") +
      (sc.lanes.length < sc.sessions ? " (" + num(sc.lanes.length) + " busiest drawn)" : "")));
    add(sec, timeline(sc));
    var charts = el("div", { "class": "charts" });
    add(charts, add(el("div", { "class": "chart" }, null), el("h4", {}, "Hit rate and ceiling over time"), rateChart(sc)));
    add(charts, add(el("div", { "class": "chart" }), el("h4", {}, "Misses by cause"), bars(sc.miss_causes)));
    add(sec, charts);
    add(root, sec);
  });
  if (D.sampling.scopes_left_out > 0) {
    add(rest || root, el("p", { "class": "muted", id: "scopes-left-out" }, "… and " + plural(D.sampling.scopes_left_out, "more scope") + ", not listed (the least busy): every count, rate and cause above uses them."));
  }

  // scopeFigures draws a scope's acquires and hit rate as the headline's
  // are worth (a bound, or not measurable).
  function scopeFigures(sc) {
    var f = H.figures.acquires;
    var acq = f && f.state === "not_measurable" ? "acquires not measurable" : shown("acquires", plural(sc.acquires, "acquire"));
    return acq + ", hit rate " + figureOrNA("hit_rate", sc.hit_rate, pct);
  }
  // figureOrNA draws v (null: no figure) as figure name is worth: "not
  // measurable" where the spans cannot show it, "n/a" where there is no
  // data for it.
  function figureOrNA(name, v, draw, flip) {
    var f = H.figures[name];
    if (f && f.state === "not_measurable") return "not measurable";
    return v === null ? "n/a" : shown(name, draw(v), flip);
  }

  // Latency distributions.
  add(root, el("h2", {}, "Latency"));
  var lat = el("div", { "class": "charts", id: "latency" });
  D.latency.forEach(function (l) { add(lat, latencyChart(l)); });
  add(root, lat);

  function timeline(sc) {
    var wrap = el("div", { "class": "timeline" });
    var labels = el("div", { "class": "labels" });
    var laneH = 18, width = 1000;
    var H = sc.lanes.length * laneH + 1;
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
      add(labels, el("div", { title: (lane.session || "(session unknown)") + ": " + plural(lane.acquires, "acquire") }, (lane.session || "(session unknown)") + " · " + num(lane.acquires)));
      add(bg, sv("rect", { "class": "lane-bg", x: 0, y: y, width: width, height: laneH }));
      var g = sv("g", { "class": "lane", "data-session": lane.session, "data-acquires": lane.acquires });
      lane.handshakes.forEach(function (h, hi) {
        add(g, sv("rect", { "class": "mark handshake", x: x(h[0]), y: y + 11, width: Math.max(w(h[1]), 1.5), height: 5,
          fill: color(h[2] ? "handshake-failed" : "handshake"), "data-k": li + ":h:" + hi }));
      });
      lane.marks.forEach(function (m, mi) {
        var name = CAUSES[m[2]] || "unexplained";
        add(g, sv("rect", { "class": "mark acquire " + name, x: x(m[0]), y: y + 2, width: Math.max(w(m[1]), 2.5), height: 8,
          fill: color(causeUnknown(m[2]) ? "muted" : name), "data-k": li + ":m:" + mi }));
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
        : (it[2] ? "miss: " + causeText(it[2]) : "hit") + " " + ms(it[1] / 1000);
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
    // The time axis is HTML below the stretched SVG, so its labels keep
    // their size at any width (SVG text would be squeezed with the lanes).
    var axis = el("div", { "class": "time-axis" });
    for (var t = 0; t <= 4; t++) {
      add(axis, el("span", { "class": "tick t" + t, style: "left:" + (t * 25) + "%" }, "+" + ms((lo + (hi - lo) * t / 4) / 1000)));
    }
    add(labels, el("div", { "class": "axis-gap" }, ""));
    return add(wrap, labels, add(el("div", { "class": "lanes" }), svg, axis));
  }

  function rateChart(sc) {
    var w = 360, h = 156, pad = 30, bottom = 40;
    var svg = sv("svg", { viewBox: "0 0 " + w + " " + h, width: "100%", role: "img", "aria-label": "hit rate over time" });
    var n = sc.buckets.length;
    function X(i) { return pad + (i + 0.5) * (w - pad - 4) / n; }
    function Y(v) { return 4 + (1 - v) * (h - bottom - 4); }
    add(svg, sv("line", { "class": "axis", x1: pad, x2: w - 4, y1: Y(0), y2: Y(0) }));
    // The time axis: time since the dump's start at the first, middle and
    // last bucket's edges.
    [0, 0.5, 1].forEach(function (f, i) {
      var x = pad + f * (w - pad - 4);
      add(svg, sv("line", { "class": "axis", x1: x, x2: x, y1: Y(0), y2: Y(0) + 4 }));
      var t = sv("text", { x: x, y: Y(0) + 15, "text-anchor": i === 0 ? "start" : i === 2 ? "end" : "middle", "class": "time" });
      t.textContent = "+" + ms(f * n * sc.bucket_us / 1000);
      add(svg, t);
    });
    var cap = sv("text", { x: pad + (w - pad - 4) / 2, y: h - 6, "text-anchor": "middle" });
    cap.textContent = "time since the dump's start";
    add(svg, cap);
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
    var cf = H.figures.cold_start_floor; // the ceiling is worth what the floor is, turned around
    line(ceil, "ceiling", true, "ceiling: 1 − cold-start floor since start" +
      (cf ? " (" + (cf.state === "not_measurable" ? "not measurable" : cf.state === "lower_bound" ? "at most" : "at least") + ": " + cf.why + ")" : ""));
    var lg = el("div", { "class": "legend" });
    add(lg, el("span", { style: "--c:" + color("rate") }, "per bucket"), el("span", { style: "--c:" + color("cum") }, "since start"), el("span", { style: "--c:" + color("ceiling") }, "ceiling"));
    return add(el("div"), svg, lg);
  }

  // causeUnknown is the figure of the cause of an acquire mark (its code:
  // 0 a hit, else 1 + its index in miss_causes) when the spans cannot show
  // it; null for a hit or a cause they show.
  function causeUnknown(code) {
    var c = code ? D.miss_causes[code - 1] : null, f = c && H.figures[c.figure];
    return f && f.state === "not_measurable" ? f : null;
  }
  // causeText names the cause of a miss mark, or says it cannot be told.
  function causeText(code) {
    var f = causeUnknown(code);
    return f ? "cause not measurable (" + f.why + ")" : CAUSES[code] || "unexplained";
  }

  function bars(counts, id) {
    var max = 0;
    counts.forEach(function (c) { if (c.count !== null) max = Math.max(max, c.count); });
    var w = 360, rowH = 16, h = counts.length * rowH + 4, lab = 90;
    var svg = sv("svg", { viewBox: "0 0 " + w + " " + h, width: "100%", role: "img", "aria-label": "misses by cause" });
    if (id) svg.setAttribute("id", id);
    counts.forEach(function (c, i) {
      var t = sv("text", { x: 0, y: i * rowH + 12 }); t.textContent = c.name; add(svg, t);
      var f = H.figures[c.figure], tt = sv("title");
      tt.textContent = f ? f.why : "";
      if (c.count === null) { // a figure, or a share of one, the spans cannot show
        var u = sv("text", { x: lab, y: i * rowH + 12, "data-cause": c.name, "data-count": "not measurable" }); u.textContent = "not measurable"; add(u, tt); add(svg, u);
        return;
      }
      var bw = max ? (w - lab - 50) * c.count / max : 0;
      add(svg, sv("rect", { x: lab, y: i * rowH + 3, width: Math.max(bw, c.count ? 1 : 0), height: rowH - 5, fill: color(c.name), "data-cause": c.name, "data-count": c.count }));
      // A bound is marked (≥, ≤) as the headline marks its figure.
      var n = sv("text", { x: lab + bw + 4, y: i * rowH + 12 }); n.textContent = shown(c.figure, num(c.count));
      if (f) add(n, tt);
      add(svg, n);
    });
    return svg;
  }

  function latencyChart(l) {
    var box = el("div", { "class": "chart", "data-series": l.name });
    var lf = H.figures[l.figure];
    if (lf && lf.state === "not_measurable") {
      add(box, el("h4", { title: lf.why }, l.name + " — not measurable"));
      return add(box, el("div", { "class": "muted" }, lf.why));
    }
    add(box, el("h4", { title: lf ? lf.why : "" }, l.name + " — " + shown(l.figure, plural(l.count, "sample"))));
    if (!l.count) return add(box, el("div", { "class": "muted" }, "no samples"));
    var w = 360, h = 110, pad = 4;
    var svg = sv("svg", { viewBox: "0 0 " + w + " " + (h + 16), width: "100%", role: "img", "aria-label": "latency histogram of " + l.name });
    var lo = Math.log10(l.buckets[0][0]) - 0.2, hi = Math.log10(l.buckets[l.buckets.length - 1][0]) + 0.2, top = 0;
    l.buckets.forEach(function (b) { top = Math.max(top, b[1]); });
    function X(v) { return pad + (Math.log10(Math.max(v, 1e-6)) - lo) / Math.max(hi - lo, 1e-9) * (w - 2 * pad); }
    l.buckets.forEach(function (b) {
      var x1 = X(b[0] / Math.pow(10, 0.2)), x2 = X(b[0]), bh = (h - 10) * b[1] / top;
      var r = sv("rect", { x: x1, y: h - bh, width: Math.max(x2 - x1 - 1, 1), height: bh, fill: color("cum") });
      var t = sv("title"); t.textContent = "≤ " + ms(b[0]) + ": " + num(b[1]); add(r, t);
      add(svg, r);
    });
    l.quantiles.forEach(function (q) {
      add(svg, sv("rect", { x: X(q.lo), y: 0, width: Math.max(X(q.hi) - X(q.lo), 1), height: h, fill: color("concurrent"), opacity: 0.15 }));
      add(svg, sv("line", { x1: X(q.ms), x2: X(q.ms), y1: 0, y2: h, stroke: color("concurrent") }));
      var right = X(q.ms) > w - 30;
      var t = sv("text", { x: right ? X(q.ms) - 2 : X(q.ms) + 2, y: 10, "text-anchor": right ? "end" : "start" }); t.textContent = "p" + Math.round(q.q * 100); add(svg, t);
    });
    // The axis: its first label starts at the left edge, its last ends at
    // the right one, so neither is cut.
    [lo, (lo + hi) / 2, hi].forEach(function (v, i) {
      var t = sv("text", { x: X(Math.pow(10, v)), y: h + 13, "text-anchor": i === 0 ? "start" : i === 2 ? "end" : "middle" }); t.textContent = ms(Math.pow(10, v)); add(svg, t);
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
