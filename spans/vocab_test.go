package spans_test

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/spans"
)

// TestTraceQLUnexplainedMissSpellsTheExplainedReasons pins the TraceQL
// constant to the one definition: its regex lists exactly the explained
// reasons, so adding a cause to ExplainedMissReasons without the query fails.
func TestTraceQLUnexplainedMissSpellsTheExplainedReasons(t *testing.T) {
	want := `!~ "^(` + strings.Join(spans.ExplainedMissReasons, "|") + `)$"`
	if !strings.Contains(spans.TraceQLUnexplainedMiss, want) {
		t.Fatalf("TraceQLUnexplainedMiss = %s\nwant it to contain %s", spans.TraceQLUnexplainedMiss, want)
	}
	for _, must := range []string{`name = "` + spans.SpanAcquire + `"`, "span." + spans.AttrCacheHit + " = false", "span." + spans.AttrMissReason + " = nil"} {
		if !strings.Contains(spans.TraceQLUnexplainedMiss, must) {
			t.Errorf("TraceQLUnexplainedMiss = %s, missing %s", spans.TraceQLUnexplainedMiss, must)
		}
	}
}

// TestIsExplainedMiss pins which reasons count as explained.
func TestIsExplainedMiss(t *testing.T) {
	for _, tc := range []struct {
		reason string
		want   bool
	}{
		{spans.MissCold, true}, {spans.MissHealthCheck, true}, {spans.MissRedial, true},
		{spans.MissEvicted, false}, {spans.MissUnexplained, false}, {"", false}, {"somebody_elses", false},
	} {
		if got := spans.IsExplainedMiss(tc.reason); got != tc.want {
			t.Errorf("IsExplainedMiss(%q) = %v, want %v", tc.reason, got, tc.want)
		}
	}
}

// TestSemconvSpanNameFollowsTheConventions pins the MCP conventions' span
// name: "{mcp.method.name} {target}" with a target, the method alone
// without one.
func TestSemconvSpanNameFollowsTheConventions(t *testing.T) {
	for _, tc := range []struct{ method, target, want string }{
		{spans.MethodToolsCall, "get-weather", "tools/call get-weather"},
		{spans.MethodInitialize, "", "initialize"},
		{spans.MethodServerDiscover, "", "server/discover"},
		{spans.MethodToolsCall, "a b", "tools/call a b"},
	} {
		if got := spans.SemconvSpanName(tc.method, tc.target); got != tc.want {
			t.Errorf("SemconvSpanName(%q, %q) = %q, want %q", tc.method, tc.target, got, tc.want)
		}
	}
}
