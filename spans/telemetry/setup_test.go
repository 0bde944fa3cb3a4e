package telemetry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// otelEnv lists the variables Setup or the exporters read; clearEnv blanks
// them so the machine's environment cannot leak into a test.
var otelEnv = []string{
	"OTEL_SERVICE_NAME",
	"OTEL_RESOURCE_ATTRIBUTES",
	"OTEL_EXPORTER_OTLP_PROTOCOL",
	"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
	"OTEL_EXPORTER_OTLP_ENDPOINT",
	"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
	"OTEL_EXPORTER_OTLP_HEADERS",
	"OTEL_EXPORTER_OTLP_COMPRESSION",
	"OTEL_EXPORTER_OTLP_INSECURE",
}

func clearEnv(t *testing.T) {
	t.Helper()
	for _, k := range otelEnv {
		t.Setenv(k, "")
	}
}

// setup calls Setup and registers Shutdown for the end of the test.
func setup(t *testing.T, cfg telemetry.Config) *telemetry.Telemetry {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	return tel
}

// emit records one invoke span and one acquire counter increment.
func emit(t *testing.T, tel *telemetry.Telemetry) {
	t.Helper()
	ctx := context.Background()
	_, s := tel.Tracer().Start(ctx, spans.SpanInvoke)
	s.SetAttributes(attribute.String(spans.AttrToolName, "select_workspace"))
	s.End()
	c, err := tel.Meter().Int64Counter(spans.MetricAcquires)
	if err != nil {
		t.Fatalf("counter: %v", err)
	}
	c.Add(ctx, 3, metric.WithAttributes(attribute.Bool(spans.AttrCacheHit, true)))
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestSetupFileExporterWritesReadableDump(t *testing.T) {
	clearEnv(t)
	path := filepath.Join(t.TempDir(), "dump.jsonl")
	tel := setup(t, telemetry.Config{
		ServiceName:       "gateway",
		ServiceInstanceID: "pool-1",
		Exporter:          telemetry.ExporterFile,
		FilePath:          path,
	})
	emit(t, tel)
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	_, traces := readDump(t, path)
	all := flatten(traces...)
	if len(all) != 1 {
		t.Fatalf("dump holds %d spans, want 1", len(all))
	}
	got := all[0]
	if got.Span.Name() != spans.SpanInvoke {
		t.Errorf("span = %q, want %q", got.Span.Name(), spans.SpanInvoke)
	}
	if got.Scope.Name() != spans.ScopeName {
		t.Errorf("scope = %q, want %q", got.Scope.Name(), spans.ScopeName)
	}
	res := got.Resource.Attributes()
	for key, want := range map[string]string{
		spans.ResourceServiceName:       "gateway",
		spans.ResourceServiceInstanceID: "pool-1",
		"telemetry.sdk.language":        "go",
		"telemetry.sdk.name":            "opentelemetry",
	} {
		if v := strAttr(res, key); v != want {
			t.Errorf("resource %s = %q, want %q", key, v, want)
		}
	}
	if v := strAttr(got.Span.Attributes(), spans.AttrToolName); v != "select_workspace" {
		t.Errorf("span %s = %q", spans.AttrToolName, v)
	}
}

func TestSetupSynchronousExportsBeforeShutdown(t *testing.T) {
	clearEnv(t)
	path := filepath.Join(t.TempDir(), "dump.jsonl")
	tel := setup(t, telemetry.Config{Exporter: telemetry.ExporterFile, FilePath: path, Synchronous: true})
	_, s := tel.Tracer().Start(context.Background(), spans.SpanHandshake)
	s.End()
	// Synchronous: the line is in the file as soon as End returns.
	lines, traces := readDump(t, path)
	if len(lines) != 1 || flatten(traces...)[0].Span.Name() != spans.SpanHandshake {
		t.Fatalf("dump before shutdown: %d lines, want the %s span", len(lines), spans.SpanHandshake)
	}
}

func TestSetupResourceNames(t *testing.T) {
	tests := []struct {
		name         string
		env          map[string]string
		cfg          telemetry.Config
		wantService  string
		wantInstance string // "uuid": a random UUID
		wantExtra    map[string]string
	}{
		{
			name:         "defaults",
			wantService:  telemetry.DefaultServiceName,
			wantInstance: "uuid",
		},
		{
			name: "environment fills what the config leaves empty",
			env: map[string]string{
				"OTEL_SERVICE_NAME":        "from-env",
				"OTEL_RESOURCE_ATTRIBUTES": "service.instance.id=env-inst,deployment.environment.name=ci",
			},
			wantService:  "from-env",
			wantInstance: "env-inst",
			wantExtra:    map[string]string{"deployment.environment.name": "ci"},
		},
		{
			name: "service name from resource attributes",
			env: map[string]string{
				"OTEL_RESOURCE_ATTRIBUTES": "service.name=attr-svc",
			},
			wantService:  "attr-svc",
			wantInstance: "uuid",
		},
		{
			name: "config wins over environment",
			env: map[string]string{
				"OTEL_SERVICE_NAME":        "from-env",
				"OTEL_RESOURCE_ATTRIBUTES": "service.instance.id=env-inst,team=pool",
			},
			cfg:          telemetry.Config{ServiceName: "from-config", ServiceInstanceID: "cfg-inst"},
			wantService:  "from-config",
			wantInstance: "cfg-inst",
			wantExtra:    map[string]string{"team": "pool"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			tel := setup(t, tt.cfg)
			attrs := pcommon.NewMap()
			for it := tel.Resource.Iter(); it.Next(); {
				kv := it.Attribute()
				attrs.PutStr(string(kv.Key), kv.Value.String())
			}
			if got := strAttr(attrs, spans.ResourceServiceName); got != tt.wantService {
				t.Errorf("service.name = %q, want %q", got, tt.wantService)
			}
			gotInst := strAttr(attrs, spans.ResourceServiceInstanceID)
			if tt.wantInstance == "uuid" {
				if !uuidRE.MatchString(gotInst) {
					t.Errorf("service.instance.id = %q, want a random UUID", gotInst)
				}
			} else if gotInst != tt.wantInstance {
				t.Errorf("service.instance.id = %q, want %q", gotInst, tt.wantInstance)
			}
			for k, want := range tt.wantExtra {
				if got := strAttr(attrs, k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

func TestSetupRandomInstanceIDsDiffer(t *testing.T) {
	clearEnv(t)
	a, b := setup(t, telemetry.Config{}), setup(t, telemetry.Config{})
	id := func(tel *telemetry.Telemetry) string {
		v, _ := tel.Resource.Set().Value(spans.ResourceServiceInstanceID)
		return v.AsString()
	}
	if id(a) == id(b) {
		t.Errorf("two setups share service.instance.id %q", id(a))
	}
}

func TestSetupOTLPHTTPSendsTracesAndMetrics(t *testing.T) {
	clearEnv(t)
	sink, srv := newOTLPHTTPSink(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	tel := setup(t, telemetry.Config{ServiceName: "otlp-http", Exporter: telemetry.ExporterOTLP})
	emit(t, tel)
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	assertOTLPReceived(t, sink, "otlp-http")
}

func TestSetupOTLPGRPCSendsTracesAndMetrics(t *testing.T) {
	clearEnv(t)
	sink, addr := newOTLPGRPCSink(t)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", telemetry.ProtocolGRPC)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
	tel := setup(t, telemetry.Config{ServiceName: "otlp-grpc", Exporter: telemetry.ExporterOTLP})
	emit(t, tel)
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	assertOTLPReceived(t, sink, "otlp-grpc")
}

// assertOTLPReceived checks the sink got the span and counter from emit,
// under the given service name.
func assertOTLPReceived(t *testing.T, sink *otlpSink, service string) {
	t.Helper()
	traces, metrics, errs := sink.snapshot()
	for _, err := range errs {
		t.Errorf("receiver: %v", err)
	}
	all := flatten(traces...)
	if len(all) != 1 || all[0].Span.Name() != spans.SpanInvoke {
		t.Fatalf("received %d spans, want one %s", len(all), spans.SpanInvoke)
	}
	if got := strAttr(all[0].Resource.Attributes(), spans.ResourceServiceName); got != service {
		t.Errorf("span resource service.name = %q, want %q", got, service)
	}
	var found bool
	for _, md := range metrics {
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					if m.Name() != spans.MetricAcquires {
						continue
					}
					found = true
					if sm.Scope().Name() != spans.ScopeName {
						t.Errorf("metric scope = %q, want %q", sm.Scope().Name(), spans.ScopeName)
					}
					if m.Type() != pmetric.MetricTypeSum || m.Sum().DataPoints().Len() != 1 {
						t.Fatalf("metric %s: type %s, want one sum point", m.Name(), m.Type())
					}
					if got := m.Sum().DataPoints().At(0).IntValue(); got != 3 {
						t.Errorf("metric %s = %d, want 3", m.Name(), got)
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("no %s metric among %d metric requests", spans.MetricAcquires, len(metrics))
	}
}

func TestSetupMetricReaderReceivesMetrics(t *testing.T) {
	clearEnv(t)
	reader := sdkmetric.NewManualReader()
	tel := setup(t, telemetry.Config{ServiceName: "metrics", MetricReaders: []sdkmetric.Reader{reader}})
	emit(t, tel)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	if v, _ := rm.Resource.Set().Value(spans.ResourceServiceName); v.AsString() != "metrics" {
		t.Errorf("metric resource service.name = %q, want metrics", v.AsString())
	}
	if len(rm.ScopeMetrics) != 1 || rm.ScopeMetrics[0].Scope.Name != spans.ScopeName {
		t.Fatalf("scope metrics = %+v, want one scope %s", rm.ScopeMetrics, spans.ScopeName)
	}
	ms := rm.ScopeMetrics[0].Metrics
	if len(ms) != 1 || ms[0].Name != spans.MetricAcquires {
		t.Fatalf("metrics = %+v, want %s", ms, spans.MetricAcquires)
	}
	sum, ok := ms[0].Data.(metricdata.Sum[int64])
	if !ok || len(sum.DataPoints) != 1 {
		t.Fatalf("metric data = %T %+v, want one int64 sum point", ms[0].Data, ms[0].Data)
	}
	if got := sum.DataPoints[0].Value; got != 3 {
		t.Errorf("counter = %d, want 3", got)
	}
	if v, _ := sum.DataPoints[0].Attributes.Value(spans.AttrCacheHit); !v.AsBool() {
		t.Errorf("point lacks %s=true: %v", spans.AttrCacheHit, sum.DataPoints[0].Attributes)
	}
}

func TestSetupSpanProcessorsAndSampler(t *testing.T) {
	tests := []struct {
		name    string
		sampler sdktrace.Sampler
		want    int
	}{
		{name: "default samples everything", want: 1},
		{name: "configured sampler is used", sampler: sdktrace.NeverSample(), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			rec := telemetry.NewRecorder()
			tel := setup(t, telemetry.Config{SpanProcessors: []sdktrace.SpanProcessor{rec}, Sampler: tt.sampler})
			_, s := tel.Tracer().Start(context.Background(), spans.SpanInvoke)
			s.End()
			if got := len(rec.Spans()); got != tt.want {
				t.Errorf("recorded %d spans, want %d", got, tt.want)
			}
		})
	}
}

func TestSetupRejectsBadConfiguration(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		cfg       telemetry.Config
		wantParts []string
	}{
		{
			name:      "unknown exporter",
			cfg:       telemetry.Config{Exporter: "jaeger"},
			wantParts: []string{"Config.Exporter", `"jaeger"`, "none, otlp, file"},
		},
		{
			name:      "file exporter without a path",
			cfg:       telemetry.Config{Exporter: telemetry.ExporterFile},
			wantParts: []string{"Config.FilePath", "required"},
		},
		{
			name:      "unsupported traces protocol",
			env:       map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"},
			cfg:       telemetry.Config{Exporter: telemetry.ExporterOTLP},
			wantParts: []string{`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/json"`, "http/protobuf, grpc"},
		},
		{
			name:      "unsupported general protocol",
			env:       map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"},
			cfg:       telemetry.Config{Exporter: telemetry.ExporterOTLP},
			wantParts: []string{`OTEL_EXPORTER_OTLP_PROTOCOL="thrift"`, "http/protobuf, grpc"},
		},
		{
			name: "unsupported metrics protocol",
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL":  "grpc",
				"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "udp",
			},
			cfg:       telemetry.Config{Exporter: telemetry.ExporterOTLP},
			wantParts: []string{`OTEL_EXPORTER_OTLP_METRICS_PROTOCOL="udp"`},
		},
		{
			name:      "malformed resource attributes",
			env:       map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "novalue"},
			wantParts: []string{"OTEL_RESOURCE_ATTRIBUTES", "novalue"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			tel, err := telemetry.Setup(context.Background(), tt.cfg)
			if err == nil {
				_ = tel.Shutdown(context.Background())
				t.Fatal("Setup succeeded, want an error")
			}
			if !errors.Is(err, telemetry.ErrInvalidConfig) {
				t.Errorf("error %q does not wrap ErrInvalidConfig", err)
			}
			for _, part := range tt.wantParts {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q lacks %q", err, part)
				}
			}
		})
	}
}

func TestSetupConfigErrorCreatesNoFile(t *testing.T) {
	clearEnv(t)
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "novalue")
	path := filepath.Join(t.TempDir(), "dump.jsonl")
	if _, err := telemetry.Setup(context.Background(), telemetry.Config{Exporter: telemetry.ExporterFile, FilePath: path}); err == nil {
		t.Fatal("Setup succeeded, want an error")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dump file exists after a failed Setup (stat: %v)", err)
	}
}

func TestSetupShutdownIsIdempotent(t *testing.T) {
	clearEnv(t)
	path := filepath.Join(t.TempDir(), "dump.jsonl")
	tel := setup(t, telemetry.Config{Exporter: telemetry.ExporterFile, FilePath: path})
	emit(t, tel)
	for i := range 3 {
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Fatalf("Shutdown #%d: %v", i+1, err)
		}
	}
	if lines, _ := readDump(t, path); len(lines) != 1 {
		t.Errorf("dump has %d lines, want 1", len(lines))
	}
}

func TestParseExporter(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: "", want: telemetry.ExporterNone},
		{in: "none", want: telemetry.ExporterNone},
		{in: "otlp", want: telemetry.ExporterOTLP},
		{in: " File ", want: telemetry.ExporterFile},
		{in: "OTLP", want: telemetry.ExporterOTLP},
		{in: "stdout", wantErr: true},
		{in: "otlp,file", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := telemetry.ParseExporter(tt.in)
			if tt.wantErr {
				if err == nil || !errors.Is(err, telemetry.ErrInvalidConfig) {
					t.Fatalf("ParseExporter(%q) = %q, %v; want an ErrInvalidConfig", tt.in, got, err)
				}
				if !strings.Contains(err.Error(), "none, otlp, file") {
					t.Errorf("error %q does not list the accepted names", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseExporter(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}
