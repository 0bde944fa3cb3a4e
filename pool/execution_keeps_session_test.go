package pool_test

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/fixtures"
)

// TestExecutionKeepsItsSessionAfterAJSONRPCError pins that a failure the
// server answered (a JSON-RPC error, a tool result with isError) leaves the
// execution holding its session: another caller that acquires between the
// failure and the execution's next call must not get that session, and the
// next call must still see the execution's selection.
func TestExecutionKeepsItsSessionAfterAJSONRPCError(t *testing.T) {
	cases := []struct {
		name string
		call string
		want func(t *testing.T, res *mcp.CallToolResult, err error)
	}{
		{"a JSON-RPC error (unknown tool)", "no_such_tool", func(t *testing.T, _ *mcp.CallToolResult, err error) {
			var je *jsonrpc.Error
			if !errors.As(err, &je) {
				t.Fatalf("err = %v, want a *jsonrpc.Error", err)
			}
		}},
		{"a tool result with isError", fixtures.ToolFail, func(t *testing.T, res *mcp.CallToolResult, err error) {
			if err != nil || res == nil || !res.IsError {
				t.Fatalf("res %v err %v, want an isError result", res, err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{})
			ctx := context.Background()
			e := h.pool.Execution()
			defer e.Close()
			call := func(tool string, args map[string]any) (*mcp.CallToolResult, error) {
				return e.CallTool(ctx, h.target, &mcp.CallToolParams{Name: tool, Arguments: args})
			}
			if _, err := call(fixtures.ToolSelectWorkspace, map[string]any{"workspace": "mine"}); err != nil {
				t.Fatal(err)
			}
			res, err := call(tc.call, nil)
			tc.want(t, res, err)

			// Another caller acquires now: a session the execution gave
			// back would be idle and handed to it.
			other, err := h.pool.Acquire(ctx, h.target)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Release(nil)
			if other.CacheHit() {
				t.Errorf("another caller got an idle session (%s) while the execution should hold its only one", other.SessionID())
			}
			res, err = call(fixtures.ToolGetWorkspace, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(res); got != "workspace:mine" {
				t.Errorf("after the failure the execution's get_workspace = %q, want workspace:mine (its own session)", got)
			}
			if st := h.pool.Stat(); st.Dials != 2 || st.InUseSessions != 2 {
				t.Errorf("stat = %+v, want 2 dials (the execution's, the other caller's) and both in use", st)
			}
		})
	}
}
