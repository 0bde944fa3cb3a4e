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

// TestCorpusRecognitionAddsUp pins the recognition counts on every
// corpus writer's dump: recognised and unrecognised spans sum to the
// spans the generator wrote, each vocabulary recognises no more spans
// than its resources hold, and the vocabularies' recognised spans sum to
// the recognised total.
func TestCorpusRecognitionAddsUp(t *testing.T) {
	for _, c := range corpusCases(t) {
		t.Run(c.name, func(t *testing.T) {
			_, r := loadAndAnalyze(t, c.dump, rulefmt.Config{Profile: rulefmt.ProfileAuto})
			rec := r.Recognition
			if rec.RecognisedSpans+rec.UnrecognisedSpans != c.golden.Structure.Spans {
				t.Errorf("recognised %d + unrecognised %d, want the %d spans written", rec.RecognisedSpans, rec.UnrecognisedSpans, c.golden.Structure.Spans)
			}
			sum := 0
			for _, v := range rec.Vocabularies {
				if v.RecognisedSpans > v.Spans {
					t.Errorf("%s recognises %d of its %d spans", v.Vocabulary, v.RecognisedSpans, v.Spans)
				}
				sum += v.RecognisedSpans
			}
			if sum != rec.RecognisedSpans {
				t.Errorf("the vocabularies recognise %d spans in all, the total says %d", sum, rec.RecognisedSpans)
			}
		})
	}
}
