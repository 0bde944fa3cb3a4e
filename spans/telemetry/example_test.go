package telemetry_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// Setup with the file exporter writes an OTLP JSON-lines dump, the same
// format as the Collector's file exporter, that any OTLP tool can read back.
func ExampleSetup() {
	dir, err := os.MkdirTemp("", "mcptrace-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "traces.jsonl")

	ctx := context.Background()
	tel, err := telemetry.Setup(ctx, telemetry.Config{
		ServiceName: "gateway",
		Exporter:    telemetry.ExporterFile,
		FilePath:    path,
	})
	if err != nil {
		log.Fatal(err)
	}
	_, span := tel.Tracer().Start(ctx, spans.SpanInvoke)
	span.SetAttributes(attribute.String(spans.AttrToolName, "list_logs"))
	span.End()
	if err := tel.Shutdown(ctx); err != nil { // flushes and closes the dump
		log.Fatal(err)
	}

	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	var u ptrace.JSONUnmarshaler
	for sc.Scan() {
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			log.Fatal(err)
		}
		rs := td.ResourceSpans().At(0)
		service, _ := rs.Resource().Attributes().Get(spans.ResourceServiceName)
		s := rs.ScopeSpans().At(0).Spans().At(0)
		tool, _ := s.Attributes().Get(spans.AttrToolName)
		fmt.Printf("%s: %s %s=%s\n", service.Str(), s.Name(), spans.AttrToolName, tool.Str())
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// gateway: plugin.mcp.invoke mcp.tool.name=list_logs
}

// A Recorder collects spans in memory as they end, for assertions in tests.
func ExampleRecorder() {
	rec := telemetry.NewRecorder()
	ctx := context.Background()
	tel, err := telemetry.Setup(ctx, telemetry.Config{SpanProcessors: []sdktrace.SpanProcessor{rec}})
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(ctx) }()

	_, span := tel.Tracer().Start(ctx, spans.SpanAcquire)
	span.SetAttributes(attribute.Bool(spans.AttrCacheHit, false))
	span.End()

	for _, s := range rec.Spans() {
		for _, kv := range s.Attributes() {
			fmt.Printf("%s %s=%s\n", s.Name(), kv.Key, kv.Value.String())
		}
	}
	fmt.Println("spans in OTLP form:", rec.Traces().SpanCount())
	// Output:
	// plugin.mcp.connection.acquire plugin.mcp.cache_hit=false
	// spans in OTLP form: 1
}
