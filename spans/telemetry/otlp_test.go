package telemetry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

func TestNewOTLPTraceExporterResolvesTheEndpoint(t *testing.T) {
	tests := []struct {
		name     string
		cfg      telemetry.OTLPTraceConfig
		env      map[string]string
		wantURL  string
		wantProt string
	}{
		{
			name:    "a base endpoint gets /v1/traces for http/protobuf",
			cfg:     telemetry.OTLPTraceConfig{Endpoint: "http://127.0.0.1:4318"},
			wantURL: "http://127.0.0.1:4318/v1/traces", wantProt: telemetry.ProtocolHTTPProtobuf,
		},
		{
			name:    "a base path is kept, a trailing slash is not doubled",
			cfg:     telemetry.OTLPTraceConfig{Endpoint: "https://collector.example:443/otlp/"},
			wantURL: "https://collector.example:443/otlp/v1/traces", wantProt: telemetry.ProtocolHTTPProtobuf,
		},
		{
			name:    "grpc takes the endpoint as it is",
			cfg:     telemetry.OTLPTraceConfig{Endpoint: "http://127.0.0.1:4317", Protocol: telemetry.ProtocolGRPC},
			wantURL: "http://127.0.0.1:4317", wantProt: telemetry.ProtocolGRPC,
		},
		{
			name:    "the generic variable is a base URL",
			env:     map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
			wantURL: "http://127.0.0.1:4318/v1/traces", wantProt: telemetry.ProtocolHTTPProtobuf,
		},
		{
			name: "the traces variable is used as is and wins over the generic one",
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://127.0.0.1:1",
				"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/custom/traces",
			},
			wantURL: "http://127.0.0.1:4318/custom/traces", wantProt: telemetry.ProtocolHTTPProtobuf,
		},
		{
			name:    "the explicit endpoint wins over the environment",
			cfg:     telemetry.OTLPTraceConfig{Endpoint: "http://127.0.0.1:9999"},
			env:     map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"},
			wantURL: "http://127.0.0.1:9999/v1/traces", wantProt: telemetry.ProtocolHTTPProtobuf,
		},
		{
			name:    "the protocol comes from the environment, per signal first",
			cfg:     telemetry.OTLPTraceConfig{Endpoint: "http://127.0.0.1:4317"},
			env:     map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"},
			wantURL: "http://127.0.0.1:4317", wantProt: telemetry.ProtocolGRPC,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if !telemetry.OTLPTraceConfigured(tt.cfg) {
				t.Fatalf("OTLPTraceConfigured = false, want true")
			}
			exp, err := telemetry.NewOTLPTraceExporter(context.Background(), tt.cfg)
			if err != nil {
				t.Fatalf("NewOTLPTraceExporter: %v", err)
			}
			defer func() { _ = exp.Shutdown(context.Background()) }()
			if exp.URL() != tt.wantURL || exp.Protocol() != tt.wantProt {
				t.Errorf("URL, protocol = %q, %q; want %q, %q", exp.URL(), exp.Protocol(), tt.wantURL, tt.wantProt)
			}
		})
	}
}

func TestNewOTLPTraceExporterRejectsBadConfiguration(t *testing.T) {
	tests := []struct {
		name    string
		cfg     telemetry.OTLPTraceConfig
		env     map[string]string
		wantIn  []string
		wantNot string
		nowhere bool
	}{
		{name: "no endpoint anywhere", nowhere: true, wantIn: []string{"OTEL_EXPORTER_OTLP_ENDPOINT"}},
		{name: "no scheme", cfg: telemetry.OTLPTraceConfig{Endpoint: "127.0.0.1:4318", EndpointName: "--otlp-endpoint"}, wantIn: []string{"--otlp-endpoint", "http://"}},
		{name: "another scheme", cfg: telemetry.OTLPTraceConfig{Endpoint: "ftp://127.0.0.1:4318", EndpointName: "--otlp-endpoint"}, wantIn: []string{"--otlp-endpoint", "ftp://127.0.0.1:4318"}},
		{name: "no port", cfg: telemetry.OTLPTraceConfig{Endpoint: "http://127.0.0.1"}, wantIn: []string{"Endpoint", "no port"}},
		{name: "a bad variable is named", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "localhost"}, wantIn: []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"}},
		{name: "an unknown protocol", cfg: telemetry.OTLPTraceConfig{Endpoint: "http://127.0.0.1:4318", Protocol: "http/json"}, wantIn: []string{`"http/json"`}},
		{name: "an unknown protocol variable is named", cfg: telemetry.OTLPTraceConfig{Endpoint: "http://127.0.0.1:4318"}, env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}, wantIn: []string{"OTEL_EXPORTER_OTLP_PROTOCOL"}},
		{name: "credentials in the URL are refused and never echoed", cfg: telemetry.OTLPTraceConfig{Endpoint: "http://user:s3cr3t@127.0.0.1:4318"}, wantIn: []string{"OTEL_EXPORTER_OTLP_HEADERS"}, wantNot: "s3cr3t"},
		{name: "a malformed URL with a secret is not echoed", cfg: telemetry.OTLPTraceConfig{Endpoint: "http://user:s3cr3t@127.0.0.1:43 18"}, wantIn: []string{"not a URL"}, wantNot: "s3cr3t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if got := telemetry.OTLPTraceConfigured(tt.cfg); got == tt.nowhere {
				t.Errorf("OTLPTraceConfigured = %v, want %v", got, !tt.nowhere)
			}
			exp, err := telemetry.NewOTLPTraceExporter(context.Background(), tt.cfg)
			if err == nil {
				_ = exp.Shutdown(context.Background())
				t.Fatalf("NewOTLPTraceExporter succeeded, want an error")
			}
			if !errors.Is(err, telemetry.ErrInvalidConfig) {
				t.Errorf("error %v does not wrap ErrInvalidConfig", err)
			}
			for _, w := range tt.wantIn {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if tt.wantNot != "" && strings.Contains(err.Error(), tt.wantNot) {
				t.Errorf("error %q leaks %q", err, tt.wantNot)
			}
		})
	}
}

// exportOne ends one invoke span on a tracer provider synced to exp, so
// the export happens before it returns.
func exportOne(t *testing.T, exp sdktrace.SpanExporter) {
	t.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	_, s := tp.Tracer(spans.ScopeName).Start(context.Background(), spans.SpanInvoke)
	s.End()
	// Shutting the provider down shuts exp down too; the tests read its
	// tally afterwards, which Shutdown keeps.
	if err := tp.Shutdown(context.Background()); err != nil && !errors.Is(err, telemetry.ErrOTLPExport) {
		t.Fatalf("tracer provider shutdown: %v", err)
	}
}

func TestOTLPTraceExporterCountsWhatTheReceiverAccepted(t *testing.T) {
	for _, protocol := range []string{telemetry.ProtocolHTTPProtobuf, telemetry.ProtocolGRPC} {
		t.Run(protocol, func(t *testing.T) {
			clearEnv(t)
			var sink *otlpSink
			var endpoint string
			if protocol == telemetry.ProtocolGRPC {
				var addr string
				sink, addr = newOTLPGRPCSink(t)
				endpoint = "http://" + addr
			} else {
				var srv *httptest.Server
				sink, srv = newOTLPHTTPSink(t)
				endpoint = srv.URL
			}
			exp, err := telemetry.NewOTLPTraceExporter(context.Background(), telemetry.OTLPTraceConfig{Endpoint: endpoint, Protocol: protocol})
			if err != nil {
				t.Fatal(err)
			}
			exportOne(t, exp)
			got, _, errs := sink.snapshot()
			if len(errs) != 0 {
				t.Fatalf("receiver errors: %v", errs)
			}
			names := byName(t, flatten(got...))
			if _, ok := names[spans.SpanInvoke]; !ok || len(names) != 1 {
				t.Errorf("receiver got %v, want one %s span", names, spans.SpanInvoke)
			}
			if exp.Sent() != 1 || exp.Err() != nil {
				t.Errorf("Sent, Err = %d, %v; want 1, nil", exp.Sent(), exp.Err())
			}
		})
	}
}

func TestOTLPTraceExporterStopsAtTheFirstFailure(t *testing.T) {
	clearEnv(t)
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "no such tenant", http.StatusBadRequest) // not retryable
	}))
	defer srv.Close()
	var calls atomic.Int64
	var first error
	exp, err := telemetry.NewOTLPTraceExporter(context.Background(), telemetry.OTLPTraceConfig{
		Endpoint: srv.URL,
		OnError: func(err error) {
			if calls.Add(1) == 1 {
				first = err
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = exp.Shutdown(context.Background()) }()
	batch := []sdktrace.ReadOnlySpan{tracetest.SpanStub{Name: spans.SpanInvoke}.Snapshot()}
	if err := exp.ExportSpans(context.Background(), batch); !errors.Is(err, telemetry.ErrOTLPExport) {
		t.Errorf("ExportSpans to a receiver answering 400 = %v, want ErrOTLPExport", err)
	}
	if err := exp.ExportSpans(context.Background(), batch); !errors.Is(err, telemetry.ErrOTLPExport) {
		t.Errorf("ExportSpans after a failure = %v, want the first failure again", err)
	}
	err = exp.Err()
	if !errors.Is(err, telemetry.ErrOTLPExport) || !strings.Contains(err.Error(), srv.URL+"/v1/traces") || !strings.Contains(err.Error(), "400") {
		t.Errorf("Err = %v, want ErrOTLPExport naming the URL and the status", err)
	}
	if calls.Load() != 1 || !errors.Is(first, telemetry.ErrOTLPExport) {
		t.Errorf("OnError called %d times with %v, want once with the failure", calls.Load(), first)
	}
	if requests.Load() != 1 || exp.Sent() != 0 {
		t.Errorf("receiver saw %d requests and Sent = %d; want 1 and 0 (no request after the failure)", requests.Load(), exp.Sent())
	}
}
