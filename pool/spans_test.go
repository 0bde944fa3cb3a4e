package pool_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

func TestSpanTreeOfAPooledWorkload(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.mustCall("select_workspace", nil)
	h.mustCall("get_workspace", nil)

	invokes := h.spansNamed(spans.SpanInvoke)
	acquires := h.spansNamed(spans.SpanAcquire)
	handshakes := h.spansNamed(spans.SpanHandshake)
	calls := h.spansNamed(spans.SpanCallTool)
	if len(invokes) != 2 || len(acquires) != 2 || len(handshakes) != 1 || len(calls) != 2 {
		t.Fatalf("spans: %d invoke, %d acquire, %d handshake, %d call; want 2, 2, 1, 2", len(invokes), len(acquires), len(handshakes), len(calls))
	}
	session := h.srv.SessionIDs()[0]
	wantHit := []string{"false", "true"}
	for i, inv := range invokes {
		if inv.SpanKind() != trace.SpanKindInternal {
			t.Errorf("invoke %d kind = %v", i, inv.SpanKind())
		}
		if attr(inv, spans.AttrCacheKey) != h.target.Key() || attr(inv, spans.AttrTransport) != spans.TransportStreamableHTTP || attr(inv, spans.AttrPoolID) != h.pool.ID() {
			t.Errorf("invoke %d attrs = %v", i, inv.Attributes())
		}
		acq := acquires[i]
		if acq.Parent().SpanID() != inv.SpanContext().SpanID() {
			t.Errorf("acquire %d is not a child of its invoke", i)
		}
		if got := attr(acq, spans.AttrCacheHit); got != wantHit[i] {
			t.Errorf("acquire %d cache_hit = %s, want %s", i, got, wantHit[i])
		}
		if attr(acq, spans.AttrAttempt) != "1" || attr(acq, spans.AttrCacheKey) != h.target.Key() {
			t.Errorf("acquire %d attrs = %v", i, acq.Attributes())
		}
		call := calls[i]
		if call.Parent().SpanID() != inv.SpanContext().SpanID() || call.SpanKind() != trace.SpanKindClient {
			t.Errorf("call %d is not a client child of its invoke", i)
		}
		if attr(call, spans.AttrSessionID) != session || attr(call, spans.AttrMethodName) != spans.MethodToolsCall {
			t.Errorf("call %d attrs = %v", i, call.Attributes())
		}
	}
	if got := attr(acquires[0], spans.AttrMissReason); got != spans.MissCold {
		t.Errorf("first acquire miss_reason = %q, want cold", got)
	}
	if hasAttr(acquires[1], spans.AttrMissReason) {
		t.Error("a hit carries a miss_reason")
	}
	hs := handshakes[0]
	if hs.Parent().SpanID() != acquires[0].SpanContext().SpanID() || hs.SpanKind() != trace.SpanKindClient {
		t.Error("handshake is not a client child of the missing acquire")
	}
	if attr(hs, spans.AttrSessionID) != session || attr(hs, spans.AttrProtocolVersion) != "2025-11-25" || attr(hs, spans.AttrServerAddress) != "127.0.0.1" || attr(hs, spans.AttrServerPort) == "" {
		t.Errorf("handshake attrs = %v", hs.Attributes())
	}
	if got := attr(calls[1], spans.AttrGenAIToolName); got != "get_workspace" {
		t.Errorf("call tool name = %q", got)
	}
}

func TestEveryMissSpanNamesItsReasonAndAgreesWithStat(t *testing.T) {
	// One idle session per key, whatever the peak, so that the third
	// acquire below must dial.
	h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{FixedIdlePerKey: true}})
	ctx := context.Background()
	h.mustCall(fixtures.ToolEcho, nil)         // cold
	held, err := h.pool.Acquire(ctx, h.target) // hit
	if err != nil {
		t.Fatal(err)
	}
	h.mustCall(fixtures.ToolEcho, nil) // concurrent
	held.Release(nil)
	// A failed dial is a miss too: after_failure follows it.
	h.srv.RejectNext(fixtures.Reject{Status: http.StatusServiceUnavailable, Method: "notifications/initialized"})
	second, err := h.pool.Acquire(ctx, h.target) // hit (one idle left)
	if err != nil {
		t.Fatal(err)
	}
	third, err := h.pool.Acquire(ctx, h.target) // concurrent, but the dial fails
	if err == nil {
		third.Release(nil)
		t.Fatal("the dial against a 503 succeeded")
	}
	second.Release(errors.New("drop it")) // the session goes away
	h.mustCall(fixtures.ToolEcho, nil)    // after_failure
	h.clock.Advance(pool.DefaultIdleTTL + time.Second)
	h.mustCall(fixtures.ToolEcho, nil) // ttl

	fromSpans := map[string]int64{}
	for _, s := range h.spansNamed(spans.SpanAcquire) {
		if attr(s, spans.AttrCacheHit) != "false" {
			continue
		}
		reason := attr(s, spans.AttrMissReason)
		if reason == "" {
			t.Errorf("miss acquire span without %s: %v", spans.AttrMissReason, s.Attributes())
		}
		fromSpans[reason]++
	}
	st := h.pool.Stat()
	fromStat := map[string]int64{}
	for r, n := range st.MissReasons {
		if n > 0 {
			fromStat[r] = n
		}
	}
	if fmt.Sprint(fromSpans) != fmt.Sprint(fromStat) {
		t.Errorf("miss reasons from spans %v, from Stat %v: want them equal", fromSpans, fromStat)
	}
	want := map[string]int64{spans.MissCold: 1, spans.MissConcurrent: 2, spans.MissAfterFailure: 1, spans.MissTTL: 1}
	if fmt.Sprint(fromSpans) != fmt.Sprint(want) {
		t.Errorf("miss reasons %v, want %v", fromSpans, want)
	}
}

func TestSemconvCallSpansFollowTheMCPConventions(t *testing.T) {
	h := newHarness(t, harnessOpts{pool: pool.Options{SemconvCallSpans: true}})
	h.mustCall(fixtures.ToolEcho, map[string]any{"text": "x"})
	if got := len(h.spansNamed(spans.SpanCallTool)); got != 0 {
		t.Errorf("%d spans named %s in semconv mode, want 0", got, spans.SpanCallTool)
	}
	calls := h.spansNamed("tools/call " + fixtures.ToolEcho)
	if len(calls) != 1 {
		t.Fatalf("spans named %q = %d, want 1", "tools/call "+fixtures.ToolEcho, len(calls))
	}
	c := calls[0]
	if c.SpanKind() != trace.SpanKindClient {
		t.Errorf("kind = %v, want client", c.SpanKind())
	}
	for key, want := range map[string]string{
		spans.AttrMethodName:      spans.MethodToolsCall,
		spans.AttrGenAIToolName:   fixtures.ToolEcho,
		spans.AttrSessionID:       h.srv.SessionIDs()[0],
		spans.AttrProtocolVersion: spans.ProtocolLegacy,
		spans.AttrServerAddress:   "127.0.0.1",
	} {
		if got := attr(c, key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if !hasAttr(c, spans.AttrServerPort) {
		t.Errorf("no %s", spans.AttrServerPort)
	}
}

// TestEveryAcquireSpanCarriesItsKeyAttemptAndPool pins what an acquire span
// says whatever its outcome: the pool sets the attributes it started for
// (cache key, attempt, pool id) together with the outcome in one
// SetAttributes when the span ends, so each way an acquire ends (a hit, a
// miss, a failed dial, an acquire on a closed pool, the redial after a
// forgotten session) must still set them.
func TestEveryAcquireSpanCarriesItsKeyAttemptAndPool(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	ctx := context.Background()
	h.mustCall(fixtures.ToolEcho, nil) // miss (cold)
	h.mustCall(fixtures.ToolEcho, nil) // hit
	// The server forgets the idle session: the next call's 404 makes the
	// redial, attempt 2.
	h.srv.ForgetSessions()
	h.mustCall(fixtures.ToolEcho, nil)
	// A concurrent dial that fails.
	held, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	h.srv.RejectNext(fixtures.Reject{Status: http.StatusServiceUnavailable, Method: "notifications/initialized"})
	if l, err := h.pool.Acquire(ctx, h.target); err == nil {
		l.Release(nil)
		t.Fatal("the dial against a 503 succeeded")
	}
	held.Release(nil)
	_ = h.pool.Close()
	if _, err := h.pool.Acquire(ctx, h.target); !errors.Is(err, pool.ErrPoolClosed) {
		t.Fatalf("acquire on a closed pool: %v, want ErrPoolClosed", err)
	}

	acquires := h.spansNamed(spans.SpanAcquire)
	for i, want := range []struct {
		outcome, hit, attempt, errType string
	}{
		{"cold miss", "false", "1", ""},
		{"hit", "true", "1", ""},
		{"hit on a forgotten session", "true", "1", ""},
		{"redial", "false", "2", ""},
		{"hit held", "true", "1", ""},
		{"failed dial", "false", "1", spans.ErrTypeHTTPStatus},
		{"closed pool", "false", "1", spans.ErrTypePoolClosed},
	} {
		if i >= len(acquires) {
			t.Fatalf("%d acquire spans, want at least %d", len(acquires), i+1)
		}
		s := acquires[i]
		for key, v := range map[string]string{
			spans.AttrCacheKey:  h.target.Key(),
			spans.AttrPoolID:    h.pool.ID(),
			spans.AttrAttempt:   want.attempt,
			spans.AttrCacheHit:  want.hit,
			spans.AttrErrorType: want.errType,
		} {
			if got := attr(s, key); got != v {
				t.Errorf("acquire %d (%s): %s = %q, want %q; attributes %v", i, want.outcome, key, got, v, s.Attributes())
			}
		}
	}
	if len(acquires) != 7 {
		t.Errorf("%d acquire spans, want 7", len(acquires))
	}
}
