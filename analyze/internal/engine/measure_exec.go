package engine

import (
	"cmp"
	"slices"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// executions computes the executions measure from the call events: each
// execution (a trace, or the subtree of an execution root) and the distinct
// sessions its calls carry. each, when set, is told every execution's trace
// and session count (the Collector connector counts executions per pool,
// trace_stream.go).
func (e *events) executions(each func(trace int32, sessions int)) report.ExecutionsReport {
	r := report.ExecutionsReport{Root: "trace", Examples: []string{}}
	var examples []int32
	var calls []callEvent // one trace's calls: executions never span traces
	for lo := 0; lo < len(e.calls); {
		hi := lo + 1
		for hi < len(e.calls) && e.calls[hi].trace == e.calls[lo].trace {
			hi++
		}
		t := e.calls[lo].trace
		calls = calls[:0]
		for _, c := range e.calls[lo:hi] {
			switch c.tie { // measurable.go
			case tieOutsideRoot:
				r.CallsOutsideRoot++
			case tieOutlivesRoot:
				r.CallsOutlivingRoot++
			}
			if c.exec >= 0 { // a call outside any execution root is in none
				calls = append(calls, c)
			}
		}
		lo = hi
		slices.SortFunc(calls, func(a, b callEvent) int {
			return cmp.Or(cmp.Compare(a.exec, b.exec), cmp.Compare(a.session, b.session))
		})
		examples = countExecutions(&r, t, calls, examples, each)
	}
	r.Examples = e.exampleIDs(examples)
	return r
}

// countExecutions counts into r the executions of trace t, whose calls
// (those in an execution) are sorted by execution then session, and the
// distinct sessions of each; it returns examples with t added once per
// execution of more than one session. each is as for executions.
func countExecutions(r *report.ExecutionsReport, t int32, calls []callEvent, examples []int32,
	each func(trace int32, sessions int)) []int32 {
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
			examples = append(examples, t)
		}
		if each != nil {
			each(t, sessions)
		}
		i = j
	}
	return examples
}
