package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestCallsSelectorSelectsOnlyTheVocabularysCalls pins a Calls selector
// (the built-in session rules'): it selects the spans the vocabulary reads
// as tool calls and nothing else, so a span that is no call but carries a
// session id (a cache lookup, a handshake) never adds a session to an
// execution; and the same rule selects no span under a vocabulary whose
// calls the dump does not hold.
func TestCallsSelectorSelectsOnlyTheVocabularysCalls(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "gw")
	r := d.add(ss, sp{trace: 1, name: "request", end: time.Second})
	d.add(ss, callSpan(1, r, 0, 100*time.Millisecond, "s1"))
	d.add(ss, callSpan(1, r, 200*time.Millisecond, 300*time.Millisecond, "s1"))
	d.add(ss, sp{trace: 1, parent: r, name: "cache.lookup", start: 400 * time.Millisecond, end: 500 * time.Millisecond,
		attrs: []any{spans.AttrSessionID, "not-a-call"}})
	rule := rulefmt.BuiltinRules(rulefmt.Config{})[0]
	if rule.ID != rulefmt.RuleOneSessionPerExecution || !rule.Select.Calls {
		t.Fatalf("first built-in is %s, selecting %s: want the session rule on the vocabulary's calls", rule.ID, rule.Select)
	}
	for _, tc := range []struct {
		name   string
		cfg    rulefmt.Config
		groups int
		want   []float64
	}{
		{"our calls, one session: the cache lookup's is no call's", rulefmt.Config{}, 1, []float64{1}},
		{"openllmetry reads no call here: nothing selected", rulefmt.Config{Profile: rulefmt.ProfileOpenLLMetry}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := index.New(rulefmt.MergeIndexOptions(tc.cfg.IndexOptions(), rulefmt.RulesIndexOptions([]rulefmt.Rule{rule})))
			idx.Add(d.td)
			obs, err := ObserveRules(asDump(idx), tc.cfg, []rulefmt.Rule{rule}, ObserveOptions{MaxExamples: 10})
			if err != nil {
				t.Fatal(err)
			}
			var got []float64
			for _, g := range obs[0].Groups {
				got = append(got, g.Values...)
			}
			if len(obs[0].Groups) != tc.groups || !slices.Equal(got, tc.want) {
				t.Errorf("groups %+v, want %d holding %v", obs[0].Groups, tc.groups, tc.want)
			}
		})
	}
}
