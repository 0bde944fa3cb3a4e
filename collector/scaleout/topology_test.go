package scaleout

// The scale-out topology as real processes, and the figures the test
// compares: Prometheus's counters per backend process, and mcptrace
// analyze / check on file dumps.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/collector/mcptraceconnector"
	"github.com/mcptrace/mcptrace/internal/promtest"
	"github.com/mcptrace/mcptrace/spans"
)

// scaleOutDir holds the topology's config files, run as they are, with
// free ports given through their ${env:…} variables.
const scaleOutDir = "../scale-out"

// runLabel is the Prometheus label each backend process gets (the exporter's
// const_labels): one value per process lifetime, so the counters of a
// backend before and after a restart are separate series.
const runLabel = "mcptrace_e2e_run"

// backend is one mcptrace backend's ports and its current process.
type backend struct {
	n                           int // 1 or 2: which config file
	otlpPort, promPort, telPort int
	proc                        *proc
	capture                     *capture // what this process received
	run                         string   // its runLabel value
}

// topology is the router, two backends and Prometheus.
type topology struct {
	t          *testing.T
	bins       binaries
	dir        string
	backends   [2]*backend
	router     *proc
	routerAddr string
	routerPort int
	prom       *promtest.Server
	lifetimes  map[int]int // processes started per backend
}

// startTopology starts both backends, the router in front of them and a
// Prometheus scraping both backends every second.
func startTopology(t *testing.T, bins binaries) *topology {
	t.Helper()
	top := &topology{t: t, bins: bins, dir: t.TempDir(), lifetimes: map[int]int{}}
	// The router starts first, on ports chosen for it and for the backends:
	// its exporters dial a backend only when they first send to it, and
	// the backends then send their acquire records to a router that is
	// already listening. (Backends first, their exporter's first dial was
	// refused, and its retry backoff, about 7 s, held their first records
	// past the pair tiers' pair_wait: attributed late, causes off.)
	grpcPort := promtest.FreePort(t)
	top.routerPort = grpcPort
	for i := range top.backends {
		top.backends[i] = &backend{n: i + 1, otlpPort: promtest.FreePort(t), promPort: promtest.FreePort(t), telPort: promtest.FreePort(t)}
	}
	env := []string{
		"MCPTRACE_ROUTER_GRPC_PORT=" + strconv.Itoa(grpcPort),
		"MCPTRACE_ROUTER_HTTP_PORT=" + strconv.Itoa(promtest.FreePort(t)),
		"MCPTRACE_ROUTER_TELEMETRY_PORT=" + strconv.Itoa(promtest.FreePort(t)),
		"MCPTRACE_BACKEND1_OTLP_PORT=" + strconv.Itoa(top.backends[0].otlpPort),
		"MCPTRACE_BACKEND2_OTLP_PORT=" + strconv.Itoa(top.backends[1].otlpPort),
	}
	// The router's per-backend OTLP exporter of traces without its sending
	// queue, so a request is forwarded before the router answers it: a
	// backend that is down fails the request, which the sender sees and
	// the test accounts for. Retries stay on, bounded to 3 s. The acquire
	// records' exporter (loadbalancing/pairs) keeps router.yaml's
	// defaults: a queue per backend, retried for 5 minutes.
	overlay := `exporters:
  loadbalancing:
    protocol:
      otlp:
        timeout: 5s
        sending_queue:
          enabled: false
        retry_on_failure:
          enabled: true
          initial_interval: 100ms
          max_interval: 500ms
          max_elapsed_time: 3s
`
	ov := filepath.Join(top.dir, "router-overlay.yaml")
	if err := os.WriteFile(ov, []byte(overlay), 0o644); err != nil {
		t.Fatal(err)
	}
	top.router = startProc(t, "router", bins.router, env,
		"--config=file:"+filepath.Join(scaleOutDir, "router.yaml"), "--config=file:"+ov)
	top.router.waitLog(t, readyLine, 60*time.Second)
	top.routerAddr = fmt.Sprintf("127.0.0.1:%d", grpcPort)
	for _, b := range top.backends {
		top.startBackend(b)
	}
	top.prom = promtest.Start(t, bins.prometheus, "/metrics",
		fmt.Sprintf("127.0.0.1:%d", top.backends[0].promPort),
		fmt.Sprintf("127.0.0.1:%d", top.backends[1].promPort))
	return top
}

// startBackend starts a new process of backend b: its config file as is,
// plus an overlay that sets the connector's wait to 2 s and pair_wait to
// 20 s (over the wait, a sweep and the records' trip through the router,
// with room for a retry of the exporter to the router, whose backoff the
// overlay shortens, and for a killed backend's downtime: a pool scope's
// records from its restarted trace tier must still arrive before the
// surviving pair tier replays the scope past them), captures the acquire records its pair tier receives (a second logs
// pipeline), labels its
// counters with a new run, and adds a second traces pipeline forwarding
// everything the backend receives to a capture receiver of the test.
func (top *topology) startBackend(b *backend) {
	t := top.t
	t.Helper()
	top.lifetimes[b.n]++
	b.capture = startCapture(t)
	b.run = fmt.Sprintf("b%d-life%d", b.n, top.lifetimes[b.n])
	overlay := fmt.Sprintf(`connectors:
  mcptrace:
    wait: 2s
  mcptrace/pairs:
    pair_wait: 20s
exporters:
  otlp_grpc/router:
    retry_on_failure:
      initial_interval: 200ms
      max_interval: 1s
  prometheus:
    const_labels:
      %s: %s
  otlp_grpc/capture:
    endpoint: %s
    tls:
      insecure: true
    sending_queue:
      enabled: false
    retry_on_failure:
      enabled: false
service:
  pipelines:
    traces/capture:
      receivers: [otlp]
      exporters: [otlp_grpc/capture]
    logs/capture:
      receivers: [otlp]
      exporters: [otlp_grpc/capture]
`, runLabel, b.run, b.capture.addr)
	ov := filepath.Join(top.dir, b.run+"-overlay.yaml")
	if err := os.WriteFile(ov, []byte(overlay), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{
		fmt.Sprintf("MCPTRACE_BACKEND%d_OTLP_PORT=%d", b.n, b.otlpPort),
		fmt.Sprintf("MCPTRACE_BACKEND%d_PROM_PORT=%d", b.n, b.promPort),
		fmt.Sprintf("MCPTRACE_BACKEND%d_TELEMETRY_PORT=%d", b.n, b.telPort),
		fmt.Sprintf("MCPTRACE_ROUTER_GRPC_PORT=%d", top.routerPort),
	}
	b.proc = startProc(t, b.run, top.bins.collector, env,
		"--config=file:"+filepath.Join(scaleOutDir, fmt.Sprintf("backend-%d.yaml", b.n)), "--config=file:"+ov)
	b.proc.waitLog(t, readyLine, 60*time.Second)
}

// figures are counts keyed as text, so Prometheus's counters and the
// analyzer's report compare as maps: "acquire pool=… hit", "acquire pool=…
// miss=cause", "handshakes pool=…", "executions", "executions
// multi_session", "violations rule=… severity=…", "traces". Zero counts are
// left out.
type figures map[string]int64

func (f figures) add(key string, n int64) {
	if n != 0 {
		f[key] += n
	}
}

// sum adds the figures whose key starts with prefix and, when suffix is
// set, ends with it.
func (f figures) sum(prefix, suffix string) int64 {
	var n int64
	for k, v := range f {
		if strings.HasPrefix(k, prefix) && strings.HasSuffix(k, suffix) {
			n += v
		}
	}
	return n
}

// perTraceFacts are the figures that add up across instances whatever
// the routing: each is a fact of one trace.
var perTraceFacts = []struct{ what, prefix, suffix string }{
	{"acquires", "acquire ", ""},
	{"hits", "acquire ", " hit"},
	{"handshakes", "handshakes ", ""},
	{"executions", "executions", ""},
	{"executions on several sessions", "executions multi_session", ""},
	{"traces", "traces", ""},
}

// without returns f less the keys that start with any of prefixes.
func (f figures) without(prefixes ...string) figures {
	out := figures{}
	for k, v := range f {
		drop := false
		for _, p := range prefixes {
			drop = drop || strings.HasPrefix(k, p)
		}
		if !drop {
			out[k] = v
		}
	}
	return out
}

// misses counts the misses of f (acquires that are not hits).
func (f figures) misses() int64 { return f.sum("acquire ", "") - f.sum("acquire ", " hit") }

// diff lists the keys where got and want differ.
func diff(got, want figures) []string {
	var out []string
	for k, w := range want {
		if got[k] != w {
			out = append(out, fmt.Sprintf("%s = %d, want %d", k, got[k], w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s = %d, want 0", k, g))
		}
	}
	sort.Strings(out)
	return out
}

// inStreamRules are the built-in rules the connector evaluates per trace.
func inStreamRules() map[string]bool {
	m := map[string]bool{}
	for _, r := range rulefmt.BuiltinRules(rulefmt.Config{}) {
		if analyze.InStream(r) {
			m[r.ID] = true
		}
	}
	return m
}

// analyzeDump runs `mcptrace analyze --format json` and `mcptrace check
// --format json` on the dump at path and returns its figures (violations of
// the in-stream rules only: the connector does not judge the others).
func analyzeDump(t *testing.T, cli, path string) figures {
	t.Helper()
	out, err := exec.Command(cli, "analyze", "--format", "json", path).Output()
	if err != nil {
		t.Fatalf("mcptrace analyze %s: %v\n%s", path, err, stderrOf(err))
	}
	var rep struct {
		Traces int `json:"traces"`
		Pool   struct {
			ByScope []struct {
				Scope       string         `json:"scope"`
				Hits        int64          `json:"hits"`
				Handshakes  int64          `json:"handshakes"`
				MissReasons map[string]int `json:"miss_reasons"`
			} `json:"by_scope"`
		} `json:"pool"`
		Executions struct {
			Count        int64 `json:"count"`
			MultiSession int64 `json:"multi_session"`
		} `json:"executions"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("mcptrace analyze %s: %v", path, err)
	}
	f := figures{}
	for _, sc := range rep.Pool.ByScope {
		f.add(fmt.Sprintf("acquire pool=%q hit", sc.Scope), sc.Hits)
		for cause, n := range sc.MissReasons {
			f.add(fmt.Sprintf("acquire pool=%q miss=%s", sc.Scope, cause), int64(n))
		}
		f.add(fmt.Sprintf("handshakes pool=%q", sc.Scope), sc.Handshakes)
	}
	f.add("executions", rep.Executions.Count)
	f.add("executions multi_session", rep.Executions.MultiSession)
	f.add("traces", int64(rep.Traces))

	// check exits 1 when a rule fails: that is an answer, not an error.
	out, err = exec.Command(cli, "check", "--format", "json", path).Output()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("mcptrace check %s: %v\n%s", path, err, stderrOf(err))
	}
	var chk struct {
		Rules []struct {
			ID       string `json:"id"`
			Severity string `json:"severity"`
			Failed   int64  `json:"failed"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(out, &chk); err != nil {
		t.Fatalf("mcptrace check %s: %v", path, err)
	}
	in := inStreamRules()
	for _, r := range chk.Rules {
		if in[r.ID] {
			f.add(fmt.Sprintf("violations rule=%s severity=%s", r.ID, r.Severity), r.Failed)
		}
	}
	return f
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// promFigures reads every backend process's counters from Prometheus,
// keyed by run. last_over_time over the whole test's span returns each
// series' latest sample, including the series of a process that died
// (Prometheus marks them stale, and range vectors skip the markers); the
// run label keeps one process lifetime's counters apart from the next's,
// so summing the runs sums per process lifetime, exactly.
func promFigures(prom *promtest.Server) (map[string]figures, error) {
	out := map[string]figures{}
	get := func(run string) figures {
		if out[run] == nil {
			out[run] = figures{}
		}
		return out[run]
	}
	for _, q := range []struct {
		metric string
		key    func(l map[string]string) string
	}{
		{"mcptrace_pool_acquires_total", func(l map[string]string) string {
			if l["plugin_mcp_cache_hit"] == "true" {
				return fmt.Sprintf("acquire pool=%q hit", l["plugin_mcp_pool_id"])
			}
			return fmt.Sprintf("acquire pool=%q miss=%s", l["plugin_mcp_pool_id"], l["mcptrace_miss_cause"])
		}},
		{"mcptrace_pool_handshakes_total", func(l map[string]string) string {
			return fmt.Sprintf("handshakes pool=%q", l["plugin_mcp_pool_id"])
		}},
		{"mcptrace_executions_total", func(map[string]string) string { return "executions" }},
		{"mcptrace_executions_total", func(l map[string]string) string {
			if l["mcptrace_execution_multi_session"] == "true" {
				return "executions multi_session"
			}
			return ""
		}},
		{"mcptrace_rule_violations_total", func(l map[string]string) string {
			return fmt.Sprintf("violations rule=%s severity=%s", l["mcptrace_rule_id"], l["mcptrace_rule_severity"])
		}},
		{"mcptrace_traces_finalized_total", func(map[string]string) string { return "traces" }},
		{"mcptrace_traces_late_spans_total", func(map[string]string) string { return "late spans" }},
		{"mcptrace_traces_cut_total", func(map[string]string) string { return "cut" }},
		{"mcptrace_pool_acquires_pending", func(map[string]string) string { return "pending" }},
	} {
		samples, err := prom.Query(context.Background(), fmt.Sprintf("last_over_time(%s[15m])", q.metric))
		if err != nil {
			return nil, err
		}
		if len(samples) == 0 {
			// Every one of these exists once the backends finalized the
			// workload (late and cut are sent at start, as zeros): a name
			// that matches nothing must not read as zero.
			return nil, fmt.Errorf("no %s series in Prometheus", q.metric)
		}
		for _, s := range samples {
			run := s.Metric[runLabel]
			if run == "" {
				return nil, fmt.Errorf("%s series without the %s label: %v", q.metric, runLabel, s.Metric)
			}
			if k := q.key(s.Metric); k != "" {
				get(run).add(k, int64(s.Value))
			}
		}
	}
	return out, nil
}

// batchTraces are the traces of some OTLP batches, in arrival order (the
// order of their first span), with their spans.
type batchTraces struct {
	order []pcommon.TraceID
	spans map[pcommon.TraceID]int
	pairs map[pcommon.TraceID][]string // (pool, key) of each acquire
}

func tracesOf(batches []ptrace.Traces) batchTraces {
	bt := batchTraces{spans: map[pcommon.TraceID]int{}, pairs: map[pcommon.TraceID][]string{}}
	eachSpan(batches, func(rs ptrace.ResourceSpans, sp ptrace.Span) {
		id := sp.TraceID()
		if _, ok := bt.spans[id]; !ok {
			bt.order = append(bt.order, id)
		}
		bt.spans[id]++
		if sp.Name() == spans.SpanAcquire {
			pool, _ := rs.Resource().Attributes().Get(spans.ResourceServiceInstanceID)
			key, _ := sp.Attributes().Get(spans.AttrCacheKey)
			bt.pairs[id] = append(bt.pairs[id], pool.AsString()+"/"+key.AsString())
		}
	})
	return bt
}

func eachSpan(batches []ptrace.Traces, f func(ptrace.ResourceSpans, ptrace.Span)) {
	for _, td := range batches {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					f(rs, ss.At(k))
				}
			}
		}
	}
}

// filterBatches copies the spans of the traces keep selects.
func filterBatches(batches []ptrace.Traces, keep map[pcommon.TraceID]bool) []ptrace.Traces {
	var out []ptrace.Traces
	for _, td := range batches {
		n := ptrace.NewTraces()
		td.CopyTo(n)
		n.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
			rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
				ss.Spans().RemoveIf(func(sp ptrace.Span) bool { return !keep[sp.TraceID()] })
				return ss.Spans().Len() == 0
			})
			return rs.ScopeSpans().Len() == 0
		})
		if n.SpanCount() > 0 {
			out = append(out, n)
		}
	}
	return out
}

// writeDump writes batches as OTLP JSON lines (one line per batch, as the
// Collector's file exporter does) and returns the path.
func writeDump(t *testing.T, dir, name string, batches []ptrace.Traces) string {
	t.Helper()
	var buf bytes.Buffer
	var m ptrace.JSONMarshaler
	for _, td := range batches {
		b, err := m.MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	path := filepath.Join(dir, name+".otlp.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// settle polls Prometheus (bounded) until, for every run in want, the
// finalized-traces counter equals want[run] and the run's pairs leg holds
// no acquire (its pending gauge is 0), and then until the acquires: when
// acquires >= 0, until their sum over every run equals it; when it is -1
// (a count the test cannot know), until the sum is the same in two reads
// at least stableFor apart with nothing pending (a trace tier sends its
// acquire records within a sweep of finalizing a trace). The connector
// emits its counters together, so the other counters of that scrape are
// final too.
func settle(t *testing.T, prom *promtest.Server, want map[string]int64, acquires int64, bound time.Duration) map[string]figures {
	t.Helper()
	var got map[string]figures
	var lastSum int64 = -1
	var lastAt time.Time
	err := poll(bound, func() error {
		var err error
		got, err = promFigures(prom)
		if err != nil {
			return fmt.Errorf("%w: %v", errNotYet, err)
		}
		for run, n := range want {
			if got[run]["traces"] != n {
				return fmt.Errorf("%w: %s finalized %d of %d traces", errNotYet, run, got[run]["traces"], n)
			}
			if p := got[run]["pending"]; p != 0 {
				return fmt.Errorf("%w: %s holds %d acquires for attribution", errNotYet, run, p)
			}
		}
		var sum int64
		for _, f := range got {
			sum += f.sum("acquire ", "")
		}
		if acquires >= 0 {
			if sum != acquires {
				return fmt.Errorf("%w: %d acquires attributed over the backends, %d in the dump", errNotYet, sum, acquires)
			}
			return nil
		}
		if sum != lastSum {
			lastSum, lastAt = sum, time.Now()
			return fmt.Errorf("%w: %d acquires attributed, not yet stable", errNotYet, sum)
		}
		if time.Since(lastAt) < stableFor {
			return fmt.Errorf("%w: %d acquires attributed for %s", errNotYet, sum, time.Since(lastAt).Round(time.Millisecond))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("counters did not settle within %s: %v", bound, err)
	}
	return got
}

// stableFor is how long settle wants an unknowable acquire count unchanged:
// over two sweeps of the trace tier plus two scrapes.
const stableFor = 4 * time.Second

// pairFigures attributes the acquire records in lds with the analyzer's
// pair stage (analyze.PairStream, in start order, every record at once)
// and returns its acquire figures: what a pair tier that received exactly
// those records and attributed none late counts.
func pairFigures(t *testing.T, lds []plog.Logs) (figures, int) {
	t.Helper()
	ps, err := analyze.NewPairStream(rulefmt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ld := range lds {
		evs, err := mcptraceconnector.ReadAcquireRecords(ld)
		if err != nil {
			t.Fatalf("captured acquire records: %v", err)
		}
		ps.Add(evs)
		n += len(evs)
	}
	f := figures{}
	acquires, _ := ps.Attribute(math.MaxInt64)
	for _, a := range acquires {
		if a.Hit {
			f.add(fmt.Sprintf("acquire pool=%q hit", a.Pool), int64(a.N))
		} else {
			f.add(fmt.Sprintf("acquire pool=%q miss=%s", a.Pool, a.MissCause), int64(a.N))
		}
	}
	return f, n
}

// acquiresOnly keeps the acquire figures of f.
func acquiresOnly(f figures) figures {
	out := figures{}
	for k, v := range f {
		if strings.HasPrefix(k, "acquire ") {
			out[k] = v
		}
	}
	return out
}
