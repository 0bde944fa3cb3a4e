package telemetry_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// otlpSink collects what OTLP exporters send to a test server.
type otlpSink struct {
	mu      sync.Mutex
	traces  []ptrace.Traces
	metrics []pmetric.Metrics
	errs    []error
}

func (s *otlpSink) addTraces(td ptrace.Traces) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.traces = append(s.traces, td)
}

func (s *otlpSink) addMetrics(md pmetric.Metrics) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.metrics = append(s.metrics, md)
}

func (s *otlpSink) addErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

// snapshot returns copies of the collected requests and decoding errors.
func (s *otlpSink) snapshot() ([]ptrace.Traces, []pmetric.Metrics, []error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ptrace.Traces(nil), s.traces...),
		append([]pmetric.Metrics(nil), s.metrics...),
		append([]error(nil), s.errs...)
}

// newOTLPHTTPSink starts an OTLP/HTTP receiver on 127.0.0.1 that decodes
// protobuf trace and metric requests into the returned sink. The server is
// closed when the test ends.
func newOTLPHTTPSink(t *testing.T) (*otlpSink, *httptest.Server) {
	t.Helper()
	sink := &otlpSink{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		if err != nil {
			sink.addErr(err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			sink.addErr(err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sink.addTraces(req.Traces())
		resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		if err != nil {
			sink.addErr(err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			sink.addErr(err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sink.addMetrics(req.Metrics())
		resp, _ := pmetricotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
	})
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return sink, srv
}

// readBody reads a request body, gunzipping it when the exporter compressed.
func readBody(r *http.Request) ([]byte, error) {
	var rd io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		rd = zr
	}
	return io.ReadAll(rd)
}

// grpcTraceService and grpcMetricService feed an otlpSink from gRPC.
type grpcTraceService struct {
	ptraceotlp.UnimplementedGRPCServer
	sink *otlpSink
}

func (s *grpcTraceService) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s.sink.addTraces(req.Traces())
	return ptraceotlp.NewExportResponse(), nil
}

type grpcMetricService struct {
	pmetricotlp.UnimplementedGRPCServer
	sink *otlpSink
}

func (s *grpcMetricService) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	s.sink.addMetrics(req.Metrics())
	return pmetricotlp.NewExportResponse(), nil
}

// newOTLPGRPCSink starts an OTLP/gRPC receiver on 127.0.0.1 and returns the
// sink and its "host:port" address. The server stops when the test ends.
func newOTLPGRPCSink(t *testing.T) (*otlpSink, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	sink := &otlpSink{}
	srv := grpc.NewServer()
	ptraceotlp.RegisterGRPCServer(srv, &grpcTraceService{sink: sink})
	pmetricotlp.RegisterGRPCServer(srv, &grpcMetricService{sink: sink})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return sink, lis.Addr().String()
}

// readDump reads a JSON-lines trace dump, failing the test on any line that
// is not one whole OTLP JSON request. It returns the raw lines and the
// decoded requests, in file order.
func readDump(t *testing.T, path string) ([]string, []ptrace.Traces) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read dump: %v", err)
	}
	return parseDump(t, data)
}

// parseDump is readDump on bytes already in memory.
func parseDump(t *testing.T, data []byte) ([]string, []ptrace.Traces) {
	t.Helper()
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatalf("dump does not end with a newline: ...%q", tail(data))
	}
	var (
		lines  []string
		traces []ptrace.Traces
		u      ptrace.JSONUnmarshaler
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			t.Fatalf("dump line %d is not an OTLP JSON request: %v\n%s", n, err, sc.Text())
		}
		lines = append(lines, sc.Text())
		traces = append(traces, td)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("scan dump: %v", err)
	}
	return lines, traces
}

func tail(b []byte) []byte {
	if len(b) > 40 {
		return b[len(b)-40:]
	}
	return b
}

// flatSpan is one span with the resource and scope it was exported under.
type flatSpan struct {
	Resource    pcommon.Resource
	ResourceURL string
	Scope       pcommon.InstrumentationScope
	ScopeURL    string
	Span        ptrace.Span
}

// flatten lists every span of tds in order.
func flatten(tds ...ptrace.Traces) []flatSpan {
	var out []flatSpan
	for _, td := range tds {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					out = append(out, flatSpan{
						Resource: rs.Resource(), ResourceURL: rs.SchemaUrl(),
						Scope: ss.Scope(), ScopeURL: ss.SchemaUrl(),
						Span: s,
					})
				}
			}
		}
	}
	return out
}

// byName indexes flattened spans by span name, failing on duplicates.
func byName(t *testing.T, spans []flatSpan) map[string]flatSpan {
	t.Helper()
	m := make(map[string]flatSpan, len(spans))
	for _, s := range spans {
		name := s.Span.Name()
		if _, dup := m[name]; dup {
			t.Fatalf("span name %q appears twice", name)
		}
		m[name] = s
	}
	return m
}

// strAttr returns a string attribute of m, or "<missing>".
func strAttr(m pcommon.Map, key string) string {
	v, ok := m.Get(key)
	if !ok {
		return "<missing>"
	}
	return v.AsString()
}
