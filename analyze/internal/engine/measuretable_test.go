package engine

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// schemaDoc is the JSON contract's doc, whose measure table is generated.
const schemaDoc = "../../../docs/analysis-schema.md"

// TestSchemaDocListsTheMeasures keeps the measure table of
// docs/analysis-schema.md equal to the table of measures; -update rewrites
// it from the table.
func TestSchemaDocListsTheMeasures(t *testing.T) {
	data, err := os.ReadFile(schemaDoc)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- measures:begin -->\n", "<!-- measures:end -->"
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %q and %q markers", schemaDoc, begin, end)
	}
	got, want := doc[i+len(begin):j], render.MeasureDoc()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(schemaDoc, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's measure table differs from the table of measures (rerun with -update):\n%s", schemaDoc, cmp.Diff(want, got))
}

// TestEveryMeasureReadsItsDocumentedKey pins each row's Value to the report
// key its JSON names: a row that reads the wrong field, or documents the
// wrong key, fails here.
func TestEveryMeasureReadsItsDocumentedKey(t *testing.T) {
	reports := map[string]*report.Report{
		"ttl-and-redial":   analyzeTD(t, scenarioConfig(t, "ttl-and-redial"), tracegen.TTLAndRedial()),
		"cold-init-two":    analyzeTD(t, scenarioConfig(t, "cold-init-two-reads"), tracegen.ColdInitTwoReads()),
		"prod-cold-starts": analyzeTD(t, scenarioConfig(t, "prod-cold-starts"), tracegen.ProdColdStarts()),
	}
	for name, r := range reports {
		var doc any
		if err := json.Unmarshal([]byte(renderString(t, r, render.FormatJSON)), &doc); err != nil {
			t.Fatal(err)
		}
		check := func(what, path string, v float64, ok bool) {
			t.Helper()
			j, found := lookupPath(doc, path)
			if !found {
				t.Errorf("%s: %s: the report has no key %s", name, what, path)
				return
			}
			switch jv := j.(type) {
			case nil:
				if ok {
					t.Errorf("%s: %s = %v, but %s is null", name, what, v, path)
				}
			case float64:
				if jv != v {
					t.Errorf("%s: %s = %v (ok %v), but %s is %v", name, what, v, ok, path, jv)
				}
			default:
				t.Errorf("%s: %s: %s is %T, not a number", name, what, path, j)
			}
		}
		for _, m := range report.Measures() {
			v, ok := m.Value(r)
			known := r.FigureOf(m.Name).Known() // a figure the spans cannot show is null
			check(m.Name, m.JSON, v, ok && known)
			// Executions that are not measurable give their measures no data.
			if mv, mok := report.MeasureValue(r, m.Name); m.Rule && (mv != v || mok != (ok && known && !report.UnmeasuredExecutions(r, m))) {
				t.Errorf("%s: MeasureValue(%s) = %v %v, the row says %v %v", name, m.Name, mv, mok, v, ok)
			}
		}
		for i := range r.Measures {
			for _, f := range report.ReadsFields() {
				v, ok := f.ReadsValue(&r.Measures[i])
				check(f.Name, "measures."+strconv.Itoa(i)+"."+f.JSON, v, ok)
			}
		}
	}
}

// TestMeasureTableIsWellFormed: names are unique, every rule measure can be
// looked up, and each baseline check has what it needs.
func TestMeasureTableIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, rows := range [][]report.Measure{report.Measures(), report.ReadsFields()} {
		for _, m := range rows {
			reads := m.ReadsValue != nil
			switch {
			case seen[m.Name] && !reads:
				t.Errorf("measure %s is in the table twice", m.Name)
			case reads == (m.Value != nil):
				t.Errorf("measure %s needs exactly one of Value and ReadsValue", m.Name)
			case (m.Baseline == report.BaselineDrop || m.Baseline == report.BaselineGrowth) && m.Tolerance == nil:
				t.Errorf("measure %s compares with a tolerance but has none", m.Name)
			case m.Baseline != report.BaselineNone && (m.Noun == "" || !m.Rule):
				t.Errorf("measure %s regresses but has no noun or is not a rule measure", m.Name)
			case m.Doc == "" || m.JSON == "" || m.Unit == "" || m.Better == "":
				t.Errorf("measure %s lacks its doc, key, unit or direction", m.Name)
			}
			seen[m.Name] = true
		}
	}
	for _, n := range rulefmt.MeasureNames([]rulefmt.ReadMeasure{{Name: "org.reads"}}) {
		if _, _, ok := report.LookupMeasure(n); !ok {
			t.Errorf("LookupMeasure(%q) finds nothing", n)
		}
	}
	if _, _, ok := report.LookupMeasure("scopes"); ok {
		t.Error("a report-only figure must not be a rule measure")
	}
}

// rulesSchema is the JSON Schema of mcptrace.yaml, whose quantity names
// come from the table of measures.
const rulesSchema = "../../../docs/mcptrace-rules.schema.json"

// schemaQuantityLines renders the quantity alternatives of the rules'
// JSON Schema from the table: the span quantities and the plain measure
// names, the latency percentiles as a pattern, the reads fields as one.
func schemaQuantityLines() []string {
	var names, series, quantiles, fields []string
	names = append(names, rulefmt.SpanQuantities()...)
	for _, m := range report.Measures() {
		if !m.Rule {
			continue
		}
		if m.Unit == report.UnitMS {
			s, q, _ := strings.Cut(m.Name, ".")
			if !slices.Contains(series, s) {
				series = append(series, s)
			}
			if !slices.Contains(quantiles, strings.TrimPrefix(q, "p")) {
				quantiles = append(quantiles, strings.TrimPrefix(q, "p"))
			}
			continue
		}
		names = append(names, m.Name)
	}
	for _, f := range report.ReadsFields() {
		if f.Rule {
			fields = append(fields, f.Name)
		}
	}
	enum, _ := json.Marshal(names)
	return []string{
		`        { "enum": ` + strings.ReplaceAll(string(enum), `","`, `", "`) + ` },`,
		`        { "pattern": "^(` + strings.Join(series, "|") + `)\\.p(` + strings.Join(quantiles, "|") + `)$" },`,
		`        { "pattern": "^measures\\.[A-Za-z0-9_.-]+\\.(` + strings.Join(fields, "|") + `)$" }`,
	}
}

// TestRulesSchemaNamesTheTable keeps the quantity names the rules' JSON
// Schema accepts equal to the table of measures; -update rewrites them.
func TestRulesSchemaNamesTheTable(t *testing.T) {
	data, err := os.ReadFile(rulesSchema)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), `{ "enum": ["count"`) })
	want := schemaQuantityLines()
	if at < 0 || at+len(want) > len(lines) {
		t.Fatalf("%s has no quantity enum starting with count", rulesSchema)
	}
	got := lines[at : at+len(want)]
	if slices.Equal(got, want) {
		return
	}
	if *update {
		copy(lines[at:], want)
		if err := os.WriteFile(rulesSchema, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's quantities differ from the table of measures (rerun with -update):\n%s", rulesSchema, cmp.Diff(strings.Join(want, "\n"), strings.Join(got, "\n")))
}

// The rule language's measure names (rulefmt, what a rules file is checked
// against when parsed) and the table's rule rows are one list: every name
// has a row to read it from a report, in the same order (rules, regressions
// and diffs list them in it), and no row is a rule measure without a name.
func TestRuleMeasureNamesAreTheTablesRuleRows(t *testing.T) {
	var rows []string
	for _, m := range report.Measures() {
		if m.Rule {
			rows = append(rows, m.Name)
		}
	}
	if names := rulefmt.MeasureNames(nil); !slices.Equal(rows, names) {
		t.Errorf("the table's rule rows differ from rulefmt.MeasureNames:\n rows  %q\n names %q", rows, names)
	}
	var fields []string
	for _, f := range report.ReadsFields() {
		if f.Rule {
			fields = append(fields, f.Name)
		}
	}
	if names := rulefmt.ReadsFieldNames(); !slices.Equal(fields, names) {
		t.Errorf("the reads table's rule rows differ from rulefmt.ReadsFieldNames:\n rows  %q\n names %q", fields, names)
	}
}
