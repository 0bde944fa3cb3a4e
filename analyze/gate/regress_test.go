package gate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/analyzetest"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// TestBaselineRoundTrips: the JSON analyze writes reads back as the same
// report, and is told from a dump by its first bytes.
func TestBaselineRoundTrips(t *testing.T) {
	cfg := dumptest.ScenarioConfig(t, "cold-init-two-reads")
	r := analyzetest.AnalyzeTD(t, cfg, tracegen.ColdInitTwoReads())
	var buf bytes.Buffer
	if err := render.JSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "baseline.json")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if !IsBaseline(path) || IsBaseline(filepath.Join(tracesDir, "pooled.otlp.json")) {
		t.Error("IsBaseline does not tell a report from a dump")
	}
	back, err := ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := render.JSON(&again, back); err != nil {
		t.Fatal(err)
	}
	if again.String() != buf.String() {
		t.Errorf("baseline does not round-trip:\n%s", cmp.Diff(buf.String(), again.String()))
	}
}

// TestReadBaselineRejectsOtherFiles names the file and the problem.
func TestReadBaselineRejectsOtherFiles(t *testing.T) {
	cases := []struct{ name, data, want string }{
		{"other schema", `{"schema": "mcptrace.check/v1"}`, `schema "mcptrace.check/v1"`},
		{"a dump", `{"resourceSpans": []}`, `schema ""`},
		{"syntax", "{\n\"schema\": \"mcptrace.analysis/v1\",\n", "b.json:3: invalid JSON"},
		{"wrong type", `{"schema": "mcptrace.analysis/v1", "spans": "many"}`, "field spans holds a string"},
		{"null pool", `{"schema": "mcptrace.analysis/v1", "spans": 3, "traces": 1, "pool": null, "executions": {"count": 1, "multi_session": 0, "max_sessions": 1}}`, `key "pool" is missing or null`},
		{"no pool", `{"schema": "mcptrace.analysis/v1", "spans": 3, "traces": 1, "executions": {"count": 1, "multi_session": 0, "max_sessions": 1}}`, `key "pool" is missing or null`},
		{"pool without figures", `{"schema": "mcptrace.analysis/v1", "spans": 3, "traces": 1, "pool": {}, "executions": {"count": 1, "multi_session": 0, "max_sessions": 1}}`, `key "pool.acquires" is missing or null`},
		{"huge schema is clipped", `{"schema": "` + strings.Repeat("x", 1<<20) + `"}`, "(1048576 bytes)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeBaseline(strings.NewReader(c.data), "b.json")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "b.json") || len(err.Error()) > 400 {
				t.Fatalf("err = %.400v, want it to name b.json and say %q in a few hundred bytes", err, c.want)
			}
			if c.name != "syntax" && !errors.Is(err, ErrNotBaseline) {
				t.Errorf("err = %v, want ErrNotBaseline", err)
			}
		})
	}
}

// TestRegressionsAgainstABaseline pins each kind of regression with the
// scenario pair that shows it.
func TestRegressionsAgainstABaseline(t *testing.T) {
	pooled := analyzetest.AnalyzeTD(t, rulefmt.Config{}, tracegen.Pooled())
	perCall := analyzetest.AnalyzeTD(t, rulefmt.Config{}, tracegen.PerCallDial())
	oneRead := analyzetest.AnalyzeTD(t, dumptest.ScenarioConfig(t, "cold-init-one-read"), tracegen.ColdInitOneRead())
	twoReads := analyzetest.AnalyzeTD(t, dumptest.ScenarioConfig(t, "cold-init-two-reads"), tracegen.ColdInitTwoReads())

	measures := func(rs []Regression) string {
		var names []string
		for _, r := range rs {
			names = append(names, r.Measure)
		}
		return strings.Join(names, ",")
	}
	noLatency := rulefmt.DefaultTolerances()
	noLatency.LatencyRatio = 1e9
	cases := []struct {
		name      string
		base, cur *report.Report
		tol       rulefmt.Tolerances
		want      string
	}{
		{"same run", pooled, pooled, rulefmt.DefaultTolerances(), ""},
		// Three executions against three can never differ significantly
		// (the least p is 0.1): multi_session_executions is ~.
		{"per-call against pooled", pooled, perCall, noLatency, "hit_rate,excess_misses,unexplained_misses"},
		{"tolerated", pooled, perCall, rulefmt.Tolerances{HitRateDrop: 1, LatencyRatio: 1e9, ExcessMisses: 5, UnexplainedMisses: 5}, ""},
		{"improvement", perCall, pooled, noLatency, ""},
		// One complete request against one: ~, however many reads it made.
		{"more unexpected reads of one request", oneRead, twoReads, rulefmt.DefaultTolerances(), ""},
		{"unexpected tolerated", oneRead, twoReads, rulefmt.Tolerances{LatencyRatio: 1.5, Unexpected: 3}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := measures(Regressions(c.base, c.cur, c.tol)); got != c.want {
				t.Errorf("regressions = %q, want %q", got, c.want)
			}
		})
	}
}

// TestLatencyRegressionNeedsRatioAndDelta: a percentile regresses only when
// it grows past the ratio and by more than the noise floor.
func TestLatencyRegressionNeedsRatioAndDelta(t *testing.T) {
	mk := func(p99 float64) *report.Report {
		r := &report.Report{Schema: report.Schema}
		r.Pool.Latency.Call = report.Percentiles{Count: 10, P50: ptr(1.0), P95: ptr(1.0), P99: ptr(p99), Sample: shiftedSample(10, p99)}
		return r
	}
	tol := rulefmt.DefaultTolerances() // x1.5, 5 ms
	for _, c := range []struct {
		base, cur float64
		want      bool
	}{{100, 149, false}, {100, 160, true}, {2, 6, false}, {2, 8, true}} {
		got := len(Regressions(mk(c.base), mk(c.cur), tol)) == 1
		if got != c.want {
			t.Errorf("call.p99 %v -> %v: regression %v, want %v", c.base, c.cur, got, c.want)
		}
	}
}

// TestDiffRendersBothSides lines up two reports and marks regressions.
func TestDiffRendersBothSides(t *testing.T) {
	pooled := analyzetest.AnalyzeTD(t, rulefmt.Config{}, tracegen.Pooled())
	perCall := analyzetest.AnalyzeTD(t, rulefmt.Config{}, tracegen.PerCallDial())
	rows := Compare(pooled, perCall, rulefmt.DefaultTolerances())
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Measure] = r
	}
	hr := byName["hit_rate"]
	if hr.Baseline == nil || hr.Current == nil || *hr.Current != 0 || !hr.Regressed {
		t.Errorf("hit_rate row = %+v", hr)
	}
	if byName["acquires"].Regressed {
		t.Error("acquires marked regressed")
	}
	var buf bytes.Buffer
	if err := RenderDiff(&buf, rows, "pooled", "per-call"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"pooled", "per-call", "hit_rate", "0.8333", "-0.8333", "REGRESSION (p=0.015, n=6 vs 6 acquires)", "unexplained_misses"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff table lacks %q:\n%s", want, out)
		}
	}
}
