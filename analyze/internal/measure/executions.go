package measure

import (
	"cmp"
	"slices"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/report"
)

// Executions computes the executions measure from the call events: each
// execution (a trace, or the subtree of an execution root) and the distinct
// sessions its calls carry. each, when set, is told every execution's trace
// and session count (the Collector connector counts executions per pool,
// trace_stream.go).
func Executions(e *record.Table, each func(trace int32, sessions int)) report.ExecutionsReport {
	r := report.ExecutionsReport{Root: "trace", Examples: []string{}}
	var examples []int32
	var calls []record.Call // one trace's calls: executions never span traces
	for lo := 0; lo < len(e.Calls); {
		hi := lo + 1
		for hi < len(e.Calls) && e.Calls[hi].Trace == e.Calls[lo].Trace {
			hi++
		}
		t := e.Calls[lo].Trace
		calls = calls[:0]
		for _, c := range e.Calls[lo:hi] {
			switch c.Tie { // record.Tie
			case record.TieOutsideRoot:
				r.CallsOutsideRoot++
			case record.TieOutlivesRoot:
				r.CallsOutlivingRoot++
			}
			if c.Exec >= 0 { // a call outside any execution root is in none
				calls = append(calls, c)
			}
		}
		lo = hi
		slices.SortFunc(calls, func(a, b record.Call) int {
			return cmp.Or(cmp.Compare(a.Exec, b.Exec), cmp.Compare(a.Session, b.Session))
		})
		examples = countExecutions(&r, t, calls, examples, each)
	}
	r.Examples = e.ExampleIDs(examples)
	return r
}

// countExecutions counts into r the executions of trace t, whose calls
// (those in an execution) are sorted by execution then session, and the
// distinct sessions of each; it returns examples with t added once per
// execution of more than one session. each is as for executions.
func countExecutions(r *report.ExecutionsReport, t int32, calls []record.Call, examples []int32,
	each func(trace int32, sessions int)) []int32 {
	for i := 0; i < len(calls); {
		sessions := 0
		j := i
		for ; j < len(calls) && calls[j].Exec == calls[i].Exec; j++ {
			if calls[j].Session >= 0 && (j == i || calls[j].Session != calls[j-1].Session) {
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
