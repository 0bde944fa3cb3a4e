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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/mcptrace/mcptrace/dashboards"
	"github.com/mcptrace/mcptrace/internal/demo"
	"github.com/mcptrace/mcptrace/spans/telemetry"
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

// selection is a value of the pool and key variables: All (.*) or one
// concrete pool and key, as a user picks them in Grafana.
type selection struct{ pool, key string }

// all is the "All" option of both variables.
var all = selection{dashboards.AllValue, dashboards.AllValue}

func (s selection) String() string {
	if s == all {
		return "pool=All key=All"
	}
	return fmt.Sprintf("pool=%s key=%s", s.pool, s.key)
}

// substitute replaces Grafana's interval macros and the dashboard's template
// variables with the selection (Grafana puts a single selected value in
// the regex matcher as is; pool ids and hashed keys hold no regex
// metacharacters).
func substitute(expr string, sel selection) string {
	r := strings.NewReplacer(
		"$__rate_interval", rateWindow,
		"${__rate_interval}", rateWindow,
		"$__interval", rateWindow,
		"${"+dashboards.VarPool+"}", sel.pool,
		"$"+dashboards.VarPool, sel.pool,
		"${"+dashboards.VarKey+"}", sel.key,
		"$"+dashboards.VarKey, sel.key,
	)
	return r.Replace(expr)
}

// concreteSelections lists, for each pool, the pool and its busiest key (the
// one with the most acquires): the concrete values a user picks in the pool
// and key variables to look at one key.
func concreteSelections(ctx context.Context, base string) ([]selection, error) {
	expr := "topk by (plugin_mcp_pool_id) (1, sum by (plugin_mcp_pool_id, plugin_mcp_cache_key) (mcp_pool_acquires_total))"
	code, body, err := get(ctx, base+"/api/v1/query?query="+url.QueryEscape(expr))
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		return nil, fmt.Errorf("busiest keys: status %d %q: %v", code, body, err)
	}
	var out []selection
	for _, s := range r.Data.Result {
		if p, k := s.Metric["plugin_mcp_pool_id"], s.Metric["plugin_mcp_cache_key"]; p != "" && k != "" {
			out = append(out, selection{p, k})
		}
	}
	slices.SortFunc(out, func(a, b selection) int { return strings.Compare(a.pool, b.pool) })
	return out, nil
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
`, telemetry.MetricsPath, target)
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
	exp, err := telemetry.NewPrometheusExporter()
	if err != nil {
		t.Fatal(err)
	}
	tel, err := telemetry.Setup(context.Background(), telemetry.Config{ServiceName: "mcptrace-dashboards-test", MetricReaders: []sdkmetric.Reader{exp.Reader}})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	metricsSrv, err := telemetry.ServeMetrics("127.0.0.1:0", exp.Handler)
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
			if e := substitute(q.Expr, all); strings.Contains(e, "$") {
				t.Fatalf("panel %q %s: unsubstituted variable in %s", q.Panel, q.RefID, e)
			}
			queries = append(queries, q)
		}
	}
	if len(queries) < 10 {
		t.Fatalf("only %d Prometheus queries found in the dashboard", len(queries))
	}

	// Every query must return data twice: with All selected, and with one
	// concrete pool and key selected (a query that filters a metric on a
	// label it lacks returns nothing then). Each scenario's pool has its
	// own keys and its own events (redials only in the fault pool), so a
	// query passes the concrete check when one of the (pool, key) pairs the
	// variables offer gives data. Rates need a few scrapes and some series
	// (redials, evictions) a first round of every scenario: retry empty
	// answers until all have data, within a bound. A query Prometheus
	// rejects fails at once.
	deadline, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	type check struct {
		q        dashboards.Query
		concrete bool
	}
	var pending []check
	for _, q := range queries {
		pending = append(pending, check{q, false}, check{q, true})
	}
	id := func(c check) string { return fmt.Sprintf("%s/%s/%v", c.q.Panel, c.q.RefID, c.concrete) }
	lastErr := map[string]error{}
	passedWith := map[string]selection{}
	for len(pending) > 0 {
		var still []check
		sels, err := concreteSelections(deadline, base)
		if err != nil {
			lastErr["selections"] = err
		}
		for _, c := range pending {
			try := []selection{all}
			if c.concrete {
				try = sels
			}
			ok := false
			for _, sel := range try {
				n, err := instantQuery(deadline, base, substitute(c.q.Expr, sel))
				if errors.Is(err, errBadQuery) {
					t.Errorf("panel %q query %s does not parse with %s: %v\n%s", c.q.Panel, c.q.RefID, sel, err, substitute(c.q.Expr, sel))
					ok = true
					break
				}
				if err == nil && n > 0 {
					passedWith[id(c)] = sel
					ok = true
					break
				}
				lastErr[id(c)] = err
			}
			if !ok {
				still = append(still, c)
			}
		}
		pending = still
		if len(pending) == 0 {
			break
		}
		select {
		case <-deadline.Done():
			for _, c := range pending {
				what := "with All selected"
				if c.concrete {
					what = fmt.Sprintf("with any of the concrete pool and key selections %v", sels)
				}
				t.Errorf("panel %q query %s returned no series %s after 60s (last error: %v, %v):\n%s", c.q.Panel, c.q.RefID, what, lastErr[id(c)], lastErr["selections"], c.q.Expr)
			}
			_, body, _ := get(context.Background(), base+"/api/v1/targets")
			t.Logf("prometheus targets: %s\nprometheus log:\n%s", body, promLog)
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
	for _, q := range queries {
		t.Logf("panel %q %s: data with All and with %s", q.Panel, q.RefID, passedWith[id(check{q, true})])
	}
	t.Logf("%d Prometheus queries from the dashboard returned data with All and with a concrete pool and key", len(queries))
}
