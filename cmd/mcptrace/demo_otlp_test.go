package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.uber.org/goleak"
	"google.golang.org/grpc"

	"github.com/mcptrace/mcptrace/internal/demo"
	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// otlpReceiver is a real OTLP trace receiver on 127.0.0.1 (HTTP with
// protobuf, or gRPC), built on the Collector's pdata request types: what a
// Collector's otlp receiver would decode, it decodes.
type otlpReceiver struct {
	ptraceotlp.UnimplementedGRPCServer
	mu     sync.Mutex
	traces []ptrace.Traces
	errs   []error
}

// Export is the gRPC service method.
func (r *otlpReceiver) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	r.add(req.Traces(), nil)
	return ptraceotlp.NewExportResponse(), nil
}

func (r *otlpReceiver) add(td ptrace.Traces, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, err)
		return
	}
	r.traces = append(r.traces, td)
}

// spans returns every span received, keyed by trace and span id.
func (r *otlpReceiver) spans(t *testing.T) map[string]receivedSpan {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) > 0 {
		t.Fatalf("the receiver could not decode what it got: %v", r.errs)
	}
	return indexSpans(t, "the receiver", r.traces)
}

// startOTLPReceiver serves protocol on 127.0.0.1 and returns the receiver
// and the base endpoint URL to give the demo. It stops when the test ends.
func startOTLPReceiver(t *testing.T, protocol string) (*otlpReceiver, string) {
	t.Helper()
	rcv := &otlpReceiver{}
	if protocol == telemetry.ProtocolGRPC {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer()
		ptraceotlp.RegisterGRPCServer(srv, rcv)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = srv.Serve(lis)
		}()
		t.Cleanup(func() { srv.Stop(); <-done })
		return rcv, "http://" + lis.Addr().String()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err == nil && req.Header.Get("Content-Type") != "application/x-protobuf" {
			err = &unexpectedContentType{req.Header.Get("Content-Type")}
		}
		er := ptraceotlp.NewExportRequest()
		if err == nil {
			err = er.UnmarshalProto(body)
		}
		if err != nil {
			rcv.add(ptrace.Traces{}, err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rcv.add(er.Traces(), nil)
		resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
	})
	srv := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(srv.Close)
	return rcv, srv.URL
}

type unexpectedContentType struct{ got string }

func (e *unexpectedContentType) Error() string { return "unexpected Content-Type " + e.got }

// receivedSpan is what the tests compare of one span.
type receivedSpan struct {
	service, name string
	attrs         map[string]any
}

// indexSpans flattens traces into spans keyed by trace and span id, failing
// on a span seen twice (a duplicate delivery is as wrong as a lost one).
func indexSpans(t *testing.T, where string, tds []ptrace.Traces) map[string]receivedSpan {
	t.Helper()
	out := map[string]receivedSpan{}
	for _, td := range tds {
		for i := range td.ResourceSpans().Len() {
			rs := td.ResourceSpans().At(i)
			svc, _ := rs.Resource().Attributes().Get(spans.ResourceServiceName)
			for j := range rs.ScopeSpans().Len() {
				ss := rs.ScopeSpans().At(j).Spans()
				for k := range ss.Len() {
					s := ss.At(k)
					id := s.TraceID().String() + "/" + s.SpanID().String()
					if _, dup := out[id]; dup {
						t.Errorf("%s has span %s twice", where, id)
					}
					out[id] = receivedSpan{service: svc.Str(), name: s.Name(), attrs: s.Attributes().AsRaw()}
				}
			}
		}
	}
	return out
}

// dumpSpans reads a JSON-lines dump into spans keyed as indexSpans keys them.
func dumpSpans(t *testing.T, path string) map[string]receivedSpan {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tds []ptrace.Traces
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var u ptrace.JSONUnmarshaler
	for sc.Scan() {
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			t.Fatalf("dump line does not parse: %v", err)
		}
		tds = append(tds, td)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return indexSpans(t, "the dump", tds)
}

// clearOTLPEnv blanks the variables the demo's OTLP exporter reads, so the
// machine's environment cannot send a test's spans elsewhere.
func clearOTLPEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
		"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
		"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_INSECURE",
	} {
		t.Setenv(k, "")
	}
}

// demoOTLPOutput is the part of the demo's JSON output these tests read.
type demoOTLPOutput struct {
	Modes []demo.Result `json:"modes"`
	OTLP  *struct {
		Endpoint  string `json:"endpoint"`
		Protocol  string `json:"protocol"`
		SpansSent int    `json:"spans_sent"`
	} `json:"otlp"`
}

// assertSameSpans checks that the receiver got exactly the dump's spans,
// with the pool's vocabulary on them (at least one span of each of
// wantNames), and that the demo counted them.
func assertSameSpans(t *testing.T, got demoOTLPOutput, dump, received map[string]receivedSpan, wantEndpoint, wantProtocol string, wantNames ...string) {
	t.Helper()
	if got.OTLP == nil {
		t.Fatalf("demo JSON has no otlp object")
	}
	if got.OTLP.Endpoint != wantEndpoint || got.OTLP.Protocol != wantProtocol {
		t.Errorf("otlp = %+v, want endpoint %s over %s", *got.OTLP, wantEndpoint, wantProtocol)
	}
	if len(dump) == 0 || len(received) != len(dump) || got.OTLP.SpansSent != len(dump) {
		t.Errorf("dump has %d spans, the receiver got %d, the demo says it sent %d: want all equal and not 0",
			len(dump), len(received), got.OTLP.SpansSent)
	}
	missing := 0
	for id, d := range dump {
		r, ok := received[id]
		if !ok {
			if missing++; missing <= 3 {
				t.Errorf("span %s (%s %s) is in the dump but never reached the receiver", id, d.service, d.name)
			}
			continue
		}
		if r.service != d.service || r.name != d.name || len(r.attrs) != len(d.attrs) {
			t.Errorf("span %s: received %s %s with %d attributes, dump has %s %s with %d", id, r.service, r.name, len(r.attrs), d.service, d.name, len(d.attrs))
		}
	}
	names := map[string]int{}
	for _, s := range received {
		names[s.name]++
		if s.name == spans.SpanAcquire {
			if _, ok := s.attrs[spans.AttrCacheHit].(bool); !ok {
				t.Errorf("received acquire span without a boolean %s: %v", spans.AttrCacheHit, s.attrs)
			}
		}
	}
	for _, n := range wantNames {
		if names[n] == 0 {
			t.Errorf("the receiver got no %s span (got %v)", n, names)
		}
	}
}

// allPoolSpans are the span names of one pooled invocation.
var allPoolSpans = []string{spans.SpanInvoke, spans.SpanAcquire, spans.SpanHandshake, spans.SpanCallTool}

// verifyNoLeaks checks for leaked goroutines after every other cleanup of
// t has run (the receivers stop in cleanups): call it first.
func verifyNoLeaks(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

func TestDemoSendsTheDumpsSpansOverOTLP(t *testing.T) {
	for _, protocol := range []string{telemetry.ProtocolHTTPProtobuf, telemetry.ProtocolGRPC} {
		t.Run(protocol, func(t *testing.T) {
			verifyNoLeaks(t)
			clearOTLPEnv(t)
			rcv, endpoint := startOTLPReceiver(t, protocol)
			dump := filepath.Join(t.TempDir(), "demo.jsonl")
			code, out, stderr := runCLI(t, "", "demo", "--format", "json", "--dump", dump, "--scopes", "2", "--executions", "2",
				"--otlp-endpoint", endpoint, "--otlp-protocol", protocol)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			var got demoOTLPOutput
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("demo JSON: %v\n%s", err, out)
			}
			wantURL := endpoint
			if protocol == telemetry.ProtocolHTTPProtobuf {
				wantURL += "/v1/traces"
			}
			assertSameSpans(t, got, dumpSpans(t, dump), rcv.spans(t), wantURL, protocol, allPoolSpans...)
			if !strings.Contains(stderr, "Sending spans over OTLP ("+protocol+") to "+wantURL) {
				t.Errorf("stderr does not say where spans go:\n%s", stderr)
			}
		})
	}
}

func TestDemoReadsTheStandardOTLPVariables(t *testing.T) {
	verifyNoLeaks(t)
	clearOTLPEnv(t)
	rcv, endpoint := startOTLPReceiver(t, telemetry.ProtocolGRPC)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", telemetry.ProtocolGRPC)
	dump := filepath.Join(t.TempDir(), "demo.jsonl")
	code, out, stderr := runCLI(t, "", "demo", "--format", "json", "--dump", dump, "--mode", "pooled", "--scopes", "1", "--executions", "2")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	var got demoOTLPOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("demo JSON: %v\n%s", err, out)
	}
	assertSameSpans(t, got, dumpSpans(t, dump), rcv.spans(t), endpoint, telemetry.ProtocolGRPC, allPoolSpans...)
}

func TestDemoLiveSendsItsSpansOverOTLP(t *testing.T) {
	verifyNoLeaks(t)
	clearOTLPEnv(t)
	rcv, endpoint := startOTLPReceiver(t, telemetry.ProtocolHTTPProtobuf)
	dump := filepath.Join(t.TempDir(), "live.jsonl")
	code, out, stderr := runCLI(t, "", "demo", "--duration", "300ms", "--format", "json", "--dump", dump, "--otlp-endpoint", endpoint)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	var got demoOTLPOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("live JSON: %v\n%s", err, out)
	}
	// A short live run opens sessions and acquires; which calls complete
	// in 300ms is the workload's business.
	assertSameSpans(t, got, dumpSpans(t, dump), rcv.spans(t), endpoint+"/v1/traces", telemetry.ProtocolHTTPProtobuf,
		spans.SpanInvoke, spans.SpanAcquire, spans.SpanHandshake)
}

// closedPortURL is an http URL on 127.0.0.1 where nothing listens: a port
// the kernel handed out and that was closed again.
func closedPortURL(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	if err := lis.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

func TestDemoFailsClearlyOnABadOTLPEndpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the OTLP exporters' retries against refusing endpoints, about 6 s")
	}
	verifyNoLeaks(t)
	rejecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "tenant unknown", http.StatusBadRequest)
	}))
	t.Cleanup(rejecting.Close)
	down := closedPortURL(t)
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		wantIn []string
	}{
		{name: "nothing listens (http)", args: []string{"--otlp-endpoint", down}, wantIn: []string{down + "/v1/traces", "connection refused"}},
		{name: "nothing listens (grpc, after bounded retries)", args: []string{"--otlp-endpoint", down, "--otlp-protocol", "grpc"}, wantIn: []string{down, "Unavailable"}},
		{name: "the receiver rejects the spans", args: []string{"--otlp-endpoint", rejecting.URL}, wantIn: []string{rejecting.URL + "/v1/traces", "400", "tenant unknown"}},
		{name: "live: nothing listens", args: []string{"--duration", "1h", "--otlp-endpoint", down}, wantIn: []string{down + "/v1/traces", "connection refused"}},
		{name: "not a URL", args: []string{"--otlp-endpoint", "127.0.0.1:4318"}, wantIn: []string{"--otlp-endpoint", "http://"}},
		{name: "no port", args: []string{"--otlp-endpoint", "http://127.0.0.1"}, wantIn: []string{"--otlp-endpoint", "no port"}},
		{name: "unknown protocol flag", args: []string{"--otlp-endpoint", "http://127.0.0.1:4318", "--otlp-protocol", "http/json"}, wantIn: []string{"--otlp-protocol"}},
		{name: "protocol flag without an endpoint", args: []string{"--otlp-protocol", "grpc"}, wantIn: []string{"--otlp-protocol", "--otlp-endpoint"}},
		{name: "bad variable", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "localhost"}, wantIn: []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"}},
		{name: "unknown protocol variable", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, wantIn: []string{"OTEL_EXPORTER_OTLP_PROTOCOL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearOTLPEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			dump := filepath.Join(t.TempDir(), "demo.jsonl")
			args := append([]string{"demo", "--dump", dump, "--scopes", "1", "--executions", "1"}, tt.args...)
			code, _, stderr := runCLI(t, "", args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2:\n%s", code, stderr)
			}
			msg := stderr[strings.LastIndex(stderr, "mcptrace: "):]
			for _, w := range tt.wantIn {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
		})
	}
}
