package pool_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// loadExecutions is how many executions the load test starts at once.
// loadWorkers (load_race_test.go, load_norace_test.go) is how many may run
// at the same time: all of them normally; fewer under the race detector,
// which slows each handshake tenfold and caps live goroutines, as a
// gateway's worker pool would. With fewer workers than executions, sessions
// are reused under load and "sessions opened <= peak concurrency" bounds the
// dials well below one per execution.
const loadExecutions = 500

// loadBound bounds the whole load test; it is a hang guard, not a speed
// assertion (speed lives in the benchmarks).
const loadBound = 90 * time.Second

// An execution is what a gateway does for one agent step: dependent calls
// that must land in one downstream session. It holds one lease for all its
// calls, which is what proves "one session per execution": with CallTool per
// call, concurrent executions would trade sessions between their calls.
func execute(ctx context.Context, p *pool.Pool, target *pool.Target, tracer trace.Tracer, i int) (err error) {
	ctx, span := tracer.Start(ctx, "execution")
	defer span.End()
	l, err := p.Acquire(ctx, target)
	if err != nil {
		return fmt.Errorf("execution %d: acquire: %w", i, err)
	}
	defer func() { l.Release(err) }()
	ws := fmt.Sprintf("ws-%d", i)
	if _, err = l.CallTool(ctx, &mcp.CallToolParams{Name: fixtures.ToolSelectWorkspace, Arguments: map[string]any{"workspace": ws}}); err != nil {
		return fmt.Errorf("execution %d: select: %w", i, err)
	}
	res, err := l.CallTool(ctx, &mcp.CallToolParams{Name: fixtures.ToolGetWorkspace})
	if err != nil {
		return fmt.Errorf("execution %d: get: %w", i, err)
	}
	if got := resultText(res); got != "workspace:"+ws {
		return fmt.Errorf("execution %d saw %q, want workspace:%s: its calls did not share a session", i, got, ws)
	}
	return nil
}

func TestLoad_ConcurrentExecutionsEachKeepOneSession(t *testing.T) {
	// Idle caps above the concurrency, so no session is evicted and every
	// dial is one more session alive: then sessions opened <= peak
	// concurrency is exact, not approximate.
	h := newHarness(t, harnessOpts{pool: pool.Options{MaxIdlePerKey: loadExecutions, MaxIdle: loadExecutions}})
	ctx, cancel := context.WithTimeout(context.Background(), loadBound)
	defer cancel()
	tracer := h.tracerP.Tracer("load-test")

	var running, peak atomic.Int64
	start := make(chan struct{})
	workers := make(chan struct{}, loadWorkers)
	errs := make(chan error, loadExecutions)
	var wg sync.WaitGroup
	for i := range loadExecutions {
		wg.Go(func() {
			<-start
			workers <- struct{}{}
			defer func() { <-workers }()
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			defer running.Add(-1)
			if err := execute(ctx, h.pool, h.target, tracer, i); err != nil {
				errs <- err
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if failed++; failed <= 5 {
			t.Error(err)
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d executions failed", failed, loadExecutions)
	}

	st := h.pool.Stat()
	if st.Acquires != loadExecutions || st.Hits+st.Misses != loadExecutions || st.DialFailures != 0 || len(nonZero(st.Failures)) != 0 {
		t.Errorf("stat = %+v, want %d clean acquires", st, loadExecutions)
	}
	if peak.Load() > loadWorkers {
		t.Errorf("peak concurrency %d above the %d workers: the test's own bound is broken", peak.Load(), loadWorkers)
	}
	if st.Hits < int64(loadExecutions-loadWorkers) {
		t.Errorf("hits = %d, want at least %d: with %d workers every execution past the first wave finds an idle session", st.Hits, loadExecutions-loadWorkers, loadWorkers)
	}
	if st.Dials > peak.Load() {
		t.Errorf("sessions opened = %d, peak concurrency = %d: a session was opened that no concurrent execution needed", st.Dials, peak.Load())
	}
	if st.InUseSessions != 0 || int64(st.IdleSessions) != st.Dials {
		t.Errorf("gauges in use %d, idle %d; want 0 and every opened session idle (%d)", st.InUseSessions, st.IdleSessions, st.Dials)
	}
	if got := int64(h.srv.Initializes()); got != st.Dials {
		t.Errorf("fixture initializes = %d, pool dials = %d", got, st.Dials)
	}
	if got := int64(len(h.srv.SessionIDs())); got != st.Dials {
		t.Errorf("fixture saw %d session ids, pool dialed %d", got, st.Dials)
	}

	// The spans say the same: under each execution, two calls, one session.
	sessions := map[trace.SpanID]map[string]int{}
	for _, s := range h.spansNamed(spans.SpanCallTool) {
		parent := s.Parent().SpanID()
		if sessions[parent] == nil {
			sessions[parent] = map[string]int{}
		}
		sessions[parent][attr(s, spans.AttrSessionID)]++
	}
	if len(sessions) != loadExecutions {
		t.Fatalf("call spans under %d executions, want %d", len(sessions), loadExecutions)
	}
	for _, ids := range sessions {
		if len(ids) != 1 {
			t.Fatalf("an execution's calls rode sessions %v, want one", ids)
		}
		for id, n := range ids {
			if id == "" || n != 2 {
				t.Fatalf("an execution made %d calls on session %q, want 2 on one known session", n, id)
			}
		}
	}
	t.Logf("%d executions, peak concurrency %d, sessions opened %d, hits %d", loadExecutions, peak.Load(), st.Dials, st.Hits)
}

// nonZero returns the entries of m with a non-zero count.
func nonZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}
