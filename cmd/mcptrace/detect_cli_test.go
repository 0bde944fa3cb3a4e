package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// cliSpan is one span of a hand-built dump for the CLI tests.
type cliSpan struct {
	trace, id, parent uint64
	name              string
	kind              ptrace.SpanKind
	start, end        time.Duration
	attrs             map[string]any
}

// writeSpans writes spans, all of one resource (service.name gw), as OTLP
// JSON lines into dir/name and returns the path.
func writeSpans(t *testing.T, dir, name string, list []cliSpan) string {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(spans.ResourceServiceName, "gw")
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range list {
		s := ss.AppendEmpty()
		var tid pcommon.TraceID
		binary.BigEndian.PutUint64(tid[8:], c.trace)
		var sid, pid pcommon.SpanID
		binary.BigEndian.PutUint64(sid[:], c.id)
		s.SetTraceID(tid)
		s.SetSpanID(sid)
		if c.parent != 0 {
			binary.BigEndian.PutUint64(pid[:], c.parent)
			s.SetParentSpanID(pid)
		}
		s.SetName(c.name)
		s.SetKind(c.kind)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(c.start)))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(c.end)))
		if err := s.Attributes().FromRaw(c.attrs); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := tracegen.WriteOTLPJSONLines(&buf, td); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// namedSpans returns, for each name, that many root spans of it.
func namedSpans(counts map[string]int, kind ptrace.SpanKind, attrs map[string]any) []cliSpan {
	var out []cliSpan
	id := uint64(1)
	for name, n := range counts {
		for range n {
			out = append(out, cliSpan{trace: id, id: id, name: name, kind: kind, end: time.Millisecond, attrs: attrs})
			id++
		}
	}
	return out
}

// pooledOutlivingRoot is our pool's spans where the invocation and its call
// run on after the request that made them ended: nothing else is wrong,
// but sessions per execution cannot be known.
func pooledOutlivingRoot() []cliSpan {
	var out []cliSpan
	for k := range 3 {
		tr, base := uint64(k+1), uint64(10*k+1)
		start := time.Duration(k) * time.Minute
		out = append(out,
			cliSpan{trace: tr, id: base, name: "request", kind: ptrace.SpanKindServer, start: start, end: start + time.Second},
			cliSpan{trace: tr, id: base + 1, parent: base, name: spans.SpanInvoke, start: start, end: start + 2*time.Second,
				attrs: map[string]any{spans.AttrCacheKey: "k"}},
			cliSpan{trace: tr, id: base + 2, parent: base + 1, name: spans.SpanAcquire, start: start, end: start + time.Millisecond,
				attrs: map[string]any{spans.AttrCacheKey: "k", spans.AttrCacheHit: k > 0, spans.AttrMissReason: "cold"}},
			cliSpan{trace: tr, id: base + 3, parent: base + 1, name: spans.SpanCallTool, kind: ptrace.SpanKindClient, start: start + time.Millisecond, end: start + 2*time.Second,
				attrs: map[string]any{spans.AttrMethodName: spans.MethodToolsCall, spans.AttrSessionID: "s1"}},
		)
	}
	return out
}

// TestWhatCannotBeReadOrMeasuredExitsThree runs the binary on dumps it
// cannot read, or whose executions it cannot measure: analyze and check
// exit 3, naming the ten most frequent span names and what would read
// them, never a pass; a dump it reads exits 0 and says what it read.
func TestWhatCannotBeReadOrMeasuredExitsThree(t *testing.T) {
	bin := builtBinary(t)
	dir := t.TempDir()
	counts := map[string]int{}
	for k := range 12 {
		counts[fmt.Sprintf("GET /api/%c", 'a'+k)] = k + 1 // /a once … /l twelve times
	}
	http := writeSpans(t, dir, "http.jsonl", namedSpans(counts, ptrace.SpanKindServer, nil))
	semconvLike := writeSpans(t, dir, "semconv-like.jsonl", namedSpans(map[string]int{"tools/call search": 3}, ptrace.SpanKindClient, nil))
	outliving := writeSpans(t, dir, "outliving.jsonl", pooledOutlivingRoot())
	allowEmpty := filepath.Join(dir, "allow-empty.yaml")
	if err := os.WriteFile(allowEmpty, []byte("rules:\n  - id: calls\n    scope: dump\n    select: {name: plugin.mcp.client.call_tool}\n    expect: {of: count, op: \"<=\", than: 5}\n    allow_empty: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	topTen := []string{"no span recognised", "GET /api/l", "GET /api/c", "a vocabulary: block in mcptrace.yaml, see docs/vocabularies.md"}
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		stdout     []string
		stderr     []string
		notStderr  []string
		vocabulary string // settings.vocabulary of a JSON report
	}{
		{name: "analyze: nothing recognised", args: []string{"analyze", http}, code: 3,
			stdout: []string{"profile auto"}, stderr: topTen, notStderr: []string{"GET /api/b", "warning: no pool spans"}},
		{name: "analyze --format json still writes the report", args: []string{"analyze", "--format", "json", http}, code: 3,
			stderr: topTen, vocabulary: "none"},
		{name: "check: nothing recognised", args: []string{"check", http}, code: 3, stderr: topTen, notStderr: []string{"GET /api/b"}},
		{name: "check: nothing recognised, every rule allowing an empty dump, passes with the warning", args: []string{"check", "--config", allowEmpty, http}, code: 0,
			stdout: []string{"verdict: PASS"}, stderr: append([]string{"warning: no span recognised"}, topTen[1:]...)},
		{name: "names like the conventions' point at --profile semconv", args: []string{"analyze", semconvLike}, code: 3,
			stderr: []string{"--profile semconv", "tools/call search"}},
		{name: "check: executions not measurable, the session rules do not apply; the pool rules do", args: []string{"check", outliving}, code: 0,
			stdout: []string{"n/a one-session-per-execution", "not applicable: executions not measurable", "3 tool call(s) end after their execution's", "verdict: PASS (4 passed, 2 not applicable)"}},
		{name: "analyze: executions not measurable, said in words", args: []string{"analyze", outliving}, code: 0,
			stdout: []string{"NOT MEASURABLE", "vocabulary mcptrace: 9 of 12 spans recognised"}},
		{name: "analyze: a pooled dump is read as ours", args: []string{"analyze", "--format", "json", gateDumps + "pooled.otlp.jsonl"}, code: 0,
			vocabulary: "mcptrace"},
		{name: "check: a pooled dump passes", args: []string{"check", gateDumps + "pooled.otlp.jsonl"}, code: 0,
			stdout: []string{"verdict: PASS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runBinary(t, bin, nil, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.stderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			for _, w := range tc.notStderr {
				if strings.Contains(errOut, w) {
					t.Errorf("stderr holds %q:\n%s", w, errOut)
				}
			}
			if tc.vocabulary != "" {
				var r struct {
					Settings struct{ Vocabulary string } `json:"settings"`
				}
				if err := json.Unmarshal([]byte(out), &r); err != nil || r.Settings.Vocabulary != tc.vocabulary {
					t.Errorf("settings.vocabulary = %q (%v), want %q", r.Settings.Vocabulary, err, tc.vocabulary)
				}
			}
		})
	}
}
