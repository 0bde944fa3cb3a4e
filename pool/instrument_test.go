package pool_test

import (
	"testing"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// TestPrebuiltSpanOptionsNameEachCallsTool pins the span options the pool
// builds once per key, tool and session and reuses after: calls of
// different tools interleaved on one pooled session each get their own
// tool on the invoke and call spans (and the call span's name in the
// semantic conventions' form), and every hit's acquire span says so with
// the session's protocol version.
func TestPrebuiltSpanOptionsNameEachCallsTool(t *testing.T) {
	for _, semconv := range []bool{false, true} {
		name := "plugin vocabulary"
		if semconv {
			name = "semantic conventions"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{pool: pool.Options{SemconvCallSpans: semconv}})
			tools := []string{fixtures.ToolEcho, "get_workspace", fixtures.ToolEcho, "select_workspace", "get_workspace"}
			for _, tool := range tools {
				h.mustCall(tool, nil)
			}
			invokes := h.spansNamed(spans.SpanInvoke)
			acquires := h.spansNamed(spans.SpanAcquire)
			if len(invokes) != len(tools) || len(acquires) != len(tools) {
				t.Fatalf("%d invoke and %d acquire spans, want %d each", len(invokes), len(acquires), len(tools))
			}
			for i, tool := range tools {
				if got := attr(invokes[i], spans.AttrToolName); got != tool {
					t.Errorf("invoke %d %s = %q, want %q", i, spans.AttrToolName, got, tool)
				}
				callName := spans.SpanCallTool
				if semconv {
					callName = spans.MethodToolsCall + " " + tool
				}
				calls := h.spansNamed(callName)
				var n int
				for _, c := range calls {
					if c.Parent().SpanID() == invokes[i].SpanContext().SpanID() {
						n++
						if got := attr(c, spans.AttrGenAIToolName); got != tool {
							t.Errorf("call %d %s = %q, want %q", i, spans.AttrGenAIToolName, got, tool)
						}
					}
				}
				if n != 1 {
					t.Errorf("invoke %d (%s) has %d child spans named %q, want 1", i, tool, n, callName)
				}
				wantHit := "true"
				if i == 0 {
					wantHit = "false"
				}
				if got := attr(acquires[i], spans.AttrCacheHit); got != wantHit {
					t.Errorf("acquire %d cache_hit = %s, want %s", i, got, wantHit)
				}
				if got := attr(acquires[i], spans.AttrProtocolVersion); got != "2025-11-25" {
					t.Errorf("acquire %d %s = %q", i, spans.AttrProtocolVersion, got)
				}
			}
		})
	}
}
