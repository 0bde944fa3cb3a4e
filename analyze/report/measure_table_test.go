package report_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// jsonAt returns the value at a dotted key path of a decoded JSON
// document, and whether every step was there.
func jsonAt(doc any, path string) (any, bool) {
	for _, k := range strings.Split(path, ".") {
		m, ok := doc.(map[string]any)
		if !ok {
			return nil, false
		}
		if doc, ok = m[k]; !ok {
			return nil, false
		}
	}
	return doc, true
}

// TestMeasureValueIsTheValueAtItsJSONKey pins, on every scenario's report,
// that each measure a rule may name reads the value at the key its row
// documents (null, or executions not measurable: no data), dump-level measures and every reads field of
// every reads measure alike.
func TestMeasureValueIsTheValueAtItsJSONKey(t *testing.T) {
	for _, g := range dumptest.GoldenReports(t) {
		var doc map[string]any
		if err := json.Unmarshal(g.Raw, &doc); err != nil {
			t.Fatal(err)
		}
		check := func(name string, raw any, present bool) {
			t.Helper()
			if !present {
				t.Fatalf("%s: %s's key is not in the report", g.Name, name)
			}
			got, ok := report.MeasureValue(g.Report, name)
			want, hasData := raw.(float64)
			if ok != hasData || got != want {
				t.Errorf("%s: MeasureValue(%s) = %v, %v; the report holds %v", g.Name, name, got, ok, raw)
			}
		}
		for _, m := range report.Measures() {
			if m.Rule {
				raw, present := jsonAt(doc, m.JSON)
				if report.UnmeasuredExecutions(g.Report, m) {
					raw = nil // executions not measurable: no data
				}
				check(m.Name, raw, present)
			}
		}
		for i, mr := range g.Report.Measures {
			for _, f := range report.ReadsFields() {
				if !f.Rule {
					continue
				}
				raw, present := doc["measures"].([]any)[i].(map[string]any)[f.JSON]
				if f.Name == "unexpected" && mr.Complete == 0 {
					raw = nil // no data before a complete request
				}
				check(rulefmt.ReadsPrefix+mr.Name+"."+f.Name, raw, present)
			}
		}
	}
}

// TestLookupMeasureNamesOnlyRuleMeasures pins the names a rule may use:
// dump-level measures marked Rule, measures.NAME.FIELD with NAME kept
// whole (dots included), and nothing else.
func TestLookupMeasureNamesOnlyRuleMeasures(t *testing.T) {
	for _, tc := range []struct {
		name, field, reads string
		ok                 bool
	}{
		{"hit_rate", "hit_rate", "", true},
		{"call.p99", "call.p99", "", true},
		{"unexplained_misses", "unexplained_misses", "", true},
		{"measures.org_reads.unexpected", "unexpected", "org_reads", true},
		{"measures.a.b.unexpected", "unexpected", "a.b", true},
		{"measures.org_reads", "", "", false},
		{"measures.org_reads.nope", "", "", false},
		{"measures.org_reads.hit_rate", "", "", false},
		{"unexpected", "", "", false},
		{"nope", "", "", false},
	} {
		m, reads, ok := report.LookupMeasure(tc.name)
		if ok != tc.ok || m.Name != tc.field || reads != tc.reads {
			t.Errorf("LookupMeasure(%q) = %q, %q, %v; want %q, %q, %v", tc.name, m.Name, reads, ok, tc.field, tc.reads, tc.ok)
		}
	}
	// Rows a rule may not name are never found, though in the table.
	for _, m := range append(report.Measures(), report.ReadsFields()...) {
		name := m.Name
		if m.ReadsValue != nil {
			name = rulefmt.ReadsPrefix + "x." + m.Name
		}
		if _, _, ok := report.LookupMeasure(name); ok != m.Rule {
			t.Errorf("LookupMeasure(%q) found %v, but Rule is %v", name, ok, m.Rule)
		}
	}
	r := dumptest.Scenario(t, "cold-init-two-reads")
	if _, ok := report.MeasureValue(r, "measures.absent.unexpected"); ok {
		t.Error("a reads measure the report lacks has a value")
	}
	if v, ok := report.MeasureValue(r, "measures.org_reads_per_cold_init.unexpected"); !ok || v != 3 {
		t.Errorf("cold-init-two-reads: unexpected = %v, %v; want 3", v, ok)
	}
}
