package ingest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrace/mcptrace/spans"
)

// sdkExport returns the request bodies the OpenTelemetry Go SDK's OTLP
// HTTP exporter sends for a few spans of the pool's vocabulary: protobuf
// as Go's protobuf marshals it, written by code this project did not
// write, caught by a loopback receiver.
func sdkExport(t *testing.T) [][]byte {
	t.Helper()
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			t.Errorf("read the export: %v", err)
		}
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp)) // one request for every span, at Shutdown
	tr := tp.Tracer("github.com/mcptrace/mcptrace/pool")
	ctx, root := tr.Start(ctx, "executor.execute")
	for k, hit := range []bool{false, true, true} {
		ictx, inv := tr.Start(ctx, "plugin.mcp.invoke", trace.WithAttributes(attribute.String("mcp.tool.name", "list_logs")))
		_, acq := tr.Start(ictx, spans.SpanAcquire, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.Bool(spans.AttrCacheHit, hit), attribute.String(spans.AttrCacheKey, "k1"), attribute.Int(spans.AttrAttempt, 1)))
		if k == 2 {
			acq.SetStatus(codes.Error, "boom")
		}
		acq.End()
		inv.End()
	}
	root.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) == 0 {
		t.Fatal("the exporter sent nothing")
	}
	return bodies
}

// TestSpanInOrderReadsTheGoSDKsExports pins the ascending layout against
// the exporter that writes it: every span the SDK sent is read in order,
// none by the loop, and the record reads as pdata reads it.
func TestSpanInOrderReadsTheGoSDKsExports(t *testing.T) {
	for _, body := range sdkExport(t) {
		d := testProtoDec(t)
		if !d.request(body) {
			t.Fatalf("the projection gave up the SDK's export: % x", body)
		}
		if d.inOrderMisses != 0 || d.inOrderTries != len(d.out.Spans) || len(d.out.Spans) == 0 {
			t.Errorf("%d spans, %d read in order, %d not: want every one in order", len(d.out.Spans), d.inOrderTries-d.inOrderMisses, d.inOrderMisses)
		}
		if !checkFastProtoMatchesPdata(t, body) {
			t.Errorf("the projection fell back on the SDK's export")
		}
	}
}
