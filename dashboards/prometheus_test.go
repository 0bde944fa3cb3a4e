package dashboards_test

// A real Prometheus in the tests: the Debian prometheus binary scrapes the
// live demo workload every second, then every Prometheus query of the "MCP
// pool" dashboard runs against its HTTP API and must parse and return data.
// The "MCP pool fleet" dashboard reads the Collector connector's metrics: its
// queries run the same way in the collector module (collector/fleetdash),
// where the connector lives.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/mcptrace/mcptrace/dashboards"
	"github.com/mcptrace/mcptrace/internal/demo"
	"github.com/mcptrace/mcptrace/internal/promtest"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// rateWindow replaces $__rate_interval: with a 1s scrape interval, 5s holds
// enough samples for rate().
const rateWindow = "5s"

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
	code, body, err := promtest.Get(ctx, base+"/api/v1/query?query="+url.QueryEscape(expr))
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

func TestEveryDashboardQueryReturnsDataFromARealPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a real Prometheus scrapes the live demo (about 10 s)")
	}
	bin := promtest.Find(t)

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

	prom := promtest.Start(t, bin, telemetry.MetricsPath, metricsSrv.Addr())
	base := prom.Base

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
				samples, err := prom.Query(deadline, substitute(c.q.Expr, sel))
				n := len(samples)
				if errors.Is(err, promtest.ErrBadQuery) {
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
			_, body, _ := promtest.Get(context.Background(), base+"/api/v1/targets")
			t.Logf("prometheus targets: %s\nprometheus log:\n%s", body, prom.Log())
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
	for _, q := range queries {
		t.Logf("panel %q %s: data with All and with %s", q.Panel, q.RefID, passedWith[id(check{q, true})])
	}
	t.Logf("%d Prometheus queries from the dashboard returned data with All and with a concrete pool and key", len(queries))
}
