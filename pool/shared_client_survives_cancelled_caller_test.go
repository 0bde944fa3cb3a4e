package pool_test

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/fixtures"
)

// TestSharedClientIsKeptWhenACallersContextWasAlreadyCancelled pins that a
// call refused unsent, because its caller's context was done before it
// began, does not drop a sessionless server's shared client: nothing went
// out, so the client is as good as before, and the other callers (one
// holds it right now) keep it, with no new handshake.
func TestSharedClientIsKeptWhenACallersContextWasAlreadyCancelled(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	params := &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "x"}}
	cases := []struct {
		name string
		call func(h *harness) error
	}{
		{"Pool.CallTool", func(h *harness) error {
			_, err := h.pool.CallTool(cancelled, h.target, params)
			return err
		}},
		{"Lease.CallTool then Release(err)", func(h *harness) error {
			l, err := h.pool.Acquire(context.Background(), h.target)
			if err != nil {
				return err
			}
			_, err = l.CallTool(cancelled, params)
			l.Release(err)
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{fixture: fixtures.Options{Sessionless: true}})
			h.mustCall(fixtures.ToolEcho, map[string]any{"text": "warm"})
			held, err := h.pool.Acquire(context.Background(), h.target)
			if err != nil {
				t.Fatal(err)
			}
			if !held.Shared() || !held.CacheHit() {
				t.Fatalf("lease shared %v hit %v, want the key's shared client", held.Shared(), held.CacheHit())
			}
			if err := tc.call(h); !errors.Is(err, context.Canceled) {
				t.Fatalf("call on a cancelled context: err = %v, want context.Canceled", err)
			}
			if _, err := held.CallTool(context.Background(), params); err != nil {
				t.Errorf("the holder's call after the cancelled one: %v", err)
			}
			held.Release(nil)
			if got := h.mustCall(fixtures.ToolEcho, map[string]any{"text": "after"}); got != "after" {
				t.Errorf("echo = %q, want after", got)
			}
			if st := h.pool.Stat(); st.Dials != 1 || sum(st.Failures) != 0 {
				t.Errorf("stat = %+v, want the one shared client kept: 1 dial, no failure", st)
			}
		})
	}
}
