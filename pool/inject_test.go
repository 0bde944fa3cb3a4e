package pool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
)

// TestTraceContextInMetaMatchesTheW3CPropagator pins the pool's own
// traceparent encoding (written straight from the span context, without a
// propagator) to what the OpenTelemetry W3C propagator writes for the same
// context, byte for byte, as it goes over the wire in params._meta: every
// flag combination, a tracestate, and the caller's own _meta kept alongside
// and never modified.
func TestTraceContextInMetaMatchesTheW3CPropagator(t *testing.T) {
	srv, err := fixtures.Start(fixtures.Options{})
	if err != nil {
		t.Fatalf("start fixture: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	rec := &bodyRecorder{base: tr}
	p, err := pool.New(pool.Options{HTTPTransport: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	target, err := pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	state, err := trace.ParseTraceState("vendor=abc,other=x-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		flags trace.TraceFlags
		state trace.TraceState
		meta  mcp.Meta
	}{
		{"unsampled", 0, trace.TraceState{}, nil},
		{"sampled", trace.FlagsSampled, trace.TraceState{}, nil},
		{"sampled and random", trace.FlagsSampled | trace.FlagsRandom, trace.TraceState{}, nil},
		{"undefined flags dropped", 0xfc | trace.FlagsSampled, trace.TraceState{}, nil},
		{"with tracestate", trace.FlagsSampled, state, nil},
		{"with the caller's meta", trace.FlagsSampled, state, mcp.Meta{"progressToken": "p-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := trace.NewSpanContext(trace.SpanContextConfig{
				TraceID:    trace.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c},
				SpanID:     trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31},
				TraceFlags: tc.flags,
				TraceState: tc.state,
			})
			ctx := trace.ContextWithRemoteSpanContext(context.Background(), sc)
			want := propagation.MapCarrier{}
			propagation.TraceContext{}.Inject(ctx, want)
			callerMeta := maps.Clone(tc.meta)

			rec.mu.Lock()
			rec.bodies = nil
			rec.mu.Unlock()
			params := &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "hi"}, Meta: tc.meta}
			if _, err := p.CallTool(ctx, target, params); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(tc.meta, callerMeta) {
				t.Errorf("the caller's _meta was modified: %v, was %v", tc.meta, callerMeta)
			}
			got := sentMeta(t, rec)
			for _, k := range []string{"traceparent", "tracestate"} {
				if g, _ := got[k].(string); g != want[k] {
					t.Errorf("_meta.%s = %q, the W3C propagator writes %q", k, g, want[k])
				}
			}
			for k, v := range tc.meta {
				if got[k] != v {
					t.Errorf("_meta.%s = %v, want the caller's %v", k, got[k], v)
				}
			}
			if n := len(tc.meta) + len(want); len(got) != n {
				t.Errorf("_meta has %d keys, want %d: %v", len(got), n, got)
			}
		})
	}
}

// sentMeta returns the _meta of the one tools/call request rec recorded.
func sentMeta(t *testing.T, rec *bodyRecorder) map[string]any {
	t.Helper()
	metas := sentMetas(t, rec)
	if len(metas) != 1 {
		t.Fatalf("recorded %d tools/call requests, want 1", len(metas))
	}
	return metas[0]
}

// TestEachCallCarriesOnlyItsOwnMeta pins the recycling of the params and
// _meta map a traced call lends the SDK: a call's _meta holds its own trace
// context and the caller's keys of that call, never a key or traceparent
// left from an earlier call or taken from a concurrent one, on a stateful
// server and on a 2026-07-28 server, whose per-request _meta the SDK adds
// to the same map, and whose shared client runs the calls at once.
func TestEachCallCarriesOnlyItsOwnMeta(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fixture fixtures.Options
	}{
		{"stateful", fixtures.Options{}},
		{"sessionless 2026-07-28", fixtures.Options{ModernOnly: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := fixtures.Start(tc.fixture)
			if err != nil {
				t.Fatalf("start fixture: %v", err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			rec := &bodyRecorder{base: tr}
			p, err := pool.New(pool.Options{HTTPTransport: rec, MaxIdlePerKey: 8})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			target, err := pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL()})
			if err != nil {
				t.Fatal(err)
			}
			// Each call runs under its own remote parent (span id from
			// its number) and names itself in its own _meta key; the
			// calls with an odd number also send a progressToken.
			parent := func(n int) context.Context {
				sc := trace.NewSpanContext(trace.SpanContextConfig{
					TraceID:    trace.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c},
					SpanID:     trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, byte(n >> 16), byte(n >> 8), byte(n)},
					TraceFlags: trace.FlagsSampled,
				})
				return trace.ContextWithRemoteSpanContext(context.Background(), sc)
			}
			call := func(n int) error {
				meta := mcp.Meta{"caller": fmt.Sprint(n)}
				if n%2 == 1 {
					meta["progressToken"] = fmt.Sprint("p-", n)
				}
				before := maps.Clone(meta)
				params := &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "hi"}, Meta: meta}
				if _, err := p.CallTool(parent(n), target, params); err != nil {
					return err
				}
				if !maps.Equal(meta, before) {
					return fmt.Errorf("call %d: the caller's _meta was modified: %v, was %v", n, meta, before)
				}
				return nil
			}
			// One after the other (the same buffer comes back), then 8
			// goroutines at once.
			const sequential, workers, each = 6, 8, 5
			for n := range sequential {
				if err := call(n); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			errs := make(chan error, workers*each)
			for w := range workers {
				wg.Go(func() {
					for i := range each {
						if err := call(sequential + w*each + i); err != nil {
							errs <- err
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}

			// Untraced, the caller's _meta goes out as it is, and is
			// not modified either (the SDK adds the 2026-07-28 _meta
			// keys to the map it is given).
			meta := mcp.Meta{"progressToken": "untraced"}
			params := &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "hi"}, Meta: meta}
			if _, err := p.CallTool(context.Background(), target, params); err != nil {
				t.Fatal(err)
			}
			if len(meta) != 1 || meta["progressToken"] != "untraced" {
				t.Errorf("untraced call: the caller's _meta was modified: %v", meta)
			}

			seen := map[string]bool{}
			for _, got := range sentMetas(t, rec) {
				if got["progressToken"] == "untraced" {
					if _, has := got["traceparent"]; has {
						t.Errorf("untraced call sent a traceparent: %v", got)
					}
					continue
				}
				caller, _ := got["caller"].(string)
				var n int
				if _, err := fmt.Sscan(caller, &n); err != nil {
					t.Errorf("_meta without its call's number: %v", got)
					continue
				}
				seen[caller] = true
				want := propagation.MapCarrier{}
				propagation.TraceContext{}.Inject(parent(n), want)
				if g, _ := got["traceparent"].(string); g != want["traceparent"] {
					t.Errorf("call %d: _meta.traceparent = %q, want its own %q", n, g, want["traceparent"])
				}
				token, has := got["progressToken"]
				if wantToken := n%2 == 1; has != wantToken || (has && token != fmt.Sprint("p-", n)) {
					t.Errorf("call %d: _meta.progressToken = %v (present %v), want present %v with its own", n, token, has, wantToken)
				}
			}
			if want := sequential + workers*each; len(seen) != want {
				t.Errorf("%d calls named in the bodies, want %d", len(seen), want)
			}
		})
	}
}

// sentMetas returns the _meta of every tools/call request rec recorded.
func sentMetas(t *testing.T, rec *bodyRecorder) []map[string]any {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var metas []map[string]any
	for _, b := range rec.bodies {
		if !strings.Contains(b, `"tools/call"`) {
			continue
		}
		var msg struct {
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(b), &msg); err != nil {
			t.Fatalf("decode the tools/call body %s: %v", b, err)
		}
		metas = append(metas, msg.Params.Meta)
	}
	return metas
}
