package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Environment variables naming where OTLP traces go, after the OpenTelemetry
// specification: the per-signal endpoint is a full URL used as is, the
// generic one a base URL to which the HTTP exporter appends /v1/traces.
const (
	EnvOTLPEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvOTLPTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
)

// otlpTracesPath is what the HTTP exporter appends to a base endpoint.
const otlpTracesPath = "v1/traces"

// OTLPRetryMaxElapsed bounds how long one export keeps retrying a retryable
// failure (the endpoint unavailable, throttling) before giving up. The
// exporters' default is a minute per batch, which makes a short-lived
// command look hung against a wrong endpoint.
const OTLPRetryMaxElapsed = 5 * time.Second

// ErrOTLPExport marks a failure to deliver spans to the OTLP endpoint (the
// endpoint refused the connection, answered an error, or timed out), as
// opposed to a bad configuration ([ErrInvalidConfig]).
var ErrOTLPExport = errors.New("OTLP trace export failed")

// OTLPTraceConfig says where [NewOTLPTraceExporter] sends spans. The zero
// value takes everything from the standard environment variables.
type OTLPTraceConfig struct {
	// Endpoint is the base URL of an OTLP receiver, with scheme and port
	// (http://127.0.0.1:4318 for http/protobuf, http://127.0.0.1:4317 for
	// grpc), read like OTEL_EXPORTER_OTLP_ENDPOINT: http/protobuf appends
	// /v1/traces to its path. An http scheme means plaintext, https TLS.
	// Empty means OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is), else
	// OTEL_EXPORTER_OTLP_ENDPOINT.
	Endpoint string
	// EndpointName names where Endpoint came from in errors (a flag such
	// as "--otlp-endpoint"); empty means "Endpoint".
	EndpointName string
	// Protocol is "grpc" or "http/protobuf". Empty means
	// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
	// else http/protobuf.
	Protocol string
	// OnError, if set, is called once, with the first export failure (an
	// error wrapping [ErrOTLPExport]), from the goroutine that exported: a
	// command can stop its work at once instead of discovering at exit that
	// nothing arrived. It must not block.
	OnError func(error)
}

// OTLPTraceConfigured reports whether cfg or the environment names an OTLP
// traces endpoint, that is whether [NewOTLPTraceExporter] has somewhere to
// send spans.
func OTLPTraceConfigured(cfg OTLPTraceConfig) bool {
	return strings.TrimSpace(cfg.Endpoint) != "" ||
		strings.TrimSpace(os.Getenv(EnvOTLPTracesEndpoint)) != "" ||
		strings.TrimSpace(os.Getenv(EnvOTLPEndpoint)) != ""
}

// OTLPTraceExporter is the official OTLP span exporter (gRPC or HTTP with
// protobuf) behind a tally: it counts the spans the endpoint accepted and
// keeps the first failure, so a command can say how many spans reached the
// collector, or fail clearly when they did not. After the first failure it
// refuses further batches with that same error, without network I/O, so a
// dead endpoint costs one timeout, not one per batch.
//
// Headers, TLS files, compression and the export timeout still come from the
// OTEL_EXPORTER_OTLP_* variables, read by the exporter itself. Retries of a
// retryable failure stop after [OTLPRetryMaxElapsed].
//
// It is safe for concurrent use, as an sdktrace.SpanExporter must be.
type OTLPTraceExporter struct {
	next     sdktrace.SpanExporter
	url      string
	protocol string
	onError  func(error)

	mu   sync.Mutex
	sent int64 // guarded by mu
	err  error // guarded by mu; the first failure
}

var _ sdktrace.SpanExporter = (*OTLPTraceExporter)(nil)

// NewOTLPTraceExporter resolves the endpoint and protocol of cfg (see
// [OTLPTraceConfig]) and starts the exporter. It dials nothing: gRPC
// connects lazily and HTTP per request, so a wrong endpoint shows as an
// export failure. Configuration errors (no endpoint at all, a URL without
// scheme or host, an unknown protocol) wrap [ErrInvalidConfig] and name the
// setting at fault. The caller must call Shutdown.
func NewOTLPTraceExporter(ctx context.Context, cfg OTLPTraceConfig) (*OTLPTraceExporter, error) {
	protocol, err := otlpTraceProtocol(cfg.Protocol)
	if err != nil {
		return nil, err
	}
	target, err := otlpTraceURL(cfg, protocol)
	if err != nil {
		return nil, err
	}
	var next sdktrace.SpanExporter
	if protocol == ProtocolGRPC {
		next, err = otlptracegrpc.New(ctx,
			otlptracegrpc.WithEndpointURL(target),
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{
				Enabled: true, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: OTLPRetryMaxElapsed,
			}))
	} else {
		next, err = otlptracehttp.New(ctx,
			otlptracehttp.WithEndpointURL(target),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{
				Enabled: true, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: OTLPRetryMaxElapsed,
			}))
	}
	if err != nil {
		return nil, fmt.Errorf("start OTLP %s trace exporter for %s: %w", protocol, target, err)
	}
	return &OTLPTraceExporter{next: next, url: target, protocol: protocol, onError: cfg.OnError}, nil
}

// URL is the endpoint spans are sent to: for http/protobuf the full URL
// including /v1/traces, for grpc the receiver's address as a URL.
func (e *OTLPTraceExporter) URL() string { return e.url }

// Protocol is "grpc" or "http/protobuf".
func (e *OTLPTraceExporter) Protocol() string { return e.protocol }

// Sent is the number of spans the endpoint has accepted so far.
func (e *OTLPTraceExporter) Sent() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sent
}

// Err is the first export failure, wrapping [ErrOTLPExport], or nil.
func (e *OTLPTraceExporter) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// ExportSpans sends spans to the endpoint and counts them when accepted. It
// returns the first failure again, without sending, once one happened.
func (e *OTLPTraceExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := e.Err(); err != nil {
		return err
	}
	if err := e.next.ExportSpans(ctx, spans); err != nil {
		return e.fail(fmt.Errorf("%w: %d spans to %s (%s): %w", ErrOTLPExport, len(spans), e.url, e.protocol, err))
	}
	e.mu.Lock()
	e.sent += int64(len(spans))
	e.mu.Unlock()
	return nil
}

// fail records err as the first failure, unless one is already recorded,
// calls OnError for the first one, and returns the recorded failure.
func (e *OTLPTraceExporter) fail(err error) error {
	e.mu.Lock()
	first := e.err == nil
	if first {
		e.err = err
	}
	err = e.err
	e.mu.Unlock()
	if first && e.onError != nil {
		e.onError(err)
	}
	return err
}

// Shutdown stops the underlying exporter (closing the gRPC connection),
// honouring ctx's deadline. It is idempotent.
func (e *OTLPTraceExporter) Shutdown(ctx context.Context) error {
	if err := e.next.Shutdown(ctx); err != nil {
		return fmt.Errorf("shut down OTLP trace exporter for %s: %w", e.url, err)
	}
	return nil
}

// otlpTraceProtocol resolves the traces protocol: explicit, then the
// environment as [Setup] reads it.
func otlpTraceProtocol(explicit string) (string, error) {
	switch p := strings.TrimSpace(explicit); p {
	case "":
		return otlpProtocol(envTracesProtocol)
	case ProtocolHTTPProtobuf, ProtocolGRPC:
		return p, nil
	default:
		return "", fmt.Errorf("%w: OTLP protocol %q is not supported (accepted: %s, %s)",
			ErrInvalidConfig, explicit, ProtocolHTTPProtobuf, ProtocolGRPC)
	}
}

// otlpTraceURL resolves the URL the exporter is given, from cfg.Endpoint or
// the environment, and validates it: an absolute http or https URL with a
// host. For http/protobuf a base endpoint gets /v1/traces appended to its
// path; the per-signal variable is already the full URL.
func otlpTraceURL(cfg OTLPTraceConfig, protocol string) (string, error) {
	name, value, base := cfg.EndpointName, strings.TrimSpace(cfg.Endpoint), true
	if name == "" {
		name = "Endpoint"
	}
	if value == "" {
		if v := strings.TrimSpace(os.Getenv(EnvOTLPTracesEndpoint)); v != "" {
			name, value, base = EnvOTLPTracesEndpoint, v, false
		} else if v := strings.TrimSpace(os.Getenv(EnvOTLPEndpoint)); v != "" {
			name, value = EnvOTLPEndpoint, v
		}
	}
	if value == "" {
		return "", fmt.Errorf("%w: no OTLP endpoint: set %s or %s", ErrInvalidConfig, EnvOTLPEndpoint, EnvOTLPTracesEndpoint)
	}
	// The value is quoted in errors only once parsed and free of userinfo,
	// so a credential pasted into the URL never reaches an error or a log.
	u, err := url.Parse(value)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // without the URL it quotes
		}
		return "", fmt.Errorf("%w: %s is not a URL (%w): want an http:// or https:// URL with a host and port, e.g. http://127.0.0.1:4318", ErrInvalidConfig, name, err)
	}
	if u.User != nil {
		return "", fmt.Errorf("%w: %s: credentials in the URL are not supported; use OTEL_EXPORTER_OTLP_HEADERS", ErrInvalidConfig, name)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%w: %s=%q: want an http:// or https:// URL with a host and port, e.g. http://127.0.0.1:4318", ErrInvalidConfig, name, u.Redacted())
	}
	if u.Port() == "" {
		return "", fmt.Errorf("%w: %s=%q has no port (OTLP listens on 4318 for http/protobuf and 4317 for grpc)", ErrInvalidConfig, name, u.Redacted())
	}
	if base && protocol == ProtocolHTTPProtobuf {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/" + otlpTracesPath
	}
	return u.String(), nil
}
