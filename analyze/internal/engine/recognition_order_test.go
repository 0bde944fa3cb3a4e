package engine

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestRecognitionListsTheVocabularyOfMostSpansFirst pins the order of the
// recognition's vocabularies: by the spans of their resources, most first,
// not by the spans they recognised. Resource a speaks the conventions on
// 2 of its 10 spans; resource b, OpenLLMetry on all of its 5: a's
// vocabulary comes first though b's recognised more.
func TestRecognitionListsTheVocabularyOfMostSpansFirst(t *testing.T) {
	client, internal := ptrace.SpanKindClient, ptrace.SpanKindInternal
	d := newDump()
	both(named(2, "tools/call search", client, spans.AttrMethodName, spans.MethodToolsCall), named(8, "db.query", internal))(d, d.resource(spans.ResourceServiceName, "a"))
	named(5, "search.tool", client)(d, d.resource(spans.ResourceServiceName, "b"))
	r := analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileAuto}, d.td)
	var got []string
	for _, u := range r.Recognition.Vocabularies {
		got = append(got, u.Vocabulary)
		if u.Vocabulary == "semconv" && (u.Spans != 10 || u.RecognisedSpans != 2) {
			t.Errorf("semconv: %d spans, %d recognised; want 10 and 2", u.Spans, u.RecognisedSpans)
		}
	}
	if len(got) != 2 || got[0] != "semconv" || got[1] != "openllmetry" {
		t.Errorf("vocabularies %v, want [semconv openllmetry]: most spans first", got)
	}
}
