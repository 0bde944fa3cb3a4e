package render_test

import (
	"encoding/json"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// jsonOf draws r as JSON and decodes it.
func jsonOf(t *testing.T, r *report.Report) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(draw(t, r, render.FormatJSON)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// at walks decoded JSON by keys and array indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

// TestTheSharesOfAFigureTheSpansCannotShowAreNull pins the JSON's shares
// of a figure: per scope, and the misses by a cause that is not explained,
// are null exactly where their headline figure is, and numbers (0
// included) where it is known.
func TestTheSharesOfAFigureTheSpansCannotShowAreNull(t *testing.T) {
	for _, tc := range []struct {
		name     string
		without  []string
		wantNull bool
	}{
		{"every capability: the shares are numbers", nil, false},
		// A server-side writer without target identity: the floor may be
		// off either way, and unexplained misses need the identity.
		{"no target identity, no refused attempts: the shares are null", []string{"target_identity", "refused_attempts"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			for _, c := range tc.without {
				r.Writer = writerWithout(r, c)
			}
			r.DeclareFigures()
			out := jsonOf(t, r)
			for _, path := range [][]any{
				{"pool", "by_scope", 0, "cold_start_floor"},
				{"pool", "miss_reasons", "unexplained"},
				{"pool", "miss_reasons", "evicted"},
				{"pool", "by_scope", 0, "miss_reasons", "unexplained"},
				{"pool", "by_scope", 0, "miss_reasons", "evicted"},
			} {
				if got := at(out, path...); (got == nil) != tc.wantNull {
					t.Errorf("%v = %v, want null: %v", path, got, tc.wantNull)
				}
			}
			for _, path := range [][]any{{"pool", "by_scope", 0, "acquires"}, {"pool", "miss_reasons", "cold"}, {"pool", "by_scope", 0, "miss_reasons", "cold"}} {
				if at(out, path...) == nil {
					t.Errorf("%v is null; its figure is known", path)
				}
			}
		})
	}
}

// TestPerRevisionAcquiresAreNullUnlessTheyCoverEveryAcquire pins the
// boundary of by_protocol's acquire counts: numbers when the revisions'
// acquire spans are every acquire, null (in the JSON, "—" in the table)
// when even one acquire has no span to read a revision from.
func TestPerRevisionAcquiresAreNullUnlessTheyCoverEveryAcquire(t *testing.T) {
	for _, tc := range []struct {
		name     string
		uncover  int
		wantNull bool
	}{
		{"every acquire an acquire span", 0, false},
		{"one acquire without a span", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			if len(r.ByProtocol) == 0 {
				t.Fatal("the pooled scenario has no by_protocol row")
			}
			r.Pool.Acquires += tc.uncover
			for _, f := range []string{"acquires", "hits", "misses", "hit_rate"} {
				if got := r.ShareOf("by_protocol[]." + f).Known(); got == tc.wantNull {
					t.Errorf("ShareOf(by_protocol[].%s).Known() = %v", f, got)
				}
			}
			if !r.ShareOf("by_protocol[].calls").Known() {
				t.Error("by_protocol's calls are not measurable; they count call spans")
			}
			out := jsonOf(t, r)
			for _, f := range []string{"acquires", "hits", "misses", "hit_rate"} {
				if got := at(out, "by_protocol", 0, f); (got == nil) != tc.wantNull {
					t.Errorf("by_protocol[0].%s = %v, want null: %v", f, got, tc.wantNull)
				}
			}
			if at(out, "by_protocol", 0, "calls") == nil {
				t.Error("by_protocol[0].calls is null")
			}
		})
	}
}
