package telemetry_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// attrCases covers every attribute value type, with the raw pdata value each
// must become.
var attrCases = []struct {
	kv   attribute.KeyValue
	want any
}{
	{attribute.Bool("t.bool", true), true},
	{attribute.Int64("t.int", -42), int64(-42)},
	{attribute.Float64("t.float", 2.5), 2.5},
	{attribute.String("t.string", "hello"), "hello"},
	{attribute.BoolSlice("t.bools", []bool{true, false}), []any{true, false}},
	{attribute.Int64Slice("t.ints", []int64{1, -2}), []any{int64(1), int64(-2)}},
	{attribute.Float64Slice("t.floats", []float64{1.5, -0.25}), []any{1.5, -0.25}},
	{attribute.StringSlice("t.strings", []string{"a", "b"}), []any{"a", "b"}},
	{attribute.ByteSlice("t.bytes", []byte{0, 1, 0xff}), []byte{0, 1, 0xff}},
	{
		attribute.Slice("t.mixed", attribute.StringValue("s"), attribute.Int64Value(3), attribute.Value{}),
		[]any{"s", int64(3), nil},
	},
	{
		attribute.Map("t.map", attribute.String("k", "v"), attribute.Map("inner", attribute.Bool("b", true))),
		map[string]any{"k": "v", "inner": map[string]any{"b": true}},
	},
	{attribute.KeyValue{Key: "t.empty"}, nil},
}

// fixedTime is a start time with nanoseconds, so truncation would show.
var fixedTime = time.Unix(1_700_000_000, 123_456_789)

// recordFixture records a fixed set of spans through real tracer providers:
// two resources, two scopes on the first, every span kind and attribute
// type, events, links, a remote parent with trace state, statuses and span
// limits that drop attributes, events and links.
func recordFixture(t *testing.T) *telemetry.Recorder {
	t.Helper()
	ctx := context.Background()
	rec := telemetry.NewRecorder()
	resA := resource.NewWithAttributes("https://example.com/schemas/1.0",
		attribute.String(spans.ResourceServiceName, "alpha"),
		attribute.Int("res.n", 7),
	)
	resB := resource.NewSchemaless(attribute.String(spans.ResourceServiceName, "beta"))
	tpA := sdktrace.NewTracerProvider(sdktrace.WithResource(resA), sdktrace.WithSpanProcessor(rec))
	tpB := sdktrace.NewTracerProvider(
		sdktrace.WithResource(resB),
		sdktrace.WithSpanProcessor(rec),
		sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{
			AttributeValueLengthLimit:   -1,
			AttributeCountLimit:         1,
			EventCountLimit:             1,
			LinkCountLimit:              1,
			AttributePerEventCountLimit: 1,
			AttributePerLinkCountLimit:  1,
		}),
	)
	t.Cleanup(func() {
		_ = tpA.Shutdown(ctx)
		_ = tpB.Shutdown(ctx)
	})

	one := tpA.Tracer("scope.one",
		trace.WithInstrumentationVersion("1.2.3"),
		trace.WithSchemaURL("https://example.com/schemas/scope"),
		trace.WithInstrumentationAttributes(attribute.String("scope.attr", "x")),
	)
	two := tpA.Tracer("scope.two")
	limited := tpB.Tracer("scope.b")

	ts, err := trace.ParseTraceState("vendor=abc,other=1")
	if err != nil {
		t.Fatalf("trace state: %v", err)
	}
	remoteParent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x0a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		SpanID:     trace.SpanID{0x0b, 1, 2, 3, 4, 5, 6, 7},
		TraceFlags: trace.FlagsSampled,
		TraceState: ts,
		Remote:     true,
	})
	linked := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x0c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		SpanID:     trace.SpanID{0x0d, 1, 2, 3, 4, 5, 6, 7},
		TraceFlags: trace.FlagsSampled,
		Remote:     true,
	})

	kvs := make([]attribute.KeyValue, 0, len(attrCases))
	for _, c := range attrCases {
		kvs = append(kvs, c.kv)
	}

	parentCtx := trace.ContextWithRemoteSpanContext(ctx, remoteParent)
	serverCtx, server := one.Start(parentCtx, "server",
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(fixedTime),
		trace.WithAttributes(kvs...),
	)
	server.AddEvent("ev", trace.WithTimestamp(fixedTime.Add(time.Millisecond)),
		trace.WithAttributes(attribute.Int("ev.n", 1)))
	server.SetStatus(codes.Error, "boom")

	_, client := one.Start(serverCtx, "client",
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(fixedTime.Add(2*time.Millisecond)),
		trace.WithLinks(
			trace.Link{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("link.k", "v")}},
			trace.Link{SpanContext: server.SpanContext()},
		),
	)
	client.SetStatus(codes.Ok, "")
	client.End(trace.WithTimestamp(fixedTime.Add(3 * time.Millisecond)))
	server.End(trace.WithTimestamp(fixedTime.Add(1500 * time.Millisecond)))

	for _, k := range []trace.SpanKind{trace.SpanKindInternal, trace.SpanKindProducer, trace.SpanKindConsumer} {
		_, s := two.Start(ctx, "kind."+k.String(), trace.WithSpanKind(k))
		s.End()
	}

	_, lim := limited.Start(ctx, "limited",
		trace.WithAttributes(attribute.String("a", "1"), attribute.String("b", "2"), attribute.String("c", "3")),
		// The link and event queues evict the oldest entry: the last one stays.
		trace.WithLinks(
			trace.Link{SpanContext: linked},
			trace.Link{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.Int("l1", 1), attribute.Int("l2", 2)}},
		),
	)
	lim.AddEvent("e1", trace.WithAttributes(attribute.Int("x", 1), attribute.Int("y", 2)))
	lim.AddEvent("e2")
	lim.End()
	return rec
}

func TestToTracesGroupsByResourceThenScopeInFirstSeenOrder(t *testing.T) {
	td := recordFixture(t).Traces()

	type group struct {
		service string
		scopes  []string
		spans   [][]string
	}
	var got []group
	for _, rs := range td.ResourceSpans().All() {
		g := group{service: strAttr(rs.Resource().Attributes(), spans.ResourceServiceName)}
		for _, ss := range rs.ScopeSpans().All() {
			g.scopes = append(g.scopes, ss.Scope().Name())
			var names []string
			for _, s := range ss.Spans().All() {
				names = append(names, s.Name())
			}
			g.spans = append(g.spans, names)
		}
		got = append(got, g)
	}
	want := []group{
		{
			service: "alpha",
			scopes:  []string{"scope.one", "scope.two"},
			spans:   [][]string{{"client", "server"}, {"kind.internal", "kind.producer", "kind.consumer"}},
		},
		{service: "beta", scopes: []string{"scope.b"}, spans: [][]string{{"limited"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("grouping:\n got %+v\nwant %+v", got, want)
	}
}

func TestToTracesCopiesResourceAndScope(t *testing.T) {
	all := byName(t, flatten(recordFixture(t).Traces()))

	server := all["server"]
	if got, want := server.Resource.Attributes().AsRaw(), map[string]any{
		spans.ResourceServiceName: "alpha", "res.n": int64(7),
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("resource attributes = %v, want %v", got, want)
	}
	if got, want := server.ResourceURL, "https://example.com/schemas/1.0"; got != want {
		t.Errorf("resource schema URL = %q, want %q", got, want)
	}
	if got, want := server.Scope.Name(), "scope.one"; got != want {
		t.Errorf("scope name = %q, want %q", got, want)
	}
	if got, want := server.Scope.Version(), "1.2.3"; got != want {
		t.Errorf("scope version = %q, want %q", got, want)
	}
	if got, want := server.ScopeURL, "https://example.com/schemas/scope"; got != want {
		t.Errorf("scope schema URL = %q, want %q", got, want)
	}
	if got, want := server.Scope.Attributes().AsRaw(), map[string]any{"scope.attr": "x"}; !reflect.DeepEqual(got, want) {
		t.Errorf("scope attributes = %v, want %v", got, want)
	}
	limited := all["limited"]
	if got := limited.ResourceURL; got != "" {
		t.Errorf("schemaless resource got schema URL %q", got)
	}
	if got := limited.Scope.Version(); got != "" {
		t.Errorf("unversioned scope got version %q", got)
	}
}

func TestToTracesCopiesEveryAttributeType(t *testing.T) {
	server := byName(t, flatten(recordFixture(t).Traces()))["server"].Span
	attrs := server.Attributes()
	if got, want := attrs.Len(), len(attrCases); got != want {
		t.Errorf("attribute count = %d, want %d: %v", got, want, attrs.AsRaw())
	}
	for _, c := range attrCases {
		t.Run(string(c.kv.Key), func(t *testing.T) {
			v, ok := attrs.Get(string(c.kv.Key))
			if !ok {
				t.Fatalf("attribute %q missing", c.kv.Key)
			}
			if got := v.AsRaw(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("value = %#v (%s), want %#v", got, v.Type(), c.want)
			}
		})
	}
}

func TestToTracesCopiesSpanFields(t *testing.T) {
	rec := recordFixture(t)
	all := byName(t, flatten(rec.Traces()))
	sdk := make(map[string]sdktrace.ReadOnlySpan)
	for _, s := range rec.Spans() {
		sdk[s.Name()] = s
	}
	server, client := all["server"].Span, all["client"].Span

	t.Run("ids and parent", func(t *testing.T) {
		sc := sdk["server"].SpanContext()
		if got, want := server.TraceID(), pcommon.TraceID(sc.TraceID()); got != want {
			t.Errorf("trace id = %s, want %s", got, want)
		}
		if got, want := server.TraceID().String(), "0a0102030405060708090a0b0c0d0e0f"; got != want {
			t.Errorf("trace id = %s, want the remote parent's %s", got, want)
		}
		if got, want := server.SpanID(), pcommon.SpanID(sc.SpanID()); got != want {
			t.Errorf("span id = %s, want %s", got, want)
		}
		if got, want := server.ParentSpanID().String(), "0b01020304050607"; got != want {
			t.Errorf("parent span id = %s, want %s", got, want)
		}
		if got, want := client.ParentSpanID(), server.SpanID(); got != want {
			t.Errorf("client parent = %s, want server %s", got, want)
		}
		if got := all["kind.internal"].Span.ParentSpanID(); !got.IsEmpty() {
			t.Errorf("root span has parent id %s", got)
		}
	})

	t.Run("trace state and flags", func(t *testing.T) {
		if got, want := server.TraceState().AsRaw(), "vendor=abc,other=1"; got != want {
			t.Errorf("trace state = %q, want %q", got, want)
		}
		// sampled | has-is-remote | is-remote: the parent came over the wire.
		if got, want := server.Flags(), uint32(0x301); got != want {
			t.Errorf("server flags = %#x, want %#x", got, want)
		}
		// sampled | has-is-remote: the parent is local.
		if got, want := client.Flags(), uint32(0x101); got != want {
			t.Errorf("client flags = %#x, want %#x", got, want)
		}
	})

	t.Run("name kind times", func(t *testing.T) {
		if got, want := server.Kind(), ptrace.SpanKindServer; got != want {
			t.Errorf("server kind = %s, want %s", got, want)
		}
		if got, want := client.Kind(), ptrace.SpanKindClient; got != want {
			t.Errorf("client kind = %s, want %s", got, want)
		}
		for name, want := range map[string]ptrace.SpanKind{
			"kind.internal": ptrace.SpanKindInternal,
			"kind.producer": ptrace.SpanKindProducer,
			"kind.consumer": ptrace.SpanKindConsumer,
		} {
			if got := all[name].Span.Kind(); got != want {
				t.Errorf("%s kind = %s, want %s", name, got, want)
			}
		}
		if got, want := uint64(server.StartTimestamp()), uint64(fixedTime.UnixNano()); got != want {
			t.Errorf("start = %d, want %d", got, want)
		}
		if got, want := uint64(server.EndTimestamp()), uint64(fixedTime.Add(1500*time.Millisecond).UnixNano()); got != want {
			t.Errorf("end = %d, want %d", got, want)
		}
	})

	t.Run("status", func(t *testing.T) {
		if got, want := server.Status().Code(), ptrace.StatusCodeError; got != want {
			t.Errorf("server status = %s, want %s", got, want)
		}
		if got, want := server.Status().Message(), "boom"; got != want {
			t.Errorf("server status message = %q, want %q", got, want)
		}
		if got, want := client.Status().Code(), ptrace.StatusCodeOk; got != want {
			t.Errorf("client status = %s, want %s", got, want)
		}
		if got, want := all["kind.internal"].Span.Status().Code(), ptrace.StatusCodeUnset; got != want {
			t.Errorf("unset status = %s, want %s", got, want)
		}
	})

	t.Run("events", func(t *testing.T) {
		if got := server.Events().Len(); got != 1 {
			t.Fatalf("server events = %d, want 1", got)
		}
		ev := server.Events().At(0)
		if ev.Name() != "ev" {
			t.Errorf("event name = %q, want ev", ev.Name())
		}
		if got, want := uint64(ev.Timestamp()), uint64(fixedTime.Add(time.Millisecond).UnixNano()); got != want {
			t.Errorf("event time = %d, want %d", got, want)
		}
		if got, want := ev.Attributes().AsRaw(), map[string]any{"ev.n": int64(1)}; !reflect.DeepEqual(got, want) {
			t.Errorf("event attributes = %v, want %v", got, want)
		}
	})

	t.Run("links", func(t *testing.T) {
		if got := client.Links().Len(); got != 2 {
			t.Fatalf("client links = %d, want 2", got)
		}
		remote, local := client.Links().At(0), client.Links().At(1)
		if got, want := remote.TraceID().String(), "0c0102030405060708090a0b0c0d0e0f"; got != want {
			t.Errorf("link trace id = %s, want %s", got, want)
		}
		if got, want := remote.SpanID().String(), "0d01020304050607"; got != want {
			t.Errorf("link span id = %s, want %s", got, want)
		}
		if got, want := remote.Flags(), uint32(0x301); got != want {
			t.Errorf("remote link flags = %#x, want %#x", got, want)
		}
		if got, want := remote.Attributes().AsRaw(), map[string]any{"link.k": "v"}; !reflect.DeepEqual(got, want) {
			t.Errorf("link attributes = %v, want %v", got, want)
		}
		if got, want := local.SpanID(), server.SpanID(); got != want {
			t.Errorf("local link span id = %s, want %s", got, want)
		}
		if got, want := local.TraceState().AsRaw(), "vendor=abc,other=1"; got != want {
			t.Errorf("local link trace state = %q, want %q", got, want)
		}
		if got, want := local.Flags(), uint32(0x101); got != want {
			t.Errorf("local link flags = %#x, want %#x", got, want)
		}
	})

	t.Run("dropped counts", func(t *testing.T) {
		lim := all["limited"].Span
		if got := lim.Attributes().Len(); got != 1 {
			t.Errorf("kept attributes = %d, want 1", got)
		}
		if got := lim.DroppedAttributesCount(); got != 2 {
			t.Errorf("dropped attributes = %d, want 2", got)
		}
		if got := lim.DroppedEventsCount(); got != 1 {
			t.Errorf("dropped events = %d, want 1", got)
		}
		if got := lim.DroppedLinksCount(); got != 1 {
			t.Errorf("dropped links = %d, want 1", got)
		}
		if got := lim.Events().Len(); got != 1 {
			t.Fatalf("kept events = %d, want 1", got)
		}
		if got := lim.Events().At(0).Name(); got != "e2" {
			t.Errorf("kept event = %q, want the newest, e2", got)
		}
		if got := lim.Links().Len(); got != 1 {
			t.Fatalf("kept links = %d, want 1", got)
		}
		if got := lim.Links().At(0).DroppedAttributesCount(); got != 1 {
			t.Errorf("dropped link attributes = %d, want 1", got)
		}
		if got := server.DroppedAttributesCount() + server.DroppedEventsCount() + server.DroppedLinksCount(); got != 0 {
			t.Errorf("unlimited span reports %d dropped", got)
		}
	})
}

func TestToTracesEventDroppedAttributes(t *testing.T) {
	rec := telemetry.NewRecorder()
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(rec),
		sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{
			AttributeValueLengthLimit:   -1,
			AttributeCountLimit:         -1,
			EventCountLimit:             -1,
			LinkCountLimit:              -1,
			AttributePerEventCountLimit: 1,
			AttributePerLinkCountLimit:  -1,
		}),
	)
	defer func() { _ = tp.Shutdown(context.Background()) }()
	_, s := tp.Tracer("t").Start(context.Background(), "s")
	s.AddEvent("e", trace.WithAttributes(attribute.Int("x", 1), attribute.Int("y", 2), attribute.Int("z", 3)))
	s.End()

	ev := flatten(rec.Traces())[0].Span.Events().At(0)
	if got := ev.Attributes().Len(); got != 1 {
		t.Errorf("kept event attributes = %d, want 1", got)
	}
	if got := ev.DroppedAttributesCount(); got != 2 {
		t.Errorf("dropped event attributes = %d, want 2", got)
	}
}

func TestToTracesEdgeInputs(t *testing.T) {
	tests := []struct {
		name  string
		input []sdktrace.ReadOnlySpan
	}{
		{"nil slice", nil},
		{"empty slice", []sdktrace.ReadOnlySpan{}},
		{"only nil spans", []sdktrace.ReadOnlySpan{nil, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td := telemetry.ToTraces(tt.input)
			if got := td.ResourceSpans().Len(); got != 0 {
				t.Errorf("resource spans = %d, want 0", got)
			}
			if got := td.SpanCount(); got != 0 {
				t.Errorf("span count = %d, want 0", got)
			}
		})
	}
}

func TestToTracesMatchesTheOTLPExporter(t *testing.T) {
	rec := recordFixture(t)
	sink, srv := newOTLPHTTPSink(t)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatalf("otlptracehttp.New: %v", err)
	}
	if err := exp.ExportSpans(ctx, rec.Spans()); err != nil {
		t.Fatalf("reference export: %v", err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatalf("reference shutdown: %v", err)
	}
	received, _, errs := sink.snapshot()
	if len(errs) > 0 || len(received) != 1 {
		t.Fatalf("reference collector got %d requests, errors %v", len(received), errs)
	}

	// The reference groups resources through a map: put both in one order.
	bySvc := func(a, b ptrace.ResourceSpans) bool {
		return strAttr(a.Resource().Attributes(), spans.ResourceServiceName) <
			strAttr(b.Resource().Attributes(), spans.ResourceServiceName)
	}
	want := received[0]
	want.ResourceSpans().Sort(bySvc)
	got := rec.Traces()
	got.ResourceSpans().Sort(bySvc)
	// The only field the reference leaves out: OTLP's Link.trace_state,
	// which ToTraces carries (asserted in TestToTracesCopiesSpanFields).
	for _, s := range flatten(got) {
		for _, l := range s.Span.Links().All() {
			l.TraceState().FromRaw("")
		}
	}

	var m ptrace.JSONMarshaler
	wantJSON, err := m.MarshalTraces(want)
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, err := m.MarshalTraces(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("ToTraces differs from what the OTLP exporter sends:\n%s", firstDiff(string(gotJSON), string(wantJSON)))
	}
}

// firstDiff shows both strings around their first differing byte.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-80)
	clip := func(s string) string {
		return s[min(from, len(s)):min(i+80, len(s))]
	}
	return fmt.Sprintf("at byte %d:\n got ...%s...\nwant ...%s...", i, clip(got), clip(want))
}
