package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrExecutionClosed is returned by calls on an [Execution] after its Close.
var ErrExecutionClosed = errors.New("pool: execution closed")

// Execution binds the tool calls of one execution (an agent run, one request
// a gateway serves) to one downstream session per target, without the caller
// managing a lease: select a workspace, then read it, and the read lands in
// the session that selected. The first call to a target acquires a session
// (hit or miss, with its acquire span); later calls to that target reuse it;
// [Execution.Close] releases them all to the pool.
//
// The rules are the pool's: a tool result with isError, or a JSON-RPC error
// from the server, keeps the session; a transport failure, a non-2xx status
// or a cancellation mid-call drops it, and the next call acquires a new one;
// a session answered 404 before the tool ran is redialed once per call.
// On a sessionless server there is no session to keep, and calls share the
// key's client as usual.
//
// An Execution is safe for concurrent use: calls to different targets run in
// parallel, calls to one target run one at a time (they share one session).
type Execution struct {
	p      *Pool
	mu     sync.Mutex
	leases map[string]*execLease // by target key
	closed bool
}

// execLease is the session an execution holds for one target.
type execLease struct {
	mu   sync.Mutex // serializes the execution's calls on the target
	l    Lease
	held bool
}

// Execution starts an execution whose calls to each target ride one
// session. The caller owns it and must call [Execution.Close] when the
// execution ends. See also [WithExecution].
func (p *Pool) Execution() *Execution {
	return &Execution{p: p, leases: make(map[string]*execLease)}
}

type executionKey struct{}

// WithExecution returns a context that carries e: [Pool.CallTool] with such
// a context (on e's pool) runs the call on e, so code that only passes a
// context along keeps an execution's calls on one session.
func WithExecution(ctx context.Context, e *Execution) context.Context {
	return context.WithValue(ctx, executionKey{}, e)
}

// executionFrom returns the execution ctx carries for pool p, or nil.
func executionFrom(ctx context.Context, p *Pool) *Execution {
	if e, ok := ctx.Value(executionKey{}).(*Execution); ok && e.p == p {
		return e
	}
	return nil
}

// CallTool runs one tool invocation on the execution's session for t,
// acquiring it on the execution's first call to t. It has the invoke span
// and error rules of [Pool.CallTool].
func (e *Execution) CallTool(ctx context.Context, t *Target, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	ctx, span := e.p.inst.startInvoke(ctx, t, params.Name)
	res, err := e.callTool(ctx, t, params)
	endInvoke(span, res, err)
	return res, err
}

func (e *Execution) callTool(ctx context.Context, t *Target, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, fmt.Errorf("call tool %q on %s: %w", params.Name, t.shown, ErrExecutionClosed)
	}
	el := e.leases[t.key]
	if el == nil {
		el = &execLease{}
		e.leases[t.key] = el
	}
	e.mu.Unlock()

	el.mu.Lock()
	defer el.mu.Unlock()
	return e.p.withRedial(ctx, func(attempt int) (*mcp.CallToolResult, error) {
		return e.callOnce(ctx, el, t, params, attempt)
	})
}

// callOnce makes one attempt of a call on the execution's session for t,
// acquiring one first when the execution holds none. A failure that drops
// the session releases it, so the next attempt (or call) acquires anew.
// el.mu is held. A call that passed callTool's closed check but took
// el.mu only after Close had released the lease fails here, whatever
// the lease's state: no lease is used once the execution is closed.
func (e *Execution) callOnce(ctx context.Context, el *execLease, t *Target, params *mcp.CallToolParams, attempt int) (*mcp.CallToolResult, error) {
	if e.isClosed() {
		return nil, fmt.Errorf("call tool %q on %s: %w", params.Name, t.shown, ErrExecutionClosed)
	}
	if !el.held {
		l, err := e.p.acquire(ctx, t, attempt)
		if err != nil {
			return nil, err
		}
		el.l, el.held = l, true
		if e.isClosed() {
			// Close ran while this acquire was in flight: it could not
			// see the lease, so give it back here.
			el.l.Release(nil)
			el.held = false
			return nil, fmt.Errorf("call tool %q on %s: %w", params.Name, t.shown, ErrExecutionClosed)
		}
	}
	res, err := el.l.CallTool(ctx, params)
	if err == nil {
		return res, nil
	}
	if drop, _ := shouldDrop(el.l.c, err); drop {
		el.l.Release(err)
		el.held = false
	}
	return res, err
}

func (e *Execution) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// Close releases the execution's sessions to the pool (clean sessions go
// back to idle) and makes later calls fail with [ErrExecutionClosed]. It
// waits for calls in flight on the execution. Close is idempotent.
func (e *Execution) Close() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	leases := e.leases
	e.leases = nil
	e.mu.Unlock()
	for _, el := range leases {
		el.mu.Lock()
		if el.held {
			el.l.Release(nil)
			el.held = false
		}
		el.mu.Unlock()
	}
}
