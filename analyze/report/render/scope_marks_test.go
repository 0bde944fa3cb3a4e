package render_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// scopeRow returns the cells of the table report's by-scope row of scope.
func scopeRow(t *testing.T, out, scope string) []string {
	t.Helper()
	for line := range strings.SplitSeq(out, "\n") {
		cells := strings.Split(line, "│")
		if len(cells) < 3 || strings.TrimSpace(cells[1]) != scope {
			continue
		}
		var row []string
		for _, c := range cells[1 : len(cells)-1] {
			row = append(row, strings.TrimSpace(c))
		}
		return row
	}
	t.Fatalf("no row of scope %s in:\n%s", scope, out)
	return nil
}

// TestAPerScopeCellIsMarkedAsItsHeadlineFigure pins the marks of the
// by-scope rows: each cell is marked as the headline figure it breaks down
// (≥ before a lower bound, ≤ before an upper one, — for no number), and a
// cell whose figure is measurable is drawn bare.
func TestAPerScopeCellIsMarkedAsItsHeadlineFigure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		without string
		want    []string
	}{
		{"a client-side writer", "", []string{"gateway-1", "6", "5", "1", "83.3%", "1", "16.7%", "0", "0"}},
		{"a server-side writer", "refused_attempts", []string{"gateway-1", "≥ 6", "≥ 5", "1", "≥ 83.3%", "1", "≤ 16.7%", "0", "≤ 0"}},
		{"no target identity", "target_identity", []string{"gateway-1", "6", "5", "1", "83.3%", "≥ 1", "≥ 16.7%", "≤ 0", render.NotMeasurableCell}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			if tc.without != "" {
				r.Writer = writerWithout(r, tc.without)
			}
			if got := scopeRow(t, draw(t, r, render.FormatTable), "gateway-1"); !slices.Equal(got, tc.want) {
				t.Errorf("scope row %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTheDumpNoteSaysWhoseIdleSettingsWereUsed pins the dump note's words
// for each source of the idle settings the misses were attributed under.
func TestTheDumpNoteSaysWhoseIdleSettingsWereUsed(t *testing.T) {
	for _, tc := range []struct {
		settings string
		want     string
	}{
		{report.SettingsRecorded, "idle settings as each pool scope recorded them,"},
		{report.SettingsMixed, "idle settings as recorded where a pool scope did, else idle TTL 1m0s assumed (by scope below),"},
		{report.SettingsAssumed, "idle TTL 1m0s assumed (no pool scope recorded settings it could be replayed under),"},
		{"", "profile default, idle TTL 1m0s, executions by"},
	} {
		t.Run(tc.settings, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			r.Settings.PoolSettings, r.Settings.IdleTTLSeconds = tc.settings, 60
			for _, format := range []string{render.FormatTable, render.FormatMarkdown} {
				if out := unwrapped(draw(t, r, format)); !strings.Contains(out, tc.want) {
					t.Errorf("the %s report lacks %q:\n%s", format, tc.want, out)
				}
			}
		})
	}
}

// TestTheScopeAttributeNoteAddsToTheDumpNotes pins that naming the scope
// attribute adds its note after the dump's others, which stay: the
// profile and recognition notes, and no column header read as a note.
func TestTheScopeAttributeNoteAddsToTheDumpNotes(t *testing.T) {
	r := dumptest.Scenario(t, "pooled")
	r.Settings.ScopeAttr = "tenant"
	out := draw(t, r, render.FormatMarkdown)
	var notes []string
	for line := range strings.SplitSeq(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "- "); ok {
			notes = append(notes, rest)
		}
	}
	i := slices.Index(notes, "pool scope from attribute tenant")
	if i < 2 || !strings.HasPrefix(notes[0], "profile default, ") || !strings.HasPrefix(notes[1], "vocabulary mcptrace: ") {
		t.Errorf("the dump's notes %q, want the profile's, the recognition's, then the scope attribute's", notes)
	}
	if slices.Contains(notes, "inputs") {
		t.Errorf("a column header is drawn as a note: %q", notes)
	}
}

// TestASpreadOverSessionsIsNotedOnlyWhereSessionsAreSeen pins the
// executions note: executions spread over several sessions are named when
// the spans show session ids, and not when the multi-session figure is
// not measurable (there is no spread to speak of).
func TestASpreadOverSessionsIsNotedOnlyWhereSessionsAreSeen(t *testing.T) {
	const note = "executions spread over several downstream sessions lose session state"
	for _, tc := range []struct {
		name    string
		without string
		noted   bool
	}{
		{"session ids shown", "", true},
		{"no session ids", "session_id", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			r.Executions.MultiSession, r.Executions.Examples = 1, []string{"t9"}
			if tc.without != "" {
				r.Writer = writerWithout(r, tc.without)
			}
			if got := strings.Contains(unwrapped(draw(t, r, render.FormatTable)), note); got != tc.noted {
				t.Errorf("noted %v, want %v", got, tc.noted)
			}
		})
	}
}
