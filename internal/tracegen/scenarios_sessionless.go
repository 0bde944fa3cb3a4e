package tracegen

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/spans"
)

// Protocol revisions of the sessionless scenario: MCP 2026-07-28 removed
// protocol sessions (no initialize, no Mcp-Session-Id); 2025-11-25 keeps them.
const (
	ProtocolSessionless = "2026-07-28"
	ProtocolStateful    = "2025-11-25"
)

// Sessionless is one pool scope (gateway-1) talking to two servers, 3
// executions each (one trace each, two invocations per execution), with
// mcp.protocol.version on every acquire, handshake and call span:
//
//   - a modern server speaking 2026-07-28 (key "modern"): no session id on
//     any span; execution 0 dials (a cold miss whose handshake is the
//     discover round trip), every later acquire is a hit on the warm client;
//   - a stateful server speaking 2025-11-25 (key "stateful"): executions 0
//     and 1 keep one session s1 (a cold miss, then hits); execution 2 is
//     dialed per call, so its two calls land on sessions s2 and s3 (two
//     misses nothing explains).
//
// Expected figures: 46 spans (6 roots, 12 invokes, 12 acquires, 4
// handshakes, 12 calls), 6 traces; pool: acquires 12, hits 8, misses 4 (by
// revision: 2026-07-28 6 acquires, 1 miss; 2025-11-25 6 acquires, 3 misses);
// one-session-per-execution judges the 3 stateful executions (failing
// execution 2) and never the 3 sessionless ones.
func Sessionless() ptrace.Traces {
	g := newGen(26)
	ss := g.spansOf(gatewayService, "gateway-1")
	modern := cacheKey("remote:org-1:https://modern." + serverAddress + "/mcp")
	stateful := cacheKey("remote:org-1:https://" + serverAddress + "/mcp")
	s1 := g.sessionID()
	t := BaseTime
	type step struct {
		hit     bool
		reason  string
		session string
	}
	runs := []struct {
		key, version string
		steps        [2]step
	}{
		{modern, ProtocolSessionless, [2]step{{reason: spans.MissCold}, {hit: true}}},
		{modern, ProtocolSessionless, [2]step{{hit: true}, {hit: true}}},
		{modern, ProtocolSessionless, [2]step{{hit: true}, {hit: true}}},
		{stateful, ProtocolStateful, [2]step{{reason: spans.MissCold, session: s1}, {hit: true, session: s1}}},
		{stateful, ProtocolStateful, [2]step{{hit: true, session: s1}, {hit: true, session: s1}}},
		{stateful, ProtocolStateful, [2]step{{session: g.sessionID()}, {session: g.sessionID()}}},
	}
	for _, run := range runs {
		tid := g.traceID()
		root := g.root(ss, tid, executionRootName, t)
		c := t.Add(g.between(200*time.Microsecond, 2*time.Millisecond))
		for i, st := range run.steps {
			c = g.invokeVersioned(ss, tid, root.SpanID(), c, toolAt(i), run.key, run.version, st.hit, st.reason, st.session)
			c = c.Add(g.between(100*time.Microsecond, 5*time.Millisecond))
		}
		setEnd(root, c)
		t = c.Add(time.Minute)
	}
	return g.td
}

// invokeVersioned emits one invocation (invoke → acquire [→ handshake] and
// call_tool) whose acquire, handshake and call spans carry
// mcp.protocol.version, and mcp.session.id only when session is not empty
// (a sessionless server mints none).
func (g *gen) invokeVersioned(ss ptrace.SpanSlice, tid pcommon.TraceID, parent pcommon.SpanID, start time.Time, tool, key, version string, hit bool, reason, session string) time.Time {
	inv := g.span(ss, tid, parent, spans.SpanInvoke, ptrace.SpanKindInternal, start, start)
	inv.Attributes().PutStr(spans.AttrToolName, tool)
	inv.Attributes().PutStr(spans.AttrTransport, spans.TransportStreamableHTTP)
	inv.Attributes().PutStr(spans.AttrCacheKey, key)
	t := start.Add(g.between(20*time.Microsecond, 80*time.Microsecond))
	acq := g.span(ss, tid, inv.SpanID(), spans.SpanAcquire, ptrace.SpanKindInternal, t, t)
	acq.Attributes().PutBool(spans.AttrCacheHit, hit)
	acq.Attributes().PutStr(spans.AttrCacheKey, key)
	acq.Attributes().PutInt(spans.AttrAttempt, 1)
	acq.Attributes().PutStr(spans.AttrProtocolVersion, version)
	if hit {
		t = t.Add(g.between(60*time.Microsecond, 900*time.Microsecond))
	} else {
		if reason != "" {
			acq.Attributes().PutStr(spans.AttrMissReason, reason)
		}
		hsStart := t.Add(g.between(30*time.Microsecond, 200*time.Microsecond))
		hsEnd := hsStart.Add(g.between(180*time.Millisecond, 900*time.Millisecond))
		hs := g.span(ss, tid, acq.SpanID(), spans.SpanHandshake, ptrace.SpanKindClient, hsStart, hsEnd)
		if session != "" {
			hs.Attributes().PutStr(spans.AttrSessionID, session)
		}
		hs.Attributes().PutStr(spans.AttrProtocolVersion, version)
		hs.Attributes().PutStr(spans.AttrServerAddress, serverAddress)
		hs.Attributes().PutInt(spans.AttrServerPort, serverPort)
		t = hsEnd.Add(g.between(20*time.Microsecond, 150*time.Microsecond))
	}
	acq.SetEndTimestamp(pcommon.NewTimestampFromTime(t))
	callStart := t.Add(g.between(20*time.Microsecond, 100*time.Microsecond))
	callEnd := callStart.Add(g.between(25*time.Millisecond, 400*time.Millisecond))
	call := g.callSpan(ss, tid, inv.SpanID(), spans.SpanCallTool, tool, session, "", callStart, callEnd)
	if session == "" {
		call.Attributes().Remove(spans.AttrSessionID)
	}
	call.Attributes().PutStr(spans.AttrProtocolVersion, version)
	t = callEnd.Add(g.between(20*time.Microsecond, 100*time.Microsecond))
	inv.SetEndTimestamp(pcommon.NewTimestampFromTime(t))
	return t
}
