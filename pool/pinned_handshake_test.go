package pool_test

import (
	"testing"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// TestAPinnedHandshakeIsNeverCountedAFallback pins that a handshake at a
// revision the target pins stays pinned, even when the server refused its
// probe and both server/discover and initialize went out: the pool
// negotiated nothing, so it counts no fallback and the span says pinned.
func TestAPinnedHandshakeIsNeverCountedAFallback(t *testing.T) {
	h := newHarness(t, harnessOpts{fixture: fixtures.Options{Discover: fixtures.DiscoverTypeScriptV1}, pool: pool.Options{ProtocolVersion: spans.ProtocolModern}})
	if _, err := h.call(t.Context(), fixtures.ToolEcho, nil); err != nil {
		t.Fatal(err)
	}
	st := h.pool.Stat()
	if st.HandshakeRequests != 3 || st.NegotiationFallbacks != 0 {
		t.Errorf("HandshakeRequests = %d NegotiationFallbacks = %d, want 3 (discover refused, initialize, initialized) and no fallback", st.HandshakeRequests, st.NegotiationFallbacks)
	}
	hs := h.spansNamed(spans.SpanHandshake)
	if len(hs) != 1 || attr(hs[0], spans.AttrNegotiation) != spans.NegotiationPinned {
		t.Errorf("%d handshake spans, want one with negotiation pinned", len(hs))
	}
}
