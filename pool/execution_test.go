package pool_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

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

func TestSizingKeepsTheRecentPeakIdle(t *testing.T) {
	// Three rounds of 50 concurrent executions (select, then read) through
	// plain Pool.CallTool: the sessions the first burst opened wait idle
	// for the next bursts, so the later bursts open at most 5% more. (Not
	// against the in-use peak: a session is in use only once its dial
	// ends, so under load a burst's fast callers can release before its
	// slow dials end and the first burst opens more than its sampled peak.)
	const n, rounds = 50, 3
	for _, tc := range []struct {
		name  string
		fixed bool
	}{{"peak rule", false}, {"fixed one idle per key (contrast)", true}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{pool: pool.Options{FixedIdlePerKey: tc.fixed}})
			var first pool.Stat
			for r := range rounds {
				runExecutions(t, n, func(int) (func(string, map[string]any) (string, error), func()) {
					return func(tool string, args map[string]any) (string, error) {
						return h.call(context.Background(), tool, args)
					}, func() {}
				})
				if r == 0 {
					first = h.pool.Stat()
				}
			}
			st := h.pool.Stat()
			again := st.Dials - first.Dials
			t.Logf("%s: the first burst opened %d sessions (in-use peak %d), the next %d bursts %d more (%d acquires, %d idle_limit evictions)",
				tc.name, first.Dials, st.PeakInUse, rounds-1, again, st.Acquires, st.Evictions[spans.EvictIdleLimit])
			within := again*100 <= first.Dials*5
			if !tc.fixed && !within {
				t.Errorf("the later bursts opened %d sessions, want at most 5%% of the first burst's %d", again, first.Dials)
			}
			if tc.fixed && within {
				t.Errorf("with one idle per key, the later bursts opened only %d sessions after the first burst's %d: the workload does not show the churn", again, first.Dials)
			}
		})
	}
}

func TestInUseCapMakesAcquiresWaitBoundedAndCounted(t *testing.T) {
	h := newHarness(t, harnessOpts{pool: pool.Options{MaxInUsePerKey: 1, AcquireTimeout: 50 * time.Millisecond}})
	ctx := context.Background()
	held, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	// Over the cap: the acquire waits, times out, and says so.
	if _, err := h.pool.Acquire(ctx, h.target); !errors.Is(err, pool.ErrAcquireTimeout) {
		t.Fatalf("acquire over the cap: err = %v, want ErrAcquireTimeout", err)
	}
	st := h.pool.Stat()
	if st.Timeouts != 1 || st.Pending != 0 || st.Dials != 1 {
		t.Errorf("stat = %+v, want 1 timeout, nothing pending, no second dial", st)
	}
	acq := h.spansNamed(spans.SpanAcquire)
	last := acq[len(acq)-1]
	if attr(last, spans.AttrErrorType) != spans.ErrTypeAcquireTimeout || !hasAttr(last, spans.AttrAcquireWait) {
		t.Errorf("timed-out acquire span %v, want error.type %s and the wait", last.Attributes(), spans.ErrTypeAcquireTimeout)
	}

	// A waiter gets the session as soon as the holder releases it: a hit.
	got := make(chan pool.Lease, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		l, err := h.pool.Acquire(ctx, h.target)
		if err != nil {
			t.Errorf("waiting acquire: %v", err)
		}
		got <- l
	}()
	waitPending(t, h.pool, 1)
	held.Release(nil)
	l := <-got
	if !l.CacheHit() {
		t.Error("the waiter dialed instead of taking the released session")
	}
	l.Release(nil)
	if st := h.pool.Stat(); st.Dials != 1 || st.Pending != 0 {
		t.Errorf("stat = %+v, want still one dial and nothing pending", st)
	}
}

// waitPending blocks until the pool reports n acquires waiting for the
// in-use cap: a barrier polled on a ticker and bounded, never a sleep that
// hopes things settled.
func waitPending(t *testing.T, p *pool.Pool, n int) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for p.Stat().Pending < n {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("never saw %d pending acquires (stat %+v)", n, p.Stat())
		}
	}
}
