package pool

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"runtime/pprof"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/spans"
)

// Lease is exclusive use of one downstream session, from [Pool.Acquire] until
// [Lease.Release]. It is a small value: copies refer to the same lease, and
// releasing any copy releases it. The zero Lease is not usable.
type Lease struct {
	p        *Pool
	c        *conn
	gen      uint64
	hit      bool
	acquired time.Time
	tok      *shareToken // a lease on a shared client; nil when exclusive
}

// shareToken marks one lease on a sessionless key's shared client as
// released; guarded by Pool.mu.
type shareToken struct{ released bool }

// Session returns the leased SDK session for requests the pool does not wrap.
// It must not be used after Release, and must not be closed by the caller.
func (l Lease) Session() *mcp.ClientSession { return l.c.session }

// SessionID returns the downstream Mcp-Session-Id, or "" for a sessionless
// server.
func (l Lease) SessionID() string { return l.c.id }

// ProtocolVersion returns the MCP revision the session negotiated, for
// example "2025-11-25" or "2026-07-28".
func (l Lease) ProtocolVersion() string { return l.c.revision }

// Shared reports whether the lease rides a sessionless server's shared
// client, which other leases use at the same time: there is no session to
// keep apart, so the pool shares one client and its HTTP connections.
func (l Lease) Shared() bool { return l.c.sessionless }

// CacheHit reports whether the lease reused an idle session (or, on a
// sessionless server, the key's existing client) instead of making a
// handshake of its own.
func (l Lease) CacheHit() bool { return l.hit }

// CallTool calls a tool on the leased session with a call_tool span, the
// W3C trace context in params._meta and the pprof phase label "call". It
// never modifies params or its Meta map (what goes out is a copy). It does
// not retry and does not release the lease. Errors name the failure:
// [ErrSessionExpired], [ErrSessionRejected] or an [*HTTPStatusError] when the
// server answered with such a status.
func (l Lease) CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	p, c := l.p, l.c
	start := p.now()
	ctx, span := p.inst.startCall(ctx, c, params.Name)
	if err := ctx.Err(); err != nil {
		// Nothing goes out on a dead context, so the session is as good as
		// before: Release keeps it (errNotSent), where a call cancelled in
		// flight leaves it in an unknown state and is dropped.
		err = fmt.Errorf("call tool %q on %s: %w: %w", params.Name, c.target.shown, errNotSent, err)
		p.inst.endCall(ctx, span, start, c, params.Name, nil, err)
		return nil, err
	}
	buf := getCallBuf()
	defer putCallBuf(buf)
	sent := &buf.params
	*sent = *params
	if isNil(sent.Arguments) {
		// A nil map goes out as "arguments": null, which some servers reject.
		sent.Arguments = map[string]any{}
	}
	sent.Meta = p.inst.injectMeta(ctx, params.Meta, buf)
	sink := &c.w.callFaults
	if c.sessionless {
		// A shared client: wait for a slot, and keep this call's faults
		// apart from its neighbours'.
		if c.slots != nil {
			select {
			case c.slots <- struct{}{}:
				defer func() { <-c.slots }()
			case <-ctx.Done():
				err := fmt.Errorf("call tool %q on %s: wait for a slot on the shared client: %w: %w", params.Name, c.target.shown, errNotSent, ctx.Err())
				p.inst.endCall(ctx, span, start, c, params.Name, nil, err)
				return nil, err
			}
		}
		cf := &callFaults{}
		ctx = context.WithValue(ctx, callFaultsKey{}, cf)
		sink = cf
	}
	var res *mcp.CallToolResult
	var err error
	pprof.Do(ctx, pprof.Labels(spans.PprofLabelKey, c.ks.Name(), spans.PprofLabelPhase, spans.PhaseCall), func(ctx context.Context) {
		res, err = c.session.CallTool(ctx, sent)
	})
	if err != nil {
		err = p.scrubber(c.target).error(fmt.Errorf("call tool %q on %s: %w", params.Name, c.target.shown, classify(sink.fault.Load(), sink.breachErr(), err, !c.sessionless)))
	}
	p.inst.endCall(ctx, span, start, c, params.Name, res, err)
	return res, err
}

// isNil reports whether v is nil or a typed nil map or pointer, which would
// be encoded as JSON null.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Map, reflect.Pointer, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// Release returns the session to the pool: a clean release (err nil, or a
// tool result with IsError set, which is not an error here) keeps it idle for
// reuse; a transport failure, an expired or rejected session, a non-2xx HTTP
// status seen during the lease or a cancellation drops and closes it (a call
// refused unsent because its context was already done does not). Pass the
// error of the last request made on the lease. Release must be called exactly
// once; a second call panics, since it would hand a session to two callers.
func (l Lease) Release(err error) {
	if l.p == nil {
		panic("pool: Release of a zero Lease")
	}
	p, c := l.p, l.c
	drop, errType := shouldDrop(c, err)
	now := p.now()
	p.mu.Lock()
	if l.released() {
		p.mu.Unlock()
		panic("pool: Lease released twice")
	}
	if drop {
		p.stats.failures[errType]++
	}
	closeIt, evs := p.idle.Release(c.e, ns(now), dropReason(drop), nil)
	wakeLocked(c.ks)
	closed := p.closed
	if closeIt && !closed {
		// Registered under p.mu: Close sets closed under it before it
		// waits, so its Wait never races this Add or misses the close.
		p.closing.Add(1)
	}
	p.mu.Unlock()
	p.inst.release(l, now, drop, errType)
	if closeIt {
		p.closeDropped(c, closed)
	}
	p.closeEvicted(context.Background(), evs)
	if closed {
		p.closeIdleTransport()
	}
}

// released reports whether this lease was released already, and marks it
// released: a shared client's lease by its own token, an exclusive one by
// the session's lease generation. p.mu must be held.
func (l Lease) released() bool {
	if l.tok != nil {
		was := l.tok.released
		l.tok.released = true
		return was
	}
	return !l.c.e.Leased() || l.c.gen != l.gen
}

// dropReason is the miss reason a release that drops its session leaves
// for the key's next miss: after_failure, or "" for a clean release.
func dropReason(drop bool) string {
	if drop {
		return spans.MissAfterFailure
	}
	return ""
}

// closeDropped closes a dropped session: at once when the pool is closed,
// otherwise in the background (registered on p.closing by the caller under
// p.mu), since a server busy with a cancelled call may hold the DELETE for
// seconds: the caller does not wait for it, Close does.
func (p *Pool) closeDropped(c *conn, closed bool) {
	closeIt := func() {
		defer p.inst.sessionClosed(c, p.now())
		if cerr := c.session.Close(); cerr != nil {
			p.opts.Logger.Debug("mcp pool: close failed session", "key", c.ks.Name(), "error", p.scrubber(c.target).text(cerr.Error()))
		}
	}
	if closed {
		closeIt()
		return
	}
	go func() {
		defer p.closing.Done()
		closeIt()
	}()
}

// shouldDrop decides whether a released session may be reused, and the
// error.type of a drop. The HTTP status seen by the session's round tripper
// wins over the error chain, because it is the reliable signal.
func shouldDrop(c *conn, err error) (bool, string) {
	if c.sessionless {
		// A shared client's watcher flags belong to every caller; this
		// lease's own failure is in err, classified by CallTool.
		if err == nil || errors.Is(err, errNotSent) {
			return false, ""
		}
		t := errorType(err)
		return t != spans.ErrTypeToolError && t != spans.ErrTypeProtocol, t
	}
	if b := c.w.breachErr(); b != nil {
		return true, breachType(b)
	}
	if f := c.w.fault.Load(); f != nil {
		return true, faultType(f, !c.sessionless)
	}
	if c.w.broken.Load() {
		return true, spans.ErrTypeTransport
	}
	if err == nil || errors.Is(err, errNotSent) {
		return false, ""
	}
	t := errorType(err)
	switch t {
	case spans.ErrTypeToolError, spans.ErrTypeProtocol:
		return false, t
	}
	return true, t
}

// faultType names an HTTP fault.
func faultType(f *httpFault, sessionful bool) string {
	switch {
	case f.sessionBound && sessionful && f.status == http.StatusNotFound:
		return spans.ErrTypeSessionExpired
	case f.sessionBound && f.status == http.StatusBadRequest:
		return spans.ErrTypeBadSession
	default:
		return spans.ErrTypeHTTPStatus
	}
}

// classify wraps an SDK error with the pool's sentinel or status error for
// f, the first HTTP fault the round tripper saw (nil for none). A breach
// (a bound the server broke, nil for none) comes first and takes the
// sentinel's place: such a call is never retried, even on a 404.
func classify(f *httpFault, breach, err error, sessionful bool) error {
	if breach != nil {
		if f != nil {
			return fmt.Errorf("%w: %w: %w", breach, &HTTPStatusError{Status: f.status, RetryAfter: f.retryAfter, SessionBound: f.sessionBound}, err)
		}
		return fmt.Errorf("%w: %w", breach, err)
	}
	if f == nil {
		if sessionful && errors.Is(err, mcp.ErrSessionMissing) {
			return fmt.Errorf("%w: %w", ErrSessionExpired, err)
		}
		return err
	}
	switch faultType(f, sessionful) {
	case spans.ErrTypeSessionExpired:
		return fmt.Errorf("%w: %w", ErrSessionExpired, err)
	case spans.ErrTypeBadSession:
		return fmt.Errorf("%w: %w", ErrSessionRejected, err)
	}
	return fmt.Errorf("%w: %w", &HTTPStatusError{Status: f.status, RetryAfter: f.retryAfter, SessionBound: f.sessionBound}, err)
}

// codeTransportFailure is the JSON-RPC code the Go SDK wraps a transport
// failure in: no answer of the server's.
const codeTransportFailure = -32005

// errorType maps an error to the error.type vocabulary.
func errorType(err error) string {
	var hs *HTTPStatusError
	var je *jsonrpc.Error
	if t := breachType(err); t != "" {
		return t
	}
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrPoolClosed):
		return spans.ErrTypePoolClosed
	case errors.Is(err, ErrCircuitOpen):
		return spans.ErrTypeCircuitOpen
	case errors.Is(err, ErrSessionExpired):
		return spans.ErrTypeSessionExpired
	case errors.Is(err, ErrSessionRejected):
		return spans.ErrTypeBadSession
	case errors.As(err, &hs):
		return spans.ErrTypeHTTPStatus
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return spans.ErrTypeCanceled
	case errors.Is(err, mcp.ErrConnectionClosed):
		return spans.ErrTypeTransport
	case errors.As(err, &je) && je.Code != codeTransportFailure:
		// The server answered with a JSON-RPC error: the session itself
		// worked.
		return spans.ErrTypeProtocol
	default:
		return spans.ErrTypeTransport
	}
}
