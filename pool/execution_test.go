package pool_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// runExecutions runs n concurrent executions that select their own
// workspace and read it back, and returns how many read another's (or
// none). call runs one tool call of execution i.
func runExecutions(t *testing.T, n int, begin func(i int) (call func(tool string, args map[string]any) (string, error), end func())) (crossReads int) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			call, end := begin(i)
			defer end()
			ws := fmt.Sprintf("ws-%d", i)
			if _, err := call(fixtures.ToolSelectWorkspace, map[string]any{"workspace": ws}); err != nil {
				t.Errorf("execution %d select: %v", i, err)
				return
			}
			got, err := call(fixtures.ToolGetWorkspace, nil)
			if err != nil {
				t.Errorf("execution %d get: %v", i, err)
				return
			}
			if got != "workspace:"+ws {
				mu.Lock()
				crossReads++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return crossReads
}

func TestExecutionKeepsEachExecutionOnOneSession(t *testing.T) {
	const n = 50
	cases := []struct {
		name  string
		begin func(h *harness) func(i int) (func(string, map[string]any) (string, error), func())
	}{
		{"Execution.CallTool", func(h *harness) func(int) (func(string, map[string]any) (string, error), func()) {
			return func(int) (func(string, map[string]any) (string, error), func()) {
				e := h.pool.Execution()
				return func(tool string, args map[string]any) (string, error) {
					res, err := e.CallTool(context.Background(), h.target, &mcp.CallToolParams{Name: tool, Arguments: args})
					if err != nil {
						return "", err
					}
					return resultText(res), nil
				}, e.Close
			}
		}},
		{"Pool.CallTool with WithExecution", func(h *harness) func(int) (func(string, map[string]any) (string, error), func()) {
			return func(int) (func(string, map[string]any) (string, error), func()) {
				e := h.pool.Execution()
				ctx := pool.WithExecution(context.Background(), e)
				return func(tool string, args map[string]any) (string, error) {
					res, err := h.pool.CallTool(ctx, h.target, &mcp.CallToolParams{Name: tool, Arguments: args})
					if err != nil {
						return "", err
					}
					return resultText(res), nil
				}, e.Close
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{})
			if got := runExecutions(t, n, tc.begin(h)); got != 0 {
				t.Errorf("%d of %d executions read another execution's workspace, want 0", got, n)
			}
			// One session per execution on the wire: each get_workspace
			// carried the session id its select_workspace did.
			sel := map[string]int{}
			for _, r := range h.srv.Requests() {
				if r.Tool == fixtures.ToolSelectWorkspace {
					sel[r.SessionID]++
				}
			}
			for id, k := range sel {
				if k != 1 {
					t.Errorf("session %s selected %d workspaces at once", id, k)
				}
			}
			st := h.pool.Stat()
			if st.InUseSessions != 0 || st.Acquires != n {
				t.Errorf("stat = %+v, want %d acquires (one per execution) and nothing in use after Close", st, n)
			}
			if got := len(h.spansNamed(spans.SpanInvoke)); got != 2*n {
				t.Errorf("invoke spans = %d, want %d", got, 2*n)
			}
		})
	}
}

func TestExecutionFollowsThePoolsDropAndRedialRules(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	e := h.pool.Execution()
	ctx := context.Background()
	call := func(tool string) (*mcp.CallToolResult, error) {
		return e.CallTool(ctx, h.target, &mcp.CallToolParams{Name: tool})
	}
	if _, err := call(fixtures.ToolSelectWorkspace); err != nil {
		t.Fatal(err)
	}
	// A tool error keeps the session.
	if res, err := call(fixtures.ToolFail); err != nil || !res.IsError {
		t.Fatalf("fail tool: res %v err %v, want an isError result", res, err)
	}
	if res, _ := call(fixtures.ToolGetWorkspace); resultText(res) != "workspace:"+fixtures.DefaultWorkspace {
		t.Errorf("after a tool error get_workspace = %q, want the same session", resultText(res))
	}
	// The server forgets the session: the call is redialed once.
	h.srv.ForgetSessions()
	if res, err := call(fixtures.ToolGetWorkspace); err != nil || resultText(res) != fixtures.NoWorkspace {
		t.Fatalf("after the server forgot: res %v err %v, want a redialed session with no workspace", res, err)
	}
	if st := h.pool.Stat(); st.Redials != 1 || st.Dials != 2 {
		t.Errorf("stat = %+v, want one redial", st)
	}
	e.Close()
	e.Close() // idempotent
	if _, err := call(fixtures.ToolEcho); !errors.Is(err, pool.ErrExecutionClosed) {
		t.Errorf("call after Close: err = %v, want ErrExecutionClosed", err)
	}
	if st := h.pool.Stat(); st.InUseSessions != 0 || st.IdleSessions != 1 {
		t.Errorf("after Close in use %d idle %d, want 0 and 1", st.InUseSessions, st.IdleSessions)
	}
}
