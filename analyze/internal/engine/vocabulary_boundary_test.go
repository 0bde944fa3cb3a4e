package engine

import (
	"maps"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// attempt is one acquire span of an invocation for attemptsDump, offsets in
// milliseconds from the invocation's start.
type attempt struct {
	at      time.Duration
	hit     bool
	attempt any // plugin.mcp.attempt (int or string), nil omits it
}

// attemptsDump adds to ss one invocation of key "k" in trace over [start,
// end) (ms) with the given acquires, failed (status error, no error.type)
// when failed is set.
func attemptsDump(d *dump, ss ptrace.SpanSlice, trace uint64, start, end time.Duration, failed bool, acquires ...attempt) {
	ms := time.Millisecond
	inv := sp{trace: trace, name: spans.SpanInvoke, start: start * ms, end: end * ms, attrs: []any{spans.AttrCacheKey, "k"}}
	if failed {
		inv.status = ptrace.StatusCodeError
	}
	id := d.add(ss, inv)
	for _, a := range acquires {
		attrs := []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, a.hit}
		if a.attempt != nil {
			attrs = append(attrs, spans.AttrAttempt, a.attempt)
		}
		s := (start + a.at) * ms
		d.add(ss, sp{trace: trace, parent: id, name: spans.SpanAcquire, start: s, end: s + ms, attrs: attrs})
	}
}

// missReasons analyzes d and returns its non-zero miss reasons.
func missReasons(t *testing.T, d *dump) map[string]int {
	t.Helper()
	r := analyzeTD(t, rulefmt.Config{IdleTTL: time.Hour}, d.td)
	got := map[string]int{}
	for k, n := range r.Pool.MissReasons {
		if n != 0 {
			got[k] = n
		}
	}
	return got
}

// TestAttemptNumbersOfTheFirstTryAreNotRedials pins how the vocabulary
// stage reads plugin.mcp.attempt: 1 and 0 (a writer counting from zero) are
// a first try, as is no attribute; 2 is the redial, whichever form the
// value takes, and so is 3; a value that is no whole number of 2 or more
// (-1, a word, a bool, 1.5) is no redial: filed as one, the miss would
// pass for explained.
func TestAttemptNumbersOfTheFirstTryAreNotRedials(t *testing.T) {
	tests := []struct {
		name    string
		attempt any
		want    string
	}{
		{"attempt 0 (int)", 0, spans.MissCold},
		{"attempt \"0\" (string)", "0", spans.MissCold},
		{"attempt 1", 1, spans.MissCold},
		{"no attempt", nil, spans.MissCold},
		{"attempt 2", 2, spans.MissRedial},
		{"attempt \"2\" (string)", "2", spans.MissRedial},
		{"attempt 3", 3, spans.MissRedial},
		{"attempt -1", -1, spans.MissCold},
		{"attempt \"x\"", "x", spans.MissCold},
		{"attempt true", true, spans.MissCold},
		{"attempt 1.5", 1.5, spans.MissCold},
		{"attempt 2.5", 2.5, spans.MissCold},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceInstanceID, "gw")
			attemptsDump(d, ss, 1, 0, 100, false, attempt{at: 0, attempt: tc.attempt})
			if got, want := missReasons(t, d), map[string]int{tc.want: 1}; !maps.Equal(got, want) {
				t.Errorf("miss reasons %v, want %v", got, want)
			}
		})
	}
}

// TestAFailedInvocationFailsItsLastLease pins which lease a failed
// invocation with a redial fails: the redial's (its last), which ends at the
// invocation's end, so the pair's next miss is after_failure; failing the
// first lease (which ended when the redial began) would leave the pair's
// latest lease clean and the miss unexplained.
func TestAFailedInvocationFailsItsLastLease(t *testing.T) {
	tests := []struct {
		name   string
		failed bool
		want   map[string]int
	}{
		{"failed invocation with a redial: the next miss is after_failure", true,
			map[string]int{spans.MissCold: 1, spans.MissRedial: 1, spans.MissAfterFailure: 1}},
		{"clean invocation with a redial: the next miss is unexplained", false,
			map[string]int{spans.MissCold: 1, spans.MissRedial: 1, spans.MissUnexplained: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceInstanceID, "gw")
			attemptsDump(d, ss, 1, 0, 100, tc.failed, attempt{at: 0, attempt: 1}, attempt{at: 50, attempt: 2})
			attemptsDump(d, ss, 2, 200, 300, false, attempt{at: 0, attempt: 1})
			if got := missReasons(t, d); !maps.Equal(got, tc.want) {
				t.Errorf("miss reasons %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSubtreeScopesOfAnIncompleteTraceAreIncomplete pins a subtree scope's
// completeness: it is its trace's (a missing parent anywhere in the trace
// makes every subtree of it incomplete, even one that is whole itself), and
// complete_when is looked for in the whole trace, not only the subtree.
func TestSubtreeScopesOfAnIncompleteTraceAreIncomplete(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "svc")
	// Trace 1: two requests, the worker under the second only; whole.
	r1 := d.add(ss, sp{trace: 1, name: "request"})
	d.add(ss, sp{trace: 1, parent: r1, name: "db.query"})
	r2 := d.add(ss, sp{trace: 1, name: "request"})
	d.add(ss, sp{trace: 1, parent: r2, name: "worker"})
	// Trace 2: one whole request beside a span whose parent never landed.
	r3 := d.add(ss, sp{trace: 2, name: "request"})
	d.add(ss, sp{trace: 2, parent: r3, name: "worker"})
	d.add(ss, sp{trace: 2, parent: 999, name: "db.query"})
	rule := rulefmt.Rule{ID: "reads", Scope: rulefmt.Scope{Kind: rulefmt.ScopeSubtree, Root: &rulefmt.Selector{Name: "request"}},
		Select: &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: "db.query"}}, CompleteWhen: &rulefmt.Selector{Name: "worker"},
		Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityCount, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 1}}}}
	obs := observeByID(t, []rulefmt.Rule{rule}, 0, d.td)["reads"]
	complete, incomplete := 0, 0
	for _, g := range obs.Groups {
		if g.Complete {
			complete += g.Scopes
		} else {
			incomplete += g.Scopes
		}
	}
	if complete != 2 || incomplete != 1 {
		t.Errorf("complete %d, incomplete %d subtree scopes, want trace 1's 2 complete and trace 2's 1 incomplete: %+v",
			complete, incomplete, obs.Groups)
	}
}

// TestAFailedCallFailsTheLeaseItRanUnder pins which lease a failed call
// fails when its invocation redialed: the latest lease that began at or
// before the call, so a call starting exactly when the redial's acquire
// began is the redial's, and a call before it fails the first lease only
// (the redial's later, clean lease then decides the pair's next miss).
func TestAFailedCallFailsTheLeaseItRanUnder(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name   string
		callAt time.Duration // ms after the invocation's start
		want   map[string]int
	}{
		{"a call starting exactly at the redial's acquire: the redial's lease failed", 50,
			map[string]int{spans.MissCold: 1, spans.MissRedial: 1, spans.MissAfterFailure: 1}},
		{"a call after the redial's acquire: the redial's lease failed", 60,
			map[string]int{spans.MissCold: 1, spans.MissRedial: 1, spans.MissAfterFailure: 1}},
		{"a call before the redial: the first lease failed, the redial's ended later clean", 20,
			map[string]int{spans.MissCold: 1, spans.MissRedial: 1, spans.MissUnexplained: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceInstanceID, "gw")
			attemptsDump(d, ss, 1, 0, 100, false, attempt{at: 0, attempt: 1}, attempt{at: 50, attempt: 2})
			// The invocation is the dump's first span: id 1.
			d.add(ss, sp{trace: 1, parent: 1, name: spans.SpanCallTool, kind: ptrace.SpanKindClient,
				start: tc.callAt * ms, end: (tc.callAt + 5) * ms, status: ptrace.StatusCodeError,
				attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrErrorType, "transport"}})
			attemptsDump(d, ss, 2, 200, 300, false, attempt{at: 0, attempt: 1})
			if got := missReasons(t, d); !maps.Equal(got, tc.want) {
				t.Errorf("miss reasons %v, want %v", got, tc.want)
			}
		})
	}
}
