package report_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestLacksWhyNamesTheKeyToAddOnlyForWhatASessionIdentityGives pins
// LacksWhy: nothing when the writer shows what is needed; the lack's
// reason otherwise, followed by the vocabulary key to add only when the
// lack is one a session identity would fill (session id, acquires,
// handshakes) and the report has such a hint.
func TestLacksWhyNamesTheKeyToAddOnlyForWhatASessionIdentityGives(t *testing.T) {
	const hint = "session: {attribute: conv.id}"
	for _, tc := range []struct {
		name     string
		without  string
		hint     string
		need     rulefmt.Capability
		want     string
		wantHint bool
	}{
		{"shown", "", hint, rulefmt.CapSessionID, "", false},
		{"a session id lacking, with a hint", "session_id", hint, rulefmt.CapSessionID, rulefmt.CapSessionID.Why(), true},
		{"a session id lacking, without a hint", "session_id", "", rulefmt.CapSessionID, rulefmt.CapSessionID.Why(), false},
		{"a target identity lacking", "target_identity", hint, rulefmt.CapTargetIdentity, rulefmt.CapTargetIdentity.Why(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			w := *r.Writer
			if tc.without != "" {
				w = *writerWithout(r, tc.without)
			}
			w.SessionHint = tc.hint
			r.Writer = &w
			got := r.LacksWhy(tc.need)
			want := tc.want
			if tc.wantHint {
				want += ": add " + hint
			}
			if got != want {
				t.Errorf("LacksWhy = %q, want %q", got, want)
			}
		})
	}
}

// TestLacksWhyGivesTheLostIdentitysReasonForTargetIdentityAlone pins
// the writer's IdentityLost (target identity taken by keys that may have
// been read as one): it is the reason for target_identity in place of
// the capability's own (no key at all, which would be wrong), the other
// lacks keeping theirs (a session hint on theirs), and a report read back
// from its JSON says the same.
func TestLacksWhyGivesTheLostIdentitysReasonForTargetIdentityAlone(t *testing.T) {
	const lost, hint = "keys that differ only in a lone surrogate read as one key", "session: {attribute: conv.id}"
	for _, tc := range []struct {
		name    string
		without []string
		need    rulefmt.Capability
		want    string
	}{
		{"target identity lacking", []string{"target_identity"}, rulefmt.CapTargetIdentity, lost},
		{"with a server's refused attempts", []string{"target_identity", "refused_attempts"},
			rulefmt.CapTargetIdentity | rulefmt.CapRefusedAttempts, rulefmt.CapRefusedAttempts.Why() + "; " + lost},
		{"a session id lacking", []string{"session_id", "target_identity"}, rulefmt.CapSessionID, rulefmt.CapSessionID.Why() + ": add " + hint},
		{"a session id lacking too", []string{"session_id", "target_identity"},
			rulefmt.CapSessionID | rulefmt.CapTargetIdentity, rulefmt.CapSessionID.Why() + ": add " + hint + "; " + lost},
		{"shown", nil, rulefmt.CapTargetIdentity, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			for _, c := range tc.without {
				r.Writer = writerWithout(r, c)
			}
			r.Writer.IdentityLost, r.Writer.SessionHint = lost, hint
			raw, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var back report.Report
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			for side, r := range map[string]*report.Report{"report": r, "read back": &back} {
				if got := r.LacksWhy(tc.need); got != tc.want {
					t.Errorf("%s: LacksWhy = %q, want %q", side, got, tc.want)
				}
			}
		})
	}
}

// TestDeclareFiguresListsOnlyFiguresThatAreNotTheTruth pins DeclareFigures:
// a client-side writer's report declares nothing; a server-side one's
// declares its bounds, each with its state and why, and leaves the exact
// figures out.
func TestDeclareFiguresListsOnlyFiguresThatAreNotTheTruth(t *testing.T) {
	r := dumptest.Scenario(t, "pooled")
	r.DeclareFigures()
	if len(r.Figures) != 0 {
		t.Errorf("a client-side writer's figures declared %v, want none", r.Figures)
	}
	r.Writer = writerWithout(r, "refused_attempts")
	r.DeclareFigures()
	for name, want := range map[string]report.Measurability{"acquires": report.LowerBound, "cold_start_floor": report.UpperBound} {
		if f := r.Figures[name]; f.State != want || !strings.Contains(f.Why, "server-side writer") {
			t.Errorf("figure %s declared %+v, want %s with why", name, f, want)
		}
	}
	if f, ok := r.Figures["misses"]; ok {
		t.Errorf("the exact figure misses declared %+v", f)
	}
}

// TestUnexplainedCountsEveryMissNoCauseExplains pins Unexplained: the
// misses under unexplained and evicted, none of the explained causes.
func TestUnexplainedCountsEveryMissNoCauseExplains(t *testing.T) {
	reasons := map[string]int{spans.MissCold: 2, spans.MissTTL: 1, spans.MissUnexplained: 3, spans.MissEvicted: 4}
	if got := report.Unexplained(reasons); got != 7 {
		t.Errorf("Unexplained(%v) = %d, want 7", reasons, got)
	}
}

// TestOnlyTheTwoSchemasReadAsAReport pins ReadableSchema.
func TestOnlyTheTwoSchemasReadAsAReport(t *testing.T) {
	for s, want := range map[string]bool{report.Schema: true, report.SchemaV1: true, "mcptrace.analysis/v3": false, "": false} {
		if got := report.ReadableSchema(s); got != want {
			t.Errorf("ReadableSchema(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestNothingRecognisedLeavesOnlyFiguresThatNeedNothing pins FigureOf on
// a dump no vocabulary recognised: every figure that needs something of
// the spans is not measurable, saying so; a figure that needs nothing
// (the scope count) stays measurable; and a report without a writer
// section (read back from an older file) keeps its figures as they were.
func TestNothingRecognisedLeavesOnlyFiguresThatNeedNothing(t *testing.T) {
	const why = "no span of the dump is one a vocabulary reads"
	r := dumptest.Scenario(t, "pooled")
	if f := r.FigureOf("acquires"); f.State != report.Measurable {
		t.Errorf("acquires of a recognised dump = %+v, want measurable", f)
	}
	r.Recognition.RecognisedSpans, r.Measures = 0, nil
	if !r.NothingRecognised() {
		t.Fatal("the case this pins is not set up: something is recognised")
	}
	if f := r.FigureOf("acquires"); f.State != report.NotMeasurable || !strings.Contains(f.Why, why) {
		t.Errorf("acquires = %+v, want not measurable: %s", f, why)
	}
	if f := r.FigureOf("scopes"); f.State != report.Measurable {
		t.Errorf("scopes = %+v, want measurable: it needs nothing", f)
	}
	r.Writer = nil
	if f := r.FigureOf("acquires"); f.State != report.Measurable {
		t.Errorf("without a writer section acquires = %+v, want measurable as it was", f)
	}
}

// TestTheMeasureTablesAreTheCallersCopies pins that the rows Measures and
// ReadsFields return may be changed without changing the tables: a later
// call, and every lookup, reads the rows as they were.
func TestTheMeasureTablesAreTheCallersCopies(t *testing.T) {
	ms, rs := report.Measures(), report.ReadsFields()
	first, firstReads := ms[0].Name, rs[0].Name
	ms[0].Name, rs[0].Name = "changed", "changed"
	if got := report.Measures()[0].Name; got != first {
		t.Errorf("after the caller changed its copy, Measures()[0] = %q, want %q", got, first)
	}
	if got := report.ReadsFields()[0].Name; got != firstReads {
		t.Errorf("after the caller changed its copy, ReadsFields()[0] = %q, want %q", got, firstReads)
	}
}

// TestWhatAFigureStateSaysOfItsItems pins Known, Exact and Certain for
// every measurability: a lower bound counts only items that are (the
// spans may hide more), an upper bound may count some that are not, so
// only the first lets a driver label each item it counts (Certain).
func TestWhatAFigureStateSaysOfItsItems(t *testing.T) {
	for _, tc := range []struct {
		state                 report.Measurability
		known, exact, certain bool
	}{
		{"", true, true, true},
		{report.Measurable, true, true, true},
		{report.LowerBound, true, false, true},
		{report.UpperBound, true, false, false},
		{report.NotMeasurable, false, false, false},
	} {
		f := report.FigureState{State: tc.state}
		if f.Known() != tc.known || f.Exact() != tc.exact || f.Certain() != tc.certain {
			t.Errorf("%q: known %v, exact %v, certain %v; want %v, %v, %v", tc.state, f.Known(), f.Exact(), f.Certain(), tc.known, tc.exact, tc.certain)
		}
	}
}
