package htmlreport

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// TestMultiSessionTraceQLNamesTheOffendingTracesOnly pins the query of the
// "executions on several sessions" offender: for each id list, the traces
// it names by id, the calls it selects and the grouping by session; never
// a count(), which counts spans (any trace with two calls matched it).
func TestMultiSessionTraceQLNamesTheOffendingTracesOnly(t *testing.T) {
	calls := `span.mcp.method.name = "tools/call" && span.mcp.session.id != nil`
	for _, c := range []struct {
		name string
		ids  []string
		want string
	}{
		{"no examples: every trace's calls, by session", nil, `{ ` + calls + ` } | by(span.mcp.session.id)`},
		{"one trace", []string{"aa"}, `{ trace:id = "aa" && ` + calls + ` } | by(span.mcp.session.id)`},
		{"two traces, either", []string{"aa", "bb"}, `{ (trace:id = "aa" || trace:id = "bb") && ` + calls + ` } | by(span.mcp.session.id)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := multiSessionTraceQL(c.ids); got != c.want {
				t.Errorf("multiSessionTraceQL(%q) =\n%s\nwant\n%s", c.ids, got, c.want)
			}
		})
	}
}

// traceQLIDs reads the trace ids a query names.
var traceQLIDs = regexp.MustCompile(`trace:id = "([0-9a-f]+)"`)

// TestMultiSessionOffenderMatchesOnlyMultiSessionTraces reads each
// scenario's spans (the generator's, not the analyzer's) for the traces
// whose tool calls carry two session ids or more, and checks the HTML
// report's offender query names exactly those traces: none with one
// session, and every multi-session one while they fit the examples.
func TestMultiSessionOffenderMatchesOnlyMultiSessionTraces(t *testing.T) {
	seen := 0
	for _, sc := range tracegen.Scenarios() {
		if tracegen.ScenarioProfile(sc.Name) != "default" {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			multi := multiSessionTraces(sc.Build())
			_, data := htmlPage(t, filepath.Join(tracesDir, sc.Name+".otlp.jsonl"), dumptest.ScenarioConfig(t, sc.Name), Options{})
			var h Report
			if err := json.Unmarshal(data, &h); err != nil {
				t.Fatal(err)
			}
			var query string
			for _, o := range h.Offenders {
				if o.ID == "executions on several sessions" {
					query = o.TraceQL
				}
			}
			if len(multi) == 0 {
				if query != "" {
					t.Errorf("no trace has calls on two sessions, yet the page has the offender with %s", query)
				}
				return
			}
			seen++
			t.Logf("%d multi-session traces; query %s", len(multi), query)
			if strings.Contains(query, "count()") || !strings.HasSuffix(query, " | by(span."+spans.AttrSessionID+")") {
				t.Errorf("query %s: want the calls grouped by session, no count()", query)
			}
			var named []string
			for _, m := range traceQLIDs.FindAllStringSubmatch(query, -1) {
				named = append(named, m[1])
			}
			slices.Sort(named)
			// Every one while they fit the report's examples (a few), at
			// least one past that.
			if (len(multi) <= 3 || len(named) == 0) && !slices.Equal(named, multi) {
				t.Errorf("query names traces %v, the multi-session traces are %v", named, multi)
			}
			for _, id := range named {
				if !slices.Contains(multi, id) {
					t.Errorf("query names trace %s, whose calls are on one session", id)
				}
			}
		})
	}
	if seen == 0 {
		t.Error("no scenario has a multi-session trace to look for")
	}
}

// multiSessionTraces returns the traces (hex ids, sorted) whose tools/call
// spans carry two distinct mcp.session.id values or more.
func multiSessionTraces(td ptrace.Traces) []string {
	sessions := map[string]map[string]bool{}
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			ss := sss.At(j).Spans()
			for k := range ss.Len() {
				sp := ss.At(k)
				m, ok := sp.Attributes().Get(spans.AttrMethodName)
				s, hasSession := sp.Attributes().Get(spans.AttrSessionID)
				if !ok || m.Str() != spans.MethodToolsCall || !hasSession {
					continue
				}
				tid := sp.TraceID().String()
				if sessions[tid] == nil {
					sessions[tid] = map[string]bool{}
				}
				sessions[tid][s.Str()] = true
			}
		}
	}
	var out []string
	for tid, s := range sessions {
		if len(s) > 1 {
			out = append(out, tid)
		}
	}
	slices.Sort(out)
	return out
}
