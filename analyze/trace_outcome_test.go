package analyze

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// TestInStreamRules pins which rules a per-trace driver can judge: a trace
// or subtree scope comparing span quantities, never a dump scope or a
// dump-wide measure.
func TestInStreamRules(t *testing.T) {
	count := []Expectation{{Of: QuantityCount, Op: OpEq, Than: Operand{Number: 0}}}
	for _, c := range []struct {
		name string
		rule Rule
		want bool
	}{
		{"trace scope, span count", Rule{ID: "a", Scope: Scope{Kind: ScopeTrace}, Expect: count}, true},
		{"subtree scope, span count", Rule{ID: "b", Scope: Scope{Kind: ScopeSubtree, Root: &Selector{Name: "x"}}, Expect: count}, true},
		{"dump scope", Rule{ID: "c", Scope: Scope{Kind: ScopeDump}, Expect: count}, false},
		{"trace scope, dump measure", Rule{ID: "d", Scope: Scope{Kind: ScopeTrace},
			Expect: []Expectation{{Of: "hit_rate", Op: OpGe, Than: Operand{Number: 0.5}}}}, false},
		{"trace scope, bound by a measure", Rule{ID: "e", Scope: Scope{Kind: ScopeTrace},
			Expect: []Expectation{{Of: QuantityCount, Op: OpLe, Than: Operand{Measure: "handshakes"}}}}, false},
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
	var dump Rule
	for _, r := range BuiltinRules(Config{}) {
		if r.Scope.Kind == ScopeDump {
			dump = r
			break
		}
	}
	_, err := NewTraceStream(Config{}, []Rule{dump}, nil)
	if err == nil || !strings.Contains(err.Error(), dump.ID) {
		t.Fatalf("NewTraceStream(%s) = %v, want an error naming the rule", dump.ID, err)
	}
}

// TestCompleteAtRoot pins the one rule the engine and the connector
// finalize complete traces by: a root span completes a trace unless a
// reads measure or a rule's complete_when waits for more.
func TestCompleteAtRoot(t *testing.T) {
	sel := &Selector{Name: "worker.fetch"}
	for _, c := range []struct {
		name  string
		cfg   Config
		rules []Rule
		want  bool
	}{
		{"no measures, no rules", Config{}, nil, true},
		{"built-in rules", Config{}, BuiltinRules(Config{}), true},
		{"a reads measure", Config{Measures: []ReadMeasure{{Name: "m", Root: Selector{Name: "r"}, Read: Selector{Name: "q"}}}}, nil, false},
		{"a rule with complete_when", Config{}, []Rule{{ID: "a", Scope: Scope{Kind: ScopeTrace}, CompleteWhen: sel}}, false},
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
	ts, err := NewTraceStream(Config{}, nil, nil)
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
	if ts.spare.spans == nil || ts.spare.recent == nil {
		t.Fatal("no tables kept for the next group: the reuse this test guards is not happening")
	}
}
