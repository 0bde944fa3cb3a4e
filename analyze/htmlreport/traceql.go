package htmlreport

import (
	"fmt"
	"strings"

	"github.com/mcptrace/mcptrace/spans"
)

// multiSessionTraceQL finds the tool calls of the given traces (executions
// found on several sessions), one spanset per session, so Tempo shows each
// such trace with two spansets or more. TraceQL cannot count distinct
// values: count() counts spans, so "| count() > 1" matched every trace
// with two calls, one session or not; hence the traces named by id.
// Without ids it is the calls of every trace, grouped the same way.
func multiSessionTraceQL(traceIDs []string) string {
	calls := fmt.Sprintf(`span.%s = %q && span.%s != nil`, spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID)
	if len(traceIDs) > 0 {
		ids := make([]string, len(traceIDs))
		for i, tid := range traceIDs {
			ids[i] = fmt.Sprintf("trace:id = %q", tid)
		}
		cond := strings.Join(ids, " || ")
		if len(ids) > 1 {
			cond = "(" + cond + ")"
		}
		calls = cond + " && " + calls
	}
	return fmt.Sprintf("{ %s } | by(span.%s)", calls, spans.AttrSessionID)
}
