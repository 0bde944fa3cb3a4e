package report_test

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestMissCausesAreWorthWhatThePairsTell pins FigureOf for the misses of
// each cause (report.MissCauseFigure), with the target identity shown and
// without it (keyless acquires, or keys that may differ only in lone
// surrogates, the writer's IdentityLost): the replay attributes causes per
// (pool scope, key) pair, and pairs read as one are fewer. A merged pair's
// first miss is a first miss of its own pair, so cold is a lower bound;
// a redial is the attempt number on the span, whatever the pairs; every
// other cause hangs on another pair's sessions and is not measurable, as
// unexplained_misses is (evicted and unexplained are its shares). Each
// cause's per-scope share is worth the same, and the unexplained traces
// are listed only where the unexplained misses are known.
func TestMissCausesAreWorthWhatThePairsTell(t *testing.T) {
	const lost = "keys that may differ only in lone UTF-16 surrogates"
	lacking := map[string]report.Measurability{
		spans.MissCold: report.LowerBound, spans.MissConcurrent: report.NotMeasurable, spans.MissTTL: report.NotMeasurable,
		spans.MissRedial: report.Measurable, spans.MissAfterFailure: report.NotMeasurable, spans.MissHealthCheck: report.NotMeasurable,
		spans.MissEvicted: report.NotMeasurable, spans.MissUnexplained: report.NotMeasurable,
	}
	for _, tc := range []struct {
		name     string
		identity bool   // target identity shown
		lost     string // the writer's IdentityLost
	}{
		{"target identity shown", true, ""},
		{"keyless acquires", false, ""},
		{"keys that may differ only in lone surrogates", false, lost},
	} {
		for _, cause := range spans.MissReasons {
			t.Run(tc.name+"/"+cause, func(t *testing.T) {
				r := dumptest.Scenario(t, "pooled")
				if !tc.identity {
					r.Writer = writerWithout(r, "target_identity")
				}
				r.Writer.IdentityLost = tc.lost
				want := report.Measurable
				if !tc.identity {
					want = lacking[cause]
				}
				f := r.FigureOf(report.MissCauseFigure(cause))
				if f.State != want {
					t.Fatalf("FigureOf(%s) = %+v, want %s", report.MissCauseFigure(cause), f, want)
				}
				wantWhy := "no target identity"
				if tc.lost != "" {
					wantWhy = lost
				}
				if !f.Exact() && !strings.Contains(f.Why, wantWhy) {
					t.Errorf("FigureOf(%s).Why = %q, want it to say %q", report.MissCauseFigure(cause), f.Why, wantWhy)
				}
				if share := r.ShareOf("pool.by_scope[].miss_reasons." + cause); share != f {
					t.Errorf("the per-scope share of %s is %+v, its figure %+v", cause, share, f)
				}
				if top := r.ShareOf("pool.miss_reasons." + cause); top != f {
					t.Errorf("the cell pool.miss_reasons.%s is %+v, its figure %+v", cause, top, f)
				}
			})
		}
		t.Run(tc.name+"/unexplained examples", func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			if !tc.identity {
				r.Writer = writerWithout(r, "target_identity")
			}
			if got, want := r.ShareOf("pool.unexplained_examples").Known(), r.FigureOf("unexplained_misses").Known(); got != want || got != tc.identity {
				t.Errorf("unexplained examples known %v, unexplained misses known %v; want both %v", got, want, tc.identity)
			}
		})
	}
}

// TestMissCauseFiguresAreNoRuleMeasures pins that the rows of the misses
// by cause are the report's only: a rule, a baseline or a diff cannot
// name them, and each row reads its cause's count at its JSON key.
func TestMissCauseFiguresAreNoRuleMeasures(t *testing.T) {
	r := dumptest.Scenario(t, "ttl-and-redial")
	found := 0
	for _, m := range report.Measures() {
		cause, ok := strings.CutPrefix(m.JSON, "pool.miss_reasons.")
		if !ok {
			continue
		}
		found++
		if m.Name != report.MissCauseFigure(cause) || m.Rule || m.Baseline != report.BaselineNone {
			t.Errorf("row %s (%s): rule %v, baseline %v; want %s, report only", m.Name, m.JSON, m.Rule, m.Baseline, report.MissCauseFigure(cause))
		}
		if _, _, ok := report.LookupMeasure(m.Name); ok {
			t.Errorf("a rule may name %s", m.Name)
		}
		if v, ok := m.Value(r); !ok || int(v) != r.Pool.MissReasons[cause] {
			t.Errorf("%s = %v, %v; the report has %d", m.Name, v, ok, r.Pool.MissReasons[cause])
		}
	}
	if found != len(spans.MissReasons) {
		t.Errorf("%d rows of misses by cause, want one per cause (%d)", found, len(spans.MissReasons))
	}
}
