package htmlreport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/analyzetest"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// htmlGoldenDir holds the expected data of the HTML report of a few
// scenario dumps: the JSON the page embeds, not its markup. The files stay
// beside analyze's other goldens, and the tests run from analyze/ (see
// inAnalyzeDir) so the input paths the report echoes read as they always
// have.
const htmlGoldenDir = "testdata/htmlreport"

// htmlPage renders the HTML report of one dump and returns the page and its
// embedded data. The report with a check's verdict on top is tested with
// the gate, which judges the check (analyze/gate).
func htmlPage(t *testing.T, path string, cfg rulefmt.Config, opts Options) ([]byte, []byte) {
	t.Helper()
	r, ev := analyzetest.Analyzed(t, path, cfg, ingest.ReadOptions{Strict: true})
	h, err := New(r, ev, opts)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := h.Render(&page); err != nil {
		t.Fatal(err)
	}
	data, err := ExtractData(page.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return page.Bytes(), data
}

// TestHTMLReportDataGolden pins the data of the HTML report of each
// scenario (golden files next to this test, -update rewrites them): the
// timelines' lanes and marks, causes, buckets, latencies and offenders.
func TestHTMLReportDataGolden(t *testing.T) {
	// The *.check golden files, with a check's verdict, are the gate's
	// (analyze/gate TestHTMLCheckDataGolden).
	for _, name := range []string{"pooled", "ttl-and-redial", "acquire-on-miss", "semconv"} {
		t.Run(name, func(t *testing.T) {
			dump := filepath.Join(tracesDir, name+".otlp.jsonl")
			_, data := htmlPage(t, dump, dumptest.ScenarioConfig(t, name), Options{TraceURL: "https://tempo.example/trace/{trace_id}"})
			analyzetest.MatchJSONGolden(t, data, filepath.Join(htmlGoldenDir, name+".golden.json"), *update,
				"go test ./analyze/htmlreport -run TestHTMLReportDataGolden -update")
		})
	}
}

// TestHTMLReportAgreesWithTheReport checks the embedded data against the
// analysis it came from, for every scenario: one lane per session, every
// acquire drawn once (no sampling at this size), causes per scope summing
// to the report's, and the failing rules' traces among the offenders.
func TestHTMLReportAgreesWithTheReport(t *testing.T) {
	for _, sc := range []string{"pooled", "per-call-dial", "unexplained-miss", "ttl-and-redial", "concurrent", "double-acquire"} {
		t.Run(sc, func(t *testing.T) {
			cfg := dumptest.ScenarioConfig(t, sc)
			dump := filepath.Join(tracesDir, sc+".otlp.jsonl")
			_, raw := htmlPage(t, dump, cfg, Options{TraceURL: "https://t.example/{trace_id}"})
			var h Report
			if err := json.Unmarshal(raw, &h); err != nil {
				t.Fatal(err)
			}
			r, err := analyze.AnalyzeFiles(context.Background(), []string{dump}, cfg, ingest.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if h.Schema != Schema || h.Verdict != nil {
				t.Fatalf("schema %q verdict %v", h.Schema, h.Verdict)
			}
			marks, acquires := 0, 0
			causes := map[string]int{}
			for _, s := range h.Scopes {
				sessions := map[string]bool{}
				for _, l := range s.Lanes {
					if sessions[l.Session] {
						t.Errorf("scope %q: two lanes for session %q", s.Scope, l.Session)
					}
					sessions[l.Session] = true
					marks += len(l.Marks)
					acquires += l.Acquires
				}
				if len(s.Lanes) != s.Sessions {
					t.Errorf("scope %q: %d lanes for %d sessions", s.Scope, len(s.Lanes), s.Sessions)
				}
				for _, c := range s.Causes {
					if c.Count != nil {
						causes[c.Name] += *c.Count
					}
				}
			}
			if marks != r.Pool.Acquires || acquires != r.Pool.Acquires || h.Sampling.MarksShown != r.Pool.Acquires {
				t.Errorf("drawn %d marks, lanes count %d acquires, sampling says %d; the report has %d", marks, acquires, h.Sampling.MarksShown, r.Pool.Acquires)
			}
			if !strings.HasPrefix(h.Sampling.Note, "Complete") {
				t.Errorf("sampling note %q for a small dump", h.Sampling.Note)
			}
			for _, reason := range spans.MissReasons {
				if causes[reason] != r.Pool.MissReasons[reason] {
					t.Errorf("cause %s: timelines count %d, report %d", reason, causes[reason], r.Pool.MissReasons[reason])
				}
			}
			for _, rr := range h.Offenders {
				for _, ex := range rr.Examples {
					if ex.URL != "https://t.example/"+ex.TraceID {
						t.Errorf("offender %s: link %q for trace %s", rr.ID, ex.URL, ex.TraceID)
					}
				}
			}
			for _, o := range h.Offenders {
				if len(o.Examples) == 0 {
					t.Errorf("finding %s has no example traces", o.ID)
				}
			}
		})
	}
}

// TestHTMLReportSamplesLongDumps pins the bound on a long dump: the marks
// drawn stay within the budget, every miss is drawn while they fit, lanes
// are capped, and the page says it sampled.
func TestHTMLReportSamplesLongDumps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if _, err := tracegen.WriteBench(w, "otlp-jsonl", 60_000); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
	const budget, lanes = 2000, 5
	page, raw := htmlPage(t, path, rulefmt.Config{}, Options{MaxMarks: budget, MaxLanes: lanes})
	var h Report
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	if h.Sampling.Acquires <= budget {
		t.Fatalf("the generated dump has only %d acquires: not a long dump", h.Sampling.Acquires)
	}
	drawnMisses, misses := 0, 0
	for _, s := range h.Scopes {
		if len(s.Lanes) > lanes {
			t.Errorf("scope %q: %d lanes, budget %d", s.Scope, len(s.Lanes), lanes)
		}
		for _, c := range s.Causes {
			if c.Count != nil {
				misses += *c.Count
			}
		}
		for _, l := range s.Lanes {
			for _, m := range l.Marks {
				if m[2].(float64) != 0 {
					drawnMisses++
				}
			}
		}
	}
	if h.Sampling.MarksShown > budget+len(h.Scopes) {
		t.Errorf("%d marks drawn, budget %d", h.Sampling.MarksShown, budget)
	}
	if h.Sampling.MissStride == 1 && h.Sampling.LanesShown == h.Sampling.Sessions && drawnMisses != misses {
		t.Errorf("%d of %d misses drawn with every miss in budget", drawnMisses, misses)
	}
	if !strings.HasPrefix(h.Sampling.Note, "Sampled") || h.Sampling.HitStride < 2 {
		t.Errorf("sampling %+v does not say it sampled", h.Sampling)
	}
	if len(page) > 1<<20 {
		t.Errorf("page of %d bytes for a %d-mark budget", len(page), budget)
	}
}

func TestValidateTraceURL(t *testing.T) {
	for tmpl, ok := range map[string]bool{
		"": true,
		"https://grafana.example/explore?traceId={trace_id}": true,
		"http://localhost:3200/api/traces/{trace_id}":        true,
		"https://grafana.example/explore":                    false,
		"javascript:alert('{trace_id}')":                     false,
		"/relative/{trace_id}":                               false,
		"data:text/html,{trace_id}":                          false,
	} {
		err := ValidateTraceURL(tmpl)
		if (err == nil) != ok {
			t.Errorf("ValidateTraceURL(%q) = %v, want ok=%v", tmpl, err, ok)
		}
		if err != nil && !errors.Is(err, ErrBadTraceURL) {
			t.Errorf("ValidateTraceURL(%q) = %v, not ErrBadTraceURL", tmpl, err)
		}
	}
}

// TestHTMLPageIsSelfContained pins that the page loads nothing: no src or
// href to another document, a CSP forbidding fetches, and data that cannot
// close its script element.
func TestHTMLPageIsSelfContained(t *testing.T) {
	page, _ := htmlPage(t, filepath.Join(tracesDir, "pooled.otlp.jsonl"), rulefmt.Config{}, Options{})
	s := string(page)
	for _, bad := range []string{" src=", "<link", "@import", "url(http", "fetch(", "XMLHttpRequest"} {
		if strings.Contains(s, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if !strings.Contains(s, `Content-Security-Policy" content="default-src 'none'`) {
		t.Error("page has no CSP forbidding network fetches")
	}
	if strings.Count(s, "</script>") != 2 {
		t.Errorf("page has %d closing script tags, want 2 (data and code)", strings.Count(s, "</script>"))
	}
}
