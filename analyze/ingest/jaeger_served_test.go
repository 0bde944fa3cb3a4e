package ingest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	sent := map[pcommon.SpanID]string{}
	for tr := range servedTraces {
		for first := 0; first < servedSpansATrace; first += servedSpansARecord {
			td := servedRecord(tr, first, servedSpansARecord)
			describeAll(td, sent)
			body, err := new(ptrace.JSONMarshaler).MarshalTraces(td)
			if err != nil {
				t.Fatal(err)
			}
			j.SendOTLPJSON(t, body)
		}
	}
	j.WaitSpans(t, servedService, len(sent))
	doc := j.TracesDocument(t, servedService, len(sent))

	path := filepath.Join(t.TempDir(), "served.json")
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	read := map[pcommon.SpanID]string{}
	_, err := Read(context.Background(), []string{path}, ReadOptions{Format: FormatJaeger}, SinkFunc(func(_ *Input, td ptrace.Traces) error {
		describeAll(td, read)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(read) != len(sent) {
		t.Errorf("read %d spans of the %d sent", len(read), len(sent))
	}
	differ := 0
	for id, want := range sent {
		if got := read[id]; got != want && differ < 3 {
			differ++
			t.Errorf("span %s read as\n%s\nsent as\n%s", id, got, want)
		}
	}

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

func servedTraceID(tr int) pcommon.TraceID {
	var id pcommon.TraceID
	id[0] = 0x5e
	binary.BigEndian.PutUint64(id[8:], uint64(tr+1))
	return id
}

func servedSpanID(tr, i int) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint32(id[:4], uint32(tr+1))
	binary.BigEndian.PutUint32(id[4:], uint32(i+1))
	return id
}

// describeAll files a description of each span of td under its id: every
// part of it Jaeger's document can carry, attributes sorted (Jaeger's
// order is its own).
func describeAll(td ptrace.Traces, into map[pcommon.SpanID]string) {
	for _, rs := range td.ResourceSpans().All() {
		res := sortedAttrs(rs.Resource().Attributes())
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				var b strings.Builder
				fmt.Fprintf(&b, "resource %s\nscope %s %s\n", res, ss.Scope().Name(), ss.Scope().Version())
				fmt.Fprintf(&b, "trace %s parent %s name %q kind %s %d..%d status %s %q\n", sp.TraceID(), sp.ParentSpanID(), sp.Name(), sp.Kind(),
					sp.StartTimestamp(), sp.EndTimestamp(), sp.Status().Code(), sp.Status().Message())
				fmt.Fprintf(&b, "attributes %s\n", sortedAttrs(sp.Attributes()))
				for _, ev := range sp.Events().All() {
					fmt.Fprintf(&b, "event %q at %d %s\n", ev.Name(), ev.Timestamp(), sortedAttrs(ev.Attributes()))
				}
				for _, ln := range sp.Links().All() {
					fmt.Fprintf(&b, "link %s %s\n", ln.TraceID(), ln.SpanID())
				}
				into[sp.SpanID()] = b.String()
			}
		}
	}
}

// sortedAttrs is m as key=type:value, sorted by key.
func sortedAttrs(m pcommon.Map) string {
	var kv []string
	for k, v := range m.All() {
		kv = append(kv, fmt.Sprintf("%s=%s:%s", k, v.Type(), v.AsString()))
	}
	slices.Sort(kv)
	return strings.Join(kv, " ")
}
