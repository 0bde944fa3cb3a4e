package htmlreport

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestHeadlineCarriesWhatEachFigureIsWorth pins that the page's headline
// data says which tiles are bounds or not measurable, with why, so the
// page never draws a bare number the spans cannot vouch for.
func TestHeadlineCarriesWhatEachFigureIsWorth(t *testing.T) {
	tests := []struct {
		name    string
		shows   []string
		figure  string
		want    report.Measurability // "" for a figure the page draws as is
		wantWhy bool
	}{
		{"client side: exact", []string{"calls", "executions", "session_id", "acquires", "handshakes", "target_identity", "refused_attempts"}, "acquires", "", false},
		{"server side: a lower bound", []string{"calls", "executions", "session_id", "acquires", "handshakes", "target_identity"}, "acquires", report.LowerBound, true},
		{"no target: unexplained not measurable", []string{"calls", "executions", "session_id", "acquires", "handshakes", "refused_attempts"}, "unexplained_misses", report.NotMeasurable, true},
		{"no session id", []string{"calls", "executions", "acquires", "handshakes", "target_identity", "refused_attempts"}, "multi_session_executions", report.NotMeasurable, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &report.Report{PoolSpans: 3, Executions: report.ExecutionsReport{Measurable: true}, Writer: &report.WriterReport{Shows: tt.shows}}
			f, ok := htmlHeadline(r).Figures[tt.figure]
			if got := f.State; got != tt.want || ok != (tt.want != "") {
				t.Errorf("figures[%s] = %+v (present %v), want state %q", tt.figure, f, ok, tt.want)
			}
			if (f.Why != "") != tt.wantWhy {
				t.Errorf("figures[%s].why = %q", tt.figure, f.Why)
			}
		})
	}
}

// TestMissCausesOfAKeylessDumpAreDrawnAsTheirFigures pins the page's
// misses by cause, overall and per scope, keyed and keyless: each names
// its figure, a cause the spans cannot show is null (the page says "not
// measurable", never 0), and the headline's figures say which are bounds
// (cold, keyless: "≥") and why, as the JSON report's figures do.
func TestMissCausesOfAKeylessDumpAreDrawnAsTheirFigures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		keys    []string
		unknown []string // causes drawn null
		lower   []string // causes the headline marks ≥
	}{
		{"keyed", []string{"a", "b", "c"}, nil, nil},
		{"keyless", []string{"", "", ""}, []string{"concurrent", "ttl", "after_failure", "health_check", "evicted", "unexplained"}, []string{"cold"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, raw := htmlPage(t, dumptest.MissesOnKeys(tc.keys...).Write(t), rulefmt.Config{}, Options{})
			var h Report
			if err := json.Unmarshal(raw, &h); err != nil {
				t.Fatal(err)
			}
			if len(h.Scopes) != 1 {
				t.Fatalf("%d scopes, want 1", len(h.Scopes))
			}
			for where, causes := range map[string][]Count{"overall": h.Causes, "scope": h.Scopes[0].Causes} {
				if len(causes) != len(spans.MissReasons) {
					t.Fatalf("%s: %d causes, want %d", where, len(causes), len(spans.MissReasons))
				}
				for _, c := range causes {
					if c.Figure != report.MissCauseFigure(c.Name) {
						t.Errorf("%s: cause %s names figure %q", where, c.Name, c.Figure)
					}
					if (c.Count == nil) != slices.Contains(tc.unknown, c.Name) {
						t.Errorf("%s: cause %s count %v, want null: %v", where, c.Name, c.Count, slices.Contains(tc.unknown, c.Name))
					}
				}
			}
			for _, cause := range spans.MissReasons {
				f, ok := h.Headline.Figures[report.MissCauseFigure(cause)]
				want := report.Measurability("")
				switch {
				case slices.Contains(tc.lower, cause):
					want = report.LowerBound
				case slices.Contains(tc.unknown, cause):
					want = report.NotMeasurable
				}
				if f.State != want || ok != (want != "") || ok && f.Why == "" {
					t.Errorf("headline figures[%s] = %+v (present %v), want state %q with why", report.MissCauseFigure(cause), f, ok, want)
				}
			}
		})
	}
}
