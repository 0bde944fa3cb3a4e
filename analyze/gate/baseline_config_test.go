package gate

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// withMeasures is a report whose reads measures have the given names.
func withMeasures(names ...string) *report.Report {
	r := &report.Report{Measures: []report.MeasureReport{}}
	for _, n := range names {
		r.Measures = append(r.Measures, report.MeasureReport{Name: n})
	}
	return r
}

// TestBaselineFromAnotherConfigIsIncomplete pins MeasuresDiffer and what
// the check makes of it: a baseline whose reads measures are not the
// current configuration's by name (renamed, added, dropped) makes the
// check incomplete (exit 3), the reason naming both sides' measures; the
// same names in another order, or no measure on either side, compare as
// before (pass).
func TestBaselineFromAnotherConfigIsIncomplete(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base, cur *report.Report
		want      string // "" the same configuration
	}{
		{"the same names", withMeasures("db", "cache"), withMeasures("cache", "db"), ""},
		{"no measures on either side", withMeasures(), withMeasures(), ""},
		{"a renamed measure", withMeasures("db_reads"), withMeasures("reads"),
			`its reads measures are ["db_reads"], the current configuration's are ["reads"]`},
		{"a measure added", withMeasures(), withMeasures("reads"),
			`its reads measures are none, the current configuration's are ["reads"]`},
		{"a measure dropped", withMeasures("reads", "writes"), withMeasures("reads"),
			`its reads measures are ["reads", "writes"], the current configuration's are ["reads"]`},
		{"many names, the list bounded", withMeasures("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"), withMeasures(),
			`["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"] and 2 more`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why := MeasuresDiffer(tc.base, tc.cur)
			if !strings.Contains(why, tc.want) || (tc.want == "") != (why == "") {
				t.Fatalf("MeasuresDiffer = %q, want it to say %q", why, tc.want)
			}
			c := NewCheckReportWith(tc.cur, nil, nil, "base.json", CheckOptions{IncompleteReasons: []string{why}})
			wantCode := ExitPass
			if tc.want != "" {
				wantCode = ExitIncomplete
			}
			if c.ExitCode != wantCode || (tc.want != "" && !strings.Contains(strings.Join(c.IncompleteReasons, "; "), tc.want)) {
				t.Errorf("check exit %d, reasons %q; want exit %d saying %q", c.ExitCode, c.IncompleteReasons, wantCode, tc.want)
			}
		})
	}
}
