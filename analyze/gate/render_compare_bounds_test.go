package gate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestTheDiffMarksEveryBoundAndTheChangeBetweenThem pins how the
// comparison draws figures that are only bounds, in the text table, the
// Markdown and the JSON rows of diff, and the table and Markdown of
// check --baseline, alike: each side marked "≥"/"≤" as the
// analysis marks it, the change marked by what it is worth (a lower bound
// of the change when the current side is a lower bound or the baseline an
// upper one, "—" when the two bound it from opposite ends), and a note
// saying why; figures that are the truth are drawn bare. A baseline read
// back without its writer section is worth what its figures declare.
func TestTheDiffMarksEveryBoundAndTheChangeBetweenThem(t *testing.T) {
	// declared is a report read back from a file without a writer
	// section, whose figures declare excess_misses an upper bound.
	declared := func(r *report.Report) *report.Report {
		r.Figures = map[string]report.FigureState{"excess_misses": {State: report.UpperBound, Why: "declared upper"}}
		return r
	}
	const noIdentity = "the spans carry no target identity"
	for _, tc := range []struct {
		name      string
		base, cur *report.Report
		measure   string
		cells     [3]string // base, current, change as drawn
		states    [3]report.Measurability
		note      string // in the note under the table; "" for none
		message   string // in a regression's message; "" for no regression
		allowed   string // a regression's allowed text, marked as its baseline is
	}{
		{"both the truth: bare figures", exact(excess(100, 90)), exact(excess(100, 50)), "excess_misses",
			[3]string{"10", "50", "+40"}, [3]report.Measurability{report.Measurable, report.Measurable, report.Measurable}, "", "rose from 10 to 50", "<= 10"},
		{"the current an upper bound: the change one too", exact(excess(100, 90)), without(excess(100, 50), "target_identity"), "excess_misses",
			[3]string{"10", "≤ 50", "≤ +40"}, [3]report.Measurability{report.Measurable, report.UpperBound, report.UpperBound},
			"bound: excess_misses: current upper bound (≤), change upper bound (≤): current: " + noIdentity, "", ""},
		{"the baseline an upper bound: the change a lower one", without(excess(100, 90), "target_identity"), exact(excess(100, 50)), "excess_misses",
			[3]string{"≤ 10", "50", "≥ +40"}, [3]report.Measurability{report.UpperBound, report.Measurable, report.LowerBound},
			"bound: excess_misses: base upper bound (≤), change lower bound (≥): baseline: " + noIdentity, "rose from ≤ 10 to 50", "<= ≤ 10"},
		{"both upper bounds: the change may be off either way", without(excess(100, 90), "target_identity"), without(excess(100, 50), "target_identity"), "excess_misses",
			[3]string{"≤ 10", "≤ 50", "—"}, [3]report.Measurability{report.UpperBound, report.UpperBound, report.NotMeasurable},
			"bound: excess_misses: base upper bound (≤), current upper bound (≤), change not measurable: both sides: " + noIdentity, "", ""},
		{"both lower bounds of a rate", without(poolReport(100, 90), "refused_attempts"), without(poolReport(100, 50), "refused_attempts"), "hit_rate",
			[3]string{"≥ 0.9", "≥ 0.5", "—"}, [3]report.Measurability{report.LowerBound, report.LowerBound, report.NotMeasurable}, "(it may be off either way)", "", ""},
		{"no change, the current a lower bound: at least none", exact(poolReport(100, 90)), without(poolReport(100, 90), "refused_attempts"), "hit_rate",
			[3]string{"0.9", "≥ 0.9", "≥ 0"}, [3]report.Measurability{report.Measurable, report.LowerBound, report.LowerBound}, "bound: hit_rate, acquires, hits: current lower bound (≥), change lower bound (≥): current: a server-side writer", "", ""},
		{"a read-back baseline's declared bound", declared(excess(100, 90)), exact(excess(100, 50)), "excess_misses",
			[3]string{"≤ 10", "50", "≥ +40"}, [3]report.Measurability{report.UpperBound, report.Measurable, report.LowerBound},
			"bound: excess_misses: base upper bound (≤), change lower bound (≥): baseline: declared upper", "rose from ≤ 10 to 50", "<= ≤ 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := Compare(tc.base, tc.cur, rulefmt.DefaultTolerances())
			var text, md bytes.Buffer
			if err := RenderDiff(&text, rows, "a.json", "b.json"); err != nil {
				t.Fatal(err)
			}
			if err := RenderDiffMarkdown(&md, rows, "a.json", "b.json"); err != nil {
				t.Fatal(err)
			}
			wantText := "│ " + tc.measure + " "
			if got := figureCells(lineWith(text.String(), wantText)); got != tc.cells {
				t.Errorf("table row cells %q, want %q", got, tc.cells)
			}
			mdRow := lineWith(md.String(), "| `"+tc.measure+"` |")
			if want := "| " + strings.Join(tc.cells[:], " | ") + " |"; !strings.Contains(mdRow, want) {
				t.Errorf("Markdown row %q, want it to hold %q", mdRow, want)
			}
			c := NewCheckReportWith(tc.cur, nil, RegressionsOf(rows), "a.json", CheckOptions{Comparison: rows})
			for _, format := range []string{CheckTable, CheckMarkdown} {
				out := renderCheck(t, c, format)
				if !strings.Contains(out, "| "+strings.Join(tc.cells[:], " | ")+" |") && figureCells(lineWith(out, wantText)) != tc.cells {
					t.Errorf("check --format %s draws the %s row without its marks %q:\n%s", format, tc.measure, tc.cells, out)
				}
			}
			checkNote(t, "table", flatten(text.String()), tc.note)
			checkNote(t, "Markdown", md.String(), tc.note)
			r := rowJSON(t, rowOf(t, rows, tc.measure))
			if got := [3]report.Measurability{r.BaselineFigure.State, r.CurrentFigure.State, r.ChangeFigure.State}; got != tc.states {
				t.Errorf("JSON states %v, want %v", got, tc.states)
			}
			checkRegression(t, rows, tc.measure, tc.message, tc.allowed, tc.states)
		})
	}
}

// figureCells are the base, current and change cells of a row of the
// text table, trimmed; empty for a line that is no such row.
func figureCells(line string) [3]string {
	var out [3]string
	cells := strings.Split(strings.Trim(line, "│"), "│")
	if len(cells) < 4 {
		return out
	}
	for i := range out {
		out[i] = strings.TrimSpace(cells[i+1])
	}
	return out
}

// flatten joins the wrapped lines under a text table back into one line
// each, so a note can be looked for whole.
func flatten(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// checkNote fails unless out holds note ("" for none: then no bound note).
func checkNote(t *testing.T, what, out, note string) {
	t.Helper()
	switch {
	case note == "" && strings.Contains(out, "bound: "):
		t.Errorf("%s has a bound note, want none:\n%s", what, out)
	case note != "" && !strings.Contains(out, note):
		t.Errorf("%s does not say %q:\n%s", what, note, out)
	}
}

// checkRegression fails unless measure regressed exactly when message is
// given, its message and what it allowed saying it (marks and all) and
// the regression's JSON saying what its figures are worth.
func checkRegression(t *testing.T, rows []Row, measure, message, allowed string, states [3]report.Measurability) {
	t.Helper()
	var got *Regression
	for _, g := range RegressionsOf(rows) {
		if g.Measure == measure {
			got = &g
		}
	}
	switch {
	case got == nil && message != "":
		t.Errorf("%s did not regress, want a regression saying %q", measure, message)
	case got != nil && message == "":
		t.Errorf("%s regressed (%s), want no regression", measure, got.Message)
	case got != nil:
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var back Regression
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(back.Message, message) {
			t.Errorf("regression message %q, want it to say %q", back.Message, message)
		}
		if back.Allowed != allowed {
			t.Errorf("regression allowed %q, want %q", back.Allowed, allowed)
		}
		if s := [3]report.Measurability{back.BaselineFigure.State, back.CurrentFigure.State, back.ChangeFigure.State}; s != states {
			t.Errorf("regression JSON states %v, want %v", s, states)
		}
	}
}

// rowJSON is r as the JSON of diff and check writes it, read back.
func rowJSON(t *testing.T, r Row) Row {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Row
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}
