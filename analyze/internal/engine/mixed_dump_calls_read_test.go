package engine

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestAMixedDumpsCallsAreReadWithTheVocabularyOfMostSpans pins, by the
// calls the measures read, which of two vocabularies of one tier a mixed
// dump (profile auto) is measured with: the one whose resources show
// more recognised spans, whichever comes first in precedence. The
// conventions' calls are "tools/call" spans, OpenLLMetry's ".tool" spans;
// each vocabulary reads only its own. On equal counts the earlier in
// precedence (the conventions) is read; the writer names it.
func TestAMixedDumpsCallsAreReadWithTheVocabularyOfMostSpans(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		semconv, openllmetry int
		calls                int
		writer               string
	}{
		{"more OpenLLMetry spans: its calls", 2, 3, 3, report.VocabOpenLLMetry},
		{"more conventions' spans: theirs", 3, 2, 3, report.VocabSemconv},
		{"fewer OpenLLMetry spans, by one: the conventions'", 4, 3, 4, report.VocabSemconv},
		{"as many: the conventions', earlier in precedence", 3, 3, 3, report.VocabSemconv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := dumptest.New()
			add := func(ss ptrace.SpanSlice, n int, name string, attrs ...any) {
				for range n {
					b.Add(ss, dumptest.Span{Trace: b.NextID + 3000, Name: name, Kind: ptrace.SpanKindClient, End: time.Millisecond, Attrs: attrs})
				}
			}
			add(b.Resource(spans.ResourceServiceName, "a"), tc.semconv, "tools/call search", spans.AttrMethodName, spans.MethodToolsCall)
			add(b.Resource(spans.ResourceServiceName, "b"), tc.openllmetry, "search.tool")
			cfg := rulefmt.Config{Profile: rulefmt.ProfileAuto}
			d := NewDump(cfg.IndexOptions())
			d.Add(b.Traces())
			r, err := Analyze(d, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r.Settings.Vocabulary != report.VocabMixed {
				t.Fatalf("vocabulary %q, want a mixed dump", r.Settings.Vocabulary)
			}
			if got := r.Pool.Latency.Call.Count; got != tc.calls {
				t.Errorf("%d calls read, want %d", got, tc.calls)
			}
			if r.Writer == nil || r.Writer.Vocabulary != tc.writer {
				t.Errorf("writer %+v, want vocabulary %s", r.Writer, tc.writer)
			}
		})
	}
}
