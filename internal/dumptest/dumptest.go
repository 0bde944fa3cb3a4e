// Package dumptest builds the trace dumps the analyzer's tests read: small
// ones by hand, span by span (a [Builder]), the generated scenarios'
// configurations ([ScenarioConfig]) and testdata's pooled dump with the
// pool's settings written onto its acquires ([PooledWithSettings]).
//
// It is test support, imported only by _test.go files (internal/archtest
// holds that), and it never imports analyze, so analyze's own in-package
// tests use it as the packages above analyze do; helpers that run the
// analyzer live in internal/analyzetest.
package dumptest

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// T0 is the base time of hand-built dumps: a Span's Start and End are
// offsets from it.
var T0 = time.Date(2026, time.May, 1, 12, 0, 0, 0, time.UTC)

// Builder builds one ptrace.Traces by hand, for a test that pins one
// behaviour. The zero value is not usable; call New.
type Builder struct {
	td ptrace.Traces
	// NextID is the span id the next Span without one gets; a test may
	// read it (to pick ids clear of the spans added) or move it.
	NextID uint64
}

// New returns an empty Builder whose first free span id is 1.
func New() *Builder { return &Builder{td: ptrace.NewTraces(), NextID: 1} }

// Traces returns the dump built so far. It shares the Builder's data:
// spans added later show in it too.
func (b *Builder) Traces() ptrace.Traces { return b.td }

// Resource starts a resource with the given attribute pairs (key, value,
// ...) and returns the span slice of its one scope.
func (b *Builder) Resource(kv ...string) ptrace.SpanSlice {
	rs := b.td.ResourceSpans().AppendEmpty()
	for i := 0; i+1 < len(kv); i += 2 {
		rs.Resource().Attributes().PutStr(kv[i], kv[i+1])
	}
	return rs.ScopeSpans().AppendEmpty().Spans()
}

// Span describes one span for Builder.Add. A zero ID takes the Builder's
// next free one; a zero Parent makes a root. Attrs are key, value pairs
// whose values are a string, bool, int or int64.
type Span struct {
	Trace, ID, Parent uint64
	Name              string
	Start, End        time.Duration // offsets from T0
	Kind              ptrace.SpanKind
	Status            ptrace.StatusCode
	Attrs             []any
}

// Add appends s to ss and returns its span id. It panics on an attribute
// value of another type: a mistake in the test itself.
func (b *Builder) Add(ss ptrace.SpanSlice, s Span) uint64 {
	if s.ID == 0 {
		s.ID = b.NextID
		b.NextID++
	}
	x := ss.AppendEmpty()
	x.SetTraceID(TraceID(s.Trace))
	x.SetSpanID(SpanID(s.ID))
	if s.Parent != 0 {
		x.SetParentSpanID(SpanID(s.Parent))
	}
	x.SetName(s.Name)
	x.SetKind(s.Kind)
	x.Status().SetCode(s.Status)
	x.SetStartTimestamp(pcommon.NewTimestampFromTime(T0.Add(s.Start)))
	x.SetEndTimestamp(pcommon.NewTimestampFromTime(T0.Add(s.End)))
	for i := 0; i+1 < len(s.Attrs); i += 2 {
		k := s.Attrs[i].(string)
		switch v := s.Attrs[i+1].(type) {
		case string:
			x.Attributes().PutStr(k, v)
		case bool:
			x.Attributes().PutBool(k, v)
		case int:
			x.Attributes().PutInt(k, int64(v))
		case int64:
			x.Attributes().PutInt(k, v)
		case float64:
			x.Attributes().PutDouble(k, v)
		default:
			panic(fmt.Sprintf("dumptest: attribute %s: unsupported value type %T", k, v))
		}
	}
	return s.ID
}

// Write writes the dump as one OTLP JSON line into a new file of a
// temporary directory of t, and returns its path (WriteTraces).
func (b *Builder) Write(t testing.TB) string {
	t.Helper()
	return WriteTraces(t, b.td)
}

// WriteTraces writes td as one OTLP JSON line into a new file of a
// temporary directory of t, and returns its path: a dump built or edited
// outside a Builder, for a test that reads files.
func WriteTraces(t testing.TB, td ptrace.Traces) string {
	t.Helper()
	raw, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dump.otlp.jsonl")
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TraceID is the trace id whose last 8 bytes are n, big-endian.
func TraceID(n uint64) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[8:], n)
	return id
}

// SpanID is the span id n, big-endian.
func SpanID(n uint64) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], n)
	return id
}

// ScenarioConfig returns the configuration a generated scenario (package
// internal/tracegen) is analyzed with: its profile, and the cold-init
// measure for the seed 003 stories.
func ScenarioConfig(t testing.TB, name string) rulefmt.Config {
	t.Helper()
	cf, err := rulefmt.ParseConfig("cold-init.yaml", []byte(tracegen.ColdInitMeasureYAML))
	if err != nil {
		t.Fatalf("parse cold-init config: %v", err)
	}
	cfg := rulefmt.Config{Measures: cf.Measures}
	cfg.Profile = rulefmt.Profile(tracegen.ScenarioProfile(name))
	return cfg
}

// acquireSpanAttrs finds where an acquire span's attribute list opens.
var acquireSpanAttrs = regexp.MustCompile(`"name":"plugin\.mcp\.connection\.acquire"[^\[]*"attributes":\[`)

// PooledWithSettings writes testdata's pooled dump (tracesDir's
// pooled.otlp.jsonl: one pool scope, six acquire spans, no settings
// recorded) with settings(n) added to its n-th acquire span, the
// attributes as the pool writes them (spans.PoolSettingsAttrs), into a
// new file of a temporary directory of t, and returns its path.
func PooledWithSettings(t testing.TB, tracesDir string, settings func(n int) map[string]string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(tracesDir, "pooled.otlp.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	out := acquireSpanAttrs.ReplaceAllStringFunc(string(raw), func(open string) string {
		set := settings(n)
		n++
		var b strings.Builder
		b.WriteString(open)
		for _, k := range spans.PoolSettingsAttrs {
			if v, ok := set[k]; ok {
				b.WriteString(`{"key":"` + k + `","value":{"stringValue":"` + v + `"}},`)
			}
		}
		return b.String()
	})
	if n != 6 {
		t.Fatalf("pooled dump: %d acquire spans, want 6", n)
	}
	path := filepath.Join(t.TempDir(), "settings.otlp.jsonl")
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// MissesOnKeys builds one invocation per key, a second apart, in one pool
// scope ("pool-1"), each one acquire span that missed on its key ("" for
// an acquire span without a cache key): the last a redial (attempt 2),
// the others first attempts. Keyed apart, every first attempt is a cold
// miss; keyless, the acquires read as one key, and the misses after the
// first as what that key's state says.
func MissesOnKeys(keys ...string) *Builder {
	b := New()
	ss := b.Resource(spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, "pool-1")
	for i, key := range keys {
		start := time.Duration(i) * time.Second
		inv := b.Add(ss, Span{Trace: uint64(i + 1), Name: spans.SpanInvoke, Start: start, End: start + 100*time.Millisecond,
			Attrs: []any{spans.AttrToolName, "t"}})
		attempt := 1
		if i == len(keys)-1 {
			attempt = 2
		}
		attrs := []any{spans.AttrCacheHit, false, spans.AttrAttempt, attempt}
		if key != "" {
			attrs = append(attrs, spans.AttrCacheKey, key)
		}
		b.Add(ss, Span{Trace: uint64(i + 1), Parent: inv, Name: spans.SpanAcquire, Start: start + time.Millisecond, End: start + 50*time.Millisecond, Attrs: attrs})
	}
	return b
}
