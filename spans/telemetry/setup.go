package telemetry

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrace/mcptrace/spans"
)

// Trace exporter names: the accepted values of [Config.Exporter] and of the
// CLI's --trace-exporter flag.
const (
	// ExporterNone exports nothing; spans reach only Config.SpanProcessors.
	ExporterNone = "none"
	// ExporterOTLP sends spans and metrics over OTLP, configured by the
	// standard OTEL_EXPORTER_OTLP_* environment variables.
	ExporterOTLP = "otlp"
	// ExporterFile writes spans to Config.FilePath as OTLP JSON lines.
	ExporterFile = "file"
)

// Exporters lists the accepted exporter names, for flag help and errors.
var Exporters = []string{ExporterNone, ExporterOTLP, ExporterFile}

// OTLP protocols accepted in OTEL_EXPORTER_OTLP_PROTOCOL and its per-signal
// variants. The Go exporters implement no http/json client.
const (
	ProtocolHTTPProtobuf = "http/protobuf"
	ProtocolGRPC         = "grpc"
)

// Environment variables Setup reads itself; the OTLP exporters read the rest
// of OTEL_EXPORTER_OTLP_* (endpoint, headers, TLS, timeout, compression).
const (
	envProtocol        = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol  = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envMetricsProtocol = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"
)

// DefaultServiceName is the service.name resource attribute when neither
// Config.ServiceName nor OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES names
// the service.
const DefaultServiceName = "mcptrace"

// ErrInvalidConfig marks every error Setup and ParseExporter return for bad
// configuration (an unknown exporter, a missing file path, an unsupported
// protocol, malformed resource variables), as opposed to a failure to
// create an exporter. The CLI maps it to a usage error (exit 2).
var ErrInvalidConfig = errors.New("invalid telemetry configuration")

// Config says how [Setup] builds the telemetry pipeline. The zero value is
// valid: service "mcptrace", a random instance id, no exporter, batching,
// parent-based always-on sampling.
type Config struct {
	// ServiceName is the service.name resource attribute. Empty means
	// OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) when
	// set, else DefaultServiceName.
	ServiceName string
	// ServiceInstanceID is the service.instance.id resource attribute, which
	// the analyzer uses to tell pool scopes apart. Empty means the value from
	// OTEL_RESOURCE_ATTRIBUTES when set, else a random UUID, so two processes
	// never share a scope by accident.
	ServiceInstanceID string
	// Exporter is one of Exporters: "none" (also the empty string), "otlp"
	// or "file". Case and surrounding space are ignored.
	Exporter string
	// FilePath is the JSON-lines dump written with Exporter "file"; it is
	// created or truncated. Required for "file", ignored otherwise.
	FilePath string
	// Synchronous exports each span as it ends (a simple span processor)
	// instead of batching: slower, but nothing is lost if the process dies
	// and a dump is complete as soon as the span ends. When batching, the
	// file exporter blocks rather than drop spans on a full queue (a dump
	// must be complete to be judged); OTLP drops them rather than stall.
	Synchronous bool
	// SpanProcessors are added to the tracer provider after the exporter's
	// processor, e.g. a *Recorder in tests. Shutdown shuts them down.
	SpanProcessors []sdktrace.SpanProcessor
	// MetricReaders are added to the meter provider besides the OTLP
	// reader, e.g. a ManualReader in tests or a Prometheus exporter.
	// Shutdown shuts them down.
	MetricReaders []sdkmetric.Reader
	// Sampler decides which traces are recorded. Nil means
	// ParentBased(AlwaysSample()).
	Sampler sdktrace.Sampler
}

// Telemetry is the pipeline built by [Setup]. Setup does not install the
// providers globally (otel.SetTracerProvider): the caller decides, so tests
// and libraries can each hold their own.
type Telemetry struct {
	// TracerProvider is the SDK tracer provider with the resource, sampler,
	// exporter and extra processors from the Config.
	TracerProvider *sdktrace.TracerProvider
	// MeterProvider is the SDK meter provider with the resource and readers.
	MeterProvider *sdkmetric.MeterProvider
	// Resource describes this process: service.name, service.instance.id,
	// the telemetry.sdk.* attributes and OTEL_RESOURCE_ATTRIBUTES.
	Resource *resource.Resource
	// Shutdown flushes and stops both providers, which shuts down their
	// processors, readers and exporters (closing a dump file). It honours
	// ctx's deadline for the final export. Shutdown is idempotent and safe
	// for concurrent use: calls after the first return nil.
	Shutdown func(context.Context) error
	// ForceFlush exports every span ended so far (the batch processor's
	// queue) and, with the file exporter, syncs the dump to stable storage:
	// a process killed after it returns (SIGKILL) loses none of those spans.
	// Safe for concurrent use; after Shutdown it does nothing.
	ForceFlush func(context.Context) error
}

// Tracer returns the tracer for mcptrace's instrumentation scope
// ([spans.ScopeName]), the one the pool's spans are recorded under.
func (t *Telemetry) Tracer() trace.Tracer {
	return t.TracerProvider.Tracer(spans.ScopeName)
}

// Meter returns the meter for mcptrace's instrumentation scope ([spans.ScopeName]).
func (t *Telemetry) Meter() metric.Meter {
	return t.MeterProvider.Meter(spans.ScopeName)
}

// ParseExporter normalises an exporter name (case and surrounding space are
// ignored; the empty string means "none") and rejects names outside
// [Exporters] with an error wrapping [ErrInvalidConfig] that lists them.
func ParseExporter(name string) (string, error) {
	return parseExporter("", name)
}

// parseExporter is ParseExporter with field, when not empty, naming the
// setting at fault in the error.
func parseExporter(field, name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "":
		return ExporterNone, nil
	case ExporterNone, ExporterOTLP, ExporterFile:
		return n, nil
	default:
		if field != "" {
			field += ": "
		}
		return "", fmt.Errorf("%w: %sunknown trace exporter %q (accepted: %s)",
			ErrInvalidConfig, field, name, strings.Join(Exporters, ", "))
	}
}

// Setup builds a tracer provider and a meter provider sharing one resource,
// wired to the exporter cfg names. Configuration errors wrap
// [ErrInvalidConfig] and name the Config field or environment variable at
// fault; they are detected before any file is created or exporter started.
// On success the caller must call Telemetry.Shutdown to flush and release
// the exporters.
func Setup(ctx context.Context, cfg Config) (*Telemetry, error) {
	exporter, err := parseExporter("Config.Exporter", cfg.Exporter)
	if err != nil {
		return nil, err
	}
	if exporter == ExporterFile && cfg.FilePath == "" {
		return nil, fmt.Errorf("%w: Config.FilePath is required with Exporter %q", ErrInvalidConfig, ExporterFile)
	}
	var traceProto, metricProto string
	if exporter == ExporterOTLP {
		if traceProto, err = otlpProtocol(envTracesProtocol); err != nil {
			return nil, err
		}
		if metricProto, err = otlpProtocol(envMetricsProtocol); err != nil {
			return nil, err
		}
	}
	res, err := newResource(ctx, cfg)
	if err != nil {
		return nil, err
	}

	var (
		spanExporter sdktrace.SpanExporter
		metricReader sdkmetric.Reader
	)
	switch exporter {
	case ExporterFile:
		if spanExporter, err = CreateFileExporter(cfg.FilePath); err != nil {
			return nil, err
		}
	case ExporterOTLP:
		if spanExporter, err = newOTLPTraceExporter(ctx, traceProto); err != nil {
			return nil, err
		}
		metricExporter, err := newOTLPMetricExporter(ctx, metricProto)
		if err != nil {
			return nil, errors.Join(err, spanExporter.Shutdown(ctx))
		}
		metricReader = sdkmetric.NewPeriodicReader(metricExporter)
	}

	sampler := cfg.Sampler
	if sampler == nil {
		sampler = sdktrace.ParentBased(sdktrace.AlwaysSample())
	}
	tpOpts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sampler),
	}
	switch {
	case spanExporter == nil:
	case cfg.Synchronous:
		tpOpts = append(tpOpts, sdktrace.WithSyncer(spanExporter))
	case exporter == ExporterFile:
		// A dump feeds the analyzer's verdicts, so it must not lose spans
		// to a full queue; a local file write is cheap to wait for.
		tpOpts = append(tpOpts, sdktrace.WithBatcher(spanExporter, sdktrace.WithBlocking()))
	default:
		// Over the network, dropping spans beats stalling the pool.
		tpOpts = append(tpOpts, sdktrace.WithBatcher(spanExporter))
	}
	for _, p := range cfg.SpanProcessors {
		if p != nil {
			tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(p))
		}
	}

	mpOpts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if metricReader != nil {
		mpOpts = append(mpOpts, sdkmetric.WithReader(metricReader))
	}
	for _, r := range cfg.MetricReaders {
		if r != nil {
			mpOpts = append(mpOpts, sdkmetric.WithReader(r))
		}
	}

	tp := sdktrace.NewTracerProvider(tpOpts...)
	mp := sdkmetric.NewMeterProvider(mpOpts...)
	var once sync.Once
	fileExp, _ := spanExporter.(*FileExporter)
	return &Telemetry{
		TracerProvider: tp,
		MeterProvider:  mp,
		Resource:       res,
		ForceFlush: func(ctx context.Context) error {
			if err := tp.ForceFlush(ctx); err != nil {
				return fmt.Errorf("flush tracer provider: %w", err)
			}
			if fileExp != nil {
				return fileExp.ForceFlush(ctx)
			}
			return nil
		},
		Shutdown: func(ctx context.Context) error {
			var err error
			once.Do(func() {
				var errs []error
				if e := tp.Shutdown(ctx); e != nil {
					errs = append(errs, fmt.Errorf("shut down tracer provider: %w", e))
				}
				if e := mp.Shutdown(ctx); e != nil {
					errs = append(errs, fmt.Errorf("shut down meter provider: %w", e))
				}
				err = errors.Join(errs...)
			})
			return err
		},
	}, nil
}

// otlpProtocol resolves the OTLP protocol of one signal the way the
// specification orders it: the per-signal variable, then
// OTEL_EXPORTER_OTLP_PROTOCOL, then http/protobuf. An unsupported value is
// an error naming the variable that held it.
func otlpProtocol(signalVar string) (string, error) {
	name, value := signalVar, strings.TrimSpace(os.Getenv(signalVar))
	if value == "" {
		name, value = envProtocol, strings.TrimSpace(os.Getenv(envProtocol))
	}
	switch value {
	case "":
		return ProtocolHTTPProtobuf, nil
	case ProtocolHTTPProtobuf, ProtocolGRPC:
		return value, nil
	default:
		return "", fmt.Errorf("%w: %s=%q is not supported (accepted: %s, %s)",
			ErrInvalidConfig, name, value, ProtocolHTTPProtobuf, ProtocolGRPC)
	}
}

// newOTLPTraceExporter starts the OTLP trace exporter for protocol; the
// exporter reads endpoint, headers, TLS, timeout and compression from the
// OTEL_EXPORTER_OTLP_* variables itself.
func newOTLPTraceExporter(ctx context.Context, protocol string) (sdktrace.SpanExporter, error) {
	var (
		exp sdktrace.SpanExporter
		err error
	)
	if protocol == ProtocolGRPC {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("start OTLP %s trace exporter: %w", protocol, err)
	}
	return exp, nil
}

// newOTLPMetricExporter builds the OTLP metric exporter for protocol, also
// configured by the environment.
func newOTLPMetricExporter(ctx context.Context, protocol string) (sdkmetric.Exporter, error) {
	var (
		exp sdkmetric.Exporter
		err error
	)
	if protocol == ProtocolGRPC {
		exp, err = otlpmetricgrpc.New(ctx)
	} else {
		exp, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("start OTLP %s metric exporter: %w", protocol, err)
	}
	return exp, nil
}

// newResource builds the process resource. Precedence, lowest first: the
// defaults (DefaultServiceName, a random instance id), the telemetry.sdk.*
// attributes, OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, then the
// Config fields.
func newResource(ctx context.Context, cfg Config) (*resource.Resource, error) {
	fromEnv, err := resource.New(ctx, resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("%w: OTEL_RESOURCE_ATTRIBUTES (want comma-separated key=value pairs): %w", ErrInvalidConfig, err)
	}
	sdkInfo, err := resource.New(ctx, resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("detect telemetry SDK resource: %w", err)
	}

	envValue := func(key string) string {
		v, _ := fromEnv.Set().Value(attribute.Key(key))
		return v.String()
	}
	name := cfg.ServiceName
	if name == "" {
		name = envValue(spans.ResourceServiceName)
	}
	if name == "" {
		name = DefaultServiceName
	}
	instance := cfg.ServiceInstanceID
	if instance == "" {
		instance = envValue(spans.ResourceServiceInstanceID)
	}
	if instance == "" {
		instance = randomUUID()
	}

	res, err := resource.Merge(sdkInfo, fromEnv)
	if err != nil {
		return nil, fmt.Errorf("merge resources: %w", err)
	}
	res, err = resource.Merge(res, resource.NewSchemaless(
		attribute.String(spans.ResourceServiceName, name),
		attribute.String(spans.ResourceServiceInstanceID, instance),
	))
	if err != nil {
		return nil, fmt.Errorf("merge resources: %w", err)
	}
	return res, nil
}

// randomUUID returns a random (version 4) UUID, the form the semantic
// conventions recommend for service.instance.id.
func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
