package demo

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// ModeLive names the live workload on execution spans (AttrMode).
const ModeLive Mode = "live"

// DefaultLivePause is the pause between two rounds of a live scenario when
// LiveConfig.Pause is zero: a few dozen calls a second, enough for every
// dashboard panel to move without loading the machine.
const DefaultLivePause = 100 * time.Millisecond

// Pool scope ids of the live workload, one per scenario, so the dashboards'
// pool variable has several values and each pool shows one behaviour.
const (
	// LivePoolSteady serves hits, concurrent bursts, a cold key per round
	// and tool errors.
	LivePoolSteady = "live-steady"
	// LivePoolTTL has a 200ms idle TTL: its sessions expire between calls.
	LivePoolTTL = "live-ttl"
	// LivePoolFaults talks to a fixture that rejects, resets and forgets
	// sessions: failures, after_failure, redial and health_check misses.
	LivePoolFaults = "live-faults"
	// LivePoolLRU keeps 2 idle sessions for 3 keys: evicted misses.
	LivePoolLRU = "live-lru"
)

// Timing of the live scenarios. The fault pool pings sessions idle for
// longer than liveHealthCheckAfter; the health-check step idles past it,
// every other step reuses sessions well within it.
const (
	liveTTL              = 200 * time.Millisecond
	liveHealthCheckAfter = 200 * time.Millisecond
	liveHealthIdle       = 300 * time.Millisecond
)

// LiveConfig configures [RunLive]. The zero value runs until the context is
// done, with no telemetry, pausing DefaultLivePause between rounds.
type LiveConfig struct {
	// Duration stops the workload after this long. Zero: run until the
	// context passed to RunLive is done.
	Duration time.Duration
	// MeterProvider receives the pools' metrics. Nil: no metrics.
	MeterProvider metric.MeterProvider
	// TracerProvider receives the pools' spans and one demo.execution root
	// span per round of each scenario. Nil: no spans.
	TracerProvider trace.TracerProvider
	// Pause between two rounds of a scenario. Zero: DefaultLivePause.
	// Negative: no pause at all, a CPU load (for profiling).
	Pause time.Duration
	// Latency the fixtures add to every request, emulating a network.
	Latency time.Duration
	// Progress, if set, is called after each round of a scenario with the
	// number of rounds run so far over all scenarios. It is called from the
	// scenarios' goroutines, one call at a time.
	Progress func(rounds int)
}

// LiveResult summarizes a live run: what the workload did, and the pools'
// own counters summed over the four pools.
type LiveResult struct {
	// Wall is how long the workload ran.
	Wall time.Duration `json:"-"`
	// WallMS is Wall in milliseconds, for JSON.
	WallMS float64 `json:"wall_ms"`
	// Rounds counts completed rounds over all scenarios.
	Rounds int `json:"rounds"`
	// Calls counts tool calls made; InjectedErrors the calls that failed
	// because the workload injected a fault; UnexpectedErrors the others.
	Calls            int `json:"calls"`
	InjectedErrors   int `json:"injected_errors"`
	UnexpectedErrors int `json:"unexpected_errors"`
	// LastError is the last unexpected error, for the report ("" if none).
	LastError string `json:"last_error,omitempty"`
	// Acquires, Hits and Redials are the pools' counters.
	Acquires int64 `json:"acquires"`
	Hits     int64 `json:"hits"`
	Redials  int64 `json:"redials"`
	// MissReasons, Evictions and Failures are the pools' counters by
	// reason, eviction reason and error type.
	MissReasons map[string]int64 `json:"miss_reasons"`
	Evictions   map[string]int64 `json:"evictions"`
	Failures    map[string]int64 `json:"failures"`
}

// live is the state of one RunLive call.
type live struct {
	cfg    LiveConfig
	tracer trace.Tracer
	pause  time.Duration

	mu  sync.Mutex // guards res
	res LiveResult
}

// RunLive runs a long-lived workload on two fixtures on 127.0.0.1 through
// four pools until cfg.Duration has passed or ctx is done, so live
// dashboards have data: hits; misses of every reason the pool knows (cold,
// concurrent, ttl, redial, after_failure, health_check, evicted); failures
// (HTTP 500, connection resets, expired sessions); evictions (ttl,
// idle_limit, lru, health_check); tool errors. Stopping is the normal end:
// RunLive returns a nil error then. It returns an error only when the
// fixtures or pools cannot be set up. Every fixture, pool and goroutine is
// closed before it returns.
func RunLive(ctx context.Context, cfg LiveConfig) (LiveResult, error) {
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	l := &live{cfg: cfg, pause: cfg.Pause}
	if l.pause == 0 {
		l.pause = DefaultLivePause
	}
	tp := cfg.TracerProvider
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	l.tracer = tp.Tracer(spans.ScopeName + "/demo")

	steadySrv, err := fixtures.Start(fixtures.Options{Latency: cfg.Latency})
	if err != nil {
		return LiveResult{}, fmt.Errorf("start steady fixture: %w", err)
	}
	defer steadySrv.Close()
	faultSrv, err := fixtures.Start(fixtures.Options{Latency: cfg.Latency})
	if err != nil {
		return LiveResult{}, fmt.Errorf("start fault fixture: %w", err)
	}
	defer faultSrv.Close()

	newPool := func(o pool.Options) (*pool.Pool, error) {
		o.TracerProvider = cfg.TracerProvider
		o.MeterProvider = cfg.MeterProvider
		p, err := pool.New(o)
		if err != nil {
			return nil, fmt.Errorf("live pool %s: %w", o.ID, err)
		}
		return p, nil
	}
	var pools []*pool.Pool
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	specs := []struct {
		opts pool.Options
		run  func(context.Context, *pool.Pool, int)
	}{
		// FixedIdlePerKey: one idle session per key whatever the burst, so
		// the burst shows idle_limit evictions (the default keeps the
		// burst's sessions for the next one).
		{pool.Options{ID: LivePoolSteady, IdleTTL: 3 * time.Second, SweepInterval: time.Second, FixedIdlePerKey: true},
			func(ctx context.Context, p *pool.Pool, round int) { l.steady(ctx, p, steadySrv, round) }},
		{pool.Options{ID: LivePoolTTL, IdleTTL: liveTTL, SweepInterval: -1},
			func(ctx context.Context, p *pool.Pool, round int) { l.ttl(ctx, p, steadySrv) }},
		{pool.Options{ID: LivePoolFaults, IdleTTL: 10 * time.Second, HealthCheckAfter: liveHealthCheckAfter},
			func(ctx context.Context, p *pool.Pool, round int) { l.faults(ctx, p, faultSrv) }},
		{pool.Options{ID: LivePoolLRU, MaxIdle: 2},
			func(ctx context.Context, p *pool.Pool, round int) { l.lru(ctx, p, steadySrv) }},
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, s := range specs {
		p, err := newPool(s.opts)
		if err != nil {
			return LiveResult{}, err
		}
		pools = append(pools, p)
		wg.Go(func() {
			for round := 1; ctx.Err() == nil; round++ {
				ctx, span := l.tracer.Start(ctx, SpanExecution, trace.WithAttributes(
					attribute.String(AttrMode, string(ModeLive)),
					attribute.String(spans.AttrPoolID, p.ID()),
				))
				s.run(ctx, p, round)
				span.End()
				if ctx.Err() != nil {
					return
				}
				l.roundDone()
				if !sleepCtx(ctx, l.pause) {
					return
				}
			}
		})
	}
	// The fixtures' ledgers grow with every request: trim them while the
	// workload runs for hours. Nothing here reads them.
	wg.Go(func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				steadySrv.ResetRequests()
				faultSrv.ResetRequests()
			}
		}
	})
	wg.Wait()

	res := l.result()
	res.Wall = time.Since(start)
	res.WallMS = float64(res.Wall.Microseconds()) / 1000
	res.MissReasons = map[string]int64{}
	res.Evictions = map[string]int64{}
	res.Failures = map[string]int64{}
	for _, p := range pools {
		st := p.Stat()
		res.Acquires += st.Acquires
		res.Hits += st.Hits
		res.Redials += st.Redials
		addCounts(res.MissReasons, st.MissReasons)
		addCounts(res.Evictions, st.Evictions)
		addCounts(res.Failures, st.Failures)
	}
	return res, nil
}

// addCounts adds the non-zero counts of src to dst.
func addCounts(dst, src map[string]int64) {
	for k, v := range src {
		if v != 0 {
			dst[k] += v
		}
	}
}

// result returns a copy of the workload's own counters.
func (l *live) result() LiveResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.res
}

func (l *live) roundDone() {
	l.mu.Lock()
	l.res.Rounds++
	n := l.res.Rounds
	if l.cfg.Progress != nil {
		l.cfg.Progress(n)
	}
	l.mu.Unlock()
}

// call makes one tool call and books its outcome. injected says the
// workload arranged for this call to fail; a failure caused by the workload
// stopping is not booked at all.
func (l *live) call(ctx context.Context, p *pool.Pool, t *pool.Target, tool string, args map[string]any, injected bool) error {
	_, err := p.CallTool(ctx, t, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil && ctx.Err() != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.res.Calls++
	switch {
	case err == nil:
	case injected:
		l.res.InjectedErrors++
	default:
		l.res.UnexpectedErrors++
		l.res.LastError = err.Error()
	}
	return err
}

// target builds the target of a tenant on srv. Targets are cheap; the key
// is what the pool caches by.
func target(srv *fixtures.Server, tenant string) *pool.Target {
	t, err := pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL(), Header: http.Header{"X-Demo-Tenant": {tenant}}})
	if err != nil {
		// The fixture's URL is always a valid loopback endpoint.
		panic(fmt.Sprintf("demo: target for fixture %s: %v", srv.URL(), err))
	}
	return t
}

// steady is the healthy traffic: a run of hits on one key, a concurrent
// burst on it (concurrent misses, then idle_limit evictions as the burst's
// extra sessions come back), a first call on a new key (a cold miss; the
// key's session expires and is swept later) and a tool error (a clean
// release, counted in the call metric's error.type).
func (l *live) steady(ctx context.Context, p *pool.Pool, srv *fixtures.Server, round int) {
	main := target(srv, "tenant-1")
	l.call(ctx, p, main, fixtures.ToolSelectWorkspace, map[string]any{"workspace": fmt.Sprintf("ws-%d", round)}, false)
	for range 8 {
		l.call(ctx, p, main, fixtures.ToolGetWorkspace, nil, false)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { l.call(ctx, p, main, fixtures.ToolSlow, map[string]any{"ms": 15}, false) })
	}
	wg.Wait()
	l.call(ctx, p, target(srv, fmt.Sprintf("visitor-%d", round)), fixtures.ToolEcho, map[string]any{"text": "hello"}, false)
	l.call(ctx, p, main, fixtures.ToolFail, nil, false)
}

// ttl calls twice in a row (a hit), idles past the pool's idle TTL, and
// calls again: the session has expired, a ttl miss and a ttl eviction. The
// idle gap stays under twice the TTL, after which the pool forgets the key
// and the miss would count as cold.
func (l *live) ttl(ctx context.Context, p *pool.Pool, srv *fixtures.Server) {
	t := target(srv, "tenant-ttl")
	l.call(ctx, p, t, fixtures.ToolEcho, map[string]any{"text": "a"}, false)
	l.call(ctx, p, t, fixtures.ToolEcho, map[string]any{"text": "b"}, false)
	if !sleepCtx(ctx, liveTTL+liveTTL/2) {
		return
	}
	l.call(ctx, p, t, fixtures.ToolEcho, map[string]any{"text": "c"}, false)
}

// faults runs against the fault fixture, which only this scenario uses, so
// the faults it arms hit its own requests:
//   - a 500 on a reused session: failure http_status, then after_failure;
//   - a connection reset before the tool runs: failure transport, then
//     after_failure;
//   - a server restart (ForgetSessions) just after a release: the reused
//     session answers 404, failure session_expired, and the pool redials;
//   - a restart while the session idles past the health-check threshold:
//     the ping fails, eviction and miss health_check.
func (l *live) faults(ctx context.Context, p *pool.Pool, srv *fixtures.Server) {
	t := target(srv, "tenant-faults")
	l.call(ctx, p, t, fixtures.ToolEcho, map[string]any{"text": "warm"}, false)

	srv.RejectNext(fixtures.Reject{Status: http.StatusInternalServerError})
	// A late DELETE of a session dropped earlier may take the rejection
	// instead; the call then succeeds, which is booked as such.
	l.call(ctx, p, t, fixtures.ToolSideEffect, nil, true)
	l.call(ctx, p, t, fixtures.ToolEcho, map[string]any{"text": "after 500"}, false)

	srv.ResetConnectionOnNextCall(fixtures.ResetBeforeTool)
	l.call(ctx, p, t, fixtures.ToolSideEffect, nil, true)
	l.call(ctx, p, t, fixtures.ToolEcho, map[string]any{"text": "after reset"}, false)

	srv.ForgetSessions()
	l.call(ctx, p, t, fixtures.ToolEcho, map[string]any{"text": "redialed"}, false)

	if !sleepCtx(ctx, liveHealthIdle) {
		return
	}
	srv.ForgetSessions()
	l.call(ctx, p, t, fixtures.ToolEcho, map[string]any{"text": "after ping"}, false)
}

// lru cycles through three keys on a pool that keeps two idle sessions:
// each release closes the least recently used, so every call after the
// first round is an evicted miss and an lru eviction.
func (l *live) lru(ctx context.Context, p *pool.Pool, srv *fixtures.Server) {
	for _, tenant := range []string{"lru-a", "lru-b", "lru-c"} {
		l.call(ctx, p, target(srv, tenant), fixtures.ToolEcho, map[string]any{"text": tenant}, false)
	}
}
