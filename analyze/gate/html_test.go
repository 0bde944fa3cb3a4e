package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/htmlreport"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/analyzetest"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// htmlGoldenDir holds the expected data of the HTML report, beside
// analyze's own golden files of it; the golden test runs from analyze/
// so the input paths the report echoes read as they do there.
const htmlGoldenDir = "testdata/htmlreport"

// checkHTMLData renders the HTML report of one dump with the built-in
// rules' verdict on top, as `mcptrace check --html` does, and returns the
// data the page embeds.
func checkHTMLData(t *testing.T, path string, cfg rulefmt.Config, traceURL string) []byte {
	t.Helper()
	rules := rulefmt.BuiltinRules(cfg)
	idx, _, err := analyze.Load(context.Background(), []string{path}, analyze.LoadOptions{Index: rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)), Read: ingest.ReadOptions{Strict: true}})
	if err != nil {
		t.Fatalf("Load %s: %v", path, err)
	}
	r, results := evaluate(t, idx, cfg, rules, 0)
	ev, err := analyze.NewReportEvents(idx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h, err := htmlreport.New(r, ev, htmlreport.Options{TraceURL: traceURL, Check: NewCheckReport(r, results, nil, "").HTML()})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := h.Render(&page); err != nil {
		t.Fatal(err)
	}
	data, err := htmlreport.ExtractData(page.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestHTMLCheckDataGolden pins the data of the HTML report with a check's
// verdict on top (golden files beside analyze's, -update rewrites them):
// the verdict, its counts, and the failing rules as offenders with their
// linked traces.
func TestHTMLCheckDataGolden(t *testing.T) {
	t.Chdir("..")
	for _, sc := range []string{"per-call-dial", "unexplained-miss"} {
		t.Run(sc, func(t *testing.T) {
			data := checkHTMLData(t, filepath.Join("../testdata/traces", sc+".otlp.jsonl"), dumptest.ScenarioConfig(t, sc), "https://tempo.example/trace/{trace_id}")
			analyzetest.MatchJSONGolden(t, data, filepath.Join(htmlGoldenDir, sc+".check.golden.json"), *update,
				"go test ./analyze/gate -run TestHTMLCheckDataGolden -update")
		})
	}
}

// TestHTMLCheckNamesTheFailingRules: the page of a check carries its
// verdict, and every failing error rule among the offenders names traces,
// each linked through the template.
func TestHTMLCheckNamesTheFailingRules(t *testing.T) {
	for _, sc := range []string{"pooled", "per-call-dial", "unexplained-miss", "ttl-and-redial", "concurrent", "double-acquire"} {
		t.Run(sc, func(t *testing.T) {
			var h htmlreport.Report
			if err := json.Unmarshal(checkHTMLData(t, filepath.Join(tracesDir, sc+".otlp.jsonl"), dumptest.ScenarioConfig(t, sc), "https://t.example/{trace_id}"), &h); err != nil {
				t.Fatal(err)
			}
			if h.Verdict == nil {
				t.Fatal("the page of a check has no verdict")
			}
			failing := 0
			for _, o := range h.Offenders {
				if o.Status == string(StatusFail) && o.Severity == string(rulefmt.SeverityError) && !strings.HasPrefix(o.ID, "regression") {
					failing++
					if len(o.Examples) == 0 {
						t.Errorf("failing rule %s has no example traces", o.ID)
					}
				}
				for _, ex := range o.Examples {
					if ex.URL != "https://t.example/"+ex.TraceID {
						t.Errorf("offender %s: link %q for trace %s", o.ID, ex.URL, ex.TraceID)
					}
				}
			}
			if (failing > 0) != (h.Verdict.Verdict == string(StatusFail)) {
				t.Errorf("verdict %s with %d failing error rules", h.Verdict.Verdict, failing)
			}
		})
	}
}
