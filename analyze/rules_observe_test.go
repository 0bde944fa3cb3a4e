package analyze

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// observeByID indexes tds for rules and observes them, by rule id.
func observeByID(t *testing.T, rules []Rule, max int, tds ...ptrace.Traces) map[string]RuleObservation {
	t.Helper()
	cfg := Config{}
	idx := NewIndex(MergeIndexOptions(cfg.IndexOptions(), RulesIndexOptions(rules)))
	for _, td := range tds {
		idx.Add(td)
	}
	obs, err := ObserveRules(idx, cfg, rules, ObserveOptions{MaxExamples: max})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != len(rules) {
		t.Fatalf("%d observations for %d rules", len(obs), len(rules))
	}
	out := map[string]RuleObservation{}
	for i, o := range obs {
		out[rules[i].ID] = o
	}
	return out
}

// TestObserveRulesGivesPlainValuesPerScope pins what the gate is handed:
// per trace scope the pool's sessions and the first offending call, per
// dump scope the count and its first offenders by trace and span id, and
// the attributed misses a measure rule names.
func TestObserveRulesGivesPlainValuesPerScope(t *testing.T) {
	rules := BuiltinRules(Config{})
	perCall := observeByID(t, rules, 20, tracegen.PerCallDial())
	one := perCall[RuleOneSessionPerExecution]
	if len(one.Scopes) != 3 {
		t.Fatalf("%s: %d scopes, want the 3 executions", RuleOneSessionPerExecution, len(one.Scopes))
	}
	for i, sc := range one.Scopes {
		if !sc.Complete || len(sc.Values) != 1 || sc.Values[0].Value != 2 || len(sc.Values[0].Offenders) != 1 || sc.Example == (SpanRef{}) {
			t.Errorf("scope %d = %+v, want complete, 2 sessions, one offender and an example", i, sc)
		}
	}
	if un := perCall[RuleNoUnexplainedMisses]; len(un.UnexplainedMisses) != 5 || len(un.Scopes) != 1 {
		t.Errorf("%s: %d unexplained misses over %d scopes, want 5 over the dump", RuleNoUnexplainedMisses, len(un.UnexplainedMisses), len(un.Scopes))
	}

	all := observeByID(t, rules, 20, tracegen.MissingCacheHit())[RuleAcquireHasCacheHit].Scopes[0].Values[0]
	two := observeByID(t, rules, 2, tracegen.MissingCacheHit())[RuleAcquireHasCacheHit].Scopes[0].Values[0]
	if all.Value != 3 || two.Value != 3 || len(all.Offenders) != 3 || len(two.Offenders) != 2 {
		t.Fatalf("acquires without cache_hit: %v with %d offenders, capped at 2: %v with %d", all.Value, len(all.Offenders), two.Value, len(two.Offenders))
	}
	byID := func(a, b SpanRef) int {
		if c := slices.Compare(a.Trace[:], b.Trace[:]); c != 0 {
			return c
		}
		return slices.Compare(a.Span[:], b.Span[:])
	}
	if !slices.IsSortedFunc(all.Offenders, byID) || !slices.Equal(two.Offenders, all.Offenders[:2]) {
		t.Errorf("offenders are not the first by trace and span id: all %v, capped %v", all.Offenders, two.Offenders)
	}
	if none := observeByID(t, rules, -1, tracegen.MissingCacheHit())[RuleAcquireHasCacheHit]; len(none.Scopes[0].Values[0].Offenders) != 0 || none.MaxExamples != 0 {
		t.Errorf("a negative cap keeps offenders: %+v", none)
	}
}

// TestObserveRulesLeavesIncompleteScopesUnvalued: a trace with a missing
// parent is observed as incomplete, with no values for the gate to judge.
func TestObserveRulesLeavesIncompleteScopesUnvalued(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, "gw")
	d.invocation(ss, lease{trace: 1, start: 0, end: 100, key: "k", hit: false, handshake: true, session: "s1"})
	d.invocation(ss, lease{trace: 2, start: 200, end: 300, key: "k", hit: true, session: "s1"})
	d.add(ss, sp{trace: 2, parent: 999, name: "orphan", start: 210, end: 220})
	obs := observeByID(t, BuiltinRules(Config{}), 0, d.td)[RuleOneSessionPerExecution]
	if len(obs.Scopes) != 2 {
		t.Fatalf("%d scopes, want 2", len(obs.Scopes))
	}
	complete, incomplete := obs.Scopes[0], obs.Scopes[1]
	if !complete.Complete || len(complete.Values) != 1 || complete.Values[0].Value != 1 {
		t.Errorf("whole trace = %+v, want complete with 1 session", complete)
	}
	if incomplete.Complete || incomplete.Values != nil {
		t.Errorf("trace with a missing parent = %+v, want incomplete and unvalued", incomplete)
	}
}
