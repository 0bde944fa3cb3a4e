package main

// The HTML report in a real browser: Debian's headless Chromium, driven over
// the DevTools protocol by chromedp, opens the report of the demo dump and
// the check report of a failing dump from file URLs, with every network
// feature off.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/gate"
	"github.com/mcptrace/mcptrace/analyze/htmlreport"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// chromiumBinary is where Debian's chromium package installs the browser.
const chromiumBinary = "/usr/bin/chromium"

// findChromium returns the browser, or skips the test with how to install
// it; under CI (CI=true) a missing browser fails instead, since .ci/run
// installs it.
func findChromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumBinary); err == nil {
		return chromiumBinary
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium (" + chromiumBinary + "): install it with `apt-get install -y chromium` to test the HTML report in a browser"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI must install it (.ci/run)")
	}
	t.Skip(msg)
	return ""
}

// pageResult is what the browser saw of one report.
type pageResult struct {
	Verdict    string              `json:"verdict"`
	LanesBy    map[string][]string `json:"lanes"`     // scope → lane sessions
	Offenders  map[string][]string `json:"offenders"` // rule → trace ids
	Marks      int                 `json:"marks"`
	Background string              `json:"background"` // the body's computed background colour
	Hover      struct {
		Key   string `json:"key"`   // the hovered mark: lane:m:index
		Scope string `json:"scope"` // its scope
		Tip   string `json:"tip"`   // the tooltip it showed
	} `json:"hover"`
	// WhatIf is the what-if section: its table rows and whether it is
	// drawn visibly below the report's main element.
	WhatIf struct {
		Rows  int  `json:"rows"`
		Below bool `json:"below"`
	} `json:"whatif"`
	RenderMs    float64 `json:"render_ms"` // the script's own drawing time
	LoadMs      float64 `json:"load_ms"`   // navigation start to inspection
	consoleErrs []string
	screenshot  []byte
}

// inspectJS reads the drawn page back from the DOM.
const inspectJS = `(() => {
  const out = {verdict: document.getElementById("verdict").dataset.verdict, lanes: {}, offenders: {}, marks: 0,
    render_ms: +document.body.dataset.renderMs, load_ms: performance.now()};
  for (const s of document.querySelectorAll("section.scope")) {
    out.lanes[s.dataset.scope] = [...s.querySelectorAll("g.lane")].map(g => g.dataset.session);
  }
  for (const o of document.querySelectorAll(".offender")) {
    out.offenders[o.dataset.rule] = [...o.querySelectorAll(".offender-trace")].map(li => li.dataset.traceId);
  }
  out.marks = document.querySelectorAll("rect.mark.acquire").length;
  const wi = document.getElementById("whatif"), rep = document.getElementById("report");
  out.whatif = {rows: wi ? wi.querySelectorAll("tbody tr").length : 0, below: !!wi && wi.offsetHeight > 0 && wi.getBoundingClientRect().top >= rep.getBoundingClientRect().bottom};
  out.background = getComputedStyle(document.body).backgroundColor;
  const m = document.querySelector("section.scope rect.mark.acquire");
  if (m) {
    const r = m.getBoundingClientRect();
    m.dispatchEvent(new MouseEvent("mousemove", {bubbles: true, clientX: r.x + 1, clientY: r.y + 1}));
    out.hover = {key: m.dataset.k, scope: m.closest("section.scope").dataset.scope, tip: document.getElementById("tip").textContent};
  }
  return out;
})()`

// openInChromium loads a report from its file URL in a fresh headless
// Chromium and returns what it drew, its console errors and a screenshot.
func openInChromium(t *testing.T, bin, page string, scheme string) pageResult {
	t.Helper()
	// A fresh profile per browser, removed after it exits. Not t.TempDir:
	// Chromium's helper processes may still be closing files in it when the
	// test ends, and a failed removal of a scratch profile is no test failure.
	profile, err := os.MkdirTemp("", "mcptrace-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(profile); err != nil {
			if err = os.RemoveAll(profile); err != nil {
				t.Logf("remove the browser profile %s: %v", profile, err)
			}
		}
	})
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.Flag("disable-crash-reporter", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 2000),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()

	var mu sync.Mutex
	var errs []string
	chromedp.ListenTarget(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				errs = append(errs, "console."+string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			errs = append(errs, "exception: "+ev.ExceptionDetails.Error())
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.LevelError {
				errs = append(errs, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		}
	})
	var res pageResult
	var shot []byte
	err = chromedp.Run(bctx,
		cdplog.Enable(),
		emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}),
		chromedp.Navigate("file://"+page),
		chromedp.WaitReady(`body[data-rendered="true"]`, chromedp.ByQuery),
		chromedp.Evaluate(inspectJS, &res),
		chromedp.FullScreenshot(&shot, 100),
	)
	if err != nil {
		t.Fatalf("chromium on %s: %v", page, err)
	}
	// Close the browser and wait for it to exit before the profile goes.
	if err := chromedp.Cancel(bctx); err != nil {
		t.Logf("close chromium: %v", err)
	}
	mu.Lock()
	res.consoleErrs = slices.Clone(errs)
	mu.Unlock()
	res.screenshot = shot
	if dir := os.Getenv("MCPTRACE_SCREENSHOT_DIR"); dir != "" {
		name := strings.TrimSuffix(filepath.Base(page), ".html") + "-" + scheme + ".png"
		if err := os.WriteFile(filepath.Join(dir, name), shot, 0o644); err != nil {
			t.Errorf("save screenshot: %v", err)
		}
	}
	return res
}

// nonBlank reports whether a screenshot shows the pictures, not a blank or
// text-only page: enough pixels away from the background, and the
// timeline's hit green and unexplained red (the light scheme's colours of
// report.css) drawn on many pixels each.
func nonBlank(t *testing.T, png []byte) (bool, string) {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(png))
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	b := img.Bounds()
	bg := color.RGBAModel.Convert(img.At(b.Min.X, b.Min.Y)).(color.RGBA)
	near := func(c color.RGBA, r, g, bl uint8) bool {
		d := func(x, y uint8) int { return max(int(x)-int(y), int(y)-int(x)) }
		return d(c.R, r) < 12 && d(c.G, g) < 12 && d(c.B, bl) < 12
	}
	off, green, red := 0, 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c != bg {
				off++
			}
			if near(c, 0x2f, 0x9e, 0x44) {
				green++
			}
			if near(c, 0xe0, 0x31, 0x31) {
				red++
			}
		}
	}
	total := b.Dx() * b.Dy()
	why := fmt.Sprintf("%dx%d, %d of %d pixels off the background, %d hit-green and %d unexplained-red", b.Dx(), b.Dy(), off, total, green, red)
	return off*20 > total && green > 200 && red > 200, why
}

// demoSessions reads the sessions of each scope from the dump, through the
// analyzer (not the page): a lane per session is what the page must draw.
func demoSessions(t *testing.T, dump string) map[string][]string {
	t.Helper()
	cfg := rulefmt.Config{}
	idx, _, err := analyze.Load(context.Background(), []string{dump}, analyze.LoadOptions{Index: cfg.IndexOptions()})
	if err != nil {
		t.Fatal(err)
	}
	hss, err := analyze.HandshakeEvents(idx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, h := range hss {
		if !slices.Contains(out[h.Scope], h.Session) {
			out[h.Scope] = append(out[h.Scope], h.Session)
		}
	}
	return out
}

func TestHTMLReportInChromium(t *testing.T) {
	bin := findChromium(t)
	dir := t.TempDir()
	dump := filepath.Join(dir, "mcptrace-demo.jsonl")

	// The demo writes its dump and, beside it, the report; it says where.
	out, _, err := execute(t, "demo", "--format", "json", "--out", dump, "--scopes", "2", "--executions", "3")
	if err != nil {
		t.Fatal(err)
	}
	var demoDoc struct {
		HTMLReport string `json:"html_report"`
		Modes      []struct {
			SessionsOpened int `json:"sessions_opened"`
		} `json:"modes"`
	}
	if err := json.Unmarshal([]byte(out), &demoDoc); err != nil {
		t.Fatalf("demo output: %v\n%s", err, out)
	}
	if demoDoc.HTMLReport != filepath.Join(dir, "mcptrace-demo.html") {
		t.Fatalf("demo says its report is %q, want it beside the dump", demoDoc.HTMLReport)
	}

	// The same dump through the gate fails (the per-call mode dials per
	// call): its check report names the failing rules' traces.
	checkPage := filepath.Join(dir, "check.html")
	checkJSON, _, err := execute(t, "check", "--format", "json", "--html", checkPage, "--trace-url", "https://tempo.example/trace/{trace_id}", dump)
	if err == nil {
		t.Fatal("check passed on the demo dump, want a failing dump")
	}
	var check gate.CheckReport
	if err := json.Unmarshal([]byte(checkJSON), &check); err != nil {
		t.Fatal(err)
	}

	wantSessions := demoSessions(t, dump)
	opened := 0
	for _, m := range demoDoc.Modes {
		opened += m.SessionsOpened
	}
	for _, c := range []struct {
		page    string
		verdict string
	}{{demoDoc.HTMLReport, "none"}, {checkPage, string(check.Verdict)}} {
		t.Run(filepath.Base(c.page), func(t *testing.T) {
			res := openInChromium(t, bin, c.page, "light")
			t.Logf("%s: %d acquire marks drawn in %.0f ms, inspected %.0f ms after navigation start", c.page, res.Marks, res.RenderMs, res.LoadMs)
			if len(res.consoleErrs) > 0 {
				t.Errorf("console errors:\n%s", strings.Join(res.consoleErrs, "\n"))
			}
			if res.Verdict != c.verdict {
				t.Errorf("verdict on top = %q, want %q", res.Verdict, c.verdict)
			}
			lanes := 0
			for scope, want := range wantSessions {
				got := res.LanesBy[scope]
				if !sameSet(got, want) {
					t.Errorf("scope %s: lanes %v, want one per session %v", scope, got, want)
				}
				lanes += len(got)
			}
			if len(res.LanesBy) != len(wantSessions) || lanes != opened {
				t.Errorf("%d scopes with %d lanes drawn; the demo opened %d sessions in %d scopes", len(res.LanesBy), lanes, opened, len(wantSessions))
			}
			if c.page == checkPage {
				failing := 0
				for _, r := range check.Rules {
					if r.Status != gate.StatusFail {
						continue
					}
					failing++
					var want []string
					for _, ex := range r.Examples {
						want = append(want, ex.TraceID)
					}
					if got := res.Offenders[r.ID]; len(want) == 0 || !sameSet(got, want) {
						t.Errorf("rule %s: page lists traces %v, the check names %v", r.ID, got, want)
					}
				}
				if failing == 0 {
					t.Error("the check report has no failing rule to look for")
				}
			}
			if res.WhatIf.Rows == 0 || !res.WhatIf.Below {
				t.Errorf("what-if section: %d rows, drawn below the report %v; want its replay, under the report", res.WhatIf.Rows, res.WhatIf.Below)
			}
			if ok, why := nonBlank(t, res.screenshot); !ok {
				t.Errorf("screenshot looks blank: %s", why)
			} else {
				t.Logf("screenshot: %s", why)
			}
			checkHover(t, c.page, res)
			if res.Background != "rgb(255, 255, 255)" {
				t.Errorf("light scheme background %s, want white", res.Background)
			}
		})
	}
	t.Run("dark scheme", func(t *testing.T) {
		res := openInChromium(t, bin, demoDoc.HTMLReport, "dark")
		if len(res.consoleErrs) > 0 {
			t.Errorf("console errors:\n%s", strings.Join(res.consoleErrs, "\n"))
		}
		if res.Background != "rgb(21, 24, 28)" {
			t.Errorf("dark scheme background %s, want the dark one rgb(21, 24, 28)", res.Background)
		}
	})
}

// TestHTMLReportOfALongDumpInChromium measures a long dump's report when
// MCPTRACE_HTML_SPANS names a span count (e.g. 1000000): its size and how
// long Chromium takes to draw it, logged, not asserted (timings are not
// test verdicts). The size bound (3 MB) is asserted.
func TestHTMLReportOfALongDumpInChromium(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("MCPTRACE_HTML_SPANS"))
	if n <= 0 {
		t.Skip("set MCPTRACE_HTML_SPANS=1000000 to measure a long dump's report")
	}
	bin := findChromium(t)
	dump := os.Getenv("MCPTRACE_HTML_DUMP")
	if dump == "" {
		t.Fatal("MCPTRACE_HTML_DUMP must name a dump of MCPTRACE_HTML_SPANS spans (go test ./analyze -run XXX -bench Analyze writes one)")
	}
	page := filepath.Join(t.TempDir(), "long.html")
	start := time.Now()
	if _, _, err := execute(t, "analyze", "--format", "html", "-o", page, dump); err != nil {
		t.Fatal(err)
	}
	built := time.Since(start)
	info, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > 3<<20 {
		t.Errorf("report of %d spans is %d bytes, want under 3 MB", n, info.Size())
	}
	res := openInChromium(t, bin, page, "light")
	if len(res.consoleErrs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(res.consoleErrs, "\n"))
	}
	t.Logf("%d spans: report %d bytes built in %s; Chromium drew its %d marks in %.0f ms, inspected %.0f ms after navigation start", n, info.Size(), built.Round(time.Millisecond), res.Marks, res.RenderMs, res.LoadMs)
}

// checkHover checks the tooltip of the first acquire mark against the
// page's data: it names the mark's trace, span and session.
func checkHover(t *testing.T, page string, res pageResult) {
	t.Helper()
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := htmlreport.ExtractData(html)
	if err != nil {
		t.Fatal(err)
	}
	var h htmlreport.Report
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	var lane, mark int
	if _, err := fmt.Sscanf(res.Hover.Key, "%d:m:%d", &lane, &mark); err != nil {
		t.Fatalf("hovered mark key %q: %v", res.Hover.Key, err)
	}
	for _, sc := range h.Scopes {
		if sc.Scope != res.Hover.Scope {
			continue
		}
		l := sc.Lanes[lane]
		m := l.Marks[mark]
		trace := h.Traces[int(m[3].(float64))]
		for _, want := range []string{"trace " + trace, "span  " + m[4].(string), "session " + l.Session} {
			if !strings.Contains(res.Hover.Tip, want) {
				t.Errorf("hover tooltip %q lacks %q", res.Hover.Tip, want)
			}
		}
		return
	}
	t.Errorf("hovered a mark of scope %q, which the data does not have", res.Hover.Scope)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b)) && len(a) == len(b)
}
