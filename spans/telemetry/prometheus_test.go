package telemetry_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// scrape GETs url and returns the body, failing the test on any error.
func scrape(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read scrape: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: status %d: %s", url, resp.StatusCode, body)
	}
	return string(body)
}

func TestServeMetricsExposesPoolNamesInPrometheusStyle(t *testing.T) {
	exp, err := telemetry.NewPrometheusExporter()
	if err != nil {
		t.Fatal(err)
	}
	tel, err := telemetry.Setup(context.Background(), telemetry.Config{
		ServiceName:       "prom-test",
		ServiceInstanceID: "prom-test-1",
		MetricReaders:     []sdkmetric.Reader{exp.Reader},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())

	m := tel.Meter()
	acquires, err := m.Int64Counter(spans.MetricAcquires, metric.WithUnit("{event}"))
	if err != nil {
		t.Fatal(err)
	}
	wait, err := m.Float64Histogram(spans.MetricConnectionWaitTime, metric.WithUnit("s"))
	if err != nil {
		t.Fatal(err)
	}
	attrs := metric.WithAttributes(attribute.String(spans.AttrPoolID, "p1"), attribute.Bool(spans.AttrCacheHit, false), attribute.String(spans.AttrMissReason, spans.MissCold))
	acquires.Add(context.Background(), 2, attrs)
	wait.Record(context.Background(), 0.003, attrs)

	srv, err := telemetry.ServeMetrics("127.0.0.1:0", exp.Handler)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") || !strings.HasSuffix(srv.URL(), telemetry.MetricsPath) {
		t.Errorf("URL = %q, want http://127.0.0.1:PORT%s", srv.URL(), telemetry.MetricsPath)
	}
	body := scrape(t, srv.URL())
	for _, want := range []string{
		`mcp_pool_acquires_total{`,
		`plugin_mcp_pool_id="p1"`,
		`plugin_mcp_cache_hit="false"`,
		`plugin_mcp_miss_reason="cold"`,
		`mcp_pool_connection_wait_time_seconds_bucket{`,
		`target_info{`,
		`service_instance_id="prom-test-1"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s:\n%s", want, body)
		}
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v, want nil (idempotent)", err)
	}
}

func TestServeMetricsBindsLoopbackWhenTheHostIsEmpty(t *testing.T) {
	exp, err := telemetry.NewPrometheusExporter()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := telemetry.ServeMetrics(":0", exp.Handler)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	host, _, err := net.SplitHostPort(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if host != "127.0.0.1" {
		t.Errorf("listening on %s, want the loopback interface for an address with no host", srv.Addr())
	}
}

func TestServeMetricsRejectsBadAddresses(t *testing.T) {
	exp, err := telemetry.NewPrometheusExporter()
	if err != nil {
		t.Fatal(err)
	}
	for name, addr := range map[string]string{
		"no port":     "127.0.0.1",
		"bad format":  "localhost:9464:1",
		"not a host":  "256.1.1.1:0",
		"nil handler": "",
	} {
		t.Run(name, func(t *testing.T) {
			h := exp.Handler
			if name == "nil handler" {
				h = nil
			}
			srv, err := telemetry.ServeMetrics(addr, h)
			if err == nil {
				srv.Close(context.Background())
				t.Fatalf("ServeMetrics(%q) succeeded, want an error", addr)
			}
			if name != "nil handler" && !strings.Contains(err.Error(), addr) {
				t.Errorf("error %q does not name the address %q", err, addr)
			}
			if (name == "no port" || name == "bad format") && !errors.Is(err, telemetry.ErrMetricsAddr) {
				t.Errorf("error %v does not wrap ErrMetricsAddr", err)
			}
		})
	}
}
