package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/htmlreport"
	"github.com/mcptrace/mcptrace/analyze/whatif"
)

// TestHTMLReportsCarryTheWhatIfSection pins that the HTML reports of
// analyze and check draw the what-if section under the report (after its
// main element, outside its data, once, without script): a replay table
// and its charts when the dump has acquires, and the sentence saying why
// there is none when it has not. The section's own content is
// analyze/whatif's TestReportSectionReplaysTheDumpAroundItsSettings.
func TestHTMLReportsCarryTheWhatIfSection(t *testing.T) {
	traces := filepath.Join("..", "..", "testdata", "traces")
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"analyze, acquires", []string{"analyze", "--format", "html", "-o", filepath.Join(dir, "a.html"), filepath.Join(traces, "ttl-and-redial.otlp.jsonl")}, "(as recorded, settings assumed)"},
		{"check, acquires", []string{"check", "--html", filepath.Join(dir, "c.html"), filepath.Join(traces, "unexplained-miss.otlp.jsonl")}, "(as recorded, settings assumed)"},
		{"analyze, no acquire", []string{"analyze", "--format", "html", "-o", filepath.Join(dir, "n.html"), filepath.Join(traces, "cold-init-one-read.otlp.jsonl")}, whatif.NoAcquires},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := execute(t, tc.args...)
			var ee *exitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
			path := tc.args[len(tc.args)-2]
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			page := string(raw)
			_, after, ok := strings.Cut(page, `<main id="report" aria-live="polite"></main><div class="report-more"><section class="whatif" id="whatif">`)
			if !ok || strings.Count(page, `id="whatif"`) != 1 {
				t.Fatalf("no one what-if section right under the report's main element:\n%.2000s", page)
			}
			section, _, _ := strings.Cut(after, "</section>")
			if !strings.Contains(section, tc.want) || strings.Contains(section, "<script") {
				t.Errorf("section does not say %q (or holds a script):\n%s", tc.want, section)
			}
			if tc.want != whatif.NoAcquires && strings.Count(section, "<svg") != 2 {
				t.Errorf("section has %d charts, want 2", strings.Count(section, "<svg"))
			}
			data, err := htmlreport.ExtractData(raw)
			if err != nil || strings.Contains(string(data), "whatif") {
				t.Errorf("the section leaked into the report's data (err %v)", err)
			}
		})
	}
}
