package engine

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/ruleobs"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// observeByID indexes tds for rules and observes them, by rule id.
func observeByID(t *testing.T, rules []rulefmt.Rule, max int, tds ...ptrace.Traces) map[string]report.RuleObservation {
	t.Helper()
	cfg := rulefmt.Config{}
	idx := index.New(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
	for _, td := range tds {
		idx.Add(td)
	}
	obs, err := ObserveRules(asDump(idx), cfg, rules, ObserveOptions{MaxExamples: max})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != len(rules) {
		t.Fatalf("%d observations for %d rules", len(obs), len(rules))
	}
	out := map[string]report.RuleObservation{}
	for i, o := range obs {
		out[rules[i].ID] = o
	}
	return out
}

// TestObserveRulesGivesPlainValuesPerScope pins what the gate is handed:
// trace scopes grouped by the pool's sessions with their first offending
// calls, the dump's count with its first offenders by trace and span id,
// and the attributed misses a measure rule names.
func TestObserveRulesGivesPlainValuesPerScope(t *testing.T) {
	rules := rulefmt.BuiltinRules(rulefmt.Config{})
	perCall := observeByID(t, rules, 20, tracegen.PerCallDial())
	one := perCall[rulefmt.RuleOneSessionPerExecution]
	if len(one.Groups) != 1 {
		t.Fatalf("%s: %d groups, want the 3 executions in one: %+v", rulefmt.RuleOneSessionPerExecution, len(one.Groups), one.Groups)
	}
	if g := one.Groups[0]; g.Scopes != 3 || !g.Complete || !slices.Equal(g.Values, []float64{2}) || len(g.Offenders[0]) != 3 || len(g.Examples) != 3 {
		t.Errorf("group = %+v, want 3 complete scopes of 2 sessions, 3 offenders and 3 examples", g)
	}
	if un := perCall[rulefmt.RuleNoUnexplainedMisses]; len(un.UnexplainedMisses) != 5 || len(un.Groups) != 1 || un.Groups[0].Scopes != 1 {
		t.Errorf("%s: %d unexplained misses over %+v, want 5 over the dump", rulefmt.RuleNoUnexplainedMisses, len(un.UnexplainedMisses), un.Groups)
	}
	if capped := observeByID(t, rules, 2, tracegen.PerCallDial())[rulefmt.RuleOneSessionPerExecution].Groups[0]; len(capped.Offenders[0]) != 2 || !slices.IsSortedFunc(capped.Offenders[0], ruleobs.CmpRefs) {
		t.Errorf("trace offenders capped at 2 = %v", capped.Offenders[0])
	}

	all := observeByID(t, rules, 20, tracegen.MissingCacheHit())[rulefmt.RuleAcquireHasCacheHit].Groups[0]
	two := observeByID(t, rules, 2, tracegen.MissingCacheHit())[rulefmt.RuleAcquireHasCacheHit].Groups[0]
	if all.Values[0] != 3 || two.Values[0] != 3 || len(all.Offenders[0]) != 3 || len(two.Offenders[0]) != 2 {
		t.Fatalf("acquires without cache_hit: %+v, capped at 2: %+v", all, two)
	}
	if !slices.IsSortedFunc(all.Offenders[0], ruleobs.CmpRefs) || !slices.Equal(two.Offenders[0], all.Offenders[0][:2]) {
		t.Errorf("offenders are not the first by trace and span id: all %v, capped %v", all.Offenders[0], two.Offenders[0])
	}
	if none := observeByID(t, rules, -1, tracegen.MissingCacheHit())[rulefmt.RuleAcquireHasCacheHit]; len(none.Groups[0].Offenders[0]) != 0 || none.MaxExamples != 0 {
		t.Errorf("a negative cap keeps offenders: %+v", none)
	}
	missCap := map[int]int{2: 2, 0: 5, -1: 0} // 0 is the default cap, 5: all of them
	for max, want := range missCap {
		un := observeByID(t, rules, max, tracegen.PerCallDial())[rulefmt.RuleNoUnexplainedMisses]
		if len(un.UnexplainedMisses) != want || len(un.AboveFloorMisses) != want {
			t.Errorf("misses named under a cap of %d: %d unexplained, %d above the floor; want %d each", max, len(un.UnexplainedMisses), len(un.AboveFloorMisses), want)
		}
	}
}

// TestObserveRulesGroupsScopesByWhatTheyHold: complete scopes with the
// same values share a group, a scope with other values gets its own, and a
// trace with a missing parent is in an incomplete group without values.
func TestObserveRulesGroupsScopesByWhatTheyHold(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, "gw")
	d.invocation(ss, lease{trace: 1, start: 0, end: 100, key: "k", hit: false, handshake: true, session: "s1"})
	d.invocation(ss, lease{trace: 2, start: 200, end: 300, key: "k", hit: true, session: "s1"})
	d.invocation(ss, lease{trace: 3, start: 400, end: 500, key: "k", hit: true, session: "s1"})
	d.invocation(ss, lease{trace: 3, start: 500, end: 600, key: "k2", hit: false, handshake: true, session: "s2"})
	d.invocation(ss, lease{trace: 4, start: 700, end: 800, key: "k", hit: true, session: "s1"})
	d.add(ss, sp{trace: 4, parent: 999, name: "orphan", start: 710, end: 720})
	obs := observeByID(t, rulefmt.BuiltinRules(rulefmt.Config{}), 0, d.td)[rulefmt.RuleOneSessionPerExecution]
	want := []struct {
		scopes   int
		complete bool
		values   []float64
	}{{2, true, []float64{1}}, {1, true, []float64{2}}, {1, false, nil}}
	if len(obs.Groups) != len(want) {
		t.Fatalf("groups = %+v, want %d", obs.Groups, len(want))
	}
	for i, w := range want {
		if g := obs.Groups[i]; g.Scopes != w.scopes || g.Complete != w.complete || !slices.Equal(g.Values, w.values) {
			t.Errorf("group %d = %+v, want %d scopes, complete %v, values %v", i, g, w.scopes, w.complete, w.values)
		}
	}
}

// TestSharedReportNamesTheSameMissesAsObservingAlone pins the shortcut the
// report's miss counts allow: AnalyzeDumps hands the rules the report, and
// skips attributing the acquires again only when every miss is a cold
// start. A dump with other misses names the same misses, by the same
// spans, as an observation without the report.
func TestSharedReportNamesTheSameMissesAsObservingAlone(t *testing.T) {
	rules := rulefmt.BuiltinRules(rulefmt.Config{})
	for _, tc := range []struct {
		name                    string
		td                      ptrace.Traces
		unexplained, aboveFloor int
	}{
		{"per-call dial: every miss unexplained", tracegen.PerCallDial(), 5, 5},
		{"one unexplained miss", tracegen.UnexplainedMiss(), 1, 1},
		{"cold starts only: nothing to name", tracegen.ProdColdStarts(), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alone := observeByID(t, rules, 20, tc.td)[rulefmt.RuleNoUnexplainedMisses]
			path := writeJSONLines(t, "dump.jsonl", tc.td)
			run, err := AnalyzeDumps(context.Background(), ingest.Files{path}, rulefmt.Config{}, RunOptions{Rules: rules, Observe: ObserveOptions{MaxExamples: 20}})
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(rules, func(r rulefmt.Rule) bool { return r.ID == rulefmt.RuleNoUnexplainedMisses })
			shared := run.Analysis.Rules[i]
			if len(alone.UnexplainedMisses) != tc.unexplained || len(alone.AboveFloorMisses) != tc.aboveFloor {
				t.Fatalf("observed alone: %d unexplained, %d above the floor; want %d, %d", len(alone.UnexplainedMisses), len(alone.AboveFloorMisses), tc.unexplained, tc.aboveFloor)
			}
			if !slices.Equal(shared.UnexplainedMisses, alone.UnexplainedMisses) || !slices.Equal(shared.AboveFloorMisses, alone.AboveFloorMisses) {
				t.Errorf("with the report shared: unexplained %v, above the floor %v; observed alone: %v, %v",
					shared.UnexplainedMisses, shared.AboveFloorMisses, alone.UnexplainedMisses, alone.AboveFloorMisses)
			}
		})
	}
}
