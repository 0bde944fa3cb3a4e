package peers_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/internal/peers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// connect opens a Go SDK client session to the peer at revision version
// with a round tripper that keeps a pointer to the last HTTP status.
func connect(t *testing.T, p *peers.Peer, version string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := mcp.NewClient(&mcp.Implementation{Name: "peers-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.URL(), HTTPClient: &http.Client{Transport: tr}, DisableStandaloneSSE: true, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect to %s at %q: %v\npeer output:\n%s", p.Kind(), version, err, p.Output())
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

func requests(t *testing.T, p *peers.Peer) []fixtures.Request {
	t.Helper()
	reqs, err := p.Requests(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// TestEachPeerServesTheToolsAndLedgersEveryRequest starts every peer, runs
// a handshake and a call on it with the Go SDK client, and pins that the
// ledger saw each request with its method, session id and status.
func TestEachPeerServesTheToolsAndLedgersEveryRequest(t *testing.T) {
	tests := []struct {
		kind        peers.Kind
		version     string
		tool        string
		args        map[string]any
		want        string
		wantMethods []string
	}{
		{peers.TSSDK1, "2025-11-25", "echo", map[string]any{"text": "hi"}, "hi", []string{"initialize", "notifications/initialized", "tools/call"}},
		{peers.TSSDKv2, "2026-07-28", "echo", map[string]any{"text": "hi"}, "hi", []string{"server/discover", "tools/call"}},
		{peers.TSSDKv2, "2025-11-25", "echo", map[string]any{"text": "hi"}, "hi", []string{"initialize", "notifications/initialized", "tools/call"}},
		{peers.Everything, "2025-11-25", "echo", map[string]any{"message": "hi"}, "Echo: hi", []string{"initialize", "notifications/initialized", "tools/call"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind)+"/"+tt.version, func(t *testing.T) {
			p := peers.StartT(t, tt.kind, peers.Options{})
			cs := connect(t, p, tt.version)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			if err != nil {
				t.Fatalf("call %s: %v", tt.tool, err)
			}
			if got := text(t, res); got != tt.want {
				t.Errorf("%s answered %q, want %q", tt.tool, got, tt.want)
			}
			reqs := requests(t, p)
			var got []string
			for _, r := range reqs {
				if r.Status == 0 {
					t.Errorf("ledger entry %+v has no status, though its client has the answer", r)
				}
				if r.HTTPMethod == http.MethodPost {
					got = append(got, r.RPCMethod)
				}
			}
			if !equal(got, tt.wantMethods) {
				t.Errorf("ledger methods %v, want %v", got, tt.wantMethods)
			}
			last := reqs[len(reqs)-1]
			if last.Tool != tt.tool || last.Status != http.StatusOK {
				t.Errorf("last ledger entry %+v, want tools/call %s answered 200", last, tt.tool)
			}
			if (last.SessionID != "") != p.HasSessions() || last.SessionID != cs.ID() {
				t.Errorf("call's session id %q, client's %q; peer has sessions: %v", last.SessionID, cs.ID(), p.HasSessions())
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestHooksAnswerOnceAndForgetSessions pins each hook on each peer that has
// it: a rejection answers exactly one matching request and never reaches
// the server; a forgotten session is unknown to the server afterwards (404
// on the TypeScript SDK 1.x, 400 on server-everything, which answers an
// unknown session that way).
func TestHooksAnswerOnceAndForgetSessions(t *testing.T) {
	tests := []struct {
		kind         peers.Kind
		version      string
		forgotStatus int
	}{
		{peers.TSSDK1, "2025-11-25", http.StatusNotFound},
		{peers.TSSDKv2, "2026-07-28", 0},
		{peers.Everything, "2025-11-25", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			p := peers.StartT(t, tt.kind, peers.Options{})
			ctx := t.Context()
			cs := connect(t, p, tt.version)
			if err := p.RejectNext(ctx, peers.Reject{Status: http.StatusInternalServerError, Method: "tools/call"}); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err == nil {
				t.Fatal("a call answered 500 by the reject hook succeeded")
			}
			reqs := requests(t, p)
			last := reqs[len(reqs)-1]
			if last.Status != http.StatusInternalServerError || last.Fault != fixtures.FaultReject {
				t.Errorf("rejected call's ledger entry %+v, want status 500 fault %q", last, fixtures.FaultReject)
			}
			cs = connect(t, p, tt.version)
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil {
				t.Fatalf("the call after a one-shot rejection failed: %v", err)
			}
			if !p.HasSessions() {
				if err := p.ForgetSessions(ctx); !errors.Is(err, peers.ErrNoHook) {
					t.Errorf("ForgetSessions on a sessionless peer: %v, want ErrNoHook", err)
				}
				return
			}
			if err := p.ForgetSessions(ctx); err != nil {
				t.Fatal(err)
			}
			_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
			reqs = requests(t, p)
			last = reqs[len(reqs)-1]
			if last.SessionID != cs.ID() || last.Status != tt.forgotStatus || last.Fault != "" {
				t.Errorf("call on a forgotten session: ledger %+v, want session %s answered %d by the server", last, cs.ID(), tt.forgotStatus)
			}
			if err := p.ForgetNextSessions(ctx, 1); err != nil {
				t.Fatal(err)
			}
			fresh := connect(t, p, tt.version)
			_, _ = fresh.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
			reqs = requests(t, p)
			last = reqs[len(reqs)-1]
			if last.SessionID != fresh.ID() || last.Status != tt.forgotStatus {
				t.Errorf("first call on a session forgotten after its handshake: ledger %+v, want %d", last, tt.forgotStatus)
			}
		})
	}
}
