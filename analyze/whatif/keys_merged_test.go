package whatif

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestKeysMergedWhyAsksTheReportsOnePlace pins KeysMergedWhy: the reason
// the analysis's report gives a figure needing target_identity
// (report.Report.LacksWhy), the writer's IdentityLost where lone
// surrogates took it, and nothing where the writer shows it or is not
// known.
func TestKeysMergedWhyAsksTheReportsOnePlace(t *testing.T) {
	lacking := &report.WriterReport{Shows: []string{"acquires"}}
	lost := &report.WriterReport{Shows: []string{"acquires"}, IdentityLost: "the inputs held 4 escaped lone UTF-16 surrogates"}
	for _, tc := range []struct {
		name string
		w    *report.WriterReport
		want string
	}{
		{"writer not known", nil, ""},
		{"writer shows the target identity", &report.WriterReport{Shows: []string{"acquires", "target_identity"}}, ""},
		{"no key written", lacking, (&report.Report{Writer: lacking}).LacksWhy(rulefmt.CapTargetIdentity)},
		{"keys may differ only in lone surrogates", lost, lost.IdentityLost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := KeysMergedWhy(tc.w); got != tc.want || (tc.w != nil && tc.w.IdentityLost == "" && tc.want != "" && !strings.Contains(got, "no target identity")) {
				t.Errorf("KeysMergedWhy = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEveryOutputSaysTheReplayIsNotMeasurableWhereKeysMerge pins
// Marks.KeysMerged in every output: the line saying why, no replayed
// figure but the acquires (a dash, or null in the JSON, with its figures
// section), no best-per-cost line and, on the HTML section, no chart.
func TestEveryOutputSaysTheReplayIsNotMeasurableWhereKeysMerge(t *testing.T) {
	rows := []Row{
		{Settings: Settings{IdleTTL: time.Minute, IdlePerKey: 1, MaxIdle: 64}, AsRecorded: true, Acquires: 7, Hits: 3,
			MissesByCause: map[string]int{"cold": 4}, SessionsOpened: 4, PeakSessions: 2, IdleSessionSeconds: 12.5},
		{Settings: Settings{IdleTTL: time.Hour, IdlePerKey: 1, MaxIdle: 64}, Acquires: 7, Hits: 5,
			MissesByCause: map[string]int{"cold": 2}, SessionsOpened: 2, PeakSessions: 2, IdleSessionSeconds: 99.5},
	}
	const why = "two targets read as one key"
	for _, tc := range []struct {
		name  string
		write func(io.Writer, []Row, Marks) error
		says  []string
	}{
		{"table", WriteTable, []string{"NOT MEASURABLE", why, bestNotMeasurable}},
		{"markdown", WriteMarkdown, []string{"NOT MEASURABLE", why, bestNotMeasurable, "sorted by setting"}},
		{"html", WriteHTMLSection, []string{"NOT MEASURABLE", why, bestNotMeasurable, "sorted by setting"}},
		{"json", WriteJSON, []string{`"hit_rate": null`, `"hits": null`, `"misses_by_cause": null`, `"idle_session_seconds": null`,
			`"state": "not_measurable"`, why, `"best_per_cost": []`, `"acquires": 7`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var merged, plain bytes.Buffer
			if err := tc.write(&merged, rows, Marks{KeysMerged: why}); err != nil {
				t.Fatal(err)
			}
			if err := tc.write(&plain, rows, Marks{}); err != nil {
				t.Fatal(err)
			}
			out := merged.String()
			for _, s := range tc.says {
				if !strings.Contains(out, s) {
					t.Errorf("keys merged: no %q in:\n%s", s, out)
				}
			}
			for _, s := range []string{"42.9%", "71.4%", "cold=", "12.5", "99.5", "at most", "<svg"} {
				if strings.Contains(out, s) {
					t.Errorf("keys merged, yet %q is given:\n%s", s, out)
				}
			}
			if p := plain.String(); strings.Contains(p, "NOT MEASURABLE") || strings.Contains(p, "not_measurable") || !strings.Contains(p, "cold") {
				t.Errorf("keys told apart, yet:\n%s", p)
			}
		})
	}
}

// TestRowsAreSortedBySettingWhereHitRatesAreNotMeasurable pins SortFor:
// by hit rate as ever, but by setting, as recorded first, where the hit
// rates are not measurable, so the order says nothing they cannot.
func TestRowsAreSortedBySettingWhereHitRatesAreNotMeasurable(t *testing.T) {
	mk := func() []Row {
		return []Row{
			{Settings: Settings{IdleTTL: time.Hour}, Acquires: 2, Hits: 1},
			{Settings: Settings{IdleTTL: time.Second}, Acquires: 2, Hits: 2},
			{Settings: Settings{IdleTTL: time.Minute}, AsRecorded: true, Acquires: 2},
		}
	}
	for _, tc := range []struct {
		name string
		m    Marks
		want []time.Duration
	}{
		{"by hit rate", Marks{}, []time.Duration{time.Second, time.Hour, time.Minute}},
		{"by setting where keys merge", Marks{KeysMerged: "why"}, []time.Duration{time.Minute, time.Second, time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := mk()
			SortFor(rows, tc.m)
			for i, r := range rows {
				if r.Settings.IdleTTL != tc.want[i] {
					t.Fatalf("row %d at %s, want %v", i, r.Settings.IdleTTL, tc.want)
				}
			}
		})
	}
}
