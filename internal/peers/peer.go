package peers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/fixtures"
)

// Kind names a real peer.
type Kind string

// The peers. Versions are pinned in peers/package-lock.json.
const (
	// TSSDK1 is a session-stateful server on @modelcontextprotocol/sdk 1.x
	// (peers/ts1-server.mjs): 2025-11-25 and older, one McpServer and one
	// StreamableHTTPServerTransport per session; server/discover is answered
	// by the SDK with HTTP 400 "Server not initialized"; an unknown session
	// id with 404 and the SDK's "Session not found" body.
	TSSDK1 Kind = "ts-sdk-1"
	// TSSDKv2 is a server on the TypeScript SDK v2 (@modelcontextprotocol/server
	// with @modelcontextprotocol/node, peers/v2-server.mjs): 2026-07-28, and
	// 2025-era requests served statelessly (the SDK's default legacy
	// posture). It never issues a session id.
	TSSDKv2 Kind = "ts-sdk-v2"
	// Everything is @modelcontextprotocol/server-everything, unmodified, on
	// its streamable HTTP transport (SDK 1.x, sessions). It keeps no ledger
	// and has no hooks, so the harness puts a recording reverse proxy in
	// front of it (see [Peer.URL]) that keeps the ledger and serves the
	// hooks; it answers an unknown session with 400 (its own router, no
	// "id"), never 404.
	Everything Kind = "server-everything"
)

// Kinds lists every peer, for tables.
var Kinds = []Kind{TSSDK1, TSSDKv2, Everything}

// DefaultReadyTimeout bounds the wait for a peer's ready line when
// [Options.ReadyTimeout] is zero; server-everything loads for seconds on a
// busy machine.
const DefaultReadyTimeout = 90 * time.Second

// Options configures [Start]. The zero value is the peer as documented.
type Options struct {
	// ReadyTimeout bounds the wait for the ready line. Zero:
	// [DefaultReadyTimeout].
	ReadyTimeout time.Duration
	// ModernOnly makes the TypeScript SDK v2 peer strict (legacy: 'reject'):
	// 2026-07-28 only, 2025-era requests refused with the
	// unsupported-version error. Ignored by the other peers.
	ModernOnly bool
}

// ErrNoHook means the peer cannot do what was asked: a session hook on a
// sessionless peer, or a side-effect counter on server-everything.
var ErrNoHook = errors.New("peers: the peer has no such hook")

// Peer is one running real server on 127.0.0.1. Its methods are safe for
// concurrent use; Close ends it.
type Peer struct {
	kind    Kind
	proc    *process
	url     string // MCP endpoint the client dials
	control string // the script's /_peer/ base; "" behind the proxy
	proxy   *proxy // in front of server-everything; nil otherwise
	http    *http.Client
	tr      *http.Transport
}

// Start runs the peer kind on 127.0.0.1 (port 0) and returns once it
// answers. The caller owns it and must Close it.
func Start(ctx context.Context, env Env, kind Kind, opts Options) (*Peer, error) {
	bound := opts.ReadyTimeout
	if bound == 0 {
		bound = DefaultReadyTimeout
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < bound {
		bound = time.Until(dl)
	}
	var args, envv []string
	switch kind {
	case TSSDK1:
		args = []string{"ts1-server.mjs"}
	case TSSDKv2:
		args = []string{"v2-server.mjs"}
		if opts.ModernOnly {
			envv = append(envv, "PEER_LEGACY=reject")
		}
	case Everything:
		args = []string{"--import", "./loopback.mjs", "node_modules/@modelcontextprotocol/server-everything/dist/index.js", "streamableHttp"}
		envv = append(envv, "PORT=0")
	default:
		return nil, fmt.Errorf("peers: unknown peer %q: expected one of %v", kind, Kinds)
	}
	proc, r, err := startProcess(env.Command(envv, args...), bound)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{}
	p := &Peer{kind: kind, proc: proc, url: r.URL, control: r.Control, tr: tr, http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	if kind == Everything {
		p.proxy, err = startProxy(r.URL)
		if err != nil {
			_ = proc.stop()
			return nil, err
		}
		p.url = p.proxy.url()
	}
	return p, nil
}

// StartT is [Start] for tests: it requires the environment ([RequireEnv]),
// bounds the start by the test's context and closes the peer at cleanup.
func StartT(t testing.TB, kind Kind, opts Options) *Peer {
	t.Helper()
	env := RequireEnv(t)
	p, err := Start(context.Background(), env, kind, opts)
	if err != nil {
		t.Fatalf("start peer %s: %v", kind, err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close peer %s: %v", kind, err)
		}
	})
	return p
}

// Kind returns the peer's kind.
func (p *Peer) Kind() Kind { return p.kind }

// URL is the MCP endpoint to dial (behind the recording proxy for
// server-everything).
func (p *Peer) URL() string { return p.url }

// HasSessions reports whether the peer issues Mcp-Session-Id.
func (p *Peer) HasSessions() bool { return p.kind != TSSDKv2 }

// Output returns the last of the peer's stdout and stderr, for failure
// messages.
func (p *Peer) Output() string { return p.proc.out.String() }

// Close stops the proxy and the process (its stdin closes, then a kill
// after a grace period). It waits for both.
func (p *Peer) Close() error {
	var errs []error
	if p.proxy != nil {
		errs = append(errs, p.proxy.close())
	}
	errs = append(errs, p.proc.stop())
	p.tr.CloseIdleConnections()
	return errors.Join(errs...)
}

// Requests returns the peer's ledger: every HTTP request to its MCP
// endpoint in arrival order, with the status it was answered (recorded when
// the header was written, so a client that has its answer finds it here).
// Control requests are not in it.
func (p *Peer) Requests(ctx context.Context) ([]fixtures.Request, error) {
	if p.proxy != nil {
		return p.proxy.requests(), nil
	}
	var out []fixtures.Request
	if err := p.get(ctx, "requests", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ResetRequests empties the ledger.
func (p *Peer) ResetRequests(ctx context.Context) error {
	if p.proxy != nil {
		p.proxy.reset()
		return nil
	}
	return p.post(ctx, "reset", nil)
}

// ClearHooks drops the queued rejections and forget-next count, so that a
// hook one test queued and never used cannot hit the next test.
func (p *Peer) ClearHooks(ctx context.Context) error {
	if p.proxy != nil {
		p.proxy.clearHooks()
		return nil
	}
	return p.post(ctx, "clear-hooks", nil)
}

// Reject is a one-shot answer to the next request that matches, which never
// reaches the server's SDK.
type Reject struct {
	// Status is the HTTP status, 400 to 599. A 404 carries the TypeScript
	// SDK's "Session not found" body; others a JSON-RPC error with a null id.
	Status int
	// Method, when set, picks the next request of that JSON-RPC method
	// ("tools/call"), so that a notification or a DELETE cannot take it.
	Method string
	// SessionBound, with no Method, picks the next request that carries a
	// session id; otherwise the next request of any kind.
	SessionBound bool
	// AfterRun serves the request first (its tool runs to completion) and
	// then answers Status instead of the server's answer: an answer lost
	// after the side effect, which a client must never retry. The ledger
	// names the fault [FaultRejectAfterRun].
	AfterRun bool
}

// FaultRejectAfterRun is the ledger's Fault of a request served and then
// answered by a [Reject] with AfterRun; a rejection before serving is
// fixtures.FaultReject.
const FaultRejectAfterRun = "reject_after_run"

// RejectNext queues r.
func (p *Peer) RejectNext(ctx context.Context, r Reject) error {
	if r.Status < 400 || r.Status > 599 {
		return fmt.Errorf("peers: reject status %d: expected 400-599", r.Status)
	}
	if p.proxy != nil {
		p.proxy.rejectNext(r)
		return nil
	}
	q := url.Values{"status": {strconv.Itoa(r.Status)}}
	if r.Method != "" {
		q.Set("method", r.Method)
	}
	if r.SessionBound {
		q.Set("scope", "session")
	}
	if r.AfterRun {
		q.Set("after", "1")
	}
	return p.post(ctx, "reject", q)
}

// ForgetSessions makes the server forget every live session: the TypeScript
// SDK 1.x peer drops them (later requests get 404); behind the proxy,
// server-everything is sent a DELETE for each (later requests get its 400).
func (p *Peer) ForgetSessions(ctx context.Context) error {
	if !p.HasSessions() {
		return fmt.Errorf("%w: %s has no sessions to forget", ErrNoHook, p.kind)
	}
	if p.proxy != nil {
		return p.proxy.forgetAll(ctx)
	}
	return p.post(ctx, "forget", nil)
}

// ForgetNextSessions makes the server forget the next n sessions right
// after their handshake (notifications/initialized answered), so their
// first call finds them unknown.
func (p *Peer) ForgetNextSessions(ctx context.Context, n int) error {
	if !p.HasSessions() {
		return fmt.Errorf("%w: %s has no sessions to forget", ErrNoHook, p.kind)
	}
	if p.proxy != nil {
		p.proxy.forgetNext(n)
		return nil
	}
	return p.post(ctx, "forget-next", url.Values{"n": {strconv.Itoa(n)}})
}

// Stats is the script peers' counters.
type Stats struct {
	// SideEffects is how often the side_effect tool ran.
	SideEffects int64 `json:"side_effects"`
	// Initializes counts initialize requests answered 2xx.
	Initializes int `json:"initializes"`
	// SessionIDs lists every session id issued, in order.
	SessionIDs []string `json:"session_ids"`
	// Sessions lists the live ones.
	Sessions []string `json:"sessions"`
}

// Stats returns the peer's counters; server-everything has none
// ([ErrNoHook]): read its ledger instead.
func (p *Peer) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	if p.proxy != nil {
		return s, fmt.Errorf("%w: %s keeps no counters (its ledger is the proxy's)", ErrNoHook, p.kind)
	}
	err := p.get(ctx, "stats", &s)
	return s, err
}

func (p *Peer) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.control+path, nil)
	if err != nil {
		return fmt.Errorf("peers: %s control %s: %w", p.kind, path, err)
	}
	body, err := p.do(req, http.StatusOK)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("peers: %s control %s: decode %q: %w", p.kind, path, truncate(body), err)
	}
	return nil
}

func (p *Peer) post(ctx context.Context, path string, q url.Values) error {
	u := p.control + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return fmt.Errorf("peers: %s control %s: %w", p.kind, path, err)
	}
	_, err = p.do(req, http.StatusNoContent)
	return err
}

func (p *Peer) do(req *http.Request, want int) ([]byte, error) {
	what := strings.TrimPrefix(req.URL.Path, "/_peer/")
	resp, err := p.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("peers: %s control %s: %w", p.kind, what, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("peers: %s control %s: read: %w", p.kind, what, err)
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("peers: %s control %s: HTTP %d (expected %d): %s", p.kind, what, resp.StatusCode, want, truncate(body))
	}
	return body, nil
}

func truncate(b []byte) string {
	if len(b) > 512 {
		return string(b[:512]) + "..."
	}
	return string(b)
}
