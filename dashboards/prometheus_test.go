package dashboards_test

// A real Prometheus in the tests: the Debian prometheus binary scrapes the
// live demo workload every second, then every Prometheus query of every
// dashboard panel runs against its HTTP API and must parse and return data.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/mcptrace/mcptrace/dashboards"
	"github.com/mcptrace/mcptrace/internal/demo"
	"github.com/mcptrace/mcptrace/spans"
)

// prometheusBinary is where Debian's prometheus package installs the server.
const prometheusBinary = "/usr/bin/prometheus"

// rateWindow replaces $__rate_interval: with a 1s scrape interval, 5s holds
// enough samples for rate().
const rateWindow = "5s"

// findPrometheus returns the Prometheus binary, or skips the test with how to
// install it; under CI (CI=true) a missing binary fails instead, since
// .ci/run installs it.
func findPrometheus(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(prometheusBinary); err == nil {
		return prometheusBinary
	}
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	msg := "no Prometheus server binary (" + prometheusBinary + "): install it with `apt-get install prometheus` to run the dashboards' queries against real data"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI must install it (.ci/run)")
	}
	t.Skip(msg)
	return ""
}

// substitute replaces Grafana's interval macros and the dashboard's template
// variables with values that select everything.
func substitute(expr string) string {
	r := strings.NewReplacer(
		"$__rate_interval", rateWindow,
		"${__rate_interval}", rateWindow,
		"$__interval", rateWindow,
		"${"+dashboards.VarPool+"}", dashboards.AllValue,
		"$"+dashboards.VarPool, dashboards.AllValue,
		"${"+dashboards.VarKey+"}", dashboards.AllValue,
		"$"+dashboards.VarKey, dashboards.AllValue,
	)
	return r.Replace(expr)
}

// freePort returns a port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects a process's output for error messages.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startPrometheus runs Prometheus on 127.0.0.1 scraping target every second,
// with its storage in a temporary directory, and kills it when the test ends.
// It returns the API's base URL and the process's output.
func startPrometheus(t *testing.T, bin, target string) (string, *lockedBuffer) {
	t.Helper()
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: mcptrace
    metrics_path: %s
    static_configs:
      - targets: [%q]
`, spans.MetricsPath, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	out := &lockedBuffer{}
	cmd := exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	base := "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if code, _, err := get(ctx, base+"/-/ready"); err == nil && code == http.StatusOK {
			return base, out
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("prometheus exited before it was ready: %v\n%s", err, out)
		case <-ctx.Done():
			t.Fatalf("prometheus not ready on %s after 30s\n%s", addr, out)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// get fetches url and returns the status code and body.
func get(ctx context.Context, u string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// errBadQuery marks a query Prometheus refuses: retrying cannot help.
var errBadQuery = errors.New("query rejected")

// instantQuery runs expr at the current time and returns how many series it
// returned.
func instantQuery(ctx context.Context, base, expr string) (int, error) {
	code, body, err := get(ctx, base+"/api/v1/query?query="+url.QueryEscape(expr))
	if err != nil {
		return 0, err
	}
	var r struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string            `json:"resultType"`
			Result     []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, fmt.Errorf("status %d, undecodable answer %q: %w", code, body, err)
	}
	if r.Status != "success" {
		if r.ErrorType == "bad_data" {
			return 0, fmt.Errorf("%w: %s: %s", errBadQuery, r.ErrorType, r.Error)
		}
		return 0, fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	if r.Data.ResultType == "scalar" {
		return 1, nil
	}
	return len(r.Data.Result), nil
}

func TestEveryDashboardQueryReturnsDataFromARealPrometheus(t *testing.T) {
	bin := findPrometheus(t)

	// The live demo workload, in process, exporting on 127.0.0.1.
	exp, err := spans.NewPrometheusExporter()
	if err != nil {
		t.Fatal(err)
	}
	tel, err := spans.Setup(context.Background(), spans.Config{ServiceName: "mcptrace-dashboards-test", MetricReaders: []sdkmetric.Reader{exp.Reader}})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	metricsSrv, err := spans.ServeMetrics("127.0.0.1:0", exp.Handler)
	if err != nil {
		t.Fatal(err)
	}
	defer metricsSrv.Close(context.Background())
	ctx, stopWorkload := context.WithCancel(context.Background())
	workloadDone := make(chan error, 1)
	go func() {
		_, err := demo.RunLive(ctx, demo.LiveConfig{MeterProvider: tel.MeterProvider, Pause: 50 * time.Millisecond})
		workloadDone <- err
	}()
	defer func() {
		stopWorkload()
		if err := <-workloadDone; err != nil {
			t.Errorf("live workload: %v", err)
		}
	}()

	base, promLog := startPrometheus(t, bin, metricsSrv.Addr())

	var queries []dashboards.Query
	for _, q := range poolQueries(t) {
		if q.Datasource == dashboards.TypePrometheus {
			q.Expr = substitute(q.Expr)
			if strings.Contains(q.Expr, "$") {
				t.Fatalf("panel %q %s: unsubstituted variable in %s", q.Panel, q.RefID, q.Expr)
			}
			queries = append(queries, q)
		}
	}
	if len(queries) < 10 {
		t.Fatalf("only %d Prometheus queries found in the dashboard", len(queries))
	}

	// Rates need a few scrapes and some series (redials, evictions) a
	// first round of every scenario: retry empty answers until all have
	// data, within a bound. A query Prometheus rejects fails at once.
	deadline, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	pending := queries
	lastErr := map[string]error{}
	for len(pending) > 0 {
		var still []dashboards.Query
		for _, q := range pending {
			n, err := instantQuery(deadline, base, q.Expr)
			switch {
			case errors.Is(err, errBadQuery):
				t.Errorf("panel %q query %s does not parse: %v\n%s", q.Panel, q.RefID, err, q.Expr)
			case err != nil || n == 0:
				lastErr[q.Expr] = err
				still = append(still, q)
			}
		}
		pending = still
		if len(pending) == 0 {
			break
		}
		select {
		case <-deadline.Done():
			for _, q := range pending {
				t.Errorf("panel %q query %s returned no series after 40s (last error: %v):\n%s", q.Panel, q.RefID, lastErr[q.Expr], q.Expr)
			}
			_, body, _ := get(context.Background(), base+"/api/v1/targets")
			t.Logf("prometheus targets: %s\nprometheus log:\n%s", body, promLog)
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
	t.Logf("%d Prometheus queries from the dashboard returned data", len(queries))
}
