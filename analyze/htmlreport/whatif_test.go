package htmlreport

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/analyzetest"
)

// TestWhatIfSectionIsDrawnUnderTheReport pins where Options.WhatIf's
// section goes: right under the report's main element, in the report's
// width, once, and not into the data; no section without it (the page as
// before); a failure to write it fails the report, never a page without
// it that says nothing.
func TestWhatIfSectionIsDrawnUnderTheReport(t *testing.T) {
	r, ev := analyzetest.Analyzed(t, filepath.Join(tracesDir, "pooled.otlp.jsonl"), rulefmt.Config{}, ingest.ReadOptions{Strict: true})
	const frag = `<section id="whatif"><p>replayed &amp; drawn</p></section>`
	for _, tc := range []struct {
		name   string
		whatIf func(io.Writer) error
		want   string
	}{
		{"a section", func(w io.Writer) error { _, err := io.WriteString(w, frag); return err }, `</main><div class="report-more">` + frag + "</div>\n<script"},
		{"none", nil, "</main>\n<script"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := New(r, ev, Options{WhatIf: tc.whatIf})
			if err != nil {
				t.Fatal(err)
			}
			var page bytes.Buffer
			if err := h.Render(&page); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(page.String(), tc.want) || strings.Count(page.String(), `<div class="report-more">`) != strings.Count(tc.want, "report-more") {
				t.Errorf("page does not hold %q once:\n%.3000s", tc.want, page.String())
			}
			data, err := ExtractData(page.Bytes())
			if err != nil || bytes.Contains(data, []byte("whatif")) {
				t.Errorf("the section is in the data (err %v)", err)
			}
		})
	}
	boom := errors.New("boom")
	if _, err := New(r, ev, Options{WhatIf: func(io.Writer) error { return boom }}); !errors.Is(err, boom) {
		t.Errorf("a failing section: err %v, want it wrapped", err)
	}
}
