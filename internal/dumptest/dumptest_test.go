package dumptest

import (
	"os"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/spans"
)

// TestAddWritesTheSpanAsDescribed pins the builder every hand-built dump of
// the analyzer's tests goes through: a zero id takes the next free one
// (an explicit id leaves the counter alone), a zero parent is a root, the
// times are offsets from T0, each attribute keeps its type, and Write
// hands back the same spans as one OTLP JSON line.
func TestAddWritesTheSpanAsDescribed(t *testing.T) {
	b := New()
	ss := b.Resource(spans.ResourceServiceName, "gw")
	first := b.Add(ss, Span{Trace: 7, Name: "root", End: time.Second})
	fixed := b.Add(ss, Span{Trace: 7, ID: 40, Parent: first, Name: "fixed"})
	next := b.Add(ss, Span{Trace: 7, Parent: fixed, Name: "child", Start: time.Millisecond, End: 2 * time.Millisecond,
		Kind: ptrace.SpanKindClient, Status: ptrace.StatusCodeError, Attrs: []any{"s", "v", "b", true, "i", 3, "i64", int64(-4)}})
	if first != 1 || fixed != 40 || next != 2 {
		t.Fatalf("ids %d, %d, %d; want 1, 40 (explicit), 2", first, fixed, next)
	}
	raw, err := os.ReadFile(b.Write(t))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(raw), "\n") != 1 || !strings.HasSuffix(string(raw), "\n") {
		t.Fatalf("Write: want one JSON line, got %q", raw)
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	if err != nil {
		t.Fatal(err)
	}
	got := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	if got.Len() != 3 || b.Traces().SpanCount() != 3 {
		t.Fatalf("%d spans written, %d built; want 3", got.Len(), b.Traces().SpanCount())
	}
	root, child := got.At(0), got.At(2)
	if root.TraceID() != TraceID(7) || root.SpanID() != SpanID(1) || !root.ParentSpanID().IsEmpty() {
		t.Errorf("root: trace %s span %s parent %s", root.TraceID(), root.SpanID(), root.ParentSpanID())
	}
	if child.ParentSpanID() != SpanID(40) || child.Kind() != ptrace.SpanKindClient || child.Status().Code() != ptrace.StatusCodeError {
		t.Errorf("child: parent %s kind %v status %v", child.ParentSpanID(), child.Kind(), child.Status().Code())
	}
	if s, e := child.StartTimestamp().AsTime(), child.EndTimestamp().AsTime(); !s.Equal(T0.Add(time.Millisecond)) || !e.Equal(T0.Add(2*time.Millisecond)) {
		t.Errorf("child: %v to %v, want T0+1ms to T0+2ms", s, e)
	}
	attrs := child.Attributes().AsRaw()
	if attrs["s"] != "v" || attrs["b"] != true || attrs["i"] != int64(3) || attrs["i64"] != int64(-4) || len(attrs) != 4 {
		t.Errorf("child attributes %v", attrs)
	}
}

// TestPooledWithSettingsWritesEachAcquiresSet pins the settings writer the
// what-if and acquire tests share: the n-th acquire span carries settings(n)
// as the pool writes them, and only those.
func TestPooledWithSettingsWritesEachAcquiresSet(t *testing.T) {
	path := PooledWithSettings(t, "../../testdata/traces", func(n int) map[string]string {
		if n%2 == 1 {
			return nil
		}
		return map[string]string{spans.AttrPoolIdleTTL: string(rune('0' + n))}
	})
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, sc := range rs.ScopeSpans().All() {
				for _, sp := range sc.Spans().All() {
					if sp.Name() != spans.SpanAcquire {
						continue
					}
					v, ok := sp.Attributes().Get(spans.AttrPoolIdleTTL)
					if ok {
						seen = append(seen, v.Str())
					} else {
						seen = append(seen, "-")
					}
				}
			}
		}
	}
	if got := strings.Join(seen, ","); got != "0,-,2,-,4,-" {
		t.Errorf("acquires' idle TTLs %s, want 0,-,2,-,4,-", got)
	}
}
