package engine

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestMixedDumpIsMeasuredWithTheVocabularyOfMostSpansInItsTier pins
// effectiveProfile, which vocabulary the measures read a mixed dump with:
// our tier before the conventions' whatever the counts; within a tier the
// vocabulary whose resources show more recognised spans; on equal counts
// the earlier in precedence (semconv before OpenLLMetry, ours before
// acquire-on-miss). The settings' pool span names say which was chosen,
// and the acquires where two vocabularies share their names. (A lower
// tier never comes after a higher one: the signatures are in tier order.)
func TestMixedDumpIsMeasuredWithTheVocabularyOfMostSpansInItsTier(t *testing.T) {
	client := ptrace.SpanKindClient
	semconv := func(n int) detectSpans {
		return named(n, "tools/call search", client, spans.AttrMethodName, spans.MethodToolsCall)
	}
	openllmetry := func(n int) detectSpans { return named(n, "search.tool", client) }
	for _, tc := range []struct {
		name     string
		a, b     detectSpans
		want     rulefmt.Profile
		acquires int
	}{
		// The conventions' calls here carry no session: no acquire.
		{"more OpenLLMetry spans than conventions'", semconv(2), openllmetry(3), rulefmt.ProfileOpenLLMetry, 0},
		{"more conventions' spans than OpenLLMetry", semconv(3), openllmetry(2), rulefmt.ProfileSemconv, 0},
		{"equal: the conventions, earlier", semconv(2), openllmetry(2), rulefmt.ProfileSemconv, 0},
		{"our tier over more conventions' spans", pooled(1, true), semconv(9), rulefmt.ProfileDefault, 1},
		// Ours and acquire-on-miss share their span names: the acquires
		// say which read the dump (acquire-on-miss counts a bare
		// invocation as a hit: 1 + 2 + 3; ours does not: 6 + 1).
		{"more acquire-on-miss spans than ours", pooled(1, true), both(pooled(2, false), bare(3)), rulefmt.ProfileAcquireOnMiss, 6},
		{"more of ours than acquire-on-miss", pooled(6, true), both(pooled(1, false), bare(1)), rulefmt.ProfileDefault, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			tc.a(d, d.resource(spans.ResourceServiceName, "a"))
			tc.b(d, d.resource(spans.ResourceServiceName, "b"))
			r := analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileAuto}, d.td)
			if r.Settings.Vocabulary != report.VocabMixed {
				t.Fatalf("vocabulary %q, want a mixed dump (recognition %+v)", r.Settings.Vocabulary, r.Recognition.Vocabularies)
			}
			if want := report.PoolSpanNames(tc.want); !slices.Equal(r.Settings.PoolSpanNames, want) {
				t.Errorf("pool span names %v, want %s's %v", r.Settings.PoolSpanNames, tc.want, want)
			}
			if r.Pool.Acquires != tc.acquires {
				t.Errorf("%d acquires, want %d as %s reads them", r.Pool.Acquires, tc.acquires, tc.want)
			}
		})
	}
}
