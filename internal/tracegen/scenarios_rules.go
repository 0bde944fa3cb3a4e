package tracegen

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/spans"
)

// The scenarios below each break exactly one of the CI gate's built-in rules
// that no seed story breaks, so every built-in rule has a failing dump. They
// are built with the ordinary invocation builder and then altered the way
// the faulty instrumentation would have written them.

// MissingCacheHit is an older gateway whose acquire spans carry no
// plugin.mcp.cache_hit: one pool scope (session-do-1), one key, 3 sequential
// invocations 30 s apart, each its own trace: a cold miss (handshake, session
// s1, miss_reason cold) and two hits on s1. A reader must infer the miss
// from the handshake child.
//
// Expected figures: 10 spans (3 invoke, 3 acquire, 1 handshake, 3
// call_tool), 3 traces; pool: acquires 3, hits 2, misses 1, hit_rate 0.6667,
// handshakes 1, scopes 1, keys 1, cold_start_floor 0.3333, excess_misses 0,
// miss_reasons cold 1; executions 3, multi_session 0, max_sessions 1.
// Built-in rules: only acquire-has-cache-hit fails (3 acquires).
func MissingCacheHit() ptrace.Traces {
	g := newGen(41)
	ss := g.spansOf(gatewayService, "session-do-1")
	key := cacheKey("remote:org-1:https://" + serverAddress + "/mcp")
	s1 := g.sessionID()
	t := BaseTime
	for i := range 3 {
		at := attempt{hit: i > 0, session: s1}
		if i == 0 {
			at.missReason = spans.MissCold
		}
		t = g.invoke(ss, g.traceID(), pcommon.NewSpanIDEmpty(), t, invocation{toolAt(i), key, []attempt{at}})
		t = t.Add(30 * time.Second)
	}
	eachGeneratedSpan(g.td, func(sp ptrace.Span) {
		if sp.Name() == spans.SpanAcquire {
			sp.Attributes().Remove(spans.AttrCacheHit)
		}
	})
	return g.td
}

// HandshakeOnHit is a pool that reports a hit yet dials: one pool scope
// (session-do-1), one key, 3 sequential invocations 30 s apart, each its own
// trace: a cold miss (s1), a hit on s1, then an acquire with cache_hit=true
// that has a handshake child minting session s2, and a call on s2.
//
// Expected figures: 11 spans (3 invoke, 3 acquire, 2 handshake, 3
// call_tool), 3 traces; pool: acquires 3, hits 2, misses 1, hit_rate 0.6667,
// handshakes 2, scopes 1, keys 1, cold_start_floor 0.3333, excess_misses 0,
// miss_reasons cold 1; executions 3, multi_session 0, max_sessions 1.
// Built-in rules: only handshake-only-on-miss fails (1 handshake).
func HandshakeOnHit() ptrace.Traces {
	g := newGen(42)
	ss := g.spansOf(gatewayService, "session-do-1")
	key := cacheKey("remote:org-1:https://" + serverAddress + "/mcp")
	s1, s2 := g.sessionID(), g.sessionID()
	t := BaseTime
	steps := []attempt{
		{session: s1, missReason: spans.MissCold},
		{hit: true, session: s1},
		{session: s2}, // dials: rewritten to claim a hit below
	}
	var lying pcommon.SpanID
	for i, at := range steps {
		t = g.invoke(ss, g.traceID(), pcommon.NewSpanIDEmpty(), t, invocation{toolAt(i), key, []attempt{at}})
		t = t.Add(30 * time.Second)
		if i == 2 {
			lying = ss.At(ss.Len() - 3).SpanID() // acquire, handshake, call_tool
		}
	}
	eachGeneratedSpan(g.td, func(sp ptrace.Span) {
		if sp.SpanID() == lying {
			sp.Attributes().PutBool(spans.AttrCacheHit, true)
		}
	})
	return g.td
}

// DoubleAcquire is an invocation that acquires twice without a redial: one
// pool scope (session-do-1), one key, 2 sequential invocations 30 s apart,
// each its own trace: a cold miss (s1); then an invocation with two
// acquires, both attempt 1 and hits on s1, each followed by a call on s1.
//
// Expected figures: 9 spans (2 invoke, 3 acquire, 1 handshake, 3
// call_tool), 2 traces; pool: acquires 3, hits 2, misses 1, hit_rate 0.6667,
// handshakes 1, scopes 1, keys 1, cold_start_floor 0.3333, excess_misses 0,
// miss_reasons cold 1; executions 2, multi_session 0, max_sessions 1.
// Built-in rules: only one-acquire-per-invocation fails (1 invocation).
func DoubleAcquire() ptrace.Traces {
	g := newGen(43)
	ss := g.spansOf(gatewayService, "session-do-1")
	key := cacheKey("remote:org-1:https://" + serverAddress + "/mcp")
	s1 := g.sessionID()
	t := g.invoke(ss, g.traceID(), pcommon.NewSpanIDEmpty(), BaseTime, invocation{toolSelect, key, []attempt{{session: s1, missReason: spans.MissCold}}})
	g.invoke(ss, g.traceID(), pcommon.NewSpanIDEmpty(), t.Add(30*time.Second), invocation{toolList, key, []attempt{
		{hit: true, session: s1},
		{hit: true, session: s1},
	}})
	return g.td
}

// eachGeneratedSpan calls f for every span of td.
func eachGeneratedSpan(td ptrace.Traces, f func(ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				f(ss.At(k))
			}
		}
	}
}
