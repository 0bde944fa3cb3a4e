package htmlreport

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/analyzetest"
)

// TestAFindingTheSpansOnlyBoundFromAboveSaysAtMost pins the findings on
// traces a third-party server wrote (Shinzo around a TypeScript SDK
// server, per-call gateway: 15 sessions in its ledger, 14 of them after
// the first). The server never sees an attempt refused before its
// handler, so its 14 unexplained misses are at most 14: some may be
// redials. The HTML report's finding says "at most" and why, with status
// "upper bound", never "found"; the terminal names their traces as
// possibly unexplained, never as unexplained. A keyed dump of our own
// pool's spans keeps "found" (TestHTMLReport's dumps).
func TestAFindingTheSpansOnlyBoundFromAboveSaysAtMost(t *testing.T) {
	path := filepath.Join(tracesDir, "corpus", "shinzo", "per-call.jsonl")
	r, ev := analyzetest.Analyzed(t, path, rulefmt.Config{Profile: rulefmt.ProfileAuto}, ingest.ReadOptions{Strict: true})
	if f := r.FigureOf("unexplained_misses"); r.Pool.UnexplainedMisses != 14 || f.Certain() || !f.Known() {
		t.Fatalf("the dump's unexplained misses: %d, %+v; want 14, an upper bound", r.Pool.UnexplainedMisses, f)
	}
	h, err := New(r, ev, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, o := range h.Offenders {
		if o.ID != "unexplained misses" {
			continue
		}
		found = true
		if o.Status != "upper bound" || !strings.HasPrefix(o.Found, "at most 14 unexplained miss(es): ") || !strings.Contains(o.Found, "server-side writer") {
			t.Errorf("the finding reads %q: %q; want status \"upper bound\" and \"at most 14 unexplained miss(es): \" with why", o.Status, o.Found)
		}
	}
	if !found {
		t.Error("no unexplained misses finding: at most 14 may be, which the page must say")
	}
	for _, format := range []string{render.FormatTable, render.FormatMarkdown} {
		var text strings.Builder
		if err := render.Write(&text, r, format); err != nil {
			t.Fatal(err)
		}
		if s := text.String(); strings.Contains(s, "unexplained in traces:") && !strings.Contains(s, "possibly unexplained") ||
			!strings.Contains(s, "possibly unexplained (the spans cannot tell which) in traces:") {
			t.Errorf("%s names the traces as unexplained, or not at all:\n%s", format, s)
		}
	}
}
