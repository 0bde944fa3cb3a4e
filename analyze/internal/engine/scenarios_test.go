package engine

import (
	"fmt"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// figures are the numbers worked out by hand from each scenario's story
// (see its doc comment in internal/tracegen), so a wrong figure cannot hide
// in a golden file.
type figures struct {
	spans, traces, incomplete          int
	acquires, hits, misses, handshakes int
	scopes, keys, excess               int
	hitRate, floor                     float64 // checked when acquires > 0
	reasons                            map[string]int
	execs, multiSession, maxSessions   int
	requests, complete, incompleteReqs int
	histogram                          map[int]int
	unexpected                         int
}

var scenarioFigures = map[string]figures{
	// Seed 002: 4 scopes x 6 invocations, one cold miss each: at the floor.
	"prod-cold-starts": {spans: 76, traces: 24, acquires: 24, hits: 20, misses: 4, handshakes: 4, scopes: 4, keys: 4,
		hitRate: 20.0 / 24, floor: 4.0 / 24, reasons: map[string]int{spans.MissCold: 4}, execs: 24, maxSessions: 1},
	// cold, hit, ttl (7 min gap), hit that expires + redial, hit: 6 acquires.
	// The tracegen doc says 19 spans; 5 invoke + 6 acquire + 3 handshake + 6
	// call_tool is 20.
	"ttl-and-redial": {spans: 20, traces: 5, acquires: 6, hits: 3, misses: 3, handshakes: 3, scopes: 1, keys: 1, excess: 2,
		hitRate: 0.5, floor: 1.0 / 6, reasons: map[string]int{spans.MissCold: 1, spans.MissTTL: 1, spans.MissRedial: 1},
		execs: 5, multiSession: 1, maxSessions: 2},
	// A miss 45 s after a clean release, nothing open, nothing failed.
	"unexplained-miss": {spans: 17, traces: 5, acquires: 5, hits: 3, misses: 2, handshakes: 2, scopes: 1, keys: 1, excess: 1,
		hitRate: 0.6, floor: 0.2, reasons: map[string]int{spans.MissCold: 1, spans.MissUnexplained: 1}, execs: 5, maxSessions: 1},
	// C starts while B holds the only session.
	"concurrent": {spans: 14, traces: 4, acquires: 4, hits: 2, misses: 2, handshakes: 2, scopes: 1, keys: 1, excess: 1,
		hitRate: 0.5, floor: 0.25, reasons: map[string]int{spans.MissCold: 1, spans.MissConcurrent: 1}, execs: 4, maxSessions: 1},
	// Seeds 000/001: every call dials; each execution sees 2 sessions.
	"per-call-dial": {spans: 27, traces: 3, acquires: 6, misses: 6, handshakes: 6, scopes: 1, keys: 1, excess: 5,
		hitRate: 0, floor: 1.0 / 6, reasons: map[string]int{spans.MissCold: 1, spans.MissUnexplained: 5},
		execs: 3, multiSession: 3, maxSessions: 2},
	"pooled": {spans: 22, traces: 3, acquires: 6, hits: 5, misses: 1, handshakes: 1, scopes: 1, keys: 1,
		hitRate: 5.0 / 6, floor: 1.0 / 6, reasons: map[string]int{spans.MissCold: 1}, execs: 3, maxSessions: 1},
	// Seed 003: the fixed init does one organizations read per request.
	"cold-init-one-read": {spans: 15, traces: 3, requests: 3, complete: 3, histogram: map[int]int{1: 3}},
	"cold-init-two-reads": {spans: 18, traces: 3, requests: 3, complete: 3, histogram: map[int]int{2: 3},
		unexpected: 3},
	// T3 lacks the worker plane (complete_when fails), T4 lacks its root
	// (incomplete trace, no request).
	"cold-init-incomplete": {spans: 19, traces: 4, incomplete: 1, requests: 3, complete: 2, incompleteReqs: 1,
		histogram: map[int]int{2: 2}, unexpected: 2},
	// Hits are invocations without an acquire child.
	"acquire-on-miss": {spans: 24, traces: 10, acquires: 10, hits: 8, misses: 2, handshakes: 2, scopes: 2, keys: 2,
		hitRate: 0.8, floor: 0.2, reasons: map[string]int{spans.MissCold: 2}, execs: 10, maxSessions: 1},
	// 4 calls on 3 sessions: the first call of each session is a miss; E2
	// dials per call, which nothing explains. The tracegen doc says 10
	// spans; 2 roots + 3 initialize + 4 tools/call is 9.
	"semconv": {spans: 9, traces: 2, acquires: 4, hits: 1, misses: 3, handshakes: 3, scopes: 1, keys: 1, excess: 2,
		hitRate: 0.25, floor: 0.25, reasons: map[string]int{spans.MissCold: 1, spans.MissUnexplained: 2},
		execs: 2, multiSession: 1, maxSessions: 2},
	// The CI gate's rule-breaking dumps. Counted from the builder: one
	// invoke, one acquire and one call_tool per attempt, a handshake per
	// dial.
	// No cache_hit anywhere: the handshake child alone makes the first a miss.
	"missing-cache-hit": {spans: 10, traces: 3, acquires: 3, hits: 2, misses: 1, handshakes: 1, scopes: 1, keys: 1,
		hitRate: 2.0 / 3, floor: 1.0 / 3, reasons: map[string]int{spans.MissCold: 1}, execs: 3, maxSessions: 1},
	// cache_hit=true wins over the handshake child: 2 hits, but 2 handshakes.
	"handshake-on-hit": {spans: 11, traces: 3, acquires: 3, hits: 2, misses: 1, handshakes: 2, scopes: 1, keys: 1,
		hitRate: 2.0 / 3, floor: 1.0 / 3, reasons: map[string]int{spans.MissCold: 1}, execs: 3, maxSessions: 1},
	// Two attempt-1 hits in one invocation: the first lease ends where the
	// second begins, so neither looks concurrent.
	"double-acquire": {spans: 9, traces: 2, acquires: 3, hits: 2, misses: 1, handshakes: 1, scopes: 1, keys: 1,
		hitRate: 2.0 / 3, floor: 1.0 / 3, reasons: map[string]int{spans.MissCold: 1}, execs: 2, maxSessions: 1},
}

// scenarioBuilds returns every scenario with hand-checked figures: those
// tracegen registers, and the rule-breaking ones it may not (yet).
func scenarioBuilds() []tracegen.Scenario {
	scs := tracegen.Scenarios()
	have := map[string]bool{}
	for _, sc := range scs {
		have[sc.Name] = true
	}
	for _, extra := range []tracegen.Scenario{
		{Name: "missing-cache-hit", Build: tracegen.MissingCacheHit},
		{Name: "handshake-on-hit", Build: tracegen.HandshakeOnHit},
		{Name: "double-acquire", Build: tracegen.DoubleAcquire},
	} {
		if !have[extra.Name] {
			scs = append(scs, extra)
		}
	}
	return scs
}

func TestScenarioFiguresMatchTheirStories(t *testing.T) {
	for _, sc := range scenarioBuilds() {
		t.Run(sc.Name, func(t *testing.T) {
			want, ok := scenarioFigures[sc.Name]
			if !ok {
				t.Fatalf("no hand-checked figures for scenario %s", sc.Name)
			}
			r := analyzeTD(t, scenarioConfig(t, sc.Name), sc.Build())
			checkFigures(t, r, want)
		})
	}
}

// checkFigures compares a report with hand-checked figures, naming every
// difference.
func checkFigures(t *testing.T, r *report.Report, want figures) {
	t.Helper()
	eq := func(what string, got, want int) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %d, want %d", what, got, want)
		}
	}
	eq("spans", r.Spans, want.spans)
	eq("traces", r.Traces, want.traces)
	eq("incomplete_traces", r.IncompleteTraces, want.incomplete)
	p := r.Pool
	eq("pool.acquires", p.Acquires, want.acquires)
	eq("pool.hits", p.Hits, want.hits)
	eq("pool.misses", p.Misses, want.misses)
	eq("pool.handshakes", p.Handshakes, want.handshakes)
	eq("pool.scopes", p.Scopes, want.scopes)
	eq("pool.keys", p.Keys, want.keys)
	eq("pool.excess_misses", p.ExcessMisses, want.excess)
	if want.acquires > 0 {
		if !near(p.HitRate, want.hitRate) {
			t.Errorf("pool.hit_rate = %v, want %.4f", deref(p.HitRate), want.hitRate)
		}
		if !near(p.ColdStartFloor, want.floor) {
			t.Errorf("pool.cold_start_floor = %v, want %.4f", deref(p.ColdStartFloor), want.floor)
		}
	} else if p.HitRate != nil || p.ColdStartFloor != nil {
		t.Errorf("pool.hit_rate and cold_start_floor must be null without acquires, got %v and %v", deref(p.HitRate), deref(p.ColdStartFloor))
	}
	for _, reason := range spans.MissReasons {
		eq("pool.miss_reasons."+reason, p.MissReasons[reason], want.reasons[reason])
	}
	e := r.Executions
	eq("executions.count", e.Count, want.execs)
	eq("executions.multi_session", e.MultiSession, want.multiSession)
	eq("executions.max_sessions", e.MaxSessions, want.maxSessions)
	eq("len(executions.examples)", len(e.Examples), min(want.multiSession, report.MaxExamples))
	if len(r.Measures) != 1 {
		t.Fatalf("measures: got %d, want the one configured", len(r.Measures))
	}
	m := r.Measures[0]
	eq("measure.requests", m.Requests, want.requests)
	eq("measure.complete", m.Complete, want.complete)
	eq("measure.incomplete", m.Incomplete, want.incompleteReqs)
	eq("measure.unexpected", m.Unexpected, want.unexpected)
	got := map[int]int{}
	for _, b := range m.Histogram {
		got[b.Reads] = b.Requests
	}
	if fmt.Sprint(got) != fmt.Sprint(orEmpty(want.histogram)) {
		t.Errorf("measure.histogram = %v, want %v", got, orEmpty(want.histogram))
	}
}

func deref(f *float64) any {
	if f == nil {
		return "null"
	}
	return *f
}

func orEmpty(m map[int]int) map[int]int {
	if m == nil {
		return map[int]int{}
	}
	return m
}

func TestAcquireOnMissDumpUnderDefaultProfileSeesOnlyTheMisses(t *testing.T) {
	r := analyzeTD(t, rulefmt.Config{}, tracegen.AcquireOnMiss())
	p := r.Pool
	if p.Acquires != 2 || p.Hits != 0 || p.Misses != 2 || p.MissReasons[spans.MissCold] != 2 {
		t.Errorf("default profile on an acquire-on-miss dump: acquires %d hits %d misses %d cold %d, want 2 0 2 2",
			p.Acquires, p.Hits, p.Misses, p.MissReasons[spans.MissCold])
	}
}

func TestExecutionRootSelectorGroupsCallsUnderTheRoot(t *testing.T) {
	root, err := rulefmt.ParseSelectorString("executor.execute")
	if err != nil {
		t.Fatal(err)
	}
	r := analyzeTD(t, rulefmt.Config{ExecutionRoot: &root}, tracegen.PerCallDial())
	e := r.Executions
	if e.Count != 3 || e.MultiSession != 3 || e.MaxSessions != 2 {
		t.Errorf("executions by root: count %d multi %d max %d, want 3 3 2", e.Count, e.MultiSession, e.MaxSessions)
	}
	if e.Root != "name=executor.execute" {
		t.Errorf("executions.root = %q, want the selector", e.Root)
	}

	// A root no span matches leaves every call outside any execution.
	none, _ := rulefmt.ParseSelectorString("no.such.span")
	r = analyzeTD(t, rulefmt.Config{ExecutionRoot: &none}, tracegen.PerCallDial())
	if r.Executions.Count != 0 {
		t.Errorf("executions under a root that matches nothing = %d, want 0", r.Executions.Count)
	}
}
