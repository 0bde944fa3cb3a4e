package fuzz

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// Building blocks of the families: pool spans built with pdata, encoded by
// tracegen's writers, then damaged as bytes.

// builder makes pool spans from one seeded source of randomness.
type builder struct {
	rng *rand.Rand
	td  ptrace.Traces
}

func newBuilder(rng *rand.Rand) *builder { return &builder{rng: rng, td: ptrace.NewTraces()} }

// scope returns a new resource's span slice, named service / instance.
func (b *builder) scope(service, instance string) ptrace.SpanSlice {
	rs := b.td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(spans.ResourceServiceName, service)
	if instance != "" {
		rs.Resource().Attributes().PutStr(spans.ResourceServiceInstanceID, instance)
	}
	sc := rs.ScopeSpans().AppendEmpty()
	sc.Scope().SetName(spans.ScopeName)
	return sc.Spans()
}

func (b *builder) traceID() pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], b.rng.Uint64()|1)
	binary.BigEndian.PutUint64(id[8:], b.rng.Uint64())
	return id
}

func (b *builder) spanID() pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], b.rng.Uint64()|1)
	return id
}

func (b *builder) span(ss ptrace.SpanSlice, tid pcommon.TraceID, parent pcommon.SpanID, name string, start time.Time, d time.Duration) ptrace.Span {
	sp := ss.AppendEmpty()
	sp.SetTraceID(tid)
	sp.SetSpanID(b.spanID())
	sp.SetParentSpanID(parent)
	sp.SetName(name)
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(d)))
	return sp
}

// invocation appends one invocation (invoke, acquire, a handshake on a
// miss, call_tool) of a new trace to ss, starting at start.
func (b *builder) invocation(ss ptrace.SpanSlice, start time.Time, key, session, tool string, hit bool) pcommon.TraceID {
	tid := b.traceID()
	inv := b.span(ss, tid, pcommon.NewSpanIDEmpty(), spans.SpanInvoke, start, 40*time.Millisecond)
	inv.Attributes().PutStr(spans.AttrToolName, tool)
	acq := b.span(ss, tid, inv.SpanID(), spans.SpanAcquire, start.Add(time.Millisecond), 10*time.Millisecond)
	acq.Attributes().PutBool(spans.AttrCacheHit, hit)
	acq.Attributes().PutStr(spans.AttrCacheKey, key)
	if !hit {
		acq.Attributes().PutStr(spans.AttrMissReason, spans.MissCold)
		hs := b.span(ss, tid, acq.SpanID(), spans.SpanHandshake, start.Add(2*time.Millisecond), 8*time.Millisecond)
		hs.Attributes().PutStr(spans.AttrSessionID, session)
	}
	call := b.span(ss, tid, inv.SpanID(), spans.SpanCallTool, start.Add(12*time.Millisecond), 20*time.Millisecond)
	call.Attributes().PutStr(spans.AttrToolName, tool)
	call.Attributes().PutStr(spans.AttrSessionID, session)
	call.Attributes().PutStr(spans.AttrMethodName, "tools/call")
	return tid
}

// scenario returns one of tracegen's scenarios, picked by rng.
func scenario(rng *rand.Rand) (string, ptrace.Traces) {
	all := tracegen.Scenarios()
	s := all[rng.IntN(len(all))]
	return s.Name, s.Build()
}

// encodings the families write, uncompressed; compression is added after
// the bytes are damaged.
var encodings = []struct {
	name, ext string
	write     tracegen.WriteFunc
}{
	{"otlp-jsonl", "otlp.jsonl", tracegen.WriteOTLPJSONLines},
	{"otlp-json", "otlp.json", tracegen.WriteOTLPJSON},
	{"otlp-proto", "otlp.pb", tracegen.WriteOTLPProto},
	{"jaeger", "jaeger.json", tracegen.WriteJaeger},
	{"tempo", "tempo.json", tracegen.WriteTempoBatches},
	{"tempo-v2", "tempo-v2.json", tracegen.WriteTempoTrace},
}

// encodingByName returns the index of the encoding called name.
func encodingByName(name string) int {
	for i, e := range encodings {
		if e.name == name {
			return i
		}
	}
	panic("fuzz: no encoding " + name)
}

// encode writes td in encoding i.
func encode(i int, td ptrace.Traces) []byte {
	var buf bytes.Buffer
	if err := encodings[i].write(&buf, td); err != nil {
		panic(fmt.Sprintf("fuzz: encode %s: %v", encodings[i].name, err))
	}
	return buf.Bytes()
}

// gz returns data in one gzip stream at the best ratio.
func gz(data []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

// zst returns data in one zstd frame at the best ratio.
func zst(data []byte) []byte {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		panic(fmt.Sprintf("fuzz: zstd encoder: %v", err))
	}
	defer enc.Close()
	return enc.EncodeAll(data, nil)
}

// forEachString calls f on every string of td a dump carries: resource and
// span attribute values, span names other than the pool's own, scope
// names, event names and status messages; f returns the new value.
func forEachString(td ptrace.Traces, f func(string) string) {
	attrs := func(m pcommon.Map) {
		m.Range(func(k string, v pcommon.Value) bool {
			// The method name says which spans are tool calls: kept, so
			// the session rules still judge them.
			if v.Type() == pcommon.ValueTypeStr && k != spans.AttrMethodName {
				v.SetStr(f(v.Str()))
			}
			return true
		})
	}
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		attrs(rs.Resource().Attributes())
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			sc := rs.ScopeSpans().At(j)
			for k := 0; k < sc.Spans().Len(); k++ {
				sp := sc.Spans().At(k)
				attrs(sp.Attributes())
				if !isPoolName(sp.Name()) {
					sp.SetName(f(sp.Name()))
				}
				if sp.Status().Code() == ptrace.StatusCodeError {
					sp.Status().SetMessage(f(sp.Status().Message()))
				}
				for e := 0; e < sp.Events().Len(); e++ {
					sp.Events().At(e).SetName(f(sp.Events().At(e).Name()))
				}
			}
		}
	}
}

// isPoolName says whether name is one of the pool's span names, which the
// families keep so the rules still find the pool's spans.
func isPoolName(name string) bool {
	switch name {
	case spans.SpanInvoke, spans.SpanAcquire, spans.SpanHandshake, spans.SpanCallTool:
		return true
	}
	return false
}

// logSize returns a size in [1, max], log-uniform, so small and large
// sizes are tried about as often.
func logSize(rng *rand.Rand, max int) int {
	if max <= 1 {
		return 1
	}
	bits := 0
	for m := max; m > 0; m >>= 1 {
		bits++
	}
	n := 1 << rng.IntN(bits)
	n += rng.IntN(n)
	return min(n, max)
}
