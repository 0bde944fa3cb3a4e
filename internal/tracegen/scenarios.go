package tracegen

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/spans"
)

// Scenario is one seed story as a deterministic trace dump. Build returns a
// fresh ptrace.Traces on every call (the caller owns it), always with the
// same content.
type Scenario struct {
	// Name is the file stem of the scenario's dumps in testdata/traces.
	Name string
	// Build constructs the scenario's spans.
	Build func() ptrace.Traces
}

// Scenarios returns every scenario in a fixed order: the order of the files
// the generator writes and of the golden tests that read them.
func Scenarios() []Scenario {
	return []Scenario{
		{"prod-cold-starts", ProdColdStarts},
		{"ttl-and-redial", TTLAndRedial},
		{"unexplained-miss", UnexplainedMiss},
		{"concurrent", Concurrent},
		{"per-call-dial", PerCallDial},
		{"pooled", Pooled},
		{"cold-init-one-read", ColdInitOneRead},
		{"cold-init-two-reads", ColdInitTwoReads},
		{"cold-init-incomplete", ColdInitIncomplete},
		{"acquire-on-miss", AcquireOnMiss},
		{"semconv", Semconv},
		{"missing-cache-hit", MissingCacheHit},
		{"handshake-on-hit", HandshakeOnHit},
		{"double-acquire", DoubleAcquire},
	}
}

// ScenarioProfile is the vocabulary profile (the value of rulefmt.Profile)
// a scenario's spans are written in: "default", except the acquire-on-miss
// and semconv stories, which are written in the profiles they are named
// after. Every test that analyzes the dumps analyzes each with it.
func ScenarioProfile(name string) string {
	switch name {
	case "acquire-on-miss", "semconv":
		return name
	}
	return "default"
}

// ColdInitMeasureYAML is the reads-per-request measure of the seed 003
// story ([ColdInitOneRead] and its variants), as an mcptrace.yaml
// `measures:` block: one organizations read per initialize request, trusted
// once the worker plane's span has landed. The scenario's own names
// (mcp.request, db.query, worker.fetch...) belong to the story, not to the
// vocabulary.
var ColdInitMeasureYAML = fmt.Sprintf(`measures:
  - name: org_reads_per_cold_init
    description: organizations reads per MCP initialize
    root:
      name: mcp.request
      attributes:
        %s: initialize
    read:
      name: db.query
      attributes: {db.sql.table: organizations}
    complete_when:
      name: worker.fetch
      resource: {%s: worker}
    expect: 1
`, spans.AttrMethodName, spans.ResourceServiceName)

// Tools the scenarios call: two dependent calls on a session-stateful server
// (select a workspace, then list its logs), as in the seeds.
const (
	toolSelect = "select_workspace"
	toolList   = "list_logs"
)

func toolAt(i int) string {
	if i%2 == 0 {
		return toolSelect
	}
	return toolList
}

// ProdColdStarts is the seed 002 production picture: 4 pool scopes (resource
// service.instance.id session-do-1..4, service.name mcp-gateway, started 2 h
// apart), each with 6 sequential invocations on its own key, 30 s to 4 min
// apart. The first invocation of each scope is a cold miss (acquire
// cache_hit=false, miss_reason cold, a handshake child); the other 5 are hits
// on the same session. Every invocation is its own trace (root
// plugin.mcp.invoke).
//
// Expected figures: 76 spans (24 invoke, 24 acquire, 4 handshake, 24
// call_tool), 24 traces, 0 incomplete; pool: acquires 24, hits 20, misses 4,
// hit_rate 0.8333, handshakes 4, acquires_per_handshake 6, scopes 4, keys 4,
// cold_start_floor 4/24 = 0.1667, excess_misses 0, miss_reasons cold 4 and
// nothing else; executions 24, multi_session 0, max_sessions 1.
func ProdColdStarts() ptrace.Traces {
	g := newGen(2)
	for scope := 1; scope <= 4; scope++ {
		instance := fmt.Sprintf("session-do-%d", scope)
		ss := g.spansOf(gatewayService, instance)
		key := cacheKey(fmt.Sprintf("remote:org-%d:https://%s/mcp", scope, serverAddress))
		session := g.sessionID()
		t := BaseTime.Add(time.Duration(scope-1) * 2 * time.Hour).Add(g.between(0, 10*time.Minute))
		for i := range 6 {
			at := attempt{hit: i > 0, session: session}
			if i == 0 {
				at.missReason = spans.MissCold
			}
			end := g.invoke(ss, g.traceID(), pcommon.NewSpanIDEmpty(), t, invocation{tool: toolAt(i), key: key, attempts: []attempt{at}})
			t = end.Add(g.between(30*time.Second, 4*time.Minute))
		}
	}
	return g.td
}

// TTLAndRedial has one pool scope (session-do-1) and one key, with 5
// sequential invocations, each its own trace:
//  1. a cold miss (session s1);
//  2. 1 min later, a hit on s1;
//  3. after an idle gap of 7 min (> the 5 min idle TTL), a miss with
//     miss_reason ttl (session s2);
//  4. 1 min later, a hit on s2 whose call_tool fails with error.type
//     session_expired (status error), then in the same invocation a second
//     acquire with attempt=2, cache_hit=false, miss_reason redial, a
//     handshake (session s3) and a successful call on s3;
//  5. 1 min later, a hit on s3.
//
// Expected figures: 20 spans (5 invoke, 6 acquire, 3 handshake, 6 call_tool
// of which 1 failed), 5 traces; pool: acquires 6, hits 3, misses 3, hit_rate
// 0.5, handshakes 3, acquires_per_handshake 2, scopes 1, keys 1,
// cold_start_floor 1/6 = 0.1667, excess_misses 2, miss_reasons cold 1, ttl
// 1, redial 1; executions 5, multi_session 1 (invocation 4 saw s2 then s3),
// max_sessions 2.
func TTLAndRedial() ptrace.Traces {
	g := newGen(3)
	ss := g.spansOf(gatewayService, "session-do-1")
	key := cacheKey("remote:org-1:https://" + serverAddress + "/mcp")
	s1, s2, s3 := g.sessionID(), g.sessionID(), g.sessionID()
	steps := []struct {
		gap time.Duration
		inv invocation
	}{
		{0, invocation{toolSelect, key, []attempt{{session: s1, missReason: spans.MissCold}}}},
		{time.Minute, invocation{toolList, key, []attempt{{hit: true, session: s1}}}},
		{7 * time.Minute, invocation{toolSelect, key, []attempt{{session: s2, missReason: spans.MissTTL}}}},
		{time.Minute, invocation{toolList, key, []attempt{
			{hit: true, session: s2, callErr: spans.ErrTypeSessionExpired},
			{number: 2, session: s3, missReason: spans.MissRedial},
		}}},
		{time.Minute, invocation{toolList, key, []attempt{{hit: true, session: s3}}}},
	}
	t := BaseTime
	for _, st := range steps {
		t = t.Add(st.gap)
		t = g.invoke(ss, g.traceID(), pcommon.NewSpanIDEmpty(), t, st.inv)
	}
	return g.td
}

// UnexplainedMiss has one pool scope (session-do-1) and one key with 5
// sequential invocations, each its own trace: a cold miss (s1), two hits 30 s
// apart, then 45 s later a miss that nothing explains (no miss_reason
// attribute, well under the idle TTL, no failed call before it, no lease
// open), on a new session s2, then a hit on s2 30 s later.
//
// Expected figures: 17 spans, 5 traces; pool: acquires 5, hits 3, misses 2,
// hit_rate 0.6, handshakes 2, scopes 1, keys 1, cold_start_floor 0.2,
// excess_misses 1, miss_reasons cold 1, unexplained 1; executions 5,
// multi_session 0.
func UnexplainedMiss() ptrace.Traces {
	g := newGen(4)
	ss := g.spansOf(gatewayService, "session-do-1")
	key := cacheKey("remote:org-1:https://" + serverAddress + "/mcp")
	s1, s2 := g.sessionID(), g.sessionID()
	steps := []struct {
		gap time.Duration
		at  attempt
	}{
		{0, attempt{session: s1, missReason: spans.MissCold}},
		{30 * time.Second, attempt{hit: true, session: s1}},
		{30 * time.Second, attempt{hit: true, session: s1}},
		{45 * time.Second, attempt{session: s2}},
		{30 * time.Second, attempt{hit: true, session: s2}},
	}
	t := BaseTime
	for i, st := range steps {
		t = t.Add(st.gap)
		t = g.invoke(ss, g.traceID(), pcommon.NewSpanIDEmpty(), t, invocation{toolAt(i), key, []attempt{st.at}})
	}
	return g.td
}

// Concurrent has one pool scope (session-do-1) and one key with 4
// invocations, each its own trace: A, a cold miss (s1); B, 60 s after A, a
// hit on s1 whose call lasts 10 s; C, starting 2 s after B while B still
// holds s1, a miss with miss_reason concurrent on a new session s2; D, 30 s
// after both ended, a hit on s1.
//
// Expected figures: 14 spans, 4 traces; pool: acquires 4, hits 2, misses 2,
// hit_rate 0.5, handshakes 2, scopes 1, keys 1, cold_start_floor 0.25,
// excess_misses 1, miss_reasons cold 1, concurrent 1; executions 4,
// multi_session 0.
func Concurrent() ptrace.Traces {
	g := newGen(5)
	ss := g.spansOf(gatewayService, "session-do-1")
	key := cacheKey("remote:org-1:https://" + serverAddress + "/mcp")
	s1, s2 := g.sessionID(), g.sessionID()
	root := pcommon.NewSpanIDEmpty()
	aEnd := g.invoke(ss, g.traceID(), root, BaseTime, invocation{toolSelect, key, []attempt{{session: s1, missReason: spans.MissCold}}})
	bStart := aEnd.Add(time.Minute)
	bEnd := g.invoke(ss, g.traceID(), root, bStart, invocation{toolList, key, []attempt{{hit: true, session: s1, callFor: 10 * time.Second}}})
	cEnd := g.invoke(ss, g.traceID(), root, bStart.Add(2*time.Second), invocation{toolSelect, key, []attempt{{session: s2, missReason: spans.MissConcurrent}}})
	g.invoke(ss, g.traceID(), root, later(bEnd, cEnd).Add(30*time.Second), invocation{toolList, key, []attempt{{hit: true, session: s1}}})
	return g.td
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// PerCallDial is the seed 000/001 regression: a gateway that dials a new
// downstream session for every tool call. 3 executions (traces, root span
// executor.execute in mcp-gateway/gateway-1), 1 min apart, each with 2
// dependent invocations (select_workspace then list_logs) on one key. Every
// acquire misses (cache_hit=false, no miss_reason: the regressed gateway does
// not know why) with a handshake minting a new mcp.session.id.
//
// Expected figures: 27 spans (3 roots, 6 invoke, 6 acquire, 6 handshake, 6
// call_tool), 3 traces; pool: acquires 6, hits 0, misses 6, hit_rate 0,
// handshakes 6, acquires_per_handshake 1, scopes 1, keys 1,
// cold_start_floor 1/6 = 0.1667, excess_misses 5, miss_reasons cold 1,
// unexplained 5; executions 3, multi_session 3, max_sessions 2.
func PerCallDial() ptrace.Traces {
	return executions(10, false)
}

// Pooled is the fix for [PerCallDial]: the same 3 executions of 2 dependent
// invocations, but the first acquire is a cold miss and every later one hits
// the same session s1.
//
// Expected figures: 22 spans (3 roots, 6 invoke, 6 acquire, 1 handshake, 6
// call_tool), 3 traces; pool: acquires 6, hits 5, misses 1, hit_rate 0.8333,
// handshakes 1, acquires_per_handshake 6, scopes 1, keys 1,
// cold_start_floor 1/6, excess_misses 0, miss_reasons cold 1; executions 3,
// multi_session 0, max_sessions 1.
func Pooled() ptrace.Traces {
	return executions(11, true)
}

func executions(seed uint64, pooled bool) ptrace.Traces {
	g := newGen(seed)
	ss := g.spansOf(gatewayService, "gateway-1")
	key := cacheKey("remote:org-1:https://" + serverAddress + "/mcp")
	shared := g.sessionID()
	t := BaseTime
	for exec := range 3 {
		tid := g.traceID()
		root := g.root(ss, tid, executionRootName, t)
		c := t.Add(g.between(200*time.Microsecond, 2*time.Millisecond))
		for i := range 2 {
			at := attempt{session: g.sessionID()}
			switch {
			case pooled && exec == 0 && i == 0:
				at = attempt{session: shared, missReason: spans.MissCold}
			case pooled:
				at = attempt{hit: true, session: shared}
			}
			c = g.invoke(ss, tid, root.SpanID(), c, invocation{toolAt(i), key, []attempt{at}})
			c = c.Add(g.between(100*time.Microsecond, 5*time.Millisecond))
		}
		setEnd(root, c)
		t = c.Add(time.Minute)
	}
	return g.td
}

// ColdInitOneRead is the seed 003 story after the fix: 3 initialize
// requests, 1 min apart, each its own trace. In service worker: the root
// mcp.request (server, mcp.method.name=initialize) with a worker-plane span
// worker.fetch holding the authorization read (db.query, db.sql.table
// organizations). In service mcp-session-do, under the root:
// durable_object.fetch (server) with one db.query on mcp_sessions (not an
// organizations read).
//
// Expected figures (measure: root mcp.request with mcp.method.name
// initialize, reads db.query with db.sql.table=organizations, complete when a
// worker.fetch span in service worker is in the trace, expected 1 read): 15
// spans, 3 traces, 0 incomplete traces; requests 3, complete 3, incomplete 0,
// histogram {1: 3}, unexpected 0. No pool spans (all pool figures zero).
func ColdInitOneRead() ptrace.Traces {
	g := newGen(31)
	t := BaseTime
	for range 3 {
		t = g.coldInit(t, coldInitOpts{}).Add(time.Minute)
	}
	return g.td
}

// ColdInitTwoReads is the seed 003 regression: the same 3 requests as
// [ColdInitOneRead], but the Durable Object reads the organizations row
// again (a second db.query organizations under durable_object.fetch).
//
// Expected figures: 18 spans, 3 traces, 0 incomplete traces; requests 3,
// complete 3, incomplete 0, histogram {2: 3}, unexpected 3.
func ColdInitTwoReads() ptrace.Traces {
	g := newGen(32)
	t := BaseTime
	for range 3 {
		t = g.coldInit(t, coldInitOpts{doRead: true}).Add(time.Minute)
	}
	return g.td
}

// ColdInitIncomplete is the regressed story with the worker's spans not all
// exported, 4 traces:
//   - T1, T2: complete, two reads each (as in [ColdInitTwoReads]);
//   - T3: the worker's batch with worker.fetch and its organizations read
//     never landed: the root and the Durable Object spans are there, so a
//     naive count sees 1 read, but the completeness condition (a worker.fetch
//     span in the trace) fails: the count must not be trusted;
//   - T4: no worker span landed at all: only the Durable Object's 3 spans,
//     whose parent (the root mcp.request) is missing: an incomplete trace
//     with no request root.
//
// Expected figures: 19 spans (6 + 6 + 4 + 3), 4 traces, incomplete_traces 1
// (T4); requests 3, complete 2, incomplete 1, histogram {2: 2}, unexpected 2.
func ColdInitIncomplete() ptrace.Traces {
	g := newGen(33)
	t := BaseTime
	for _, o := range []coldInitOpts{
		{doRead: true},
		{doRead: true},
		{doRead: true, dropWorkerPlane: true},
		{doRead: true, dropWorker: true},
	} {
		t = g.coldInit(t, o).Add(time.Minute)
	}
	return g.td
}

type coldInitOpts struct {
	doRead          bool // the Durable Object reads organizations again
	dropWorkerPlane bool // worker.fetch and its read never exported
	dropWorker      bool // no worker span exported at all
}

// coldInit emits one initialize request trace starting at start and returns
// its end. Spans that were "never exported" are still built (so ids and
// times do not depend on the variant) into a scratch slice that is dropped.
func (g *gen) coldInit(start time.Time, o coldInitOpts) time.Time {
	lost := ptrace.NewSpanSlice()
	worker := g.spansOf(workerService, "worker-1")
	do := g.spansOf(sessionDOService, "do-7f3a")
	rootSS, planeSS := worker, worker
	if o.dropWorker {
		rootSS, planeSS = lost, lost
	}
	if o.dropWorkerPlane {
		planeSS = lost
	}
	tid := g.traceID()
	session := g.sessionID()

	root := g.span(rootSS, tid, pcommon.NewSpanIDEmpty(), requestSpanName, ptrace.SpanKindServer, start, start)
	root.Attributes().PutStr(spans.AttrMethodName, initializeMethod)
	root.Attributes().PutStr(spans.AttrSessionID, session)

	t := start.Add(g.between(100*time.Microsecond, 400*time.Microsecond))
	plane := g.span(planeSS, tid, root.SpanID(), workerPlaneName, ptrace.SpanKindInternal, t, t)
	t = t.Add(g.between(50*time.Microsecond, 200*time.Microsecond))
	t = g.dbRead(planeSS, tid, plane.SpanID(), "organizations", t)
	setEnd(plane, t)

	t = t.Add(g.between(200*time.Microsecond, time.Millisecond))
	doSpan := g.span(do, tid, root.SpanID(), doFetchName, ptrace.SpanKindServer, t, t)
	t = t.Add(g.between(100*time.Microsecond, 500*time.Microsecond))
	if o.doRead {
		t = g.dbRead(do, tid, doSpan.SpanID(), "organizations", t)
	}
	t = g.dbRead(do, tid, doSpan.SpanID(), "mcp_sessions", t)
	t = t.Add(g.between(50*time.Microsecond, 300*time.Microsecond))
	setEnd(doSpan, t)
	t = t.Add(g.between(50*time.Microsecond, 300*time.Microsecond))
	setEnd(root, t)
	return t
}

func (g *gen) dbRead(ss ptrace.SpanSlice, tid pcommon.TraceID, parent pcommon.SpanID, table string, start time.Time) time.Time {
	end := start.Add(g.between(800*time.Microsecond, 40*time.Millisecond))
	q := g.span(ss, tid, parent, dbQueryName, ptrace.SpanKindClient, start, end)
	q.Attributes().PutStr(attrDBSystem, "postgresql")
	q.Attributes().PutStr(attrDBTable, table)
	return end.Add(g.between(20*time.Microsecond, 100*time.Microsecond))
}

// AcquireOnMiss is the seeds' later gateway, which emits
// plugin.mcp.connection.acquire only on a miss: 2 pool scopes
// (session-do-a, session-do-b), 5 sequential invocations each on its own key,
// 40 s apart, each its own trace. The first invocation of each scope has an
// acquire (cache_hit=false, no miss_reason) with a handshake; the 4 hits are
// plugin.mcp.invoke spans with a call_tool and no acquire child.
//
// Expected figures with --profile acquire-on-miss: 24 spans (10 invoke, 2
// acquire, 2 handshake, 10 call_tool), 10 traces; pool: acquires 10, hits 8,
// misses 2, hit_rate 0.8, handshakes 2, acquires_per_handshake 5, scopes 2,
// keys 2, cold_start_floor 0.2, excess_misses 0, miss_reasons cold 2;
// executions 10, multi_session 0. With the default profile only the 2
// acquire spans count: acquires 2, hits 0, misses 2 (both cold).
func AcquireOnMiss() ptrace.Traces {
	g := newGen(12)
	for _, scope := range []string{"a", "b"} {
		ss := g.spansOf(gatewayService, "session-do-"+scope)
		key := cacheKey("remote:org-" + scope + ":https://" + serverAddress + "/mcp")
		session := g.sessionID()
		t := BaseTime.Add(g.between(0, time.Minute))
		for i := range 5 {
			at := attempt{hit: i > 0, noAcquire: i > 0, session: session}
			t = g.invoke(ss, g.traceID(), pcommon.NewSpanIDEmpty(), t, invocation{toolAt(i), key, []attempt{at}})
			t = t.Add(40 * time.Second)
		}
	}
	return g.td
}

// Semconv uses only the OpenTelemetry MCP semantic conventions, as an agent
// instrumented by an MCP SDK emits them: client spans named
// "tools/call <tool>" (mcp.method.name tools/call, gen_ai.tool.name,
// mcp.session.id) and "initialize" spans (mcp.method.name initialize) when a
// session is opened, under an execution root agent.run in service
// agent/agent-1. 2 executions (traces):
//   - E1: initialize (s1), tools/call select_workspace (s1), tools/call
//     list_logs (s1): one session;
//   - E2: initialize (s2), tools/call select_workspace (s2), initialize (s3),
//     tools/call list_logs (s3): a new session per call.
//
// Expected figures with --profile semconv: 9 spans (2 roots, 3 initialize,
// 4 tools/call), 2 traces; 4 calls on 3 distinct sessions; executions 2,
// multi_session 1, max_sessions 2.
func Semconv() ptrace.Traces {
	g := newGen(13)
	ss := g.spansOf(agentService, "agent-1")
	t := BaseTime
	for _, perCall := range []bool{false, true} {
		tid := g.traceID()
		root := g.root(ss, tid, "agent.run", t)
		c := t.Add(g.between(100*time.Microsecond, time.Millisecond))
		var session string
		for i := range 2 {
			if i == 0 || perCall {
				session = g.sessionID()
				end := c.Add(g.between(150*time.Millisecond, time.Second))
				ini := g.span(ss, tid, root.SpanID(), initializeMethod, ptrace.SpanKindClient, c, end)
				ini.Attributes().PutStr(spans.AttrMethodName, initializeMethod)
				ini.Attributes().PutStr(spans.AttrSessionID, session)
				ini.Attributes().PutStr(spans.AttrProtocolVersion, protocolVersion)
				ini.Attributes().PutStr(spans.AttrServerAddress, serverAddress)
				ini.Attributes().PutInt(spans.AttrServerPort, serverPort)
				c = end.Add(g.between(50*time.Microsecond, 300*time.Microsecond))
			}
			end := c.Add(g.between(20*time.Millisecond, 300*time.Millisecond))
			tool := toolAt(i)
			g.callSpan(ss, tid, root.SpanID(), spans.MethodToolsCall+" "+tool, tool, session, "", c, end)
			c = end.Add(g.between(50*time.Microsecond, 300*time.Microsecond))
		}
		setEnd(root, c)
		t = c.Add(time.Minute)
	}
	return g.td
}
