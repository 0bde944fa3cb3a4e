package tracegen

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/spans"
)

// BaseTime is the instant every scenario starts from. A fixed base time keeps
// the dumps byte-identical from one generator run to the next.
var BaseTime = time.Date(2026, time.April, 30, 9, 0, 0, 0, time.UTC)

// Names of the services, tools and spans the scenarios use that are not part
// of the pool's vocabulary (they belong to the stories, not to spans/).
const (
	gatewayService   = "mcp-gateway"
	workerService    = "worker"
	sessionDOService = "mcp-session-do"
	agentService     = "agent"

	executionRootName = "executor.execute"
	requestSpanName   = "mcp.request"
	workerPlaneName   = "worker.fetch"
	doFetchName       = "durable_object.fetch"
	dbQueryName       = "db.query"
	initializeMethod  = "initialize"

	attrDBTable  = "db.sql.table"
	attrDBSystem = "db.system"

	protocolVersion = "2025-06-18"
	serverAddress   = "mcp.example.internal"
	serverPort      = 443
)

// gen accumulates the spans of one scenario. Resources are kept in creation
// order and spans in emission order, so the output depends only on the seed
// and the order of calls.
type gen struct {
	rng       *rand.Rand
	td        ptrace.Traces
	resources map[string]ptrace.SpanSlice
	requestID int
}

// newGen returns a generator whose ids and jitter come from a PCG seeded
// with seed: one seed, one dump.
func newGen(seed uint64) *gen {
	return &gen{
		rng:       rand.New(rand.NewPCG(seed, 0x6d63707472616365)), // "mcptrace"
		td:        ptrace.NewTraces(),
		resources: map[string]ptrace.SpanSlice{},
	}
}

// spansOf returns the span slice of the resource (service, instance),
// creating the resource with its service.name and service.instance.id (when
// instance is not empty) and one scope named after the pool's tracer.
func (g *gen) spansOf(service, instance string) ptrace.SpanSlice {
	id := service + "\x00" + instance
	if ss, ok := g.resources[id]; ok {
		return ss
	}
	rs := g.td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(spans.ResourceServiceName, service)
	if instance != "" {
		rs.Resource().Attributes().PutStr(spans.ResourceServiceInstanceID, instance)
	}
	sc := rs.ScopeSpans().AppendEmpty()
	sc.Scope().SetName(spans.ScopeName)
	sc.Scope().SetVersion("0.1.0")
	g.resources[id] = sc.Spans()
	return sc.Spans()
}

func (g *gen) traceID() pcommon.TraceID {
	var id pcommon.TraceID
	for i := range id {
		id[i] = byte(g.rng.Uint32())
	}
	return id
}

func (g *gen) spanID() pcommon.SpanID {
	var id pcommon.SpanID
	for i := range id {
		id[i] = byte(g.rng.Uint32())
	}
	return id
}

// sessionID returns a fresh downstream Mcp-Session-Id (32 hex digits, the
// shape the Go SDK's servers mint).
func (g *gen) sessionID() string {
	id := g.traceID()
	return hex.EncodeToString(id[:])
}

// between returns a duration in [lo, hi), whole microseconds.
func (g *gen) between(lo, hi time.Duration) time.Duration {
	span := int64((hi - lo) / time.Microsecond)
	if span <= 0 {
		return lo.Truncate(time.Microsecond)
	}
	return lo.Truncate(time.Microsecond) + time.Duration(g.rng.Int64N(span))*time.Microsecond
}

// span appends a span to ss. parent may be the empty id for a root.
func (g *gen) span(ss ptrace.SpanSlice, tid pcommon.TraceID, parent pcommon.SpanID, name string, kind ptrace.SpanKind, start, end time.Time) ptrace.Span {
	sp := ss.AppendEmpty()
	sp.SetTraceID(tid)
	sp.SetSpanID(g.spanID())
	sp.SetParentSpanID(parent)
	sp.SetName(name)
	sp.SetKind(kind)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
	return sp
}

// cacheKey returns the hashed pool key of an identity, shaped like the
// pool's (a hex digest, never the raw identity).
func cacheKey(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return "k1:" + hex.EncodeToString(sum[:8])
}

// attempt is one acquire of an invocation and the call that used it.
type attempt struct {
	hit        bool   // acquire cache_hit
	number     int    // plugin.mcp.attempt (1, or 2 on the redial)
	missReason string // plugin.mcp.miss_reason on a miss; "" omits it
	session    string // the session the call ran on
	callErr    string // error.type of a failed call; "" for success
	noAcquire  bool   // acquire-on-miss vocabulary: a hit emits no acquire span
	callFor    time.Duration
}

// invocation is one tool call through the pool.
type invocation struct {
	tool     string
	key      string
	attempts []attempt
}

// invoke emits an invocation under parent (empty for a root) starting at
// start, and returns when it ended. The span tree follows DESIGN.md's default
// vocabulary: invoke → acquire (→ handshake on a miss) and call_tool, one
// acquire and call per attempt.
func (g *gen) invoke(ss ptrace.SpanSlice, tid pcommon.TraceID, parent pcommon.SpanID, start time.Time, inv invocation) time.Time {
	inv0 := g.span(ss, tid, parent, spans.SpanInvoke, ptrace.SpanKindInternal, start, start)
	inv0.Attributes().PutStr(spans.AttrToolName, inv.tool)
	inv0.Attributes().PutStr(spans.AttrTransport, spans.TransportStreamableHTTP)
	inv0.Attributes().PutStr(spans.AttrCacheKey, inv.key)

	t := start.Add(g.between(20*time.Microsecond, 80*time.Microsecond))
	for _, at := range inv.attempts {
		if !(at.hit && at.noAcquire) {
			acqStart := t
			acq := g.span(ss, tid, inv0.SpanID(), spans.SpanAcquire, ptrace.SpanKindInternal, acqStart, acqStart)
			acq.Attributes().PutBool(spans.AttrCacheHit, at.hit)
			acq.Attributes().PutStr(spans.AttrCacheKey, inv.key)
			acq.Attributes().PutInt(spans.AttrAttempt, int64(max(at.number, 1)))
			if at.hit {
				t = t.Add(g.between(60*time.Microsecond, 900*time.Microsecond))
			} else {
				if at.missReason != "" {
					acq.Attributes().PutStr(spans.AttrMissReason, at.missReason)
				}
				hsStart := t.Add(g.between(30*time.Microsecond, 200*time.Microsecond))
				hsEnd := hsStart.Add(g.between(180*time.Millisecond, 2600*time.Millisecond))
				hs := g.span(ss, tid, acq.SpanID(), spans.SpanHandshake, ptrace.SpanKindClient, hsStart, hsEnd)
				hs.Attributes().PutStr(spans.AttrSessionID, at.session)
				hs.Attributes().PutStr(spans.AttrProtocolVersion, protocolVersion)
				hs.Attributes().PutStr(spans.AttrServerAddress, serverAddress)
				hs.Attributes().PutInt(spans.AttrServerPort, serverPort)
				t = hsEnd.Add(g.between(20*time.Microsecond, 150*time.Microsecond))
			}
			acq.SetEndTimestamp(pcommon.NewTimestampFromTime(t))
		}
		callStart := t.Add(g.between(20*time.Microsecond, 100*time.Microsecond))
		callFor := at.callFor
		if callFor == 0 {
			callFor = g.between(25*time.Millisecond, 400*time.Millisecond)
		}
		callEnd := callStart.Add(callFor)
		g.callSpan(ss, tid, inv0.SpanID(), spans.SpanCallTool, inv.tool, at.session, at.callErr, callStart, callEnd)
		t = callEnd.Add(g.between(20*time.Microsecond, 100*time.Microsecond))
	}
	inv0.SetEndTimestamp(pcommon.NewTimestampFromTime(t))
	return t
}

// callSpan emits a tools/call client span named name.
func (g *gen) callSpan(ss ptrace.SpanSlice, tid pcommon.TraceID, parent pcommon.SpanID, name, tool, session, callErr string, start, end time.Time) ptrace.Span {
	g.requestID++
	call := g.span(ss, tid, parent, name, ptrace.SpanKindClient, start, end)
	call.Attributes().PutStr(spans.AttrMethodName, spans.MethodToolsCall)
	call.Attributes().PutStr(spans.AttrGenAIToolName, tool)
	call.Attributes().PutStr(spans.AttrSessionID, session)
	call.Attributes().PutStr(spans.AttrJSONRPCRequestID, strconv.Itoa(g.requestID))
	if callErr != "" {
		call.Attributes().PutStr(spans.AttrErrorType, callErr)
		call.Status().SetCode(ptrace.StatusCodeError)
		call.Status().SetMessage("tools/call failed: " + callErr)
	}
	return call
}

// root emits an execution root span; its end is fixed later with setEnd.
func (g *gen) root(ss ptrace.SpanSlice, tid pcommon.TraceID, name string, start time.Time) ptrace.Span {
	return g.span(ss, tid, pcommon.NewSpanIDEmpty(), name, ptrace.SpanKindInternal, start, start)
}

func setEnd(sp ptrace.Span, end time.Time) {
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
}
