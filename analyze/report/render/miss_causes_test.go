package render_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/analyzetest"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// missCells returns the cells of the first row of the misses-by-cause
// section of a table or Markdown report, nil when it has none.
func missCells(out string) []string {
	lines := strings.Split(out, "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return l == "MISSES BY CAUSE" || l == "### Misses by cause" })
	if at < 0 {
		return nil
	}
	for _, l := range lines[at+1:] {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "│") && !(strings.HasPrefix(l, "|") && !strings.HasPrefix(l, "|:")) {
			continue
		}
		cells := strings.FieldsFunc(l, func(r rune) bool { return r == '│' || r == '|' })
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cells[0] != spans.MissCold { // the header
			return cells
		}
	}
	return nil
}

// TestMissesByCauseOfAKeylessDumpAreMarkedAsTheirFigures pins the misses
// by cause of a real dump in every report format, keyed and keyless.
// Keyless, the pairs the replay attributes by read as one: cold is a
// lower bound ("≥", a number in the JSON), a redial stays a number, and
// every other cause is not measurable ("—", null), with the reason beside
// the table and in figures; the unexplained traces are not listed.
func TestMissesByCauseOfAKeylessDumpAreMarkedAsTheirFigures(t *testing.T) {
	for _, tc := range []struct {
		name       string
		keys       [3]string
		cells      []string
		notes      []string
		json       map[string]any // pool.miss_reasons and each scope's, null as nil
		lower      []string       // causes figures declares lower bounds
		unknown    []string       // causes figures declares not measurable
		examples   bool           // unexplained_examples is a list
		wantNoNote string
	}{
		{"keyed", [3]string{"a", "b", "c"}, []string{"2", "0", "0", "1", "0", "0", "0", "0"}, nil,
			map[string]any{"cold": 2.0, "concurrent": 0.0, "ttl": 0.0, "redial": 1.0, "after_failure": 0.0, "health_check": 0.0, "evicted": 0.0, "unexplained": 0.0},
			nil, nil, true, "target identity"},
		{"keyless", [3]string{}, []string{"≥ 1", "—", "—", "1", "—", "—", "—", "—"},
			[]string{"cold: lower bound (≥): the spans carry no target identity",
				"concurrent, ttl, after_failure, health_check, evicted, unexplained: not measurable: the spans carry no target identity"},
			map[string]any{"cold": 1.0, "concurrent": nil, "ttl": nil, "redial": 1.0, "after_failure": nil, "health_check": nil, "evicted": nil, "unexplained": nil},
			[]string{"cold"}, []string{"concurrent", "ttl", "after_failure", "health_check", "evicted", "unexplained"}, false, "unexplained in traces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := analyzetest.AnalyzeTD(t, rulefmt.Config{}, dumptest.MissesOnKeys(tc.keys[:]...).Traces())
			if r.Pool.Misses != 3 {
				t.Fatalf("%d misses read, want 3", r.Pool.Misses)
			}
			for _, format := range []string{render.FormatTable, render.FormatMarkdown} {
				out := unwrapped(draw(t, r, format))
				if got := missCells(out); !slices.Equal(got, tc.cells) {
					t.Errorf("%s: misses by cause %q, want %q in:\n%s", format, got, tc.cells, out)
				}
				for _, n := range tc.notes {
					if !strings.Contains(out, n) {
						t.Errorf("%s: %q expected in:\n%s", format, n, out)
					}
				}
				if strings.Contains(out, tc.wantNoNote) {
					t.Errorf("%s: %q unexpected in:\n%s", format, tc.wantNoNote, out)
				}
			}
			doc := jsonOf(t, r)
			for cause, want := range tc.json {
				for _, path := range [][]any{{"pool", "miss_reasons", cause}, {"pool", "by_scope", 0, "miss_reasons", cause}} {
					if got := at(doc, path...); got != want {
						t.Errorf("%v = %v, want %v", path, got, want)
					}
				}
			}
			if _, isList := at(doc, "pool", "unexplained_examples").([]any); isList != tc.examples {
				t.Errorf("pool.unexplained_examples = %v, want a list: %v", at(doc, "pool", "unexplained_examples"), tc.examples)
			}
			figures := at(doc, "figures").(map[string]any)
			for _, cause := range spans.MissReasons {
				want := ""
				switch {
				case slices.Contains(tc.lower, cause):
					want = string(report.LowerBound)
				case slices.Contains(tc.unknown, cause):
					want = string(report.NotMeasurable)
				}
				f, _ := figures[report.MissCauseFigure(cause)].(map[string]any)
				got, _ := f["state"].(string)
				if got != want {
					t.Errorf("figures[%s].state = %q, want %q", report.MissCauseFigure(cause), got, want)
				}
			}
		})
	}
}
