package report

import (
	"testing"

	"github.com/mcptrace/mcptrace/spans"
)

// TestAWriterSectionBeforeAcquireAttemptsShowsThem pins how a report read
// back reads acquire_attempts: named in shows, shown; in lacks, lacking
// (the redial a lower bound); in neither, the section was written before
// the capability was, and is taken to show it, as it claimed every
// figure then (a stored baseline keeps its worth).
func TestAWriterSectionBeforeAcquireAttemptsShowsThem(t *testing.T) {
	before := []string{"calls", "executions", "session_id", "acquires", "handshakes", "acquire_spans", "invocation_spans",
		"handshake_spans", "target_identity", "refused_attempts", "pool_settings", "call_attempts"}
	for _, tc := range []struct {
		name         string
		shows, lacks []string
		want         Measurability
	}{
		{"shown", append(before[:len(before):len(before)], "acquire_attempts"), []string{}, Measurable},
		{"lacking", before, []string{"acquire_attempts"}, LowerBound},
		{"named in neither list", before, []string{}, Measurable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{PoolSpans: 1, Executions: ExecutionsReport{Measurable: true}, Writer: &WriterReport{Shows: tc.shows, Lacks: tc.lacks}}
			if f := r.FigureOf(MissCauseFigure(spans.MissRedial)); f.State != tc.want {
				t.Errorf("redial is %s (%q), want %s", f.State, f.Why, tc.want)
			}
		})
	}
}
