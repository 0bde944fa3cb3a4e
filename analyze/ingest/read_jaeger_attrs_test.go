package ingest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// attrCase is one attribute of a test span, as a Jaeger tag and as an OTLP
// JSON key-value.
type attrCase struct {
	key string
	v   any // string, bool, int64 or float64
}

func (a attrCase) jaeger() map[string]any {
	typ := map[string]string{"string": "string", "bool": "bool", "int64": "int64", "float64": "float64"}[fmt.Sprintf("%T", a.v)]
	return map[string]any{"key": a.key, "type": typ, "value": a.v}
}

func (a attrCase) otlp() map[string]any {
	var v map[string]any
	switch x := a.v.(type) {
	case string:
		v = map[string]any{"stringValue": x}
	case bool:
		v = map[string]any{"boolValue": x}
	case int64:
		v = map[string]any{"intValue": fmt.Sprint(x)}
	case float64:
		v = map[string]any{"doubleValue": x}
	}
	return map[string]any{"key": a.key, "value": v}
}

// attrsWithRepeats is n attributes of distinct keys of every type, with
// the key "dup" repeated at the start, in the middle and at the end, each
// time with another value.
func attrsWithRepeats(n int) []attrCase {
	out := []attrCase{{"dup", "first"}}
	for i := range n {
		var v any
		switch i % 4 {
		case 0:
			v = fmt.Sprintf("s%d", i)
		case 1:
			v = i%8 == 1
		case 2:
			v = int64(i)
		default:
			v = float64(i) + 0.5
		}
		out = append(out, attrCase{fmt.Sprintf("k%03d", i), v})
		if i == n/2 {
			out = append(out, attrCase{"dup", true}, attrCase{fmt.Sprintf("k%03d", i), "again"})
		}
	}
	return append(out, attrCase{"dup", int64(3)})
}

// sameSpanDocs is one span with attrs as its tags, as its process's tags
// and as its log's fields, as a Jaeger document and as an OTLP JSON
// document.
func sameSpanDocs(attrs []attrCase) (jaegerDoc, otlpDoc []byte) {
	var jt, ot []map[string]any
	for _, a := range attrs {
		jt, ot = append(jt, a.jaeger()), append(ot, a.otlp())
	}
	tid, sid := "0000000000000000000000000000abcd", "00000000000000f1"
	fields := append([]map[string]any{{"key": "event", "type": "string", "value": "ev"}}, jt...)
	j := map[string]any{"data": []any{map[string]any{"traceID": tid, "processes": map[string]any{"p": map[string]any{"serviceName": "gw", "tags": jt}},
		"spans": []any{map[string]any{"traceID": tid, "spanID": sid, "operationName": "x", "startTime": 1777539600000000, "duration": 5,
			"tags": jt, "processID": "p", "logs": []any{map[string]any{"timestamp": 1777539600000001, "fields": fields}}}}}}}
	res := append([]map[string]any{attrCase{"service.name", "gw"}.otlp()}, ot...)
	o := map[string]any{"resourceSpans": []any{map[string]any{"resource": map[string]any{"attributes": res},
		"scopeSpans": []any{map[string]any{"spans": []any{map[string]any{"traceId": tid, "spanId": sid, "name": "x",
			"startTimeUnixNano": "1777539600000000000", "endTimeUnixNano": "1777539600005000000", "attributes": ot,
			"events": []any{map[string]any{"timeUnixNano": "1777539600001000000", "name": "ev", "attributes": ot}}}}}}}}}
	jb, _ := json.Marshal(j)
	ob, _ := json.Marshal(o)
	return jb, ob
}

// firstOfEach renders a map as an index reads it: the first of a repeated
// key, in the order of the keys' first appearance.
func firstOfEach(m pcommon.Map) string {
	seen := map[string]bool{}
	var kv []string
	for k, v := range m.All() {
		if !seen[k] {
			seen[k] = true
			kv = append(kv, fmt.Sprintf("%s=%s:%s", k, v.Type(), v.AsString()))
		}
	}
	return strings.Join(kv, ",")
}

// spanMaps renders the resource, span and event attributes of the one
// span of batches.
func spanMaps(t *testing.T, batches []ptrace.Traces) []string {
	t.Helper()
	if len(batches) != 1 || batches[0].SpanCount() != 1 {
		t.Fatalf("%d batches, want one of one span", len(batches))
	}
	rs := batches[0].ResourceSpans().At(0)
	sp := rs.ScopeSpans().At(0).Spans().At(0)
	return []string{firstOfEach(rs.Resource().Attributes()), firstOfEach(sp.Attributes()), sp.Events().At(0).Name() + " " + firstOfEach(sp.Events().At(0).Attributes())}
}

// TestJaegerKeepsTheFirstOfARepeatedKeyAsOTLPDoes pins one rule for a
// repeated attribute key in every reader: the first wins (Batch.newAttr).
// The same span, its process and its log read from Jaeger JSON give the
// attributes OTLP JSON gives, in the same order, for few tags (put one by
// one) and many (past jaegerFewAttrs, built without a search per key).
func TestJaegerKeepsTheFirstOfARepeatedKeyAsOTLPDoes(t *testing.T) {
	for _, n := range []int{1, 4, jaegerFewAttrs - 4, jaegerFewAttrs - 3, jaegerFewAttrs - 2, 200} {
		t.Run(fmt.Sprintf("%d distinct keys", n+1), func(t *testing.T) {
			jd, od := sameSpanDocs(attrsWithRepeats(n))
			_, jb, err := readBytes(t, jd, ReadOptions{Strict: true, Format: FormatJaeger})
			if err != nil {
				t.Fatal(err)
			}
			_, ob, err := readBytes(t, od, ReadOptions{Strict: true, Format: FormatOTLPJSON})
			if err != nil {
				t.Fatal(err)
			}
			got, want := spanMaps(t, jb), spanMaps(t, ob)
			for i, what := range []string{"resource", "span", "event"} {
				if got[i] != want[i] {
					t.Errorf("%s attributes from Jaeger:\n%s\nfrom OTLP JSON:\n%s", what, got[i], want[i])
				}
			}
			if !strings.Contains(got[1], "dup=Str:first") {
				t.Errorf("span attributes %s, want dup=first", got[1])
			}
		})
	}
}

// BenchmarkJaegerSpanWithManyTags reads one Jaeger span of n distinct tags
// (with its process and log the same): the time per op at 4n should be
// about 4 times that at n, as for OTLP JSON.
func BenchmarkJaegerSpanWithManyTags(b *testing.B) {
	for _, n := range []int{10000, 40000} {
		jd, _ := sameSpanDocs(attrsWithRepeats(n))
		b.Run(fmt.Sprintf("tags=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(jd)))
			for b.Loop() {
				if _, _, err := readBytes(b, jd, ReadOptions{Strict: true, Format: FormatJaeger}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestJaegerReadsTheFirstOfARepeatedSpecialTag pins the first-wins rule
// of a repeated key for the tags that become span fields (span.kind,
// otel.status_code, otel.status_description) and for error: the first tag
// of the key decides, as for any attribute, and its repeats are dropped.
// A first value that names no kind or status stays an attribute, as it
// would alone, and a later valid one does not override it.
func TestJaegerReadsTheFirstOfARepeatedSpecialTag(t *testing.T) {
	kind, code, desc, errTag := "span.kind", "otel.status_code", "otel.status_description", "error"
	for _, tc := range []struct {
		name string
		tags []attrCase
		want string
	}{
		{"each once", []attrCase{{kind, "client"}, {code, "ERROR"}, {desc, "boom"}}, "kind=Client status=Error msg=boom attrs={}"},
		{"span.kind twice", []attrCase{{kind, "server"}, {kind, "client"}}, "kind=Server status=Unset msg= attrs={}"},
		{"a span.kind naming none, then one", []attrCase{{kind, "sideways"}, {kind, "client"}}, "kind=Unspecified status=Unset msg= attrs={span.kind=Str:sideways}"},
		{"otel.status_code twice", []attrCase{{code, "ERROR"}, {code, "OK"}}, "kind=Unspecified status=Error msg= attrs={}"},
		{"an otel.status_code naming none, then one", []attrCase{{code, "bogus"}, {code, "OK"}}, "kind=Unspecified status=Unset msg= attrs={otel.status_code=Str:bogus}"},
		{"an otel.status_code, then one naming none", []attrCase{{code, "ERROR"}, {code, "bogus"}}, "kind=Unspecified status=Error msg= attrs={}"},
		{"otel.status_description twice", []attrCase{{code, "ERROR"}, {desc, "first"}, {desc, "second"}}, "kind=Unspecified status=Error msg=first attrs={}"},
		{"error twice", []attrCase{{errTag, true}, {errTag, true}}, "kind=Unspecified status=Error msg= attrs={}"},
		{"error false, then true", []attrCase{{errTag, false}, {errTag, true}}, "kind=Unspecified status=Unset msg= attrs={error=Bool:false}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jd, _ := sameSpanDocs(tc.tags)
			_, batches, err := readBytes(t, jd, ReadOptions{Strict: true, Format: FormatJaeger})
			if err != nil {
				t.Fatal(err)
			}
			spanMaps(t, batches) // one span
			sp := batches[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
			got := fmt.Sprintf("kind=%s status=%s msg=%s attrs=%s", sp.Kind(), sp.Status().Code(), sp.Status().Message(), canonMap(sp.Attributes()))
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
