package htmlreport

import (
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
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
