package render_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// unwrapped joins the table report's notes wrapped to its width (a
// continuation line is indented by four spaces), so a test can look for a
// whole note.
func unwrapped(table string) string { return strings.ReplaceAll(table, "\n    ", " ") }

// scopes returns n pool scopes, each one acquire and one hit.
func scopes(n int, name func(int) string) []report.ScopeReport {
	out := make([]report.ScopeReport, n)
	for i := range out {
		out[i] = report.ScopeReport{Scope: name(i), Acquires: 1, Hits: 1, MissReasons: map[string]int{}}
	}
	return out
}

// TestSectionsDrawAtMostMaxRowsRows pins the row cap of the reports for
// people at its boundary: MaxRows scopes are all drawn with no note, one
// more is left out with a note saying so, in the table and in Markdown.
func TestSectionsDrawAtMostMaxRowsRows(t *testing.T) {
	for _, tc := range []struct {
		scopes, drawn int
		note          string
	}{
		{render.MaxRows - 1, render.MaxRows - 1, ""},
		{render.MaxRows, render.MaxRows, ""},
		{render.MaxRows + 1, render.MaxRows, "… and 1 more rows, left out here"},
		{render.MaxRows + 7, render.MaxRows, "… and 7 more rows, left out here"},
	} {
		for _, format := range []string{render.FormatTable, render.FormatMarkdown} {
			t.Run(fmt.Sprintf("%d scopes %s", tc.scopes, format), func(t *testing.T) {
				r := dumptest.Scenario(t, "pooled")
				r.Pool.ByScope = scopes(tc.scopes, func(i int) string { return fmt.Sprintf("scope-%04d", i) })
				out := draw(t, r, format)
				if got := strings.Count(out, "scope-"); got != tc.drawn {
					t.Errorf("%d scope rows drawn, want %d", got, tc.drawn)
				}
				if has := strings.Contains(out, "more rows"); has != (tc.note != "") || !strings.Contains(out, tc.note) {
					t.Errorf("row cap note: want %q in:\n%s", tc.note, out)
				}
			})
		}
	}
}

// TestTableFitsTheFlexColumnToTheWidth pins fitWidth at its boundary: a
// scope name that makes the by-scope table exactly 100 columns wide is drawn
// whole, one rune longer is clipped with an ellipsis to fit, and no line of
// the table report is wider than 100 columns whatever the name's length.
func TestTableFitsTheFlexColumnToTheWidth(t *testing.T) {
	// The by-scope table's other columns are their headers' widths with
	// one-digit values: 8+4+6+8+4+5+6+11 = 52 runes, plus 3 per column
	// and 1 of border for 9 columns: 80. The scope column has 20 left.
	for _, tc := range []struct {
		name  string
		scope string
		drawn string
	}{
		{"exactly the width", strings.Repeat("s", 20), strings.Repeat("s", 20) + " │"},
		{"one rune over", strings.Repeat("s", 21), strings.Repeat("s", 19) + "… │"},
		{"far over", strings.Repeat("é", 50), strings.Repeat("é", 19) + "… │"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			r.Pool.ByScope = scopes(1, func(int) string { return tc.scope })
			out := draw(t, r, render.FormatTable)
			if !strings.Contains(out, "│ "+tc.drawn) {
				t.Errorf("scope drawn as %q expected in:\n%s", tc.drawn, out)
			}
			for _, line := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(line); n > 100 {
					t.Errorf("a line of %d columns, over 100: %q", n, line)
				}
			}
		})
	}
}

// TestPoolVerdictOfEachKindOfDump pins the pool section's one-line verdict
// and its precedence: no acquires, then unexplained misses, then a pool at
// its floor (no excess), then excess misses each explained.
func TestPoolVerdictOfEachKindOfDump(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		acquires, unexplained, excess int
		want                          string
	}{
		{"no acquires", 0, 0, 0, "no acquires in this dump (wrong --profile?)"},
		{"no acquires wins over the rest", 0, 1, 1, "no acquires in this dump"},
		{"unexplained", 5, 1, 2, "1 unexplained miss(es): a pooled session should have been reused"},
		{"unexplained without excess", 5, 2, 0, "2 unexplained miss(es)"},
		{"at the floor", 5, 0, 0, "every miss is a cold start: the pool is at its floor"},
		{"explained excess", 5, 0, 3, "3 miss(es) above the cold-start floor, each explained by its cause"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			r.Pool.Acquires, r.Pool.ExcessMisses = tc.acquires, tc.excess
			r.Pool.MissReasons = map[string]int{spans.MissUnexplained: tc.unexplained}
			r.Pool.UnexplainedMisses = tc.unexplained
			if out := draw(t, r, render.FormatTable); !strings.Contains(out, "\n  "+tc.want) {
				t.Errorf("verdict %q expected in:\n%s", tc.want, out)
			}
		})
	}
}

// TestMissesByCauseOnlyWithMisses pins that the misses-by-cause section is
// drawn from one miss on, and its unexplained examples note only with
// examples.
func TestMissesByCauseOnlyWithMisses(t *testing.T) {
	for _, tc := range []struct {
		misses   int
		examples []string
		section  bool
		note     bool
	}{
		{0, nil, false, false},
		{1, nil, true, false},
		{1, []string{"t1", "t2"}, true, true},
	} {
		t.Run(fmt.Sprintf("%d misses %d examples", tc.misses, len(tc.examples)), func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			r.Pool.Misses, r.Pool.UnexplainedExamples = tc.misses, tc.examples
			out := draw(t, r, render.FormatTable)
			if got := strings.Contains(out, "MISSES BY CAUSE"); got != tc.section {
				t.Errorf("misses by cause drawn %v, want %v", got, tc.section)
			}
			if got := strings.Contains(out, "unexplained in traces: t1, t2"); got != tc.note {
				t.Errorf("examples note drawn %v, want %v", got, tc.note)
			}
		})
	}
}

// TestProtocolSectionOnlyWhenARevisionIsNamed pins when the by-protocol
// section is drawn: never for one group without a revision, always for a
// named one or for several; and the note of a sessionless revision.
func TestProtocolSectionOnlyWhenARevisionIsNamed(t *testing.T) {
	group := func(v string, sessionless bool) report.ProtocolReport {
		return report.ProtocolReport{ProtocolVersion: v, Sessionless: sessionless, ColdStart: report.Percentiles{Count: 2}}
	}
	for _, tc := range []struct {
		name    string
		groups  []report.ProtocolReport
		section bool
		note    string
	}{
		{"none", nil, false, ""},
		{"one unnamed", []report.ProtocolReport{group("", false)}, false, ""},
		{"one named", []report.ProtocolReport{group("2025-06-18", false)}, true, ""},
		{"two, one unnamed", []report.ProtocolReport{group("", false), group("2025-06-18", false)}, true, "(none)"},
		{"sessionless", []report.ProtocolReport{group(report.SessionlessProtocol, true)}, true,
			report.SessionlessProtocol + " is sessionless: the session rules do not apply; a miss costs a cold start of - ms (p50) over 2 handshake(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			r.ByProtocol = tc.groups
			out := unwrapped(draw(t, r, render.FormatTable))
			if got := strings.Contains(out, "BY PROTOCOL REVISION"); got != tc.section {
				t.Errorf("by protocol drawn %v, want %v", got, tc.section)
			}
			if !strings.Contains(out, tc.note) {
				t.Errorf("%q expected in:\n%s", tc.note, out)
			}
			if got := strings.Contains(out, "sessionless"); got != (tc.name == "sessionless") {
				t.Errorf("sessionless named %v", got)
			}
		})
	}
}

// TestDumpNotesSayWhatTheFiguresCannot pins each note of the reports for
// people that a figure alone does not carry: the window, the scope
// attribute, a partial input, an input's warnings, executions not
// measurable or spread over sessions, a reads measure's histogram and
// unexpected examples.
func TestDumpNotesSayWhatTheFiguresCannot(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(*report.Report)
		want    string
		without string
	}{
		{"no window end", func(r *report.Report) { r.Window.End = nil }, "│ -      │\n", "2026-"},
		{"no window start", func(r *report.Report) { r.Window.Start = nil }, "│ -      │\n", "2026-"},
		{"window", func(r *report.Report) {}, "│ 2026-04-30T09:00:00Z .. 2026-04-30T09:", ""},
		{"scope attribute", func(r *report.Report) { r.Settings.ScopeAttr = "tenant" }, "pool scope from attribute tenant", ""},
		{"partial", func(r *report.Report) { r.Partial = true }, "PARTIAL: an input was damaged", ""},
		{"whole", func(r *report.Report) {}, "", "PARTIAL"},
		{"warnings", func(r *report.Report) {
			r.Inputs = append(r.Inputs, report.InputReport{Path: "b.json", Warnings: []string{"w1", "w2"}})
		}, "b.json: 2 warning(s), first: w1", ""},
		{"no warnings", func(r *report.Report) {}, "", "warning(s)"},
		{"not measurable", func(r *report.Report) {
			r.Executions.Measurable, r.Executions.WhyNot = false, "calls outlive their root"
		},
			"NOT MEASURABLE: the spans do not tie calls to executions, and the session rules do not apply; calls outlive their root", ""},
		{"not measurable draws no number", func(r *report.Report) {
			r.Executions.Measurable, r.Executions.WhyNot = false, "calls outlive their root"
		}, "│ —          │ —             │ —            │", ""},
		{"server side: lower bounds", func(r *report.Report) { r.Writer = writerWithout(r, "refused_attempts") },
			"acquires, hits, hit rate, per dial: lower bound (≥): a server-side writer never sees an attempt refused before a handler", ""},
		{"server side: the floor an upper bound", func(r *report.Report) { r.Writer = writerWithout(r, "refused_attempts") },
			"floor: upper bound (≤)", ""},
		{"server side: the per-scope rows marked too", func(r *report.Report) { r.Writer = writerWithout(r, "refused_attempts") },
			"marked figures (—, ≥, ≤) are as in the headline", ""},
		{"client side: no marks", func(r *report.Report) {}, "", "marked figures"},
		{"no target identity: unexplained not measurable", func(r *report.Report) { r.Writer = writerWithout(r, "target_identity") },
			"unexplained: not measurable: the spans carry no target identity", "unexplained miss(es)"},
		{"no session id: session figures not measurable", func(r *report.Report) { r.Writer = writerWithout(r, "session_id") },
			"multi-session, max sessions: not measurable: the calls carry no session identity", ""},
		{"measurable", func(r *report.Report) {}, "", "NOT MEASURABLE"},
		{"multi-session", func(r *report.Report) { r.Executions.MultiSession, r.Executions.Examples = 1, []string{"t9"} },
			"executions spread over several downstream sessions lose session state; examples: t9", ""},
		{"one session", func(r *report.Report) { r.Executions.Examples = []string{"t9"} }, "", "t9"},
		{"histogram", func(r *report.Report) {
			r.Measures[0].Histogram = []report.HistogramBin{{Reads: 1, Requests: 2}, {Reads: 3, Requests: 1}}
		}, "org_reads_per_cold_init complete requests by reads: 1 read(s): 2, 3 read(s): 1", ""},
		{"unexpected examples", func(r *report.Report) { r.Measures[0].Examples = []string{"t7"} },
			"org_reads_per_cold_init unexpected in traces: t7", ""},
		{"no measures", func(r *report.Report) { r.Measures = nil }, "", "READS PER REQUEST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			tc.change(r)
			out := unwrapped(draw(t, r, render.FormatTable))
			if !strings.Contains(out, tc.want) {
				t.Errorf("%q expected in:\n%s", tc.want, out)
			}
			if tc.without != "" && strings.Contains(out, tc.without) {
				t.Errorf("%q unexpected in:\n%s", tc.without, out)
			}
		})
	}
}

// TestNothingRecognisedNeedsSpansNoneRecognisedAndNoRequest pins when
// analyze and check exit 3: spans, none recognised, and no reads measure
// that found a request.
func TestNothingRecognisedNeedsSpansNoneRecognisedAndNoRequest(t *testing.T) {
	for _, tc := range []struct {
		name              string
		spans, recognised int
		requests          []int
		want              bool
	}{
		{"empty dump", 0, 0, nil, false},
		{"one span recognised", 10, 1, nil, false},
		{"nothing recognised", 10, 0, nil, true},
		{"a measure without a request", 10, 0, []int{0}, true},
		{"a measure with one request", 10, 0, []int{0, 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &report.Report{Spans: tc.spans, Recognition: report.RecognitionReport{RecognisedSpans: tc.recognised}}
			for _, n := range tc.requests {
				r.Measures = append(r.Measures, report.MeasureReport{Requests: n})
			}
			if got := r.NothingRecognised(); got != tc.want {
				t.Errorf("NothingRecognised = %v, want %v", got, tc.want)
			}
			if got := strings.Contains(draw(t, r, render.FormatTable), "no span recognised"); got != tc.want {
				t.Errorf("the table says nothing was recognised: %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRecognitionNoteListsVocabulariesWhenMixed pins the recognition note:
// one vocabulary alone, each vocabulary's resources when the report reads
// several or says mixed.
func TestRecognitionNoteListsVocabulariesWhenMixed(t *testing.T) {
	use := func(v string, res, sp int) report.VocabularyUse {
		return report.VocabularyUse{Vocabulary: v, Resources: res, Spans: sp}
	}
	for _, tc := range []struct {
		name  string
		vocab string
		uses  []report.VocabularyUse
		want  string
	}{
		{"one", "semconv", []report.VocabularyUse{use("semconv", 1, 4)}, "vocabulary semconv: 3 of 4 spans recognised\n"},
		{"mixed, one listed", report.VocabMixed, []report.VocabularyUse{use("semconv", 1, 4)},
			"vocabulary mixed: 3 of 4 spans recognised (semconv 1 resource(s), 4 span(s))\n"},
		{"two", "semconv", []report.VocabularyUse{use("semconv", 1, 3), use("none", 2, 1)},
			"vocabulary semconv: 3 of 4 spans recognised (semconv 1 resource(s), 3 span(s); none 2 resource(s), 1 span(s))\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &report.Report{Spans: 4, Settings: report.Settings{Vocabulary: tc.vocab},
				Recognition: report.RecognitionReport{RecognisedSpans: 3, Vocabularies: tc.uses}}
			if out := unwrapped(draw(t, r, render.FormatTable)); !strings.Contains(out, "  "+tc.want) {
				t.Errorf("%q expected in:\n%s", tc.want, out)
			}
		})
	}
}

// TestWriteFormats pins Write's formats: the empty format is the table,
// an unknown one is ErrUnknownFormat naming it.
func TestWriteFormats(t *testing.T) {
	r := dumptest.Scenario(t, "pooled")
	if got, want := draw(t, r, ""), draw(t, r, render.FormatTable); got != want {
		t.Error("the empty format is not the table")
	}
	err := render.Write(io.Discard, r, "yaml")
	if !errors.Is(err, render.ErrUnknownFormat) || !strings.Contains(err.Error(), `"yaml"`) {
		t.Errorf("Write(yaml) = %v, want ErrUnknownFormat naming it", err)
	}
}

// writerWithout returns r's writer section without capability name.
func writerWithout(r *report.Report, name string) *report.WriterReport {
	w := *r.Writer
	w.Shows = slices.DeleteFunc(slices.Clone(w.Shows), func(s string) bool { return s == name })
	return &w
}
