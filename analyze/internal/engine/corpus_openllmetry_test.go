package engine

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestCorpusOpenLLMetryRequestSpansAreRecognised pins which of
// @traceloop/instrumentation-mcp's spans the openllmetry vocabulary
// recognises, counted from the span names the corpus generator wrote:
// "<tool>.tool" for a tools/call, "<method>.mcp" for every other request,
// and the session span; the gateway's own workflow spans are not its.
func TestCorpusOpenLLMetryRequestSpansAreRecognised(t *testing.T) {
	for _, c := range corpusCases(t) {
		if c.golden.Package != "openllmetry" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			want := 0
			for name, n := range c.golden.Structure.SpanNames {
				if strings.HasSuffix(name, ".tool") || strings.HasSuffix(name, ".mcp") || name == rulefmt.OpenLLMetrySessionSpan {
					want += n
				}
			}
			_, r := loadAndAnalyze(t, c.dump, rulefmt.Config{Profile: rulefmt.ProfileAuto})
			if got := r.Recognition.RecognisedSpans; got != want {
				t.Errorf("recognised %d spans, want %d (span names %v)", got, want, c.golden.Structure.SpanNames)
			}
		})
	}
}
