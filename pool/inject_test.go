package pool_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
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
	if len(metas) != 1 {
		t.Fatalf("recorded %d tools/call requests, want 1", len(metas))
	}
	return metas[0]
}
