package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// DefaultMetricsAddr is where [ServeMetrics] listens when given no address:
// the loopback interface on the port the OpenTelemetry Prometheus exporter
// conventionally uses. Metrics name pools and tools, so they are not exposed
// beyond the host unless asked for explicitly.
const DefaultMetricsAddr = "127.0.0.1:9464"

// MetricsPath is the HTTP path the metrics are served on.
const MetricsPath = "/metrics"

// ErrMetricsAddr marks an address [ServeMetrics] cannot listen on because it
// is malformed (as opposed to a port already in use). The CLI maps it to a
// usage error.
var ErrMetricsAddr = errors.New("invalid metrics address")

// PrometheusExporter is the OpenTelemetry Prometheus exporter on a registry
// of its own, so two exporters in one process (tests, several pipelines)
// never collide on the global registry.
type PrometheusExporter struct {
	// Reader is the sdkmetric reader to add to a meter provider, e.g. in
	// [Config.MetricReaders]. Shutting the provider down shuts it down.
	Reader sdkmetric.Reader
	// Handler serves the Prometheus text exposition of everything Reader
	// collects, plus the process-level target_info metric.
	Handler http.Handler
}

// NewPrometheusExporter builds the OpenTelemetry Prometheus exporter with
// Prometheus-style names: dots become underscores, counters get _total and
// units a suffix (mcp.pool.acquires becomes mcp_pool_acquires_total,
// mcp.pool.connection.wait_time becomes mcp_pool_connection_wait_time_seconds).
// The strategy is pinned rather than left to the exporter's default, which
// changes between releases, because the dashboards depend on the names.
func NewPrometheusExporter() (*PrometheusExporter, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(
		otelprom.WithRegisterer(reg),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
	)
	if err != nil {
		return nil, fmt.Errorf("create Prometheus exporter: %w", err)
	}
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		// A failed collection (e.g. before the reader is registered) is
		// reported in the scrape rather than failing it: partial data
		// beats a gap.
		ErrorHandling: promhttp.ContinueOnError,
	})
	return &PrometheusExporter{Reader: exp, Handler: h}, nil
}

// MetricsServer serves a metrics handler over HTTP at [MetricsPath]. It is
// started by [ServeMetrics] and stopped by Close.
type MetricsServer struct {
	srv  *http.Server
	ln   net.Listener
	done chan error

	closeOnce sync.Once
	closeErr  error
}

// ServeMetrics listens on addr and serves h at [MetricsPath] in the
// background until Close. An empty addr means [DefaultMetricsAddr]; an
// address with no host (":9464") means the loopback interface, not every
// interface: ask for "0.0.0.0:9464" to be reachable from elsewhere. Port 0
// picks a free port; [MetricsServer.Addr] tells which. The listener is open
// when ServeMetrics returns, so a scrape right after cannot be refused.
func ServeMetrics(addr string, h http.Handler) (*MetricsServer, error) {
	if h == nil {
		return nil, errors.New("serve metrics: nil handler")
	}
	if addr == "" {
		addr = DefaultMetricsAddr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w %q: expected host:port, e.g. %s: %w", ErrMetricsAddr, addr, DefaultMetricsAddr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("serve metrics on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+MetricsPath, h)
	s := &MetricsServer{
		srv: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 10 * time.Second,
		},
		ln:   ln,
		done: make(chan error, 1),
	}
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// Addr is the address the server listens on, with the port resolved.
func (s *MetricsServer) Addr() string { return s.ln.Addr().String() }

// URL is the scrape URL, e.g. http://127.0.0.1:9464/metrics.
func (s *MetricsServer) URL() string { return "http://" + s.Addr() + MetricsPath }

// Close stops accepting scrapes, waits for those in flight until ctx is
// done (then drops them) and returns once the serving goroutine has ended.
// Close is idempotent and safe for concurrent use: later calls wait for the
// first and return its outcome.
func (s *MetricsServer) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		err := s.srv.Shutdown(ctx)
		if err != nil {
			// Deadline passed with scrapes in flight: cut them off.
			_ = s.srv.Close()
		}
		serveErr := <-s.done
		switch {
		case err != nil:
			s.closeErr = fmt.Errorf("stop metrics server %s: %w", s.Addr(), err)
		case serveErr != nil:
			s.closeErr = fmt.Errorf("metrics server %s: %w", s.Addr(), serveErr)
		}
	})
	return s.closeErr
}
