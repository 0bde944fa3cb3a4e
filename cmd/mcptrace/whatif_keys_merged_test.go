package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// TestWhatifFiguresAreNotMeasurableWhereTheSpansCannotTellKeysApart pins
// that whatif asks the analysis whether the writer's spans tell the keys
// apart (report.Report.LacksWhy of target_identity) and, where they cannot
// (acquire spans without a cache key; keys that may differ only in escaped
// lone surrogates), replays no figure as the truth: the replay merges the
// keys, so the keyless dump's as-recorded row would replay a hit where the
// dump recorded none. Every output says not measurable and why (the JSON
// nulls and its figures section, the table, the Markdown, the HTML page
// and the analysis's HTML report's what-if section, none with a chart or a
// best-per-cost line); the acquires stay counted. The same dumps keyed
// apart replay their figures as before.
func TestWhatifFiguresAreNotMeasurableWhereTheSpansCannotTellKeysApart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dump    func(t *testing.T) string
		why     string // "" when the keys are told apart
		hitRate float64
	}{
		{"keyless acquire spans", func(t *testing.T) string { return dumptest.MissesOnKeys("", "", "").Write(t) },
			"the spans carry no target identity", 0},
		{"keys differing only in lone surrogates", func(t *testing.T) string { return twoMissesDump(t, `a\ud800`, `a\udbff`) },
			"escaped lone UTF-16 surrogates", 0},
		{"keys told apart", func(t *testing.T) string { return dumptest.MissesOnKeys("a", "b", "c").Write(t) }, "", 0},
		{"two plain keys", func(t *testing.T) string { return twoMissesDump(t, "a1", "a2") }, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dump := tc.dump(t)
			out, stderr, err := execute(t, "whatif", "--format", "json", "--idle-ttl", "1s,5m", dump)
			if err != nil {
				t.Fatalf("whatif: %v\n%s", err, stderr)
			}
			checkMergedJSON(t, out, tc.why, tc.hitRate)
			for _, format := range []string{"table", "markdown", "html"} {
				args := []string{"whatif", "--format", format, "--idle-ttl", "1s,5m", dump}
				if format == "html" {
					args = []string{"whatif", "--format", format, "-o", filepath.Join(t.TempDir(), "w.html"), "--idle-ttl", "1s,5m", dump}
				}
				out, stderr, err := execute(t, args...)
				if err != nil {
					t.Fatalf("whatif %s: %v\n%s", format, err, stderr)
				}
				if format == "html" {
					out = readFile(t, args[4])
				}
				checkMergedText(t, format, out, tc.why)
			}
			page := filepath.Join(t.TempDir(), "a.html")
			if _, stderr, err := execute(t, "analyze", "--format", "html", "-o", page, dump); err != nil {
				var ee *exitError
				if !errors.As(err, &ee) {
					t.Fatalf("analyze: %v\n%s", err, stderr)
				}
			}
			_, section, _ := strings.Cut(readFile(t, page), `<section class="whatif" id="whatif">`)
			section, _, _ = strings.Cut(section, "</section>")
			checkMergedText(t, "report section", section, tc.why)
		})
	}
}

// checkMergedJSON checks whatif's JSON out: where why is not empty, every
// row's figures but the acquires and the pre-warm's (no row pre-warms, so
// 0 whatever the keys) null, the figures section saying why and no
// best-per-cost line; else the figures as numbers (the as-recorded hit
// rate hitRate) and no figures section.
func checkMergedJSON(t *testing.T, out, why string, hitRate float64) {
	t.Helper()
	var got struct {
		Figures map[string]struct{ State, Why string } `json:"figures"`
		Rows    []struct {
			AsRecorded bool           `json:"as_recorded"`
			Acquires   int            `json:"acquires"`
			Hits       *int           `json:"hits"`
			HitRate    *float64       `json:"hit_rate"`
			Misses     map[string]int `json:"misses_by_cause"`
			Sessions   *int           `json:"sessions_opened"`
			Idle       *float64       `json:"idle_session_seconds"`
			Unused     *int           `json:"prewarm_unused"`
		} `json:"rows"`
		Best []json.RawMessage `json:"best_per_cost"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Rows) != 2 {
		t.Fatalf("%d rows, want 2\n%s", len(got.Rows), out)
	}
	for _, r := range got.Rows {
		known := r.Hits != nil || r.HitRate != nil || r.Misses != nil || r.Sessions != nil || r.Idle != nil
		switch {
		case r.Acquires == 0:
			t.Errorf("a row lost its acquires\n%s", out)
		case why != "" && known:
			t.Errorf("keys merged, yet a row gives a replayed figure\n%s", out)
		case r.Unused == nil || *r.Unused != 0:
			// No row pre-warms (none, or as recorded with no pre-warm
			// handshake in the dump): 0, whatever the keys.
			t.Errorf("a row's unused pre-warm dials are not 0\n%s", out)
		case why == "" && (r.Hits == nil || r.HitRate == nil || r.Misses == nil || r.Sessions == nil || r.Idle == nil || r.Unused == nil):
			t.Errorf("keys told apart, yet a row's figure is null\n%s", out)
		case why == "" && r.AsRecorded && *r.HitRate != hitRate:
			t.Errorf("as-recorded hit rate %v, want %v\n%s", *r.HitRate, hitRate, out)
		}
	}
	f, ok := got.Figures["hit_rate"]
	switch {
	case why == "" && (len(got.Figures) > 0 || len(got.Best) == 0):
		t.Errorf("keys told apart: figures %v, %d best lines\n%s", got.Figures, len(got.Best), out)
	case why != "" && (!ok || f.State != "not_measurable" || !strings.Contains(f.Why, why) || len(got.Best) != 0):
		t.Errorf("keys merged: hit_rate figure %+v (want not_measurable, why %q), %d best lines\n%s", f, why, len(got.Best), out)
	}
}

// checkMergedText checks one of whatif's text outputs (or the report's
// section): where why is not empty it says not measurable and why, and
// draws no chart and no best line; else none of that.
func checkMergedText(t *testing.T, what, out, why string) {
	t.Helper()
	says := strings.Contains(out, "NOT MEASURABLE") && strings.Contains(out, why) &&
		strings.Contains(out, "Best per cost: not measurable")
	switch {
	case why != "" && (!says || strings.Contains(out, "<svg") || strings.Contains(out, "at most")):
		t.Errorf("%s: keys merged, want not measurable (%q), no chart, no best line:\n%s", what, why, out)
	case why == "" && (strings.Contains(out, "NOT MEASURABLE") || !strings.Contains(out, "at most")):
		t.Errorf("%s: keys told apart, want the figures and best lines:\n%s", what, out)
	}
}

// readFile returns path's text.
func readFile(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
