package pool_test

import (
	"testing"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// TestHandshakeRequestSpansOnlyWithSemconv pins that the conventions' spans
// of each handshake request (initialize, server/discover) come only with
// SemconvCallSpans: a pool with a tracer but without the option records the
// pool's own handshake span and none of them; with it, they are there.
func TestHandshakeRequestSpansOnlyWithSemconv(t *testing.T) {
	for _, semconv := range []bool{false, true} {
		h := newHarness(t, harnessOpts{pool: pool.Options{SemconvCallSpans: semconv}})
		h.mustCall(fixtures.ToolEcho, nil)
		if err := h.pool.Close(); err != nil {
			t.Fatal(err)
		}
		if n := len(h.spansNamed(spans.SpanHandshake)); n != 1 {
			t.Fatalf("semconv %v: %d handshake spans, want 1", semconv, n)
		}
		requests := len(h.spansNamed(spans.MethodInitialize)) + len(h.spansNamed(spans.MethodServerDiscover))
		if semconv != (requests > 0) {
			t.Errorf("semconv %v: %d handshake request spans, want them only with SemconvCallSpans", semconv, requests)
		}
	}
}
