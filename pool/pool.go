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

// acquire is Acquire with the attempt number: attempt 2 is the redial after
// an expired session and always dials.
func (p *Pool) acquire(ctx context.Context, t *Target, attempt int) (Lease, error) {
	start := p.now()
	ctx, span := p.inst.startAcquire(ctx, t, attempt)
	var evs []eviction
	var w capWait
	defer w.stop()
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			p.closeEvicted(ctx, evs)
			err := fmt.Errorf("acquire %s: %w", t.shown, ErrPoolClosed)
			p.inst.endAcquireFailed(ctx, span, err, spans.ErrTypePoolClosed, "", "")
			return Lease{}, err
		}
		ks, known, c, more := p.lookLocked(t, attempt, start)
		evs = append(evs, more...)
		switch {
		case c != nil:
			return p.acquireHit(ctx, span, t, ks, c, start, evs)
		case attempt == 1 && ks.Data.dialing != nil && mayShare(ks) && p.breakers[ks.Name()] == nil:
			// The key's handshake is in flight and its server may be
			// sessionless: wait for it rather than make a second one. A
			// key with failed dials on its breaker is not waited for: the
			// breaker decides, and fails fast while a trial is in flight.
			if err := p.waitHandshake(ctx, span, t, ks, evs); err != nil {
				return Lease{}, err
			}
		case p.opts.MaxInUsePerKey > 0 && ks.Leased() >= p.opts.MaxInUsePerKey && !ks.Data.sessionless:
			// The key is at its in-use cap: wait for one of its leases to
			// end, then look again (an idle session, or room to dial).
			if err := p.waitInUseCap(ctx, span, t, ks, known, attempt, evs, &w); err != nil {
				return Lease{}, err
			}
		default:
			return p.acquireMiss(ctx, span, t, ks, known, attempt, start, evs)
		}
		evs = nil
	}
}

// lookLocked begins an acquire of t's key at start in the core and looks
// for a session to reuse: the key's shared client, or an idle session
// (none on a redial). p.mu must be held.
func (p *Pool) lookLocked(t *Target, attempt int, start time.Time) (ks *keyState, known bool, c *conn, evs []eviction) {
	now := ns(start)
	ks, known, evs = p.idle.Begin(t.key, now, nil)
	if attempt != 1 {
		return ks, known, nil, evs
	}
	e := ks.Shared() // a sessionless key's shared client serves every caller
	if e == nil {
		e, evs = p.idle.TakeIdle(ks, now, evs)
	}
	if e == nil {
		return ks, known, nil, evs
	}
	return ks, known, e.Value, evs
}

// waitHandshake waits for the key's in-flight handshake, after which the
// acquire looks again (nil), or for the caller's context (the acquire's
// error, ended on its span). p.mu is held on entry and released here; evs
// are closed.
func (p *Pool) waitHandshake(ctx context.Context, span acquireSpan, t *Target, ks *keyState, evs []eviction) error {
	wait := ks.Data.dialing
	hint := ks.Data.revision
	p.mu.Unlock()
	p.closeEvicted(ctx, evs)
	select {
	case <-wait:
		return nil
	case <-ctx.Done():
		err := p.scrubber(t).error(fmt.Errorf("acquire %s: wait for the key's handshake: %w", t.shown, ctx.Err()))
		p.inst.endAcquireFailed(ctx, span, err, spans.ErrTypeCanceled, spans.MissConcurrent, hint)
		return err
	}
}

// capWait is an acquire's waiting for its key's in-use cap, over however
// many rounds it takes: the Options.AcquireTimeout deadline, armed by the
// first wait, and the time waited so far.
type capWait struct {
	timer    *time.Timer
	deadline <-chan time.Time
	waited   time.Duration
}

// stop releases the deadline's timer; the acquire defers it.
func (w *capWait) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// waitInUseCap waits for one of the key's leases to end, after which the
// acquire looks again (nil), or fails on the caller's context or the
// acquire deadline (the acquire's error, ended on its span and counted).
// p.mu is held on entry and released here; evs are closed.
func (p *Pool) waitInUseCap(ctx context.Context, span acquireSpan, t *Target, ks *keyState, known bool, attempt int, evs []eviction, w *capWait) error {
	if ks.Data.freed == nil {
		ks.Data.freed = make(chan struct{})
	}
	freed := ks.Data.freed
	p.stats.pending++
	p.mu.Unlock()
	p.closeEvicted(ctx, evs)
	if w.deadline == nil && p.opts.AcquireTimeout > 0 {
		w.timer = time.NewTimer(p.opts.AcquireTimeout)
		w.deadline = w.timer.C
	}
	began := p.now()
	err := p.waitFreed(ctx, freed, w.deadline)
	w.waited += p.now().Sub(began)
	p.inst.acquireWaited(span, w.waited)
	p.mu.Lock()
	p.stats.pending--
	if err == nil {
		p.mu.Unlock()
		return nil
	}
	reason := p.idle.Cause(ks, known, attempt > 1)
	errType := spans.ErrTypeCanceled
	if errors.Is(err, ErrAcquireTimeout) {
		p.stats.timeouts++
		errType = spans.ErrTypeAcquireTimeout
	}
	hint := ks.Data.revision
	p.mu.Unlock()
	p.inst.acquireTimeout(ctx, errType)
	err = p.scrubber(t).error(fmt.Errorf("acquire %s: %d sessions in use (MaxInUsePerKey): %w", t.shown, p.opts.MaxInUsePerKey, err))
	p.inst.endAcquireFailed(ctx, span, err, errType, reason, hint)
	return err
}

// waitFreed waits for freed, the context, or the acquire deadline
// (Options.AcquireTimeout), whichever comes first.
func (p *Pool) waitFreed(ctx context.Context, freed <-chan struct{}, deadline <-chan time.Time) error {
	select {
	case <-freed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-deadline:
		return ErrAcquireTimeout
	}
}

// acquireHit hands out c, taken from the key's idle list or its shared
// client, pinging it first when it sat idle past HealthCheckAfter. p.mu is
// held on entry and released here.
func (p *Pool) acquireHit(ctx context.Context, span acquireSpan, t *Target, ks *keyState, c *conn, start time.Time, evs []eviction) (Lease, error) {
	ping := p.needsPingLocked(c, start)
	p.idle.Lease(c.e, ns(start))
	p.leaseLocked(c)
	if !ping {
		p.idle.CountHit()
	}
	p.mu.Unlock()
	p.closeEvicted(ctx, evs)
	if ping {
		// Idle past the health-check threshold: ping before trusting it.
		if err := c.session.Ping(ctx, nil); err != nil {
			return p.healthFailed(ctx, span, t, ks, c, start)
		}
		p.mu.Lock()
		p.idle.CountHit()
		p.mu.Unlock()
	}
	p.inst.endAcquire(ctx, span, start, ks.Data.metrics, true, "", c)
	return p.newLease(c, true, start), nil
}

// healthFailed closes c, taken idle, whose ping failed, and dials anew as
// a miss for health_check; a caller whose context is done by then gets its
// error instead.
func (p *Pool) healthFailed(ctx context.Context, span acquireSpan, t *Target, ks *keyState, c *conn, start time.Time) (Lease, error) {
	p.mu.Lock()
	p.idle.HealthFailed(c.e, ns(start))
	wakeLocked(ks)
	p.mu.Unlock()
	p.closeEvicted(ctx, []eviction{{Entry: c.e, Reason: spans.EvictHealthCheck}})
	p.mu.Lock()
	if ctx.Err() != nil {
		p.idle.MissUndialed(ks, spans.MissHealthCheck)
		p.mu.Unlock()
		err := p.scrubber(t).error(fmt.Errorf("acquire %s: health check: %w", t.shown, ctx.Err()))
		p.inst.endAcquireFailed(ctx, span, err, spans.ErrTypeCanceled, spans.MissHealthCheck, c.revision)
		return Lease{}, err
	}
	return p.acquireMiss(ctx, span, t, ks, true, 1, start, nil)
}

// needsPingLocked reports whether an idle session must pass a ping before
// reuse: only sessions with an id are checked, since a sessionless server
// (2026-07-28 has no ping at all) has nothing to lose but an HTTP
// connection, which the transport re-establishes underneath. p.mu must be
// held.
func (p *Pool) needsPingLocked(c *conn, now time.Time) bool {
	if p.opts.HealthCheckAfter <= 0 || c.id == "" || c.e.Leased() {
		return false
	}
	return ns(now)-c.e.IdleSince() > int64(p.opts.HealthCheckAfter)
}

// acquireMiss dials a new session for the key. p.mu is held on entry and
// released here.
func (p *Pool) acquireMiss(ctx context.Context, span acquireSpan, t *Target, ks *keyState, known bool, attempt int, start time.Time, evs []eviction) (Lease, error) {
	reason := p.idle.Cause(ks, known, attempt > 1)
	trial, err := p.breakerAdmitLocked(ks.Name(), start)
	if err != nil {
		p.mu.Unlock()
		return Lease{}, p.failFast(ctx, span, t, evs, err)
	}
	p.idle.Miss(ks, reason, ns(start))
	p.stats.dials++
	var myDial chan struct{}
	if ks.Data.dialing == nil && mayShare(ks) {
		myDial = make(chan struct{})
		ks.Data.dialing = myDial
	}
	remembered := ks.Data.revision
	p.mu.Unlock()
	p.closeEvicted(ctx, evs)

	c, hs, err := p.dial(ctx, t, ks, remembered)
	p.mu.Lock()
	if myDial != nil {
		close(myDial)
		ks.Data.dialing = nil
	}
	p.countHandshakeLocked(hs)
	opened, recovered := p.breakerDialDoneLocked(ks.Name(), p.now(), trial, err, errors.Is(ctx.Err(), context.Canceled))
	if err != nil {
		p.stats.dialFailures++
		p.idle.DialFailed(ks)
		wakeLocked(ks)
		p.mu.Unlock()
		if opened {
			p.opts.Logger.Warn("mcp pool: circuit breaker opened", "key", ks.Name(), "cooldown", p.opts.BreakerCooldown)
		}
		p.inst.endAcquireFailed(ctx, span, err, errorType(err), reason, hs.version)
		return Lease{}, err
	}
	p.openedLocked(ks, c)
	c.e = p.idle.Dialed(ks, c, c.sessionless)
	p.leaseLocked(c)
	p.mu.Unlock()
	if recovered {
		p.opts.Logger.Info("mcp pool: circuit breaker closed after a successful trial dial", "key", ks.Name())
	}
	p.inst.endAcquire(ctx, span, start, ks.Data.metrics, false, reason, c)
	return p.newLease(c, false, start), nil
}

// countHandshakeLocked counts what a dial's handshake cost. p.mu must be
// held.
func (p *Pool) countHandshakeLocked(hs handshake) {
	p.stats.handshakeRequests += int64(hs.requests)
	if hs.how == spans.NegotiationFallback {
		p.stats.negotiationFallbacks++
	}
}

// openedLocked notes a successful dial's session on its key: the revision
// it negotiated and whether it is sessionless, which the key's next dial
// and acquires go by. p.mu must be held.
func (p *Pool) openedLocked(ks *keyState, c *conn) {
	ks.Data.revision = c.revision
	ks.Data.sessionless = c.sessionless
	p.stats.protocols[c.revision]++
}

// leaseLocked begins a lease generation for c when its first user takes
// it (always, for an exclusive session), so that a lease released twice
// is caught. p.mu must be held.
func (p *Pool) leaseLocked(c *conn) {
	if c.e.Users() == 1 {
		c.gen++
	}
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
