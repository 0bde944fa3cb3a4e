package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// spanAttrs returns the kept attributes of every distinct span, by span
// name, as key -> value text.
func spanAttrs(x *Index) map[string]map[string]string {
	x.Finish()
	out := map[string]map[string]string{}
	for _, i := range x.Order {
		s := x.Span(i)
		m := map[string]string{}
		for _, a := range x.AttrsOf(s) {
			m[x.Keys[a.Key]] = x.Vals[a.Val]
		}
		out[x.Names[s.Name]] = m
	}
	return out
}

// resAttrs returns the kept resource attributes of the span named name.
func resAttrs(x *Index, name string) map[string]string {
	x.Finish()
	for _, i := range x.Order {
		s := x.Span(i)
		if x.Names[s.Name] != name {
			continue
		}
		r := x.Resources[s.Res]
		m := map[string]string{}
		for _, a := range x.ResAttrs[r.Attrs : r.Attrs+int32(r.N)] {
			m[x.Keys[a.Key]] = x.Vals[a.Val]
		}
		return m
	}
	return nil
}

func TestSpanKeysStayOnSpansAndResourceKeysOnResources(t *testing.T) {
	opts := rulefmt.IndexOptions{SpanAttrs: []string{"db.table", "both"}, ResourceAttrs: []string{"deployment", "both"}}
	var everySpanKey []any
	for i, k := range append(append([]string{}, vocabSpanAttrs...), opts.SpanAttrs...) {
		everySpanKey = append(everySpanKey, k, fmt.Sprintf("v%d", i))
	}
	d := dumptest.New()
	ss := d.Resource(spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, "i-1",
		"deployment", "prod", "both", "on-resource",
		spans.AttrSessionID, "sess-on-resource", "db.table", "t-on-resource")
	d.Add(ss, dumptest.Span{Trace: 1, Name: "every span key", Attrs: everySpanKey})
	d.Add(ss, dumptest.Span{Trace: 1, Name: "resource keys on a span", Attrs: []any{
		spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, "i-1", "deployment", "prod",
	}})
	x := New(opts)
	x.Add(d.Traces())

	got := spanAttrs(x)
	all := got["every span key"]
	if len(all) != len(everySpanKey)/2 {
		t.Errorf("a span carrying every kept span key kept %d of them, want %d: %v", len(all), len(everySpanKey)/2, all)
	}
	for i := 0; i < len(everySpanKey); i += 2 {
		if k := everySpanKey[i].(string); all[k] != everySpanKey[i+1] {
			t.Errorf("span key %s kept as %q, want %q", k, all[k], everySpanKey[i+1])
		}
	}
	if m := got["resource keys on a span"]; len(m) != 0 {
		t.Errorf("resource-only keys on a span were kept on it: %v", m)
	}
	res := resAttrs(x, "every span key")
	want := map[string]string{spans.ResourceServiceName: "gw", spans.ResourceServiceInstanceID: "i-1", "deployment": "prod", "both": "on-resource"}
	if len(res) != len(want) {
		t.Errorf("resource attributes %v, want %v (no span-only key)", res, want)
	}
	for k, v := range want {
		if res[k] != v {
			t.Errorf("resource attribute %s = %q, want %q", k, res[k], v)
		}
	}
}

func TestFastBatchKeepsSpanAndResourceKeysApart(t *testing.T) {
	x := New(rulefmt.IndexOptions{})
	b := &ingest.Batch{
		Resources: []ingest.Resource{{Attrs: 0, N: 2}},
		Attrs: []ingest.Attr{
			{Key: spans.ResourceServiceName, Type: pcommon.ValueTypeStr, Str: "gw"},
			{Key: spans.AttrSessionID, Type: pcommon.ValueTypeStr, Str: "sess-on-resource"},
			{Key: spans.ResourceServiceName, Type: pcommon.ValueTypeStr, Str: "gw-on-span"},
			{Key: spans.AttrSessionID, Type: pcommon.ValueTypeStr, Str: "sess"},
		},
		Spans: []ingest.Span{{TraceID: dumptest.TraceID(1), SpanID: dumptest.SpanID(1), Name: "s", Attrs: 2, N: 2}},
	}
	x.AddFastPart(b, 0, 1)
	if got := spanAttrs(x)["s"]; len(got) != 1 || got[spans.AttrSessionID] != "sess" {
		t.Errorf("span attributes %v, want the session id only", got)
	}
	if got := resAttrs(x, "s"); len(got) != 1 || got[spans.ResourceServiceName] != "gw" {
		t.Errorf("resource attributes %v, want the service name only", got)
	}
}

// manyKeys returns n attribute keys k000, k001, ...
func manyKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%03d", i)
	}
	return keys
}

func TestASpanOrResourceKeepsAtMost255Attributes(t *testing.T) {
	keys := manyKeys(300)
	var kv []any
	var rkv []string
	for i, k := range keys {
		kv = append(kv, k, fmt.Sprint(i))
		rkv = append(rkv, k, fmt.Sprint(i))
	}
	d := dumptest.New()
	d.Add(d.Resource(rkv...), dumptest.Span{Trace: 1, Name: "wide", Attrs: kv})
	d.Add(d.Resource(), dumptest.Span{Trace: 1, Name: "next", Attrs: []any{keys[0], "own"}})
	x := New(rulefmt.IndexOptions{SpanAttrs: keys, ResourceAttrs: keys})
	x.Add(d.Traces())
	got := spanAttrs(x)
	if n := len(got["wide"]); n != 255 {
		t.Errorf("a span with 300 kept keys kept %d, want 255", n)
	}
	if got["wide"][keys[254]] != "254" || got["wide"][keys[255]] != "" {
		t.Errorf("the first 255 keys are kept: k254=%q k255=%q", got["wide"][keys[254]], got["wide"][keys[255]])
	}
	if n := len(resAttrs(x, "wide")); n != 255 {
		t.Errorf("a resource with 300 kept keys kept %d, want 255", n)
	}
	if m := got["next"]; len(m) != 1 || m[keys[0]] != "own" {
		t.Errorf("the span after a full one reads %v, want its own attribute", m)
	}
}

// TestARepeatedKeyKeepsItsFirstValue reads a span and a resource that
// repeat a kept key through each projection decoder into the index (the
// decoder keeps the first of a repeated span key: the index takes a
// batch's span keys as given, each once; the index the first of a
// repeated resource key), and through pdata, whose map keeps both (the
// index keeps the first of each).
func TestARepeatedKeyKeepsItsFirstValue(t *testing.T) {
	line := `{"resourceSpans":[{"resource":{"attributes":[` +
		`{"key":"service.name","value":{"stringValue":"first"}},` +
		`{"key":"service.name","value":{"stringValue":"second"}}]},` +
		`"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","name":"s",` +
		`"attributes":[{"key":"mcp.session.id","value":{"stringValue":"first"}},` +
		`{"key":"mcp.session.id","value":{"stringValue":"second"}}]}]}]}]}`
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	pb, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	if td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().Len() != 2 {
		t.Fatal("pdata dropped the repeated key: the protobuf input would not repeat it")
	}
	pb = append(binary.BigEndian.AppendUint32(nil, uint32(len(pb))), pb...) // one length-prefixed record
	dir := t.TempDir()
	for name, data := range map[string][]byte{"dump.jsonl": []byte(line + "\n"), "dump.pb": pb} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			opts := rulefmt.IndexOptions{}
			x := New(opts)
			in, err := ingest.Read(context.Background(), []string{path}, ingest.ReadOptions{Keep: KeepOf(opts)}, x)
			if err != nil {
				t.Fatal(err)
			}
			if x.FastBatches == 0 {
				t.Fatalf("no projection decoder read %s (%+v)", name, in)
			}
			if got := spanAttrs(x)["s"]; len(got) != 1 || got[spans.AttrSessionID] != "first" {
				t.Errorf("span attributes %v, want the first session id only", got)
			}
			if got := resAttrs(x, "s"); len(got) != 1 || got[spans.ResourceServiceName] != "first" {
				t.Errorf("resource attributes %v, want the first service name only", got)
			}
		})
	}
	t.Run("pdata", func(t *testing.T) { // pdata's map keeps both: the index's own search keeps the first
		x := New(rulefmt.IndexOptions{})
		x.Add(td)
		if got := spanAttrs(x)["s"]; len(got) != 1 || got[spans.AttrSessionID] != "first" {
			t.Errorf("span attributes %v, want the first session id only", got)
		}
		if got := resAttrs(x, "s"); len(got) != 1 || got[spans.ResourceServiceName] != "first" {
			t.Errorf("resource attributes %v, want the first service name only", got)
		}
	})
}

// TestAttributeChunkIsFilledWhileAWidestSpanStillFits pins the attribute
// table's chunking: a span starts in the current chunk while
// maxSpanAttrs still fit in it, and in a new one otherwise, and every span
// reads back its own attributes across the chunk boundary.
func TestAttributeChunkIsFilledWhileAWidestSpanStillFits(t *testing.T) {
	keys := manyKeys(maxSpanAttrs)
	wide := func(tag int) []any {
		kv := make([]any, 0, 2*len(keys))
		for _, k := range keys {
			kv = append(kv, k, fmt.Sprintf("%s-%d", k, tag))
		}
		return kv
	}
	d := dumptest.New()
	ss := d.Resource()
	full := attrChunk / maxSpanAttrs // 257 spans of 255 attributes: 65535
	for i := range full - 1 {
		d.Add(ss, dumptest.Span{Trace: 1, Name: fmt.Sprint(i), Attrs: wide(i)})
	}
	// 256*255 = 65280 used: one attribute more leaves exactly 255.
	d.Add(ss, dumptest.Span{Trace: 1, Name: "one", Attrs: []any{keys[0], "one"}})
	d.Add(ss, dumptest.Span{Trace: 1, Name: "fills", Attrs: wide(-1)})
	d.Add(ss, dumptest.Span{Trace: 1, Name: "next chunk", Attrs: []any{keys[1], "next"}})
	x := New(rulefmt.IndexOptions{SpanAttrs: keys})
	x.Add(d.Traces())
	x.Finish()
	if len(x.attrs) != 2 || len(x.attrs[0]) != attrChunk {
		t.Errorf("attribute chunks %d (first holds %d), want 2 with the first full at %d", len(x.attrs), len(x.attrs[0]), attrChunk)
	}
	got := spanAttrs(x)
	for _, name := range []string{"0", "100", fmt.Sprint(full - 2), "fills"} {
		if m := got[name]; len(m) != maxSpanAttrs {
			t.Errorf("span %s kept %d attributes, want %d", name, len(m), maxSpanAttrs)
		}
	}
	if m := got["fills"]; m[keys[0]] != keys[0]+"--1" || m[keys[254]] != keys[254]+"--1" {
		t.Errorf("the span filling the chunk reads %s=%q %s=%q", keys[0], m[keys[0]], keys[254], m[keys[254]])
	}
	if m := got["100"]; m[keys[7]] != keys[7]+"-100" {
		t.Errorf("span 100 reads %s=%q", keys[7], m[keys[7]])
	}
	if m := got["next chunk"]; len(m) != 1 || m[keys[1]] != "next" {
		t.Errorf("the span in the next chunk reads %v, want its own one attribute", m)
	}
	if m := got["one"]; len(m) != 1 || m[keys[0]] != "one" {
		t.Errorf("span one reads %v", m)
	}
}

// TestAKeptKeyIsFoundWhereverItsBytesLie pins that a kept key is found by
// its text: a pdata reader hands the index keys it allocated, never the
// keep set's own strings, which matchKey recognises first by their place.
func TestAKeptKeyIsFoundWhereverItsBytesLie(t *testing.T) {
	d := dumptest.New()
	d.Add(d.Resource(strings.Clone(spans.ResourceServiceName), "svc"),
		dumptest.Span{Trace: 1, Name: "s", Attrs: []any{strings.Clone(spans.AttrSessionID), "sid"}})
	x := New(rulefmt.IndexOptions{})
	x.Add(d.Traces())
	if got := spanAttrs(x)["s"]; got[spans.AttrSessionID] != "sid" {
		t.Errorf("span attributes %v, want the session id kept", got)
	}
	if got := resAttrs(x, "s"); got[spans.ResourceServiceName] != "svc" {
		t.Errorf("resource attributes %v, want the service name kept", got)
	}
}
