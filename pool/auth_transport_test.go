package pool_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
)

// TestOAuthTransportPassesATransportErrorThrough pins the OAuth layer on a
// request that gets no response at all (nothing listens on the port): the
// dial fails with the transport's error (connection refused), the flow is
// never run (there is no 401 to answer), and nothing reads a response that
// is not there.
func TestOAuthTransportPassesATransportErrorThrough(t *testing.T) {
	h := &countingHandler{tok: "tok-0"}
	p, err := pool.New(pool.Options{OAuthHandler: h, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	dead, err := pool.NewTarget(pool.TargetConfig{Endpoint: deadEndpoint(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.CallTool(context.Background(), dead, &mcp.CallToolParams{Name: fixtures.ToolEcho})
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("call to a dead port through OAuth: err = %v, want connection refused", err)
	}
	if calls := h.calls(); len(calls) != 0 {
		t.Errorf("the flow ran for statuses %v, want never: no response came", calls)
	}
}
