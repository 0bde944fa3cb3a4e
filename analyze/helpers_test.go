package analyze

import (
	"encoding/binary"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// t0 is the base time of hand-built test dumps.
var t0 = time.Date(2026, time.May, 1, 12, 0, 0, 0, time.UTC)

// dump builds small ptrace.Traces by hand for tests that pin one behaviour.
type dump struct {
	td     ptrace.Traces
	nextID uint64
}

func newDump() *dump { return &dump{td: ptrace.NewTraces(), nextID: 1} }

// resource starts a resource with the given attribute pairs and returns its
// span slice.
func (d *dump) resource(kv ...string) ptrace.SpanSlice {
	rs := d.td.ResourceSpans().AppendEmpty()
	for i := 0; i+1 < len(kv); i += 2 {
		rs.Resource().Attributes().PutStr(kv[i], kv[i+1])
	}
	return rs.ScopeSpans().AppendEmpty().Spans()
}

func traceIDOf(n uint64) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[8:], n)
	return id
}

func spanIDOf(n uint64) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], n)
	return id
}

// sp describes one span; attrs are key, value pairs (string, bool, int or
// int64 values).
type sp struct {
	trace, id, parent uint64
	name              string
	start, end        time.Duration // offsets from t0
	kind              ptrace.SpanKind
	status            ptrace.StatusCode
	attrs             []any
}

// add appends s to ss; a zero id gets the next free one. It returns the id.
func (d *dump) add(ss ptrace.SpanSlice, s sp) uint64 {
	if s.id == 0 {
		s.id = d.nextID
		d.nextID++
	}
	x := ss.AppendEmpty()
	x.SetTraceID(traceIDOf(s.trace))
	x.SetSpanID(spanIDOf(s.id))
	if s.parent != 0 {
		x.SetParentSpanID(spanIDOf(s.parent))
	}
	x.SetName(s.name)
	x.SetKind(s.kind)
	x.Status().SetCode(s.status)
	x.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(s.start)))
	x.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(s.end)))
	for i := 0; i+1 < len(s.attrs); i += 2 {
		k := s.attrs[i].(string)
		switch v := s.attrs[i+1].(type) {
		case string:
			x.Attributes().PutStr(k, v)
		case bool:
			x.Attributes().PutBool(k, v)
		case int:
			x.Attributes().PutInt(k, int64(v))
		case int64:
			x.Attributes().PutInt(k, v)
		default:
			panic("unsupported attribute type in test")
		}
	}
	return s.id
}

// lease describes one pooled invocation for invocation(): its acquire(s)
// and call.
type lease struct {
	trace      uint64
	start, end time.Duration
	key        string
	hit        any    // true, false, or nil to omit plugin.mcp.cache_hit
	handshake  bool   // a handshake child under the acquire
	reason     string // plugin.mcp.miss_reason
	attempt    int    // plugin.mcp.attempt, 0 omits it
	session    string // mcp.session.id on the call
	callErr    string // error.type of a failed call
	noAcquire  bool   // acquire-on-miss: no acquire span at all
	invokeKV   []any  // extra attributes on the invoke span
}

// invocation emits invoke → acquire (→ handshake) and call_tool spans for l
// into ss: the acquire takes the first tenth of the invocation, the call the
// rest.
func (d *dump) invocation(ss ptrace.SpanSlice, l lease) {
	inv := d.add(ss, sp{trace: l.trace, name: spans.SpanInvoke, start: l.start, end: l.end,
		attrs: append([]any{spans.AttrCacheKey, l.key}, l.invokeKV...)})
	mid := l.start + (l.end-l.start)/10
	if !l.noAcquire {
		var attrs []any
		if l.key != "" {
			attrs = append(attrs, spans.AttrCacheKey, l.key)
		}
		if l.hit != nil {
			attrs = append(attrs, spans.AttrCacheHit, l.hit)
		}
		if l.reason != "" {
			attrs = append(attrs, spans.AttrMissReason, l.reason)
		}
		if l.attempt != 0 {
			attrs = append(attrs, spans.AttrAttempt, l.attempt)
		}
		acq := d.add(ss, sp{trace: l.trace, parent: inv, name: spans.SpanAcquire, start: l.start, end: mid, attrs: attrs})
		if l.handshake {
			d.add(ss, sp{trace: l.trace, parent: acq, name: spans.SpanHandshake, kind: ptrace.SpanKindClient, start: l.start, end: mid,
				attrs: []any{spans.AttrSessionID, l.session}})
		}
	}
	call := sp{trace: l.trace, parent: inv, name: spans.SpanCallTool, kind: ptrace.SpanKindClient, start: mid, end: l.end,
		attrs: []any{spans.AttrMethodName, spans.MethodToolsCall}}
	if l.session != "" {
		call.attrs = append(call.attrs, spans.AttrSessionID, l.session)
	}
	if l.callErr != "" {
		call.status = ptrace.StatusCodeError
		call.attrs = append(call.attrs, spans.AttrErrorType, l.callErr)
	}
	d.add(ss, call)
}

// analyzeTD indexes td and analyzes it with cfg, failing the test on error.
func analyzeTD(t testing.TB, cfg rulefmt.Config, tds ...ptrace.Traces) *report.Report {
	t.Helper()
	idx := newIndex(cfg.IndexOptions())
	for _, td := range tds {
		idx.Add(td)
	}
	r, err := Analyze(asDump(idx), cfg)
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	return r
}

func ptr[T any](v T) *T { return &v }

// near reports whether a non-nil ratio equals want to 4 decimals.
func near(got *float64, want float64) bool {
	if got == nil {
		return false
	}
	d := *got - want
	return d < 5e-5 && d > -5e-5
}

// asDump hands an index built by a test to the exported API, as Load and
// NewDump hand theirs to callers outside analyze.
func asDump(x *index) *Dump { return &Dump{x: x} }
