package measure

import (
	"fmt"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// Whether executions can be measured at all. Sessions per execution is
// only a figure when each tool call is tied to the execution that made it.
// Two shapes make that impossible, and a report that counted on would be
// green on nothing:
//
//   - a call under no execution root: with --execution-root, no span above
//     it matches the selector; each trace an execution, the call is itself
//     its trace's root (a server-side instrumentation's span when no
//     context reached the server, Shinzo's), or the trace's root is a
//     session span (OpenLLMetry's mcp.client.session, opened by a pool at
//     start-up outside any execution): it belongs to no execution;
//   - a call that ends after its execution's root span ended: the root
//     cannot have made it. An instrumentation that parents calls to a
//     long-lived session span (OpenLLMetry's mcp.client.session) puts
//     every later execution's calls in the trace of the execution that
//     opened the session, under a root long finished. A call ending
//     exactly when its root ends is within it;
//   - for a writer that parents calls to a session span (Parenting
//     session), an execution holding no call where executions of the
//     same root name hold some: its calls sit under a session span in
//     another execution's trace, even where none outlives its root
//     (executions that overlap the one that opened the session). An
//     execution that called no tool reads the same, and is taken for one
//     whose calls went elsewhere: never a wrong figure, at worst none.
//
// A writer whose request spans are parented to nothing (Parenting none)
// shows no execution at all, whatever its spans look like.
//
// And zero executions is no measure of anything, whatever the dump holds
// (OpenInference writes no MCP span at all). Then executions.measurable is false, executions.why_not says
// why, the reports say so in words, and the session rules are not
// applicable (the gate's verdict), never a pass on zero.

// MergeExecNames adds o's counts to a, keeping at most maxNameCounts
// names (a dump of countless root names bounds what it costs).
func MergeExecNames(a, o map[string][2]int) map[string][2]int {
	if o == nil {
		return a
	}
	if a == nil {
		a = map[string][2]int{}
	}
	for name, n := range o {
		m, ok := a[name]
		if !ok && len(a) >= record.MaxNameCounts {
			continue
		}
		a[name] = [2]int{m[0] + n[0], m[1] + n[1]}
	}
	return a
}

// ExecutionsWithoutCalls counts the executions holding no call whose root
// name is one that executions holding calls have.
func ExecutionsWithoutCalls(names map[string][2]int) int {
	n := 0
	for _, c := range names {
		if c[0] > 0 {
			n += c[1]
		}
	}
	return n
}

// MergeMeasurability adds o's counts of calls that cannot be tied to an
// execution to a; judgeMeasurability decides from the sums.
func MergeMeasurability(a, o *report.ExecutionsReport) {
	a.CallsOutsideRoot += o.CallsOutsideRoot
	a.CallsOutlivingRoot += o.CallsOutlivingRoot
}

// JudgeMeasurability sets r.Measurable and r.WhyNot from its counts, the
// dump's pool spans and what the writer shows.
func JudgeMeasurability(r *report.ExecutionsReport, poolSpans int, shows rulefmt.Capability) {
	var why []string
	if !shows.Has(rulefmt.CapExecutions) {
		why = append(why, rulefmt.CapExecutions.Why())
	}
	if n := r.CallsOutsideRoot; n > 0 {
		why = append(why, fmt.Sprintf("%d tool call(s) sit under no execution root (%s): they belong to no execution", n, rootWords(r.Root)))
	}
	if n := r.CallsOutlivingRoot; n > 0 {
		why = append(why, fmt.Sprintf("%d tool call(s) end after their execution's root span ended: the instrumentation parents calls "+
			"to a span that outlives executions (a long-lived session span), so later executions' calls land in an earlier one's trace", n))
	}
	if n := r.ExecutionsWithoutCalls; n > 0 {
		why = append(why, fmt.Sprintf("%d execution(s) hold no tool call where others of the same root hold some: the writer parents calls "+
			"to a session span, and one session span spans several executions, so their calls sit in another execution's trace", n))
	}
	switch {
	case r.Count == 0 && poolSpans > 0:
		why = append(why, fmt.Sprintf("no tool call is tied to an execution, though the dump holds %d pool span(s)", poolSpans))
	case r.Count == 0:
		why = append(why, "no tool call is tied to an execution: the dump holds no call span the vocabulary reads")
	}
	r.Measurable = len(why) == 0
	r.WhyNot = strings.Join(why, "; ")
	r.OnlyEmpty = r.Count == 0 && poolSpans == 0 && r.CallsOutsideRoot == 0 && shows.Has(rulefmt.CapExecutions)
}

// rootWords names how executions are found, for why_not: the selector,
// clipped, or for "trace" what a call outside one is there.
func rootWords(root string) string {
	if root == "trace" {
		return "each trace an execution, the call is its trace's root"
	}
	return textfmt.ClipTo(root, report.MaxCell)
}
