package ingest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/jaegertest"
)

// servedShape is the workload TestAJaegerDocumentARealJaegerServes sends:
// traces of spans heavy in every part a Jaeger trace repeats, so that
// each trace is megabytes, well above the live heap's noise.
const (
	servedService      = "jaeger-served"
	servedTraces       = 3
	servedSpansATrace  = 1200
	servedSpansARecord = 300
)

// TestAJaegerDocumentARealJaegerServes sends spans heavy in attributes,
// events, links, parents, kinds and statuses to a real Jaeger, fetches
// them back as the /api/traces document jaeger-query serves (and a user
// saves from its UI), and reads that: every span comes back as it was
// sent, and each trace's decode holds within its charge
// (checkJaegerCharge). The other Jaeger tests read documents our own
// writer made; this one reads Jaeger's.
func TestAJaegerDocumentARealJaegerServes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Jaeger: not in -short mode")
	}
	j := jaegertest.Start(t)
	var sent []ptrace.Traces
	for tr := range servedTraces {
		for first := 0; first < servedSpansATrace; first += servedSpansARecord {
			td := servedRecord(tr, first, servedSpansARecord)
			sent = append(sent, td)
			body, err := new(ptrace.JSONMarshaler).MarshalTraces(td)
			if err != nil {
				t.Fatal(err)
			}
			j.SendOTLPJSON(t, body)
		}
	}
	want := canonSpans(sent...)
	j.WaitSpans(t, servedService, len(want))
	doc := j.TracesDocument(t, servedService, len(want))

	_, read, err := readBytes(t, doc, ReadOptions{Format: FormatJaeger})
	if err != nil {
		t.Fatal(err)
	}
	diffCanon(t, canonSpans(read...), want)

	var served struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(doc, &served); err != nil {
		t.Fatal(err)
	}
	if len(served.Data) != servedTraces {
		t.Fatalf("Jaeger served %d traces, want %d", len(served.Data), servedTraces)
	}
	for i, trace := range served.Data {
		t.Run(fmt.Sprintf("the charge of trace %d", i+1), func(t *testing.T) { checkJaegerCharge(t, trace) })
	}
}

// servedRecord is spans first to first+n of trace tr: one resource with
// tags, two scopes, each span a child of the trace's first, with
// attributes of every scalar type, two events with attributes and a link
// to the span before it in another trace.
func servedRecord(tr, first, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	res := rs.Resource().Attributes()
	res.PutStr("service.name", servedService)
	for k := range 8 {
		res.PutStr(fmt.Sprintf("host.tag.%d", k), fmt.Sprintf("value-%d", k))
	}
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(tr) * time.Hour)
	for sc := range 2 {
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(fmt.Sprintf("served.scope.%d", sc))
		ss.Scope().SetVersion("1.2.3")
		for i := first + sc; i < first+n; i += 2 {
			servedSpan(ss.Spans().AppendEmpty(), tr, i, base)
		}
	}
	return td
}

// servedSpan fills sp as span i of trace tr, starting base plus i
// milliseconds, in whole microseconds as Jaeger keeps them.
func servedSpan(sp ptrace.Span, tr, i int, base time.Time) {
	sp.SetTraceID(servedTraceID(tr))
	sp.SetSpanID(servedSpanID(tr, i))
	if i > 0 {
		sp.SetParentSpanID(servedSpanID(tr, 0))
	}
	sp.SetName(fmt.Sprintf("op-%d", i%7))
	sp.SetKind(ptrace.SpanKind(1 + i%5))
	start := base.Add(time.Duration(i) * time.Millisecond)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(250+i) * time.Microsecond)))
	if i%3 == 0 {
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(fmt.Sprintf("failed %d", i))
	}
	attrs := sp.Attributes()
	attrs.PutStr("mcp.method.name", "tools/call")
	attrs.PutStr("gen_ai.tool.name", fmt.Sprintf("tool-%d", i%11))
	attrs.PutInt("mcptrace.attempt", int64(i%4))
	attrs.PutBool("mcptrace.cache_hit", i%2 == 0)
	attrs.PutDouble("served.ratio", float64(i)/8)
	for k := range 6 {
		attrs.PutStr(fmt.Sprintf("served.tag.%d", k), strings.Repeat("x", 8+k))
	}
	for e := range 2 {
		ev := sp.Events().AppendEmpty()
		ev.SetName(fmt.Sprintf("event-%d", e))
		ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(10*(e+1)) * time.Microsecond)))
		ev.Attributes().PutStr("event.detail", fmt.Sprintf("detail %d/%d", i, e))
		ev.Attributes().PutInt("event.index", int64(e))
	}
	if i > 0 {
		ln := sp.Links().AppendEmpty()
		ln.SetTraceID(servedTraceID(tr + 100))
		ln.SetSpanID(servedSpanID(tr+100, i-1))
	}
}

// servedTraceID and servedSpanID are trace tr's id and that of its span
// i (rtTraceID, rtSpanID), apart from those of any other test.
func servedTraceID(tr int) pcommon.TraceID { return rtTraceID(0x5e<<56 | uint64(tr+1)) }

func servedSpanID(tr, i int) pcommon.SpanID { return rtSpanID(uint64(tr+1)<<32 | uint64(i+1)) }
