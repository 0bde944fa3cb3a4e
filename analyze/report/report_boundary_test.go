package report_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestUnrecognisedTextNamesTheSpansAndTheRemedy pins both forms of the
// no-span-recognised message: the names with their counts, and the remedy,
// --profile semconv when any name, first or last, looks like the
// conventions'.
func TestUnrecognisedTextNamesTheSpansAndTheRemedy(t *testing.T) {
	const head = "no span recognised: none of the 7 spans is read by a built-in vocabulary (mcptrace, acquire-on-miss, sentry, semconv, openllmetry, mastra)"
	const vocab = "a vocabulary: block in mcptrace.yaml, see docs/vocabularies.md"
	const semconv = "--profile semconv (names look like the MCP conventions' \"tools/call <tool>\")"
	for _, tc := range []struct {
		name       string
		names      []report.NameCount
		text, line string
	}{
		{"no names", nil, head + "\nto read them: " + vocab, head + "; to read them: " + vocab},
		{"other names", []report.NameCount{{Name: "GET /a", Spans: 5}, {Name: "db", Spans: 2}},
			head + "; the 2 most frequent span names:\n         5  GET /a\n         2  db\nto read them: " + vocab,
			head + `; the 2 most frequent span names: "GET /a" (5), "db" (2); to read them: ` + vocab},
		{"a semconv name last", []report.NameCount{{Name: "GET /a", Spans: 5}, {Name: "tools/call echo", Spans: 2}},
			head + "; the 2 most frequent span names:\n         5  GET /a\n         2  tools/call echo\nto read them: " + semconv,
			head + `; the 2 most frequent span names: "GET /a" (5), "tools/call echo" (2); to read them: ` + semconv},
		{"a semconv name first", []report.NameCount{{Name: "tools/call echo", Spans: 5}, {Name: "GET /a", Spans: 2}},
			head + "; the 2 most frequent span names:\n         5  tools/call echo\n         2  GET /a\nto read them: " + semconv,
			head + `; the 2 most frequent span names: "tools/call echo" (5), "GET /a" (2); to read them: ` + semconv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &report.Report{Spans: 7, Recognition: report.RecognitionReport{UnrecognisedNames: tc.names}}
			if got := r.UnrecognisedText(); got != tc.text {
				t.Errorf("UnrecognisedText:\n%s\nwant:\n%s", got, tc.text)
			}
			if got := r.UnrecognisedLine(); got != tc.line {
				t.Errorf("UnrecognisedLine:\n%s\nwant:\n%s", got, tc.line)
			}
		})
	}
}

// TestNoPoolSpansTextNamesWhatWasLookedFor pins the no-pool-spans message
// per profile: the default when unset, every built-in's span names once
// under auto, and a configured vocabulary by name.
func TestNoPoolSpansTextNamesWhatWasLookedFor(t *testing.T) {
	def := report.PoolSpanNames(rulefmt.ProfileDefault)
	if len(def) == 0 {
		t.Fatal("the default profile has no pool span names")
	}
	for _, tc := range []struct {
		profile rulefmt.Profile
		want    string
	}{
		{"", "no pool spans found: looked for spans named " + strings.Join(def, ", ") + " (profile default)"},
		{rulefmt.ProfileDefault, "(profile default)"},
		{"team-vocab", "no pool spans found: the spans of vocabulary team-vocab are absent"},
	} {
		if got := report.NoPoolSpansText(tc.profile); !strings.Contains(got, tc.want) {
			t.Errorf("NoPoolSpansText(%q) = %q, want %q", tc.profile, got, tc.want)
		}
	}
	auto := report.PoolSpanNames(rulefmt.ProfileAuto)
	var want []string
	for _, v := range rulefmt.BuiltinVocabularies() {
		for _, n := range v.PoolSpanNames() {
			if !slices.Contains(want, n) {
				want = append(want, n)
			}
		}
		if !slices.Contains(auto, v.PoolSpanNames()[0]) && len(v.PoolSpanNames()) > 0 {
			t.Errorf("auto lacks %s's span names", v.Name)
		}
	}
	if !slices.Equal(auto, want) || !slices.Equal(auto[:len(def)], def) {
		t.Errorf("PoolSpanNames(auto) = %v, want each built-in's once, ours first: %v", auto, want)
	}
	if got := report.PoolSpanNames("team-vocab"); got != nil {
		t.Errorf("PoolSpanNames of no built-in = %v, want nil", got)
	}
}

// TestExecutionsMeasurableWhenAnOldBaselineLacksIt pins the decoding of
// executions.measurable: absent reads as measurable (an old baseline),
// present is kept; and the words and the rule check built on it.
func TestExecutionsMeasurableWhenAnOldBaselineLacksIt(t *testing.T) {
	for _, tc := range []struct {
		json string
		want bool
	}{
		{`{"count": 2}`, true},
		{`{"measurable": true}`, true},
		{`{"measurable": false, "why_not": "no root"}`, false},
	} {
		var e report.ExecutionsReport
		if err := json.Unmarshal([]byte(tc.json), &e); err != nil {
			t.Fatal(err)
		}
		if e.Measurable != tc.want {
			t.Errorf("%s: measurable %v, want %v", tc.json, e.Measurable, tc.want)
		}
		wantText := ""
		if !tc.want {
			wantText = "executions not measurable: no root"
		}
		if got := e.NotMeasurableText(); got != wantText {
			t.Errorf("%s: NotMeasurableText %q, want %q", tc.json, got, wantText)
		}
	}
	var bad report.ExecutionsReport
	if err := json.Unmarshal([]byte(`{"count": "two"}`), &bad); err == nil {
		t.Error("a count that is a string decoded without error")
	}
	multi, _, _ := report.LookupMeasure("multi_session_executions")
	hit, _, _ := report.LookupMeasure("hit_rate")
	unmeasured := &report.Report{Executions: report.ExecutionsReport{Measurable: false}}
	measured := &report.Report{Executions: report.ExecutionsReport{Measurable: true}}
	for _, tc := range []struct {
		name string
		r    *report.Report
		m    report.Measure
		want bool
	}{
		{"no report", nil, multi, false},
		{"measurable", measured, multi, false},
		{"executions measure, not measurable", unmeasured, multi, true},
		{"pool measure, not measurable", unmeasured, hit, false},
	} {
		if got := report.UnmeasuredExecutions(tc.r, tc.m); got != tc.want {
			t.Errorf("%s: UnmeasuredExecutions = %v, want %v", tc.name, got, tc.want)
		}
	}
	if _, ok := report.MeasureValue(unmeasured, "multi_session_executions"); ok {
		t.Error("an executions measure of unmeasurable executions has a value")
	}
}

// writerWithout returns r's writer section without capability name.
func writerWithout(r *report.Report, name string) *report.WriterReport {
	w := *r.Writer
	w.Shows = slices.DeleteFunc(slices.Clone(w.Shows), func(s string) bool { return s == name })
	return &w
}
