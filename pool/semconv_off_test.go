package pool_test

import (
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/codes"

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

// TestAHandshakeRequestRefusedWith400IsAnError pins the conventions span
// of a handshake request at the HTTP error boundary, on the Go fixture
// (the TypeScript-peer case of the semconv matrix covers it only where the
// peers are installed): a probe refused with exactly 400 is an error whose
// error.type is "400", and the fallback's initialize is not.
func TestAHandshakeRequestRefusedWith400IsAnError(t *testing.T) {
	h := newHarness(t, harnessOpts{pool: pool.Options{SemconvCallSpans: true}})
	h.srv.RejectNext(fixtures.Reject{Status: http.StatusBadRequest, Method: spans.MethodServerDiscover})
	h.mustCall(fixtures.ToolEcho, nil)
	if err := h.pool.Close(); err != nil {
		t.Fatal(err)
	}
	check := func(method, wantType string, wantStatus codes.Code) {
		t.Helper()
		got := h.spansNamed(method)
		if len(got) != 1 {
			t.Fatalf("%d %s spans, want 1", len(got), method)
		}
		var errType string
		for _, kv := range got[0].Attributes() {
			if string(kv.Key) == spans.AttrErrorType {
				errType = kv.Value.AsString()
			}
		}
		if errType != wantType || got[0].Status().Code != wantStatus {
			t.Errorf("%s: error.type %q, status %v; want %q, %v", method, errType, got[0].Status().Code, wantType, wantStatus)
		}
	}
	check(spans.MethodServerDiscover, "400", codes.Error)
	check(spans.MethodInitialize, "", codes.Unset)
}
