package analyze

import (
	"cmp"
	"slices"
)

// ExecutionsReport is the session-continuity measure: how many downstream
// sessions each execution's tool calls landed on. A stateful server keeps
// state per session, so an execution spread over several sessions loses it.
type ExecutionsReport struct {
	// Root is how executions are found: "trace" (each trace is one), or the
	// --execution-root selector.
	Root string `json:"root"`
	// Count is the number of executions holding at least one tool call.
	Count int `json:"count"`
	// MultiSession counts executions whose calls carry more than one
	// distinct mcp.session.id.
	MultiSession int `json:"multi_session"`
	// MaxSessions is the largest number of distinct sessions in one
	// execution.
	MaxSessions int `json:"max_sessions"`
	// Examples are trace ids of multi-session executions, sorted, at most
	// MaxExamples.
	Examples []string `json:"examples"`
	// Measurable is false when calls cannot be tied to their execution
	// (measurable.go): the figures above then measure nothing, and WhyNot
	// says why ("" when measurable). CallsOutsideRoot counts calls under
	// no execution root, CallsOutlivingRoot calls ending after their
	// execution's root span ended.
	Measurable         bool   `json:"measurable"`
	WhyNot             string `json:"why_not"`
	CallsOutsideRoot   int    `json:"calls_outside_root"`
	CallsOutlivingRoot int    `json:"calls_outliving_root"`
	// onlyEmpty marks a judgement of not measurable whose one reason is a
	// dump holding no execution and no pool span: the rules then have
	// nothing to judge, and say so themselves (not serialized).
	onlyEmpty bool
}

// execAcc accumulates the executions measure.
type execAcc struct {
	v    *vocab
	root *matcher // nil: the trace is the execution
	// each, when set, is told every execution's trace and session count
	// (the Collector connector counts executions per pool, trace_outcome.go).
	each func(trace int32, sessions int)
}

// execCall is one call: its execution (trace index, or root span index) and
// its session (interned, -1 when the call carries none).
type execCall struct {
	exec    int32
	session int32
}

func (e *execAcc) report() ExecutionsReport {
	x := e.v.x
	r := ExecutionsReport{Root: "trace", Examples: []string{}}
	var examples []int32
	var calls []execCall // one trace's calls: executions never span traces
	clock := &rootClock{x: x}
	for t := range x.traces {
		if e.v.poll.stop() {
			break
		}
		tr := &x.traces[t]
		calls = calls[:0]
		for _, i := range x.order[tr.first : tr.first+tr.n] {
			if !e.v.isCall(i) {
				continue
			}
			c := execCall{exec: int32(t), session: -1}
			if e.root != nil {
				// The nearest root at or above the call, from one pass
				// over the tree: no walk up a deep chain per call.
				c.exec = e.root.nearestOrSelf(i)
			}
			clock.tie(&r, i, c.exec, e.root != nil) // measurable.go
			if c.exec < 0 {
				continue // a call outside any execution root
			}
			if s, ok := x.attrVal(i, e.v.kSession); ok {
				c.session = s
			}
			calls = append(calls, c)
		}
		slices.SortFunc(calls, func(a, b execCall) int {
			return cmp.Or(cmp.Compare(a.exec, b.exec), cmp.Compare(a.session, b.session))
		})
		for i := 0; i < len(calls); {
			sessions := 0
			j := i
			for ; j < len(calls) && calls[j].exec == calls[i].exec; j++ {
				if calls[j].session >= 0 && (j == i || calls[j].session != calls[j-1].session) {
					sessions++
				}
			}
			r.Count++
			r.MaxSessions = max(r.MaxSessions, sessions)
			if sessions > 1 {
				r.MultiSession++
				examples = append(examples, int32(t))
			}
			if e.each != nil {
				e.each(int32(t), sessions)
			}
			i = j
		}
	}
	r.Examples = exampleTraces(x, examples)
	return r
}
