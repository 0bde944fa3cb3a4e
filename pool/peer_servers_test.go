package pool_test

// The servers of the peer matrix (peer_matrix_test.go): the Go fixture and
// the real peers of internal/peers behind one small interface, each with
// the tools that show its state and its side effects.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/internal/peers"
	"github.com/mcptrace/mcptrace/spans"
)

// matrixServer is one server under the matrix: its endpoint, its own
// ledger, the hooks, and how it shows its state and side effects.
type matrixServer interface {
	URL() string
	// Requests is the server's ledger (fixtures.Request for every server).
	Requests(t *testing.T) []fixtures.Request
	// Reset empties the ledger and drops hooks a previous check queued
	// and never used.
	Reset(t *testing.T)
	// Reject answers the next tools/call with status, once, without
	// serving it.
	Reject(t *testing.T, status int)
	// LoseAnswer lets the next tools/call run to completion and loses its
	// answer: the Go fixture resets the connection, the peers answer 500.
	LoseAnswer(t *testing.T)
	// ForgetNext makes the server forget the next n sessions right after
	// their handshake.
	ForgetNext(t *testing.T, n int)
	// ForgottenStatus is how the server answers a session it forgot: 404
	// per the spec, or 400 (server-everything's own router).
	ForgottenStatus() int
	// Ran is how often the side-effect tool ran on the server.
	Ran(t *testing.T) int64
	Tools() toolset
}

// call is one tool call of a toolset.
type call struct {
	name string
	args map[string]any
}

// toolset is how a server shows session state and side effects.
type toolset struct {
	// set(i) puts execution i's state into the session; get reads it.
	set func(i int) call
	get call
	// want(i) prefixes get's answer in a session that ran set(i); none
	// prefixes it in one that did not.
	want func(i int) string
	none string
	// effect is the side-effectful tool, fail a tool that answers isError,
	// echo a harmless call.
	effect, fail, echo call
}

// scriptTools are the Go fixtures' tools, which the script peers serve too.
var scriptTools = toolset{
	set: func(i int) call {
		return call{fixtures.ToolSelectWorkspace, map[string]any{"workspace": fmt.Sprintf("ws-%d", i)}}
	},
	get:    call{fixtures.ToolGetWorkspace, nil},
	want:   func(i int) string { return fmt.Sprintf("workspace:ws-%d", i) },
	none:   fixtures.NoWorkspace,
	effect: call{fixtures.ToolSideEffect, nil},
	fail:   call{fixtures.ToolFail, nil},
	echo:   call{fixtures.ToolEcho, map[string]any{"text": "hi"}},
}

// everythingTools are server-everything's: toggle-simulated-logging keeps
// per-session state (the second toggle in a session stops what the first
// started, and leaves it off for the session's next user); it has no
// counter, so the effect (get-sum) is counted from the proxy's ledger:
// calls the server answered 200. echo without its message answers isError
// (input validation).
var everythingTools = toolset{
	set:    func(int) call { return call{"toggle-simulated-logging", nil} },
	get:    call{"toggle-simulated-logging", nil},
	want:   func(int) string { return "Stopped simulated logging" },
	none:   "Started simulated",
	effect: call{"get-sum", map[string]any{"a": 1, "b": 2}},
	fail:   call{"echo", nil},
	echo:   call{"echo", map[string]any{"message": "hi"}},
}

// fixtureServer is the Go fixture. It has no call to drop queued faults,
// and starts in microseconds, so Reset replaces it with a new one.
type fixtureServer struct {
	opts fixtures.Options
	srv  *fixtures.Server
}

func startGoFixture(t *testing.T) matrixServer { return startGoFixtureWith(fixtures.Options{})(t) }

func startGoFixtureWith(opts fixtures.Options) func(t *testing.T) matrixServer {
	return func(t *testing.T) matrixServer {
		f := &fixtureServer{opts: opts}
		f.Reset(t)
		return f
	}
}

func (f *fixtureServer) Reset(t *testing.T) {
	t.Helper()
	if f.srv != nil {
		_ = f.srv.Close()
	}
	srv, err := fixtures.Start(f.opts)
	if err != nil {
		t.Fatalf("start fixture: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	f.srv = srv
}

func (f *fixtureServer) URL() string                            { return f.srv.URL() }
func (f *fixtureServer) Requests(*testing.T) []fixtures.Request { return f.srv.Requests() }
func (f *fixtureServer) ForgetNext(_ *testing.T, n int)         { f.srv.ForgetNextSessions(n) }
func (f *fixtureServer) ForgottenStatus() int                   { return http.StatusNotFound }
func (f *fixtureServer) Ran(*testing.T) int64                   { return f.srv.SideEffects() }
func (f *fixtureServer) Tools() toolset                         { return scriptTools }
func (f *fixtureServer) LoseAnswer(*testing.T) {
	f.srv.ResetConnectionOnNextCall(fixtures.ResetAfterTool)
}
func (f *fixtureServer) Reject(_ *testing.T, status int) {
	f.srv.RejectNext(fixtures.Reject{Method: "tools/call", Status: status})
}

// peerServer is a real peer.
type peerServer struct{ p *peers.Peer }

func startPeer(kind peers.Kind) func(t *testing.T) matrixServer {
	return startPeerWith(kind, peers.Options{})
}

func startPeerWith(kind peers.Kind, opts peers.Options) func(t *testing.T) matrixServer {
	return func(t *testing.T) matrixServer { return peerServer{peers.StartT(t, kind, opts)} }
}

func (s peerServer) URL() string { return s.p.URL() }

func (s peerServer) Requests(t *testing.T) []fixtures.Request {
	t.Helper()
	reqs, err := s.p.Requests(t.Context())
	if err != nil {
		t.Fatalf("%s ledger: %v", s.p.Kind(), err)
	}
	return reqs
}

func (s peerServer) Reset(t *testing.T) {
	t.Helper()
	if err := s.p.ResetRequests(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.p.ClearHooks(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func (s peerServer) Reject(t *testing.T, status int) {
	t.Helper()
	if err := s.p.RejectNext(t.Context(), peers.Reject{Status: status, Method: "tools/call"}); err != nil {
		t.Fatal(err)
	}
}

func (s peerServer) LoseAnswer(t *testing.T) {
	t.Helper()
	if err := s.p.RejectNext(t.Context(), peers.Reject{Status: http.StatusInternalServerError, Method: "tools/call", AfterRun: true}); err != nil {
		t.Fatal(err)
	}
}

func (s peerServer) ForgetNext(t *testing.T, n int) {
	t.Helper()
	if err := s.p.ForgetNextSessions(t.Context(), n); err != nil {
		t.Fatal(err)
	}
}

func (s peerServer) ForgottenStatus() int {
	if s.p.Kind() == peers.Everything {
		return http.StatusBadRequest
	}
	return http.StatusNotFound
}

func (s peerServer) Ran(t *testing.T) int64 {
	t.Helper()
	if s.p.Kind() == peers.Everything {
		var n int64
		tool := everythingTools.effect.name
		for _, r := range s.Requests(t) {
			served := r.Fault == "" && r.Status == http.StatusOK || r.Fault == peers.FaultRejectAfterRun
			if r.RPCMethod == "tools/call" && r.Tool == tool && served {
				n++
			}
		}
		return n
	}
	st, err := s.p.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st.SideEffects
}

func (s peerServer) Tools() toolset {
	if s.p.Kind() == peers.Everything {
		return everythingTools
	}
	return scriptTools
}

// Ledger summaries.

// handshakeMethods are the JSON-RPC methods a dial sends.
var handshakeMethods = map[string]bool{"server/discover": true, "initialize": true, "notifications/initialized": true}

// ledgerCalls returns the tools/call entries.
func ledgerCalls(reqs []fixtures.Request) []fixtures.Request {
	var out []fixtures.Request
	for _, r := range reqs {
		if r.RPCMethod == "tools/call" {
			out = append(out, r)
		}
	}
	return out
}

// ledgerHandshakes counts the dials the server completed at revision: a
// server/discover answered 2xx at 2026-07-28, an initialize answered 2xx
// before it (a dial that fell back may have had its discover answered too,
// with older revisions only).
func ledgerHandshakes(reqs []fixtures.Request, revision string) int {
	method := "initialize"
	if revision == spans.ProtocolModern {
		method = "server/discover"
	}
	n := 0
	for _, r := range reqs {
		if r.RPCMethod == method && r.Status/100 == 2 {
			n++
		}
	}
	return n
}

// ledgerHandshakeRequests counts the requests of dials.
func ledgerHandshakeRequests(reqs []fixtures.Request) int {
	n := 0
	for _, r := range reqs {
		if handshakeMethods[r.RPCMethod] {
			n++
		}
	}
	return n
}

// ledgerSessions lists session ids in order of first appearance.
func ledgerSessions(reqs []fixtures.Request) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range reqs {
		if r.SessionID != "" && !seen[r.SessionID] {
			seen[r.SessionID] = true
			out = append(out, r.SessionID)
		}
	}
	return out
}

// ledgerString is a compact ledger for failure messages.
func ledgerString(reqs []fixtures.Request) string {
	var b strings.Builder
	for _, r := range reqs {
		m := r.RPCMethod
		if m == "" {
			m = r.HTTPMethod
		}
		if r.Tool != "" {
			m += " " + r.Tool
		}
		sid := r.SessionID
		if len(sid) > 8 {
			sid = sid[:8]
		}
		fmt.Fprintf(&b, "\n  %s session=%q -> %d %s", m, sid, r.Status, r.Fault)
	}
	return b.String()
}
