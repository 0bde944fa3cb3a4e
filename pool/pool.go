package pool

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/spans"
)

// Pool leases downstream MCP client sessions keyed by [Target] identity. It
// is safe for concurrent use. Create it with [New] and close it with
// [Pool.Close].
type Pool struct {
	opts      Options
	client    *mcp.Client
	transport http.RoundTripper
	ownsTrans bool
	inst      *instruments
	now       func() time.Time

	mu        sync.Mutex // guards everything below
	keys      map[string]*keyState
	lruHead   *conn
	lruTail   *conn
	idleCount int
	inUse     int
	closed    bool
	lastSweep time.Time
	stats     counters
	breakers  map[string]*breakerState // keys with failed dials; see breaker.go

	closing sync.WaitGroup // closes of dropped and evicted sessions in flight

	stopSweep chan struct{}
	sweepDone chan struct{}
	closeOnce sync.Once
}

// conn is one downstream session, idle or leased.
type conn struct {
	ks          *keyState
	session     *mcp.ClientSession
	id          string // Mcp-Session-Id; "" for a sessionless server
	sessionless bool
	w           *watcher
	target      *Target
	idleSince   time.Time
	gen         uint64 // lease generation; guarded by p.mu
	leased      bool   // guarded by p.mu
	prev, next  *conn  // global LRU while idle; guarded by p.mu
	inLRU       bool
}

// New returns a pool configured by opts (the zero Options is valid). It
// starts one background goroutine for the idle sweep unless
// opts.SweepInterval is negative; Close stops it.
func New(opts Options) (*Pool, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pool{
		opts:   o,
		client: mcp.NewClient(&mcp.Implementation{Name: o.ClientName, Version: o.ClientVersion}, nil),
		now:    monotonicNow(),
		keys:   make(map[string]*keyState),
		stats:  newCounters(),
	}
	p.transport = o.HTTPTransport
	if p.transport == nil {
		p.transport = http.DefaultTransport.(*http.Transport).Clone()
		p.ownsTrans = true
	}
	p.inst = newInstruments(o)
	if err := p.inst.registerMetrics(p, o.MeterProvider); err != nil {
		return nil, fmt.Errorf("pool: register metrics: %w", err)
	}
	if o.SweepInterval > 0 {
		t := time.NewTicker(o.SweepInterval)
		p.startSweeper(t.C, t.Stop)
	}
	return p, nil
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
			evs := p.sweepLocked(p.now(), nil)
			p.mu.Unlock()
			p.closeEvicted(context.Background(), evs)
		}
	}
}

// CallTool runs one tool invocation on a leased session: acquire, call,
// release. A reused session that the server answers with 404 (it forgot the
// session, so the tool did not run) is dropped and the call is made once more
// on a freshly dialed session; no other failure is retried. A tool result
// with IsError set is returned with a nil error and the session stays pooled.
// params.Arguments nil is sent as an empty object, which every server accepts.
func (p *Pool) CallTool(ctx context.Context, t *Target, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	ctx, end := p.inst.startInvoke(ctx, p, t, params.Name)
	res, err := p.callTool(ctx, t, params)
	end(res, err)
	return res, err
}

func (p *Pool) callTool(ctx context.Context, t *Target, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	l, err := p.acquire(ctx, t, 1)
	if err != nil {
		return nil, err
	}
	res, err := l.CallTool(ctx, params)
	if err == nil || !l.hit || !errors.Is(err, ErrSessionExpired) {
		l.Release(err)
		return res, err
	}
	l.Release(err)
	p.mu.Lock()
	p.stats.redials++
	p.mu.Unlock()
	p.inst.redial(ctx)
	l, err = p.acquire(ctx, t, 2)
	if err != nil {
		return nil, err
	}
	res, err = l.CallTool(ctx, params)
	l.Release(err)
	return res, err
}

// Acquire leases a session for t: an idle one if the key has one (a hit), or
// a freshly dialed one (a miss). The caller owns the lease and must call
// [Lease.Release] exactly once. Acquire never retries: a failed dial is
// returned. On a closed pool it returns [ErrPoolClosed].
func (p *Pool) Acquire(ctx context.Context, t *Target) (Lease, error) {
	return p.acquire(ctx, t, 1)
}

// acquire is Acquire with the attempt number: attempt 2 is the redial after
// an expired session and always dials.
func (p *Pool) acquire(ctx context.Context, t *Target, attempt int) (Lease, error) {
	start := p.now()
	ctx, span := p.inst.startAcquire(ctx, p, t, attempt)

	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		err := fmt.Errorf("acquire %s: %w", t.shown, ErrPoolClosed)
		p.inst.endAcquireFailed(ctx, span, err, spans.ErrTypePoolClosed)
		return Lease{}, err
	}
	evs := p.sweepIfDueLocked(start, nil)
	ks, known := p.keyLocked(t.key)
	ks.lastActive = start
	var c *conn
	var trial bool // this acquire makes its key's half-open breaker trial
	var err error
	if attempt == 1 {
		c, evs = p.takeIdleLocked(ks, start, evs)
	}
	reason := ""
	if c != nil {
		c.gen++
		c.leased = true
		p.inUse++
	} else {
		reason = p.missReasonLocked(ks, known, attempt)
		if trial, err = p.breakerAdmitLocked(ks.key, start); err != nil {
			p.mu.Unlock()
			return Lease{}, p.failFast(ctx, span, t, evs, err)
		}
	}
	ks.leased++
	p.stats.acquires++
	if c != nil && (p.opts.HealthCheckAfter <= 0 || start.Sub(c.idleSince) <= p.opts.HealthCheckAfter) {
		p.stats.hits++
		p.mu.Unlock()
		if evs != nil {
			p.closeEvicted(ctx, evs)
		}
		c.w.reset()
		p.inst.endAcquire(ctx, span, start, ks.metrics, true, "")
		return Lease{p: p, c: c, gen: c.gen, hit: true, acquired: start}, nil
	}
	p.mu.Unlock()
	if evs != nil {
		p.closeEvicted(ctx, evs)
	}

	if c != nil {
		// Idle past the health-check threshold: ping before trusting it.
		c.w.reset()
		if err := c.session.Ping(ctx, nil); err == nil {
			p.mu.Lock()
			p.stats.hits++
			p.mu.Unlock()
			p.inst.endAcquire(ctx, span, start, ks.metrics, true, "")
			return Lease{p: p, c: c, gen: c.gen, hit: true, acquired: start}, nil
		}
		p.mu.Lock()
		c.leased = false
		p.inUse--
		ks.lastDrop = spans.MissHealthCheck
		p.mu.Unlock()
		p.closeEvicted(ctx, []eviction{{c, spans.EvictHealthCheck}})
		reason = spans.MissHealthCheck
		if ctx.Err() != nil {
			p.abandonReservation(ks, spans.MissAfterFailure)
			err := t.redact.Error(fmt.Errorf("acquire %s: health check: %w", t.shown, ctx.Err()))
			p.inst.endAcquireFailed(ctx, span, err, spans.ErrTypeCanceled)
			return Lease{}, err
		}
		p.mu.Lock()
		trial, err = p.breakerAdmitLocked(ks.key, p.now())
		if err != nil {
			ks.leased--
		}
		p.mu.Unlock()
		if err != nil {
			return Lease{}, p.failFast(ctx, span, t, nil, err)
		}
	}

	c, err = p.dial(ctx, t, ks)
	p.mu.Lock()
	p.stats.misses++
	p.stats.missReasons[reason]++
	p.stats.dials++
	opened, recovered := p.breakerDialDoneLocked(ks.key, p.now(), trial, err, errors.Is(ctx.Err(), context.Canceled))
	if err != nil {
		p.stats.dialFailures++
		ks.leased--
		ks.lastDrop = spans.MissAfterFailure
		p.mu.Unlock()
		if opened {
			p.opts.Logger.Warn("mcp pool: circuit breaker opened", "key", ks.key, "cooldown", p.opts.BreakerCooldown)
		}
		p.inst.endAcquireFailed(ctx, span, err, errorType(err))
		return Lease{}, err
	}
	c.gen++
	c.leased = true
	p.inUse++
	p.mu.Unlock()
	if recovered {
		p.opts.Logger.Info("mcp pool: circuit breaker closed after a successful trial dial", "key", ks.key)
	}
	p.inst.endAcquire(ctx, span, start, ks.metrics, false, reason)
	return Lease{p: p, c: c, gen: c.gen, acquired: start}, nil
}

// abandonReservation undoes the lease reservation of an acquire that fails
// before dialing.
func (p *Pool) abandonReservation(ks *keyState, drop string) {
	p.mu.Lock()
	ks.leased--
	ks.lastDrop = drop
	p.mu.Unlock()
}

// missReasonLocked says why an acquire found no idle session.
func (p *Pool) missReasonLocked(ks *keyState, known bool, attempt int) string {
	switch {
	case attempt > 1:
		return spans.MissRedial
	case !known:
		return spans.MissCold
	case ks.leased > 0:
		return spans.MissConcurrent
	case ks.lastDrop != "":
		return ks.lastDrop
	default:
		return spans.MissUnexplained
	}
}

// dial opens and initializes a new session for t. Network I/O runs with no
// lock held. The pprof labels split handshake cost from call cost.
func (p *Pool) dial(ctx context.Context, t *Target, ks *keyState) (*conn, error) {
	start := p.now()
	ctx, span := p.inst.startHandshake(ctx, t)
	w := &watcher{base: p.transport, header: t.header}
	tr := &mcp.StreamableClientTransport{
		Endpoint:             t.endpoint,
		HTTPClient:           &http.Client{Transport: w},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	version := t.protocolVersion
	if version == "" {
		version = p.opts.ProtocolVersion
	}
	var cs *mcp.ClientSession
	var err error
	pprof.Do(ctx, pprof.Labels(spans.PprofLabelKey, t.key, spans.PprofLabelPhase, spans.PhaseHandshake), func(ctx context.Context) {
		cs, err = p.client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	})
	if err != nil {
		err = t.redact.Error(fmt.Errorf("dial %s: %w", t.shown, classify(w, err, false)))
		p.inst.endHandshake(ctx, span, start, nil, err)
		return nil, err
	}
	c := &conn{ks: ks, session: cs, id: cs.ID(), w: w, target: t}
	c.sessionless = c.id == ""
	p.inst.endHandshake(ctx, span, start, c, nil)
	return c, nil
}

// closeEvicted closes evicted sessions with no lock held, in parallel since
// each close may send an HTTP DELETE. Close errors (404, 405, 400 for a
// session the server already forgot) are expected and only logged.
func (p *Pool) closeEvicted(ctx context.Context, evs []eviction) {
	if len(evs) == 0 {
		return
	}
	p.mu.Lock()
	for _, ev := range evs {
		p.stats.evictions[ev.reason]++
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, ev := range evs {
		p.inst.eviction(ctx, ev.reason)
		wg.Go(func() {
			if err := ev.c.session.Close(); err != nil {
				p.opts.Logger.Debug("mcp pool: close session", "key", ev.c.ks.key, "reason", ev.reason, "error", ev.c.target.redact.String(err.Error()))
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
		evs := p.drainIdleLocked(nil)
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
