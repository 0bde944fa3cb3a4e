package peers_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/internal/peers"
	"github.com/mcptrace/mcptrace/internal/testbound"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// connect opens a Go SDK client session to the peer at revision version
// with a round tripper that keeps a pointer to the last HTTP status.
func connect(t *testing.T, p *peers.Peer, version string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := testbound.Context(t)
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
			wantAfterRun(t, p, tt.version)
			if err := p.RejectNext(ctx, peers.Reject{Status: http.StatusBadRequest, Method: "tools/call"}); err != nil {
				t.Fatal(err)
			}
			if err := p.ClearHooks(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := connect(t, p, tt.version).CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil {
				t.Errorf("a rejection dropped by ClearHooks still answered: %v", err)
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

// wantAfterRun pins Reject.AfterRun: the request is served (on the script
// peers the side-effect counter moves; behind the proxy the server's answer
// is read to its end) and the client gets the rejection's status instead.
func wantAfterRun(t *testing.T, p *peers.Peer, version string) {
	t.Helper()
	ctx := t.Context()
	tool, args := "side_effect", map[string]any{}
	if p.Kind() == peers.Everything {
		tool, args = "toggle-simulated-logging", map[string]any{}
	}
	var before int64
	if p.Kind() != peers.Everything {
		st, err := p.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		before = st.SideEffects
	} else if _, err := p.Stats(ctx); !errors.Is(err, peers.ErrNoHook) {
		t.Errorf("Stats on server-everything: %v, want ErrNoHook", err)
	}
	if err := p.RejectNext(ctx, peers.Reject{Status: http.StatusInternalServerError, Method: "tools/call", AfterRun: true}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, p, version)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args}); err == nil {
		t.Fatal("a call whose answer was replaced by 500 succeeded")
	}
	reqs := requests(t, p)
	last := reqs[len(reqs)-1]
	if last.Tool != tool || last.Status != http.StatusInternalServerError || last.Fault != peers.FaultRejectAfterRun {
		t.Errorf("ledger entry %+v, want %s answered 500 with fault %q", last, tool, peers.FaultRejectAfterRun)
	}
	if p.Kind() == peers.Everything {
		// No counter: the lost call was a toggle, so the session's next
		// toggle stops what it started.
		if got := rawToggle(t, p, cs.ID()); !strings.Contains(got, "Stopped simulated logging") {
			t.Errorf("the toggle after the lost answer said %q: the lost call did not run", got)
		}
		return
	}
	st, err := p.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.SideEffects != before+1 {
		t.Errorf("side effects %d -> %d: the tool must run once before its answer is replaced", before, st.SideEffects)
	}
}

// TestModernOnlyV2RefusesTheLegacyHandshake pins Options.ModernOnly: the
// TypeScript SDK v2 peer in its strict posture refuses initialize (the
// unsupported-version error) and serves 2026-07-28.
func TestModernOnlyV2RefusesTheLegacyHandshake(t *testing.T) {
	p := peers.StartT(t, peers.TSSDKv2, peers.Options{ModernOnly: true})
	ctx, cancel := testbound.Context(t)
	defer cancel()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := mcp.NewClient(&mcp.Implementation{Name: "peers-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.URL(), HTTPClient: &http.Client{Transport: tr}, DisableStandaloneSSE: true, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		_ = cs.Close()
		t.Fatal("a modern-only v2 peer accepted a 2025-11-25 initialize")
	}
	reqs := requests(t, p)
	if len(reqs) == 0 || reqs[0].RPCMethod != "initialize" || reqs[0].Status/100 == 2 {
		t.Errorf("ledger %+v, want the initialize refused", reqs)
	}
	connect(t, p, "2026-07-28")
}

// rawToggle calls toggle-simulated-logging on session id over plain HTTP
// (the SDK client gives up on a session after an error answer) and returns
// the answer's body.
func rawToggle(t *testing.T, p *peers.Peer, id string) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"toggle-simulated-logging","arguments":{}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, p.URL(), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return string(out)
}
