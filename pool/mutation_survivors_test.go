package pool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// Tests of behaviours the mutation runs (TESTING.md, stop 31) found
// unpinned, each on a real fixture server on 127.0.0.1.

// TestAcquireSweepsExactlyOneIntervalAfterTheLastSweep pins the pacing of
// the acquire-time sweep (Options.SweepInterval): an acquire exactly one
// interval after the last sweep sweeps, one a nanosecond earlier does not.
// The swept session is another key's, long past its TTL, so only the sweep
// can close it; the acquire that sweeps is a hit on its own key, and the
// session it swept is closed (DELETE), not only forgotten. The interval is
// an hour, so the background timer never fires during the test.
func TestAcquireSweepsExactlyOneIntervalAfterTheLastSweep(t *testing.T) {
	const ttl, interval = time.Minute, time.Hour
	for _, tc := range []struct {
		name      string
		after     time.Duration // the other key's hit, after the first sweep
		wantSwept bool
	}{
		{"a nanosecond short of the interval does not sweep", interval - time.Nanosecond, false},
		{"exactly the interval sweeps", interval, true},
		{"past the interval sweeps", interval + time.Nanosecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{IdleTTL: ttl, SweepInterval: interval}})
			// The pool's first acquire starts the sweep clock.
			h.mustCall(fixtures.ToolEcho, map[string]any{"text": "a"})
			first := h.srv.SessionIDs()[0]
			other, err := pool.NewTarget(pool.TargetConfig{Endpoint: h.srv.URL(), Header: http.Header{"X-Tenant": {"b"}}})
			if err != nil {
				t.Fatal(err)
			}
			callOther := func() {
				t.Helper()
				if _, err := h.pool.CallTool(context.Background(), other, &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "b"}}); err != nil {
					t.Fatalf("call on the other key: %v", err)
				}
			}
			h.clock.Advance(interval - ttl/2) // not due: the other key dials
			callOther()
			h.clock.Advance(tc.after - (interval - ttl/2)) // its session reused
			callOther()
			st := h.pool.Stat()
			if st.Hits != 1 {
				t.Fatalf("stat = %+v; want the other key's second call a hit", st)
			}
			deleted := httpCount(h.srv, http.MethodDelete, first)
			swept := st.Evictions[spans.EvictTTL] == 1 && st.IdleSessions == 1 && deleted == 1
			kept := st.Evictions[spans.EvictTTL] == 0 && st.IdleSessions == 2 && deleted == 0
			if (tc.wantSwept && !swept) || (!tc.wantSwept && !kept) {
				t.Errorf("stat = %+v, DELETE of the first session %d; want it swept and closed: %v", st, deleted, tc.wantSwept)
			}
		})
	}
}

// TestRPCHeadReadsOnlyWellFormedHeads pins the head scanner's bounds and
// punctuation: a body cut after any byte yields at most the fields it holds
// whole, never a panic; a head whose opening brace, colon or comma is some
// other byte yields nothing read after that byte (a head that is not the
// JSON the SDK writes is not guessed at); the params, by name or by
// position, end the head.
func TestRPCHeadReadsOnlyWellFormedHeads(t *testing.T) {
	const body = ` { "jsonrpc" : "2.0" , "id" : 7 , "method" : "tools/call" , "params" : {} } `
	for n := 0; n <= len(body); n++ {
		method, id := pool.RPCHead(postBody(t, body[:n]))
		if (method != "" && method != spans.MethodToolsCall) || (id != "" && id != "7") || (n == len(body) && (method == "" || id == "")) {
			t.Errorf("RPCHead(%q) = %q, %q", body[:n], method, id)
		}
	}
	for _, tc := range []struct{ name, body, method, id string }{
		{"no opening brace", `x"jsonrpc":"2.0","id":7,"method":"tools/call"}`, "", ""},
		{"no colon after a key", `{"jsonrpc":"2.0","id"=7,"method":"tools/call"}`, "", ""},
		{"a space for the colon", `{"method" "tools/call","id":7}`, "", ""},
		{"no comma after a value", `{"method":"tools/call"."id":7}`, "tools/call", ""},
		{"params by position end the head", `{"jsonrpc":"2.0","method":"tools/call","params":[0],"id":4}`, "tools/call", ""},
		{"params by name end the head", `{"jsonrpc":"2.0","method":"tools/call","params":{},"id":4}`, "tools/call", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if method, id := pool.RPCHead(postBody(t, tc.body)); method != tc.method || id != tc.id {
				t.Errorf("RPCHead(%s) = %q, %q; want %q, %q", tc.body, method, id, tc.method, tc.id)
			}
		})
	}
}

// postBody is a POST of body to a 127.0.0.1 endpoint, as the SDK sends it.
func postBody(t *testing.T, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestOnlyAWaitThatRunsOutCountsAsATimeout pins what the timeouts metric
// and Stat.Timeouts count: an acquire that gave up waiting at the key's
// in-use cap because Options.AcquireTimeout ran out, not one whose caller
// cancelled the wait.
func TestOnlyAWaitThatRunsOutCountsAsATimeout(t *testing.T) {
	for _, tc := range []struct {
		name         string
		timeout      time.Duration // Options.AcquireTimeout
		cancel       bool
		wantErr      error
		wantTimeouts int64
	}{
		{"the AcquireTimeout runs out", time.Millisecond, false, pool.ErrAcquireTimeout, 1},
		{"the caller cancels the wait", 0, true, context.Canceled, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{pool: pool.Options{MaxInUsePerKey: 1, AcquireTimeout: tc.timeout}})
			held, err := h.pool.Acquire(context.Background(), h.target)
			if err != nil {
				t.Fatal(err)
			}
			defer held.Release(nil)
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancel {
				cancel()
			}
			defer cancel()
			if _, err := h.pool.Acquire(ctx, h.target); !errors.Is(err, tc.wantErr) {
				t.Fatalf("acquire at the cap: %v, want %v", err, tc.wantErr)
			}
			var rm metricdata.ResourceMetrics
			if err := h.reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			var got int64
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == spans.MetricTimeouts {
						for _, dp := range sum.DataPoints {
							got += dp.Value
						}
					}
				}
			}
			if st := h.pool.Stat(); got != tc.wantTimeouts || st.Timeouts != tc.wantTimeouts {
				t.Errorf("%s = %d, Stat.Timeouts = %d; want %d", spans.MetricTimeouts, got, st.Timeouts, tc.wantTimeouts)
			}
		})
	}
}

// TestInitializeNamesTheClientAsConfigured pins what the pool's initialize
// says it is (Options.ClientName, ClientVersion), as the fixture server
// receives it on 127.0.0.1: "mcptrace" and "dev" when not set, the given
// name and version kept as they are when set.
func TestInitializeNamesTheClientAsConfigured(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		opts                  pool.Options
		wantName, wantVersion string
	}{
		{"unset: the defaults", pool.Options{}, "mcptrace", "dev"},
		{"set: kept", pool.Options{ClientName: "gateway", ClientVersion: "1.2.3"}, "gateway", "1.2.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			rec := &bodyRecorder{base: tr}
			opts := tc.opts
			opts.HTTPTransport = rec
			h := newHarness(t, harnessOpts{pool: opts})
			h.mustCall(fixtures.ToolEcho, map[string]any{"text": "x"})
			rec.mu.Lock()
			bodies := append([]string(nil), rec.bodies...)
			rec.mu.Unlock()
			var inits int
			for _, b := range bodies {
				var msg struct {
					Method string `json:"method"`
					Params struct {
						ClientInfo struct{ Name, Version string } `json:"clientInfo"`
					} `json:"params"`
				}
				if json.Unmarshal([]byte(b), &msg) != nil || msg.Method != "initialize" {
					continue
				}
				inits++
				if got := msg.Params.ClientInfo; got.Name != tc.wantName || got.Version != tc.wantVersion {
					t.Errorf("initialize clientInfo = %+v, want %q %q", got, tc.wantName, tc.wantVersion)
				}
			}
			if inits != 1 {
				t.Errorf("%d initialize requests seen, want 1", inits)
			}
		})
	}
}

// TestPrewarmCountsOnlyFallbackHandshakesAsFallbacks pins
// Stat.NegotiationFallbacks for the sessions New opens (Options.Prewarm),
// as for an acquire's: a handshake that negotiated down to 2025-11-25 (the
// fixture answers no server/discover) counts, one whose revision the
// target pins does not.
func TestPrewarmCountsOnlyFallbackHandshakesAsFallbacks(t *testing.T) {
	for _, tc := range []struct {
		name          string
		pinned        string
		wantFallbacks int64
	}{
		{"negotiated: a fallback", "", 1},
		{"pinned: none", spans.ProtocolLegacy, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := fixtures.Start(fixtures.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			tg, err := pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL(), ProtocolVersion: tc.pinned})
			if err != nil {
				t.Fatal(err)
			}
			p, err := pool.New(pool.Options{Prewarm: []*pool.Target{tg}, SweepInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			if st := p.Stat(); st.PrewarmDials != 1 || st.PrewarmFailures != 0 || st.NegotiationFallbacks != tc.wantFallbacks {
				t.Errorf("stat = %+v; want 1 pre-warm dial and %d negotiation fallbacks", st, tc.wantFallbacks)
			}
		})
	}
}
