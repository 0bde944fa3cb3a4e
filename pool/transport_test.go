package pool_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
)

// The pool's own transport keeps as many idle HTTP connections as the
// pool's idle limits let it need: a burst of calls wider than net/http's
// default global cap of 100 idle connections finds its connections again on
// the next burst. With that cap, net/http closes the least recently used
// idle connection on every put past 100, which drops the burst's
// connections (and, under load, can close one whose 202 answer to
// notifications/initialized is still being delivered: "putIdleConn: too
// many idle connections", a failed dial).
func TestOwnedTransport_KeepsABurstsConnectionsPastNetHTTPsDefaultGlobalCap(t *testing.T) {
	const width = 150 // calls in flight at once, above net/http's 100
	h := newHarness(t, harnessOpts{pool: pool.Options{MaxIdle: 2 * width}})
	ctx, cancel := context.WithTimeout(context.Background(), loadBound)
	defer cancel()
	leases := make([]pool.Lease, width)
	for i := range leases {
		l, err := h.pool.Acquire(ctx, h.target)
		if err != nil {
			t.Fatalf("acquire %d: %v", i, err)
		}
		leases[i] = l
		defer l.Release(nil)
	}
	// burst holds one call per lease at the server until all have arrived,
	// so each one occupies its own connection, then lets them go.
	burst := func(round int) {
		t.Helper()
		h.srv.SetLatency(time.Hour)
		arrived := len(h.srv.Requests())
		errs := make(chan error, width)
		var wg sync.WaitGroup
		for _, l := range leases {
			wg.Go(func() {
				_, err := l.CallTool(ctx, &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "x"}})
				errs <- err
			})
		}
		if err := h.srv.WaitRequests(ctx, arrived+width); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		h.srv.SetLatency(0)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("round %d: %v", round, err)
			}
		}
	}
	burst(1)
	after1 := h.srv.Connections()
	if after1 < width {
		t.Fatalf("first burst used %d connections, want at least %d: the calls were not all in flight at once", after1, width)
	}
	burst(2)
	if got := h.srv.Connections() - after1; got != 0 {
		t.Errorf("second burst dialed %d new connections, want 0: the transport closed the first burst's idle connections", got)
	}
}
