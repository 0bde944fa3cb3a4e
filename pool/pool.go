package pool

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/pool/idle"
)

// Pool leases downstream MCP client sessions keyed by [Target] identity. It
// is safe for concurrent use. Create it with [New] and close it with
// [Pool.Close].
type Pool struct {
	opts      Options
	client    *mcp.Client
	transport http.RoundTripper
	ownsTrans bool
	oauth     *sharedOAuth // Options.OAuthHandler as shared; nil without OAuth
	inst      *instruments
	now       func() time.Time

	mu       sync.Mutex // guards everything below
	idle     *idle.Core[string, *conn, *keyData]
	closed   bool
	stats    counters
	breakers map[string]*breakerState // keys with failed dials; see breaker.go

	closing sync.WaitGroup // closes of dropped and evicted sessions in flight

	stopSweep chan struct{}
	sweepDone chan struct{}
	closeOnce sync.Once
}

// conn is one downstream session, idle or leased. For a sessionless server
// it is the key's shared client: many leases use it at once.
type conn struct {
	ks          *keyState
	e           *idle.Entry[string, *conn, *keyData] // the core's entry; guarded by p.mu
	session     *mcp.ClientSession
	id          string // Mcp-Session-Id; "" for a sessionless server
	revision    string // negotiated MCP protocol revision
	sessionless bool
	w           *watcher
	target      *Target
	slots       chan struct{} // bounds calls in flight on a shared client; nil: no bound
	born        time.Time     // handshake end, for the session duration
	gen         uint64        // lease generation; guarded by p.mu
	spans       connSpans     // prebuilt span attributes of this session (instrument.go)
}

// New returns a pool configured by opts (the zero Options is valid). It
// starts one background goroutine for the idle sweep unless
// opts.SweepInterval is negative; Close stops it.
func New(opts Options) (*Pool, error) {
	return newPool(opts, monotonicNow())
}

// newPool is New on the clock now, which every decision and the pre-warm
// read.
func newPool(opts Options, now func() time.Time) (*Pool, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pool{
		opts:   o,
		client: mcp.NewClient(&mcp.Implementation{Name: o.ClientName, Version: o.ClientVersion}, o.ClientOptions),
		now:    now,
		stats:  newCounters(),
	}
	p.oauth, _ = o.OAuthHandler.(*sharedOAuth)
	p.transport = o.HTTPTransport
	if p.transport == nil {
		p.transport = ownedTransport(o)
		p.ownsTrans = true
	}
	p.inst = newInstruments(o)
	p.idle = p.newIdleCore(o)
	if err := p.inst.registerMetrics(p, o.MeterProvider); err != nil {
		return nil, fmt.Errorf("pool: register metrics: %w", err)
	}
	p.prewarm(o.Prewarm) // before the sweeper and the first acquire (prewarm.go)
	if o.SweepInterval > 0 {
		t := time.NewTicker(o.SweepInterval)
		p.startSweeper(t.C, t.Stop)
	}
	return p, nil
}

// ownedTransport is the pool's own HTTP transport, a clone of
// http.DefaultTransport whose idle limits follow the pool's. Per server it
// keeps as many idle connections as the pool may keep sessions (or shared
// calls) on it, not net/http's 2: a shared client of a sessionless server,
// or many sessions of one server, would otherwise close and redial
// connections between calls. Over all servers it sets no cap of its own
// (MaxIdleConns 0, not the clone's 100), because the pool's MaxIdle already
// bounds the sessions it keeps and net/http's global cap is unsafe under a
// burst: on every put past it, net/http closes its least recently used idle
// connection, which can be one whose body-less 202 (to
// notifications/initialized) is still being handed to its caller, and that
// dial fails with "putIdleConn: too many idle connections". The per-server
// cap only ever refuses the connection being returned, which is closed after
// its answer is handed over. Connections no session reuses are reaped after
// the clone's IdleConnTimeout.
func ownedTransport(o Options) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = max(o.MaxIdle, o.MaxSharedCalls, 2)
	tr.MaxIdleConns = 0
	return tr
}

// monotonicNow is the pool's clock: one read of the monotonic clock per call
// instead of time.Now's two (wall and monotonic). The hit path must read the
// clock on acquire (TTL expiry) and on release (idle since), and on a VM's
// kvm-clock time.Now costs about 60 ns, twice a whole mutex free list's
// get+put; this halves it. The pool only subtracts and compares its times,
// which Go does on the monotonic reading, so the derived wall reading (base
// plus elapsed) is never shown. Under testing/synctest, time.Since falls
// back to the bubble's fake clock, so tests still control time.
func monotonicNow() func() time.Time {
	base := time.Now()
	return func() time.Time { return base.Add(time.Since(base)) }
}

// ID returns the pool scope id that names this pool in spans and metrics.
func (p *Pool) ID() string { return p.opts.ID }

// startSweeper runs a goroutine that closes idle sessions past their TTL on
// every tick, even when nothing acquires; Close stops it and then calls stop.
func (p *Pool) startSweeper(ticks <-chan time.Time, stop func()) {
	p.stopSweep = make(chan struct{})
	p.sweepDone = make(chan struct{})
	go p.sweeper(ticks, stop)
}

func (p *Pool) sweeper(ticks <-chan time.Time, stop func()) {
	defer close(p.sweepDone)
	defer stop()
	for {
		select {
		case <-p.stopSweep:
			return
		case <-ticks:
			p.mu.Lock()
			evs := p.idle.Sweep(ns(p.now()), nil)
			p.mu.Unlock()
			p.closeEvicted(context.Background(), evs)
		}
	}
}

// CallTool runs one tool invocation on a leased session: acquire, call,
// release. A session that the server answers with 404 (it forgot the session,
// reused or freshly dialed, so the tool did not run) is dropped and the call
// is made once more on a freshly dialed session; no other failure is
// retried, and never more than one redial per invocation. A tool result
// with IsError set is returned with a nil error and the session stays pooled.
// params.Arguments nil is sent as an empty object, which every server accepts.
// A context from [WithExecution] runs the call on that [Execution], so the
// calls of one execution ride one session.
func (p *Pool) CallTool(ctx context.Context, t *Target, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if e := executionFrom(ctx, p); e != nil {
		return e.CallTool(ctx, t, params)
	}
	ctx, span := p.inst.startInvoke(ctx, t, params.Name)
	res, err := p.callTool(ctx, t, params)
	endInvoke(span, res, err)
	return res, err
}

func (p *Pool) callTool(ctx context.Context, t *Target, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return p.withRedial(ctx, func(attempt int) (*mcp.CallToolResult, error) {
		l, err := p.acquire(ctx, t, attempt)
		if err != nil {
			return nil, err
		}
		res, err := l.CallTool(ctx, params)
		l.Release(err)
		return res, err
	})
}

// withRedial runs call as attempt 1 and, when that ends in an expired
// session, once more as attempt 2: the one place the pool redials, for
// [Pool.CallTool] and [Execution.CallTool] alike. A 404 to a request
// carrying the session id means the server does not know the session, so
// the tool did not run: start a new session, as the spec requires, whether
// this one was reused or fresh (a replica without affinity, a restart right
// after initialize). call must have dropped the expired session (its
// release does: an expired session is never clean), so attempt 2 acquires
// anew, and acquire(…, 2) always dials. Once per invocation by
// construction; nothing else is retried.
func (p *Pool) withRedial(ctx context.Context, call func(attempt int) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	res, err := call(1)
	if err == nil || !errors.Is(err, ErrSessionExpired) {
		return res, err
	}
	p.mu.Lock()
	p.stats.redials++
	p.mu.Unlock()
	p.inst.redial(ctx)
	return call(2)
}

// Acquire leases a session for t: an idle one if the key has one (a hit), or
// a freshly dialed one (a miss). The caller owns the lease and must call
// [Lease.Release] exactly once. Acquire never retries: a failed dial is
// returned. On a closed pool it returns [ErrPoolClosed].
func (p *Pool) Acquire(ctx context.Context, t *Target) (Lease, error) {
	return p.acquire(ctx, t, 1)
}

// newLease builds the lease handle, the one place a lease begins: it
// begins clean, with the watcher's faults forgotten, so that the lease is
// judged by its own requests only (a health-check ping's, or a reused
// session's past, are not its own; a handshake's never reach the watcher's
// lease faults at all, see [watcher]). A lease on a shared client gets its
// own token, so that releasing it twice is caught like an exclusive one,
// and keeps its faults per call.
func (p *Pool) newLease(c *conn, hit bool, start time.Time) Lease {
	l := Lease{p: p, c: c, gen: c.gen, hit: hit, acquired: start}
	if c.sessionless {
		l.tok = new(shareToken)
	} else {
		c.w.reset()
	}
	return l
}

// closeEvicted closes evicted sessions with no lock held, in parallel since
// each close may send an HTTP DELETE. Close errors (404, 405, 400 for a
// session the server already forgot) are expected and only logged.
func (p *Pool) closeEvicted(ctx context.Context, evs []eviction) {
	if len(evs) == 0 {
		return
	}
	var wg sync.WaitGroup
	for _, ev := range evs {
		p.inst.eviction(ctx, ev.Reason)
		c := ev.Entry.Value
		wg.Go(func() {
			defer p.inst.sessionClosed(c, p.now())
			if err := c.session.Close(); err != nil {
				p.opts.Logger.Debug("mcp pool: close session", "key", c.ks.Name(), "reason", ev.Reason, "error", p.scrubber(c.target).text(err.Error()))
			}
		})
	}
	wg.Wait()
}

// Close closes every idle session, stops the sweeper and makes later
// acquires fail with [ErrPoolClosed]. Leases still out are closed as they
// are released. Close is idempotent and safe for concurrent use; it returns
// once the idle sessions, and the dropped sessions whose close was still in
// flight, are closed.
func (p *Pool) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		evs := p.idle.Close(nil)
		p.mu.Unlock()
		if p.stopSweep != nil {
			close(p.stopSweep)
			<-p.sweepDone
		}
		p.closeEvicted(context.Background(), evs)
		p.closing.Wait()
		p.closeIdleTransport()
	})
	return nil
}

// closeIdleTransport drops the keep-alive connections of a transport the
// pool owns, so a closed pool leaves no goroutine behind.
func (p *Pool) closeIdleTransport() {
	if tr, ok := p.transport.(*http.Transport); ok && p.ownsTrans {
		tr.CloseIdleConnections()
	}
}
