package fleetdash_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/collector/mcptraceconnector"
	"github.com/mcptrace/mcptrace/dashboards"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/internal/promtest"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// Prometheus label names of the connector's attributes, as the exporter
// writes them.
var (
	lPool     = promLabel(spans.AttrPoolID)
	lCause    = promLabel(spans.AttrMissCause)
	lRule     = promLabel(spans.AttrRuleID)
	lSeverity = promLabel(spans.AttrRuleSeverity)
)

func promLabel(attr string) string { return strings.ReplaceAll(attr, ".", "_") }

// maxOpenTraces is small, so that feeding a round of traces at once cuts
// most of them (the cut counter gets data). The connector holds even
// complete traces for this (hold_complete): by default a trace whose root
// has arrived is finalized at once and never waits to be cut.
const maxOpenTraces = 16

// workload is one round of traces: every scenario of internal/tracegen
// written in the default vocabulary profile, and a pool whose acquire
// spans carry no cache key (its misses but cold and redial count under
// cause unknown), each scenario's pool scopes renamed
// "<scenario>.<instance>" so that no two scenarios share a pool's
// history, one OTLP batch per trace. Round r > 0 is the same traces with
// new trace ids and r days later, so every pool's counters grow again.
func workload(t *testing.T, round int) (batches []ptrace.Traces, traces int) {
	t.Helper()
	shift := pcommon.Timestamp(time.Duration(round) * 24 * time.Hour)
	type scenario struct {
		name  string
		build func() ptrace.Traces
	}
	scenarios := []scenario{
		{"keyless", func() ptrace.Traces { return apart(dumptest.MissesOnKeys("", "", "").Traces(), 0xee) }},
		{"evicting", func() ptrace.Traces { return apart(evicting(t), 0xdd) }},
	}
	for _, sc := range tracegen.Scenarios() {
		if tracegen.ScenarioProfile(sc.Name) == string(rulefmt.ProfileDefault) {
			scenarios = append(scenarios, scenario{sc.Name, sc.Build})
		}
	}
	for _, sc := range scenarios {
		byTrace := map[pcommon.TraceID]ptrace.Traces{}
		var order []pcommon.TraceID
		td := sc.build()
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			if id, ok := rs.Resource().Attributes().Get(spans.ResourceServiceInstanceID); ok {
				rs.Resource().Attributes().PutStr(spans.ResourceServiceInstanceID, sc.name+"."+id.Str())
			}
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					sp := ss.Spans().At(k)
					tid := sp.TraceID()
					tid[15] ^= byte(round) // a new trace id per round
					out, ok := byTrace[tid]
					if !ok {
						out = ptrace.NewTraces()
						byTrace[tid] = out
						order = append(order, tid)
					}
					ors := out.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(ors.Resource())
					oss := ors.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(oss.Scope())
					osp := oss.Spans().AppendEmpty()
					sp.CopyTo(osp)
					osp.SetTraceID(tid)
					osp.SetStartTimestamp(sp.StartTimestamp() + shift)
					osp.SetEndTimestamp(sp.EndTimestamp() + shift)
					for e := 0; e < osp.Events().Len(); e++ {
						ev := osp.Events().At(e)
						ev.SetTimestamp(ev.Timestamp() + shift)
					}
				}
			}
		}
		for _, tid := range order {
			batches = append(batches, byTrace[tid])
		}
		traces += len(order)
	}
	if traces < 3*maxOpenTraces {
		t.Fatalf("workload has %d traces: too few to cut any with max_open_traces %d", traces, maxOpenTraces)
	}
	return batches, traces
}

// evicting is a pool that keeps no idle session (max_idle_per_key -1,
// recorded on its acquire spans): the analyzer calls its later misses
// evicted, one of the unexplained misses.
func evicting(t *testing.T) ptrace.Traces {
	t.Helper()
	wl, err := tracegen.GenerateWorkload(tracegen.WorkloadConfig{Seed: 7, Traces: 24, Pools: []string{"evicting"}, KeysPerPool: 2, TracesPerBatch: 1 << 10,
		Settings: map[string]map[string]string{"evicting": {
			spans.AttrPoolIdleTTL: "300", spans.AttrPoolMaxIdlePerKey: "-1",
			spans.AttrPoolIdleSizing: spans.IdleSizingPeak, spans.AttrPoolMaxIdle: "64",
		}}})
	if err != nil {
		t.Fatal(err)
	}
	td := ptrace.NewTraces()
	for _, b := range wl.Batches {
		b.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	}
	return td
}

// apart gives every span of td a trace id whose first byte is first, so
// its traces stay apart from the scenarios' (and from each other's).
func apart(td ptrace.Traces, first byte) ptrace.Traces {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		ss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < ss.Len(); j++ {
			for k := 0; k < ss.At(j).Spans().Len(); k++ {
				sp := ss.At(j).Spans().At(k)
				tid := sp.TraceID()
				tid[0] = first
				sp.SetTraceID(tid)
			}
		}
	}
	return td
}

// key names one series of the connector's counters by its labels.
type key string

func keyOf(labels ...string) key { return key(strings.Join(labels, "|")) }

// counted is what the connector counted, read from the last metrics it sent
// (the counters are cumulative, so the last send holds the totals).
type counted struct {
	acquires   map[key]int64 // pool, hit, cause
	executions map[key]int64 // pool, multi_session
	violations map[key]int64 // rule, severity
	finalized  int64
	cut        int64
	late       int64
}

func countsOf(md pmetric.Metrics) counted {
	c := counted{acquires: map[key]int64{}, executions: map[key]int64{}, violations: map[key]int64{}}
	attr := func(p pmetric.NumberDataPoint, k string) string {
		v, ok := p.Attributes().Get(k)
		if !ok {
			return ""
		}
		return v.AsString()
	}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				if m.Type() != pmetric.MetricTypeSum {
					continue
				}
				for d := 0; d < m.Sum().DataPoints().Len(); d++ {
					p := m.Sum().DataPoints().At(d)
					switch m.Name() {
					case spans.ConnectorMetricAcquires:
						c.acquires[keyOf(attr(p, spans.AttrPoolID), attr(p, spans.AttrCacheHit), attr(p, spans.AttrMissCause))] += p.IntValue()
					case spans.ConnectorMetricExecutions:
						c.executions[keyOf(attr(p, spans.AttrPoolID), attr(p, spans.AttrMultiSession))] += p.IntValue()
					case spans.ConnectorMetricRuleViolations:
						c.violations[keyOf(attr(p, spans.AttrRuleID), attr(p, spans.AttrRuleSeverity))] += p.IntValue()
					case spans.ConnectorMetricTracesFinalized:
						c.finalized += p.IntValue()
					case spans.ConnectorMetricTracesCut:
						c.cut += p.IntValue()
					case spans.ConnectorMetricTracesLateSpans:
						c.late += p.IntValue()
					}
				}
			}
		}
	}
	return c
}

// pools returns the pools with acquires, sorted.
func (c counted) pools() []string {
	set := map[string]bool{}
	for k := range c.acquires {
		set[strings.Split(string(k), "|")[0]] = true
	}
	out := slices.Sorted(func(yield func(string) bool) {
		for p := range set {
			if !yield(p) {
				return
			}
		}
	})
	return out
}

// rules returns the rules with violations, sorted.
func (c counted) rules() []string {
	var out []string
	for k := range c.violations {
		if r := strings.Split(string(k), "|")[0]; !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// poolRatio is, for one pool, the sum of the acquires match selects over
// all its acquires: the hit rate or the cold-start floor.
func (c counted) poolRatio(pool string, match func(hit, cause string) bool) float64 {
	var num, den int64
	for k, n := range c.acquires {
		f := strings.Split(string(k), "|")
		if f[0] != pool {
			continue
		}
		den += n
		if match(f[1], f[2]) {
			num += n
		}
	}
	return float64(num) / float64(den)
}

func (c counted) total() (n int64) {
	for _, v := range c.acquires {
		n += v
	}
	return n
}

// lastCounts reads the totals from the last metrics the sink received.
func lastCounts(sink *consumertest.MetricsSink) (counted, bool) {
	all := sink.AllMetrics()
	if len(all) == 0 {
		return counted{}, false
	}
	return countsOf(all[len(all)-1]), true
}

// selection is one value of each of the fleet dashboard's variables.
type selection struct{ pool, rule string }

var all = selection{dashboards.AllValue, dashboards.AllValue}

func (s selection) String() string {
	if s == all {
		return "pool=All rule=All"
	}
	return fmt.Sprintf("pool=%s rule=%s", s.pool, s.rule)
}

// substitute replaces the rate interval and the variables, as Grafana does
// with one value selected (pool ids and rule ids hold no regex
// metacharacters but dots, which match themselves too).
func substitute(expr string, sel selection, window time.Duration) string {
	w := fmt.Sprintf("%dms", window.Milliseconds())
	return strings.NewReplacer(
		"$__rate_interval", w, "${__rate_interval}", w,
		"${"+dashboards.VarPool+"}", sel.pool,
		"${"+dashboards.VarRule+"}", sel.rule,
	).Replace(expr)
}

// labelValues runs a Grafana label_values(metric, label) variable query
// on Prometheus's label values API, as Grafana does.
func labelValues(ctx context.Context, prom *promtest.Server, query string) ([]string, error) {
	m := regexp.MustCompile(`^label_values\(([a-z_]+), ([a-z_]+)\)$`).FindStringSubmatch(query)
	if m == nil {
		return nil, fmt.Errorf("variable query %q is not label_values(metric, label)", query)
	}
	code, body, err := promtest.Get(ctx, prom.Base+"/api/v1/label/"+m[2]+"/values?match[]="+url.QueryEscape(m[1]))
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string   `json:"status"`
		Data   []string `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		return nil, fmt.Errorf("label values of %s: status %d %q: %v", query, code, body, err)
	}
	return r.Data, nil
}

// variableQueries reads the query of each query variable of a dashboard.
func variableQueries(t *testing.T, data []byte) map[string]string {
	t.Helper()
	var d struct {
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			out[v.Name] = fmt.Sprint(v.Query)
		}
	}
	return out
}

// fleetDashboard returns the generated fleet dashboard's JSON and queries.
func fleetDashboard(t *testing.T) ([]byte, []dashboards.Query) {
	t.Helper()
	files, err := dashboards.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name == dashboards.FleetFile {
			qs, err := dashboards.Queries(f.Data)
			if err != nil {
				t.Fatal(err)
			}
			return f.Data, qs
		}
	}
	t.Fatalf("Generate wrote no %s", dashboards.FleetFile)
	return nil, nil
}

// waitFor polls cond every 200 ms until it holds, failing the test with
// what after the deadline.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	for {
		ok, state := cond()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s: %s", what, state)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func TestEveryFleetDashboardQueryReturnsTheConnectorsCountsFromARealPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a real Prometheus scrapes the connector (about 10 s)")
	}
	bin := promtest.Find(t)
	data, queries := fleetDashboard(t)
	vars := variableQueries(t, data)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The real Collector Prometheus exporter on 127.0.0.1.
	expFactory := prometheusexporter.NewFactory()
	expCfg := expFactory.CreateDefaultConfig().(*prometheusexporter.Config)
	expAddr := fmt.Sprintf("127.0.0.1:%d", promtest.FreePort(t))
	expCfg.ServerConfig.NetAddr.Endpoint = expAddr
	exp, err := expFactory.CreateMetrics(ctx, exportertest.NewNopSettings(expFactory.Type()), expCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := exp.Shutdown(context.Background()); err != nil {
			t.Errorf("exporter shutdown: %v", err)
		}
	}()

	// The real mcptrace connector, its metrics to the exporter and to a
	// sink that keeps what it counted.
	sink := new(consumertest.MetricsSink)
	next, err := consumer.NewMetrics(func(ctx context.Context, md pmetric.Metrics) error {
		cp := pmetric.NewMetrics()
		md.CopyTo(cp)
		if err := sink.ConsumeMetrics(ctx, cp); err != nil {
			return err
		}
		return exp.ConsumeMetrics(ctx, md)
	})
	if err != nil {
		t.Fatal(err)
	}
	connFactory := mcptraceconnector.NewFactory()
	cfg := connFactory.CreateDefaultConfig().(*mcptraceconnector.Config)
	cfg.Wait = 200 * time.Millisecond
	cfg.MaxOpenTraces = maxOpenTraces
	cfg.HoldComplete = true
	cfg.Profile = string(rulefmt.ProfileDefault)
	conn, err := connFactory.CreateTracesToMetrics(ctx, connectortest.NewNopSettings(connFactory.Type()), cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	connUp := true
	defer func() {
		if connUp {
			_ = conn.Shutdown(context.Background())
		}
	}()

	prom := promtest.Start(t, bin, "/metrics", expAddr)
	scraped := func(expr string, want float64) func() (bool, string) {
		return func() (bool, string) {
			s, err := prom.Query(ctx, expr)
			if err != nil || len(s) != 1 {
				return false, fmt.Sprintf("%s: %v %v", expr, s, err)
			}
			return s[0].Value == want, fmt.Sprintf("%s = %v, want %v", expr, s[0].Value, want)
		}
	}
	finalizedExpr := "sum(" + promLabel(spans.ConnectorMetricTracesFinalized) + "_total)"
	acquiresExpr := "sum(" + promLabel(spans.ConnectorMetricAcquires) + "_total)"

	// feed sends one round of the workload and waits until the connector
	// finalized every trace so far and Prometheus scraped its counts.
	var finalized int
	feed := func(round int) ([]ptrace.Traces, counted) {
		batches, n := workload(t, round)
		for _, td := range batches {
			if err := conn.ConsumeTraces(ctx, td); err != nil {
				t.Fatal(err)
			}
		}
		finalized += n
		var c counted
		waitFor(ctx, t, fmt.Sprintf("the connector to finalize round %d", round), func() (bool, string) {
			var ok bool
			c, ok = lastCounts(sink)
			return ok && c.finalized == int64(finalized), fmt.Sprintf("finalized %d of %d", c.finalized, finalized)
		})
		waitFor(ctx, t, fmt.Sprintf("Prometheus to scrape round %d", round), scraped(finalizedExpr, float64(finalized)))
		waitFor(ctx, t, fmt.Sprintf("Prometheus to scrape round %d's acquires", round), scraped(acquiresExpr, float64(c.total())))
		return batches, c
	}

	// Round 0 opens the pools' histories (cold starts); rounds 1 and 2 come
	// a day after the one before, so they are attributed alike and open the
	// same series. The rate window starts on round 1's counts, so the
	// rates over it are round 2's.
	feed(0)
	_, c1 := feed(1)
	// The window starts once Prometheus had round 1's counts: every sample
	// after that instant holds them until round 2 is fed, and at least one
	// must be scraped before it is.
	windowStart := time.Now()
	waitFor(ctx, t, "a scrape of round 1's counts", func() (bool, string) {
		at := time.Now()
		expr := fmt.Sprintf("count_over_time(%s_total[%dms])", promLabel(spans.ConnectorMetricAcquires), at.Sub(windowStart).Milliseconds())
		s, err := prom.QueryAt(ctx, expr, at)
		return err == nil && len(s) > 0 && s[0].Value >= 1, fmt.Sprintf("%s: %v %v", expr, s, err)
	})
	round2, _ := feed(2)

	// One span of a round-2 trace again, after its trace was finalized: a
	// late span.
	if err := conn.ConsumeTraces(ctx, round2[len(round2)-1]); err != nil {
		t.Fatal(err)
	}
	var final counted
	waitFor(ctx, t, "the connector to count the late span", func() (bool, string) {
		c, ok := lastCounts(sink)
		final = c
		return ok && c.late > 0, fmt.Sprintf("late spans %d", c.late)
	})
	lateExpr := "sum(" + promLabel(spans.ConnectorMetricTracesLateSpans) + "_total)"
	waitFor(ctx, t, "Prometheus to scrape the late span", scraped(lateExpr, float64(final.late)))
	// Every query is evaluated at one instant, its rate window reaching
	// back into round 1's plateau.
	at := time.Now()
	window := at.Sub(windowStart).Round(time.Millisecond)

	// The workload must exercise every panel, or "returns data" proves
	// little.
	if final.cut == 0 {
		t.Errorf("no trace was cut with max_open_traces %d", maxOpenTraces)
	}
	causes := map[string]bool{}
	for k := range final.acquires {
		causes[strings.Split(string(k), "|")[2]] = true
	}
	for _, c := range []string{spans.MissCold, spans.MissConcurrent, spans.MissTTL, spans.MissRedial, spans.MissEvicted, spans.MissUnexplained, spans.MissCauseUnknown} {
		if !causes[c] {
			t.Errorf("the workload has no %s miss", c)
		}
	}
	multi := false
	for k, n := range final.executions {
		multi = multi || strings.HasSuffix(string(k), "|true") && n > 0
	}
	if !multi {
		t.Error("the workload has no execution on several sessions")
	}
	if len(final.rules()) == 0 {
		t.Fatal("the workload violates no rule")
	}

	// The variables offer exactly the pools and rules the connector counted.
	pools, err := labelValues(ctx, prom, vars[dashboards.VarPool])
	if err != nil {
		t.Fatal(err)
	}
	rules, err := labelValues(ctx, prom, vars[dashboards.VarRule])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pools, final.pools()) {
		t.Errorf("pool variable offers %v, the connector counted acquires for %v", pools, final.pools())
	}
	if !slices.Equal(rules, final.rules()) {
		t.Errorf("rule variable offers %v, the connector counted violations of %v", rules, final.rules())
	}
	if len(pools) < 2 || len(rules) < 1 {
		t.Fatalf("need several pools and a rule to select: pools %v rules %v", pools, rules)
	}
	var concrete []selection
	for i := range max(len(pools), len(rules)) {
		concrete = append(concrete, selection{pools[i%len(pools)], rules[i%len(rules)]})
	}

	// Every query, with All and with concrete values: it parses, returns
	// series, and every value is a number (a ratio of rates that did not
	// grow in the window would be NaN).
	promQueries := 0
	for _, q := range queries {
		if q.Datasource != dashboards.TypePrometheus {
			t.Errorf("panel %q %s runs on %s: the fleet dashboard reads Prometheus only", q.Panel, q.RefID, q.Datasource)
			continue
		}
		promQueries++
		for _, try := range [][]selection{{all}, concrete} {
			ok := false
			var why []string
			for _, sel := range try {
				expr := substitute(q.Expr, sel, window)
				if strings.Contains(expr, "$") {
					t.Fatalf("panel %q %s: unsubstituted variable in %s", q.Panel, q.RefID, expr)
				}
				got, err := prom.QueryAt(ctx, expr, at)
				if errors.Is(err, promtest.ErrBadQuery) {
					t.Errorf("panel %q query %s does not parse with %s: %v\n%s", q.Panel, q.RefID, sel, err, expr)
					ok = true
					break
				}
				switch {
				case err != nil:
					why = append(why, fmt.Sprintf("%s: %v", sel, err))
				case len(got) == 0:
					why = append(why, fmt.Sprintf("%s: no series", sel))
				case slices.ContainsFunc(got, func(s promtest.Sample) bool { return math.IsNaN(s.Value) || math.IsInf(s.Value, 0) }):
					why = append(why, fmt.Sprintf("%s: not a number in %v", sel, got))
				default:
					ok = true
				}
				if ok {
					break
				}
			}
			if !ok {
				t.Errorf("panel %q query %s returned no data with any of %v:\n%s\n%s", q.Panel, q.RefID, try, strings.Join(why, "\n"), q.Expr)
			}
		}
	}
	if promQueries < 10 {
		t.Fatalf("only %d Prometheus queries in the fleet dashboard", promQueries)
	}

	// The values: what the connector counted.
	find := func(panel, ref string) dashboards.Query {
		for _, q := range queries {
			if q.Panel == panel && q.RefID == ref {
				return q
			}
		}
		t.Fatalf("no query %s in panel %q", ref, panel)
		return dashboards.Query{}
	}
	type want map[key]float64
	// check compares a query's series, keyed by labels, with w. With
	// shares, each value is first divided by the sum over its group (the
	// series with the same first label), and a group summing to 0 is left
	// out: a rate is the counted increase times a factor (rate's
	// extrapolation over the window) that is the same for every series
	// scraped together, so the shares of rates are the shares of the
	// counts.
	check := func(q dashboards.Query, sel selection, labels []string, w want, shares bool) {
		t.Helper()
		got, err := prom.QueryAt(ctx, substitute(q.Expr, sel, window), at)
		if err != nil {
			t.Errorf("panel %q %s with %s: %v", q.Panel, q.RefID, sel, err)
			return
		}
		seen, group := want{}, map[string]float64{}
		for _, s := range got {
			var ls []string
			for _, l := range labels {
				ls = append(ls, s.Metric[l])
			}
			seen[keyOf(ls...)] = s.Value
			if len(ls) > 0 {
				group[ls[0]] += s.Value
			}
		}
		if shares {
			for k, v := range seen {
				if g := group[strings.Split(string(k), "|")[0]]; g == 0 {
					delete(seen, k)
				} else {
					seen[k] = v / g
				}
			}
		}
		for k, v := range w {
			if g, ok := seen[k]; !ok || math.Abs(g-v) > 1e-9*math.Max(1, math.Abs(v)) {
				t.Errorf("panel %q %s with %s: %s = %v (present %v), the connector counted %v (shares of the group: %v)", q.Panel, q.RefID, sel, k, g, ok, v, shares)
			}
		}
		for k, v := range seen {
			if _, ok := w[k]; !ok {
				t.Errorf("panel %q %s with %s: %s = %v, the connector counted nothing there", q.Panel, q.RefID, sel, k, v)
			}
		}
	}
	isHit := func(hit, _ string) bool { return hit == "true" }
	isCold := func(_, cause string) bool { return cause == spans.MissCold }
	hitRate, floor := func(sel selection) want {
		w := want{}
		for _, p := range final.pools() {
			if sel == all || sel.pool == p {
				w[keyOf(p)] = final.poolRatio(p, isHit)
			}
		}
		return w
	}, func(sel selection) want {
		w := want{}
		for _, p := range final.pools() {
			if sel == all || sel.pool == p {
				w[keyOf(p)] = final.poolRatio(p, isCold)
			}
		}
		return w
	}
	byCause := func(sel selection) want {
		w := want{}
		for k, n := range final.acquires {
			f := strings.Split(string(k), "|")
			if f[1] == "false" && (sel == all || sel.pool == f[0]) {
				w[keyOf(f[0], f[2])] += float64(n)
			}
		}
		return w
	}
	byRule := func(sel selection) want {
		w := want{}
		for k, n := range final.violations {
			if f := strings.Split(string(k), "|"); sel == all || sel.rule == f[0] {
				w[k] += float64(n)
			}
		}
		return w
	}
	// The rate-based hit rate and ceiling over the window are the hits /
	// acquires and 1 − cold / acquires the connector counted in round 2 (the
	// window starts on round 1's counts), and the misses by cause are
	// round 2's in proportion, as long as round 2 opened no new series: a
	// series that appears inside the window loses its first value to
	// rate().
	delta := counted{acquires: map[key]int64{}}
	newSeries := 0
	for k, n := range final.acquires {
		if _, ok := c1.acquires[k]; !ok {
			newSeries++
		}
		delta.acquires[k] = n - c1.acquires[k]
	}
	hitRateRound2, ceilingRound2 := func(sel selection) want {
		w := want{}
		for _, p := range delta.pools() {
			if sel == all || sel.pool == p {
				w[keyOf(p)] = delta.poolRatio(p, isHit)
			}
		}
		return w
	}, func(sel selection) want {
		w := want{}
		for _, p := range delta.pools() {
			if sel == all || sel.pool == p {
				w[keyOf(p)] = 1 - delta.poolRatio(p, isCold)
			}
		}
		return w
	}
	// Each cause's share of a pool's misses in round 2.
	causeSharesRound2 := func(sel selection) want {
		w, total := want{}, map[string]float64{}
		for k, n := range delta.acquires {
			if f := strings.Split(string(k), "|"); f[1] == "false" && (sel == all || sel.pool == f[0]) {
				w[keyOf(f[0], f[2])] = float64(n)
				total[f[0]] += float64(n)
			}
		}
		for k, v := range w {
			if g := total[strings.Split(string(k), "|")[0]]; g == 0 {
				delete(w, k)
			} else {
				w[k] = v / g
			}
		}
		return w
	}
	// The unexplained misses' share of each pool's misses in round 2: those
	// of the causes the analyzer calls unexplained (report.Unexplained),
	// cause unknown aside, its own series beside them.
	unexplainedRound2 := func(sel selection) want {
		w, total := want{}, map[string]float64{}
		for k, n := range delta.acquires {
			f := strings.Split(string(k), "|")
			if f[1] != "false" || (sel != all && sel.pool != f[0]) {
				continue
			}
			total[f[0]] += float64(n)
			if !spans.IsExplainedMiss(f[2]) && f[2] != spans.MissCauseUnknown {
				w[keyOf(f[0])] += float64(n)
			}
		}
		for k, v := range w {
			w[k] = v / total[string(k)]
		}
		return w
	}
	// unexplainedShare checks q per pool, divided by the rate of all the
	// pool's misses taken at the same instant, against w.
	unexplainedShare := func(q dashboards.Query, sel selection, w want) {
		t.Helper()
		misses := fmt.Sprintf(`sum by (%s) (rate(%s_total{%s=~"${%s}", %s="false"}[$__rate_interval]))`, lPool, promLabel(spans.ConnectorMetricAcquires),
			lPool, dashboards.VarPool, promLabel(spans.AttrCacheHit))
		got, err := prom.QueryAt(ctx, substitute(q.Expr+" / on ("+lPool+") "+misses, sel, window), at)
		if err != nil {
			t.Errorf("panel %q %s with %s: %v", q.Panel, q.RefID, sel, err)
			return
		}
		seen := want{}
		for _, s := range got {
			seen[keyOf(s.Metric[lPool])] = s.Value
		}
		if !maps.EqualFunc(seen, w, func(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }) {
			t.Errorf("panel %q %s with %s: shares of the pools' misses %v, the connector counted %v", q.Panel, q.RefID, sel, seen, w)
		}
	}
	for _, sel := range append([]selection{all}, concrete...) {
		check(find(dashboards.FleetPanelHitRateSince, "A"), sel, []string{lPool}, hitRate(sel), false)
		check(find(dashboards.FleetPanelHitRateSince, "B"), sel, []string{lPool}, floor(sel), false)
		check(find(dashboards.FleetPanelMissesSince, "A"), sel, []string{lPool, lCause}, byCause(sel), false)
		check(find(dashboards.FleetPanelViolationsSince, "A"), sel, []string{lRule, lSeverity}, byRule(sel), false)
		if newSeries == 0 {
			check(find(dashboards.FleetPanelHitRate, "A"), sel, []string{lPool}, hitRateRound2(sel), false)
			check(find(dashboards.FleetPanelHitRate, "B"), sel, []string{lPool}, ceilingRound2(sel), false)
			check(find(dashboards.FleetPanelMissesByCause, "A"), sel, []string{lPool, lCause}, causeSharesRound2(sel), true)
			unexplainedShare(find(dashboards.FleetPanelUnexplained, "A"), sel, unexplainedRound2(sel))
		}
	}
	if newSeries > 0 {
		t.Errorf("round 2 opened %d acquire series round 1 did not have: the rate-based hit rate cannot be compared", newSeries)
	}
	check(find(dashboards.FleetPanelConnectorSummary, "A"), all, nil, want{"": float64(final.finalized)}, false)
	check(find(dashboards.FleetPanelConnectorSummary, "B"), all, nil, want{"": float64(final.cut)}, false)
	check(find(dashboards.FleetPanelConnectorSummary, "C"), all, nil, want{"": float64(final.late)}, false)

	connUp = false
	if err := conn.Shutdown(context.Background()); err != nil {
		t.Errorf("connector shutdown: %v", err)
	}
	t.Logf("%d queries of the fleet dashboard returned data with All and with concrete pool and rule values (%d pools, rules %v), rate window %v; %d traces finalized, %d cut, %d late spans",
		promQueries, len(pools), rules, window, final.finalized, final.cut, final.late)
}
