package engine

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// TestInStreamRules pins which rules a per-trace driver can judge: a trace
// or subtree scope comparing span quantities, never a dump scope or a
// dump-wide measure.
func TestInStreamRules(t *testing.T) {
	count := []rulefmt.Expectation{{Of: rulefmt.QuantityCount, Op: rulefmt.OpEq, Than: rulefmt.Operand{Number: 0}}}
	for _, c := range []struct {
		name string
		rule rulefmt.Rule
		want bool
	}{
		{"trace scope, span count", rulefmt.Rule{ID: "a", Scope: rulefmt.Scope{Kind: rulefmt.ScopeTrace}, Expect: count}, true},
		{"subtree scope, span count", rulefmt.Rule{ID: "b", Scope: rulefmt.Scope{Kind: rulefmt.ScopeSubtree, Root: &rulefmt.Selector{Name: "x"}}, Expect: count}, true},
		{"dump scope", rulefmt.Rule{ID: "c", Scope: rulefmt.Scope{Kind: rulefmt.ScopeDump}, Expect: count}, false},
		{"trace scope, dump measure", rulefmt.Rule{ID: "d", Scope: rulefmt.Scope{Kind: rulefmt.ScopeTrace},
			Expect: []rulefmt.Expectation{{Of: "hit_rate", Op: rulefmt.OpGe, Than: rulefmt.Operand{Number: 0.5}}}}, false},
		{"trace scope, bound by a measure", rulefmt.Rule{ID: "e", Scope: rulefmt.Scope{Kind: rulefmt.ScopeTrace},
			Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityCount, Op: rulefmt.OpLe, Than: rulefmt.Operand{Measure: "handshakes"}}}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := InStream(c.rule); got != c.want {
				t.Fatalf("InStream = %v, want %v", got, c.want)
			}
		})
	}
}

// TestNewTraceStreamRefusesDumpRules: handing a dump-scoped rule to a
// per-trace stream is an error naming the rule, not a silent wrong verdict.
func TestNewTraceStreamRefusesDumpRules(t *testing.T) {
	var dump rulefmt.Rule
	for _, r := range rulefmt.BuiltinRules(rulefmt.Config{}) {
		if r.Scope.Kind == rulefmt.ScopeDump {
			dump = r
			break
		}
	}
	_, err := NewTraceStream(rulefmt.Config{}, []rulefmt.Rule{dump}, nil)
	if err == nil || !strings.Contains(err.Error(), dump.ID) {
		t.Fatalf("NewTraceStream(%s) = %v, want an error naming the rule", dump.ID, err)
	}
}

// TestCompleteAtRoot pins the one rule the engine and the connector
// finalize complete traces by: a root span completes a trace unless a
// reads measure or a rule's complete_when waits for more.
func TestCompleteAtRoot(t *testing.T) {
	sel := &rulefmt.Selector{Name: "worker.fetch"}
	for _, c := range []struct {
		name  string
		cfg   rulefmt.Config
		rules []rulefmt.Rule
		want  bool
	}{
		{"no measures, no rules", rulefmt.Config{}, nil, true},
		{"built-in rules", rulefmt.Config{}, rulefmt.BuiltinRules(rulefmt.Config{}), true},
		{"a reads measure", rulefmt.Config{Measures: []rulefmt.ReadMeasure{{Name: "m", Root: rulefmt.Selector{Name: "r"}, Read: rulefmt.Selector{Name: "q"}}}}, nil, false},
		{"a rule with complete_when", rulefmt.Config{}, []rulefmt.Rule{{ID: "a", Scope: rulefmt.Scope{Kind: rulefmt.ScopeTrace}, CompleteWhen: sel}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := CompleteAtRoot(c.cfg, c.rules); got != c.want {
				t.Fatalf("CompleteAtRoot = %v, want %v", got, c.want)
			}
		})
	}
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	root, child := spans.AppendEmpty(), spans.AppendEmpty()
	child.SetParentSpanID(pcommon.SpanID{7: 1})
	if !IsRootSpan(root) || IsRootSpan(child) {
		t.Fatalf("IsRootSpan(root, child) = %v, %v; want true, false", IsRootSpan(root), IsRootSpan(child))
	}
}

// TestTraceStreamGroupsShareNoState: a group's index reuses the previous
// group's tables (span and attribute chunks, duplicate cache), and nothing
// of the previous group may show through: the same trace flushed twice in
// a row counts the same acquires and executions both times (a stale
// duplicate cache would drop the second copy's spans, stale chunks would
// add the first copy's).
func TestTraceStreamGroupsShareNoState(t *testing.T) {
	ts, err := NewTraceStream(rulefmt.Config{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	flush := func(td ptrace.Traces) (acquires, executions int) {
		ts.Add(td)
		o, err := ts.Flush()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range o.Acquires {
			acquires += a.N
		}
		for _, e := range o.Executions {
			executions += e.N
		}
		return acquires, executions
	}
	td := tracegen.ProdColdStarts()
	all, allExec := flush(td)
	if all == 0 || allExec == 0 {
		t.Fatalf("the dump measured %d acquires, %d executions: nothing to compare", all, allExec)
	}
	for i := range 3 {
		if a, e := flush(td); a != all || e != allExec {
			t.Fatalf("flush %d of the same traces: %d acquires, %d executions; the first counted %d, %d", i+2, a, e, all, allExec)
		}
	}
	if ts.spare.Chunks == nil || ts.spare.Recent == nil {
		t.Fatal("no tables kept for the next group: the reuse this test guards is not happening")
	}
}

// TestTraceStreamEmitsNoExecutionsTheSpansCannotShow pins that a stream
// (the Collector connector's) counts no execution where the spans cannot
// tie calls to executions: OpenLLMetry's long-lived session span, or a
// server-side writer whose calls are trace roots. A per-call run, whose
// sessions each sit within one execution, is counted.
func TestTraceStreamEmitsNoExecutionsTheSpansCannotShow(t *testing.T) {
	for _, tc := range []struct {
		dump string
		want int
	}{
		{"openllmetry/per-call", 5},
		{"openllmetry/pooled", 0},
		{"shinzo/pooled", 0},
	} {
		t.Run(tc.dump, func(t *testing.T) {
			ts, err := NewTraceStream(rulefmt.Config{Profile: rulefmt.ProfileAuto}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ingest.Read(context.Background(), []string{corpusDir + "/" + tc.dump + ".jsonl"}, ReadOptions{Strict: true},
				ingest.SinkFunc(func(_ *Input, td ptrace.Traces) error { ts.Add(td); return nil })); err != nil {
				t.Fatal(err)
			}
			o, err := ts.Flush()
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for _, e := range o.Executions {
				got += e.N
			}
			if got != tc.want {
				t.Errorf("%d executions counted, want %d", got, tc.want)
			}
		})
	}
}
