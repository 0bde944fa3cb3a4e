package main

import (
	"errors"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/spans"
)

// dumpSpanNames counts the spans of an OTLP JSON-lines dump by name, and
// those of each name carrying gen_ai.operation.name execute_tool.
func dumpSpanNames(t *testing.T, dump string) (names, executeTool map[string]int) {
	t.Helper()
	names, executeTool = map[string]int{}, map[string]int{}
	eachDumpSpan(t, dump, func(_ pcommon.Resource, s ptrace.Span) {
		names[s.Name()]++
		if v, ok := s.Attributes().Get(spans.AttrGenAIOperationName); ok && v.Str() == spans.GenAIOperationExecuteTool {
			executeTool[s.Name()]++
		}
	})
	return names, executeTool
}

// TestDemoSemconvCallSpansWritesTheConventionsNames pins --semconv-call-spans:
// the pooled demo's dump holds its call spans under the conventions' names
// ("tools/call <tool>", each with gen_ai.operation.name execute_tool), its
// handshakes' initialize request spans, and still the pool's invoke,
// acquire and handshake spans; without the flag the calls keep the pool's
// name. The live workload refuses the flag.
func TestDemoSemconvCallSpansWritesTheConventionsNames(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	run := func(flag bool) (map[string]int, map[string]int) {
		dump := filepath.Join(t.TempDir(), "pooled.jsonl")
		args := []string{"demo", "--mode", "pooled", "--scopes", "1", "--executions", "2", "--format", "json", "--dump", dump}
		if flag {
			args = append(args, "--semconv-call-spans")
		}
		if _, stderr, err := execute(t, args...); err != nil {
			t.Fatalf("demo %v: %v\n%s", args, err, stderr)
		}
		return dumpSpanNames(t, dump)
	}
	// Each execution selects a workspace and reads it back; one scope, one
	// handshake.
	selectName := spans.SemconvSpanName(spans.MethodToolsCall, fixtures.ToolSelectWorkspace)
	getName := spans.SemconvSpanName(spans.MethodToolsCall, fixtures.ToolGetWorkspace)
	names, execTool := run(true)
	for name, want := range map[string]int{
		selectName: 2, getName: 2, spans.SpanCallTool: 0,
		spans.SpanInvoke: 4, spans.SpanAcquire: 4, spans.SpanHandshake: 1, spans.MethodInitialize: 1,
	} {
		if names[name] != want {
			t.Errorf("with --semconv-call-spans: %d spans named %q, want %d (all: %v)", names[name], name, want, names)
		}
	}
	if execTool[selectName] != 2 || execTool[getName] != 2 {
		t.Errorf("execute_tool call spans %v, want 2 of each tool", execTool)
	}
	names, _ = run(false)
	if names[spans.SpanCallTool] != 4 || names[selectName] != 0 || names[spans.MethodInitialize] != 0 {
		t.Errorf("without the flag: %v, want 4 %s spans and no conventions spans", names, spans.SpanCallTool)
	}

	_, _, err := execute(t, "demo", "--mode", "live", "--duration", "1h", "--dump", "", "--semconv-call-spans")
	var ee *exitError
	if err == nil || !errors.As(err, &ee) || ee.code != 2 {
		t.Fatalf("live with --semconv-call-spans: %v, want a usage error with exit code 2", err)
	}
}
