package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// twoSessionsDump writes one execution of a client in the OpenTelemetry
// MCP conventions calling a tool on session a, then on session b (OTLP
// JSON lines, written as given: escapes stay escapes), and returns its
// path.
func twoSessionsDump(t *testing.T, a, b string) string {
	t.Helper()
	d := dumptest.New()
	ss := d.Resource(spans.ResourceServiceName, "agent", spans.ResourceServiceInstanceID, "agent-1")
	root := d.Add(ss, dumptest.Span{Trace: 1, Name: "agent.run", End: 2 * time.Second})
	for i, session := range []string{"SESSA", "SESSB"} {
		start := time.Duration(i+1) * 100 * time.Millisecond
		d.Add(ss, dumptest.Span{Trace: 1, Parent: root, Name: spans.MethodToolsCall + " search", Start: start, End: start + 50*time.Millisecond,
			Kind: ptrace.SpanKindClient, Attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrGenAIToolName, "search",
				spans.AttrSessionID, session, spans.AttrServerAddress, "mcp.example"}})
	}
	path := d.Write(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw = []byte(strings.NewReplacer("SESSA", a, "SESSB", b).Replace(string(raw)))
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckCannotTellSessionsThatDifferOnlyInLoneSurrogates pins the
// verdict on an execution whose two sessions differ only in an escaped
// lone surrogate: every reader reads both as one, so pool_sessions would
// read 1 and one-session-per-execution pass on what the spans cannot
// tell. Where session identities may have merged the count is a lower
// bound: it decides pool_sessions >= 1 and distinct >= 1 (pass) but not
// pool_sessions == 1 (not applicable, exit 3 when nothing else applies);
// two sessions fail, one session passes.
func TestCheckCannotTellSessionsThatDifferOnlyInLoneSurrogates(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rules, []byte("rules:\n"+
		"  - {id: one-session, scope: trace, select: {name_regex: \"^tools/call\"}, expect: [{of: pool_sessions, op: \"==\", than: 1}]}\n"+
		"  - {id: some-session, scope: trace, select: {name_regex: \"^tools/call\"}, expect: [{of: distinct, attribute: mcp.session.id, op: \">=\", than: 1}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, a, b string
		code       int
		stdout     []string
	}{
		{"sessions differing only in lone surrogates", `s\ud800`, `s\udbff`, 0,
			[]string{"found: not applicable: pool_sessions = 1 is only a lower bound, which cannot decide",
				"the inputs held 2 escaped lone UTF-16 surrogates", "PASS (1 passed, 1 not applicable)"}},
		{"two sessions", "sa", "sb", 1, []string{"pool_sessions = 2", "FAIL"}},
		{"one session", "sa", "sa", 0, []string{"PASS (2 passed)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "check", "--profile", "semconv", "--config", rules, twoSessionsDump(t, tc.a, tc.b))
			wantOutcome(t, code, out, errOut, tc.code, tc.stdout, nil)
		})
	}
}
