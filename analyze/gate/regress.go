package gate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
)

// maxNamedMeasures bounds the measure names one side of MeasuresDiffer
// lists, so a file of thousands of measures makes one readable line.
const maxNamedMeasures = 10

// MeasuresDiffer says why a baseline was made under another configuration
// than the current report: its reads-per-request measures (named by the
// configuration's measures:) are not the current ones by name. Regressions
// compares a reads measure only under one name on both sides, so a
// renamed, added or dropped measure would go uncompared and the gate pass
// on a comparison it never made; the check is then incomplete (exit 3),
// with this reason. It returns "" when both sides hold the same names
// (in any order) and for a nil baseline.
func MeasuresDiffer(base, cur *report.Report) string {
	if base == nil || cur == nil {
		return ""
	}
	names := func(r *report.Report) []string {
		out := make([]string, 0, len(r.Measures))
		for _, m := range r.Measures {
			out = append(out, m.Name)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	b, c := names(base), names(cur)
	if slices.Equal(b, c) {
		return ""
	}
	return fmt.Sprintf("the baseline was made under another configuration: its reads measures are %s, the current configuration's are %s; a measure under one name only is not compared (make the baseline again under the current configuration)",
		measureList(b), measureList(c))
}

// measureList renders measure names for MeasuresDiffer: quoted and escaped,
// at most maxNamedMeasures of them, "none" for none.
func measureList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, 0, min(len(names), maxNamedMeasures))
	for _, n := range names[:min(len(names), maxNamedMeasures)] {
		q = append(q, textfmt.QuoteInput(n))
	}
	out := "[" + strings.Join(q, ", ") + "]"
	if len(names) > maxNamedMeasures {
		out += fmt.Sprintf(" and %d more", len(names)-maxNamedMeasures)
	}
	return out
}

// DiffSchema identifies the JSON contract of `mcptrace diff --format json`
// (docs/ci.md). It changes only when a key changes meaning or disappears.
const DiffSchema = "mcptrace.diff/v1"

// readsPrefix starts the rule name of a reads-per-request field:
// measures.NAME.FIELD.
const readsPrefix = "measures."

// maxCell bounds a free-text cell (a file name) so a table stays readable.
const maxCell = 40

// tableWidth is the width the reports for people fit in.
const tableWidth = 100
