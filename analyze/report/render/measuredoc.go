package render

import (
	"fmt"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// needsDoc says what m needs of the writer's spans, for the schema doc:
// the capabilities without which it is not measurable, then those without
// which it is only a lower (≥) or upper (≤) bound; "-" for none.
func needsDoc(m report.Measure) string {
	var parts []string
	if n := m.Needs.Names(); len(n) > 0 {
		parts = append(parts, strings.Join(n, ", "))
	}
	if n := m.Under.Names(); len(n) > 0 {
		parts = append(parts, "≥ without "+strings.Join(n, ", "))
	}
	if n := m.Over.Names(); len(n) > 0 {
		parts = append(parts, "≤ without "+strings.Join(n, ", "))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

// MeasureDoc renders the table of measures as the Markdown table of
// docs/analysis-schema.md (between its measures:begin and measures:end
// markers); a test keeps the two in step.
func MeasureDoc() string {
	var b strings.Builder
	b.WriteString("| name | unit | better | report key | in rules | needs | meaning |\n|---|---|---|---|---|---|---|\n")
	row := func(name, json string, m report.Measure) {
		rule := "yes"
		if !m.Rule {
			rule = "no"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | %s | %s | %s |\n", name, m.Unit, m.Better, json, rule, needsDoc(m), m.Doc)
	}
	for _, m := range report.Measures() {
		row(m.Name, m.JSON, m)
	}
	for _, f := range report.ReadsFields() {
		row(rulefmt.ReadsPrefix+"NAME."+f.Name, "measures[]."+f.JSON, f)
	}
	return b.String()
}
