package spans_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/spans"
)

// TestTraceQLUnexplainedMissNegatesExactlyTheExplainedReasons pins the one
// definition of an unexplained miss: the query's alternation is
// ExplainedMissReasons, anchored, and it starts from missed acquire spans.
func TestTraceQLUnexplainedMissNegatesExactlyTheExplainedReasons(t *testing.T) {
	q := spans.TraceQLUnexplainedMiss
	m := regexp.MustCompile(`span\.` + regexp.QuoteMeta(spans.AttrMissReason) + ` !~ "\^\(([a-z_|]+)\)\$"`).FindStringSubmatch(q)
	if m == nil {
		t.Fatalf("no anchored negated match on %s in %s", spans.AttrMissReason, q)
	}
	if got := strings.Split(m[1], "|"); !slices.Equal(got, spans.ExplainedMissReasons) {
		t.Errorf("query negates %v, want ExplainedMissReasons %v", got, spans.ExplainedMissReasons)
	}
	for _, part := range []string{`name = "` + spans.SpanAcquire + `"`, "span." + spans.AttrCacheHit + " = false", "span." + spans.AttrMissReason + " = nil"} {
		if !strings.Contains(q, part) {
			t.Errorf("query %s lacks %s", q, part)
		}
	}
	if strings.Count(q, "{") != strings.Count(q, "}") || strings.Count(q, "(") != strings.Count(q, ")") {
		t.Errorf("unbalanced query %s", q)
	}
}

func TestExplainedMissReasonsAreTheKnownCausesOnly(t *testing.T) {
	want := []string{spans.MissCold, spans.MissConcurrent, spans.MissTTL, spans.MissRedial, spans.MissAfterFailure, spans.MissHealthCheck}
	if !slices.Equal(spans.ExplainedMissReasons, want) {
		t.Errorf("ExplainedMissReasons = %v, want %v", spans.ExplainedMissReasons, want)
	}
	for _, r := range []string{spans.MissUnexplained, spans.MissEvicted, ""} {
		if slices.Contains(spans.ExplainedMissReasons, r) {
			t.Errorf("%q counted as an explained reason", r)
		}
	}
}
