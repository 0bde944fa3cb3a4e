package tracegen

import (
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/spans"
)

// WorkloadConfig shapes a generated workload.
type WorkloadConfig struct {
	// Seed fixes every id, choice and time: one seed, one workload.
	Seed uint64
	// Traces is how many traces to generate (at least; a concurrent pair
	// of traces may add one).
	Traces int
	// Pools names the pool scopes (resource service.instance.id).
	Pools []string
	// KeysPerPool is the number of cache keys each pool uses.
	KeysPerPool int
	// TracesPerBatch is how many traces go into one OTLP export request.
	TracesPerBatch int
	// Settings, by pool, are the pool settings its acquire spans record
	// (spans.PoolSettingsAttrs keys, as text): the attribution then
	// replays that pool at them (a pool that keeps no idle session,
	// max_idle_per_key -1, makes every later miss evicted). A pool not in
	// it records none.
	Settings map[string]map[string]string
}

// Kinds of trace a workload holds. Each is a way the pool's story goes on
// one (pool, key) pair; together they make the analyzer attribute every
// miss cause and break every per-trace built-in rule.
const (
	KindCold          = "cold"           // the pair's first acquire: a miss
	KindHit           = "hit"            // an acquire that reuses the idle session
	KindExecution     = "execution"      // an executor.execute root with two hits
	KindTTL           = "ttl"            // a miss after an idle gap over the idle TTL
	KindUnexplained   = "unexplained"    // a miss nothing explains
	KindHealthCheck   = "health_check"   // a miss the pool recorded as a failed ping
	KindFailedCall    = "failed_call"    // a hit whose call fails: the session is dropped
	KindAfterFailure  = "after_failure"  // the miss that follows a failed lease
	KindRedial        = "redial"         // a reused session expired, redialed in the same invocation
	KindConcurrent    = "concurrent"     // two overlapping traces: a hit and a concurrent miss
	KindMultiSession  = "multi_session"  // an execution whose second call lands on a new session
	KindDoubleAcquire = "double_acquire" // an invocation with two first-attempt acquires
)

// Workload is a generated set of traces in the pool's default vocabulary,
// split into OTLP export requests in send order.
type Workload struct {
	// Batches are the export requests, in the order they are to be sent.
	// Within a (pool, key) pair, traces come in time order, so a consumer
	// fed in send order sees each pair's history in order.
	Batches []ptrace.Traces
	// Traces and Spans count what Batches hold.
	Traces, Spans int
	// Kinds counts the traces of each kind (a concurrent pair counts once
	// as KindConcurrent and once as KindHit).
	Kinds map[string]int
}

// weights of the kinds a pair's next trace is drawn from.
var weights = []struct {
	kind string
	w    int
}{
	{KindHit, 55}, {KindExecution, 12}, {KindTTL, 5}, {KindUnexplained, 4},
	{KindHealthCheck, 4}, {KindFailedCall, 4}, {KindRedial, 4},
	{KindConcurrent, 4}, {KindMultiSession, 3}, {KindDoubleAcquire, 2},
}

// Times of the story (the analyzer's idle TTL is 5 minutes).
const (
	gapShort = 30 * time.Second
	gapIdle  = 7 * time.Minute
)

// baseTime is where every pair's clock starts.
var baseTime = time.Date(2026, time.November, 30, 9, 0, 0, 0, time.UTC)

// pairState is one (pool, key) pair's pool state as the story goes.
type pairState struct {
	pool, key     string
	session       string
	at            time.Time // when the pair's latest lease ended
	seen          bool
	failedPending bool // the last lease failed: the next acquire misses after_failure
	sparePending  bool // a concurrent pair left two sessions idle: the next trace is a ttl miss
}

// GenerateWorkload builds a deterministic workload: cfg.Traces traces over
// cfg.Pools × cfg.KeysPerPool pairs, each trace on one pair, every kind of
// [weights] drawn at random. Each pair keeps its own clock, so pairs never
// interfere: the causes depend only on each pair's own history.
func GenerateWorkload(cfg WorkloadConfig) (*Workload, error) {
	if cfg.Traces <= 0 || len(cfg.Pools) == 0 || cfg.KeysPerPool <= 0 || cfg.TracesPerBatch <= 0 {
		return nil, fmt.Errorf("workload config %+v: traces, pools, keys per pool and traces per batch must be positive", cfg)
	}
	g := &generator{gen: newGen(cfg.Seed), settings: cfg.Settings}
	var pairs []*pairState
	for _, pool := range cfg.Pools {
		for k := range cfg.KeysPerPool {
			pairs = append(pairs, &pairState{pool: pool, key: "k1:e2e-" + pool + "-" + strconv.Itoa(k), at: baseTime})
		}
	}
	total := 0
	for _, w := range weights {
		total += w.w
	}
	wl := &Workload{Kinds: map[string]int{}}
	inBatch := 0
	g.newBatch()
	for wl.Traces < cfg.Traces {
		p := pairs[g.rng.IntN(len(pairs))]
		kind := KindCold
		switch {
		case !p.seen:
		case p.failedPending:
			kind = KindAfterFailure
		case p.sparePending:
			kind = KindTTL
		default:
			n := g.rng.IntN(total)
			for _, w := range weights {
				if n < w.w {
					kind = w.kind
					break
				}
				n -= w.w
			}
		}
		n := g.trace(p, kind)
		wl.Kinds[kind]++
		if kind == KindConcurrent {
			wl.Kinds[KindHit]++
		}
		wl.Traces += n
		inBatch += n
		if inBatch >= cfg.TracesPerBatch {
			wl.Spans += g.td.SpanCount()
			wl.Batches = append(wl.Batches, g.td)
			g.newBatch()
			inBatch = 0
		}
	}
	if inBatch > 0 {
		wl.Spans += g.td.SpanCount()
		wl.Batches = append(wl.Batches, g.td)
	}
	return wl, nil
}

// generator writes spans into the current batch, with gen's ids and spans.
type generator struct {
	*gen
	settings map[string]map[string]string // WorkloadConfig.Settings
}

func (g *generator) newBatch() {
	g.td = ptrace.NewTraces()
	g.resources = map[string]ptrace.SpanSlice{}
}

// spansOf returns the span slice of pool's resource in the current batch:
// the gateway's service, one instance per pool.
func (g *generator) spansOf(pool string) ptrace.SpanSlice {
	return g.gen.spansOf("mcp-gateway", pool)
}

// jitter returns a duration in [lo, lo+spread), whole microseconds.
func (g *generator) jitter(lo, spread time.Duration) time.Duration {
	return g.between(lo, lo+spread)
}

// acquire is one acquire of an invocation and the call that used it.
type acquire struct {
	hit        bool
	attempt    int    // 2 on the redial
	missReason string // recorded on a miss; "" leaves it out
	session    string
	callErr    string // error.type of a failed call
	callFor    time.Duration
	noCall     bool // a second acquire of the same attempt (double acquire)
}

// invoke emits a plugin.mcp.invoke under parent starting at start with its
// acquires (a handshake under each miss) and calls, and returns its end.
func (g *generator) invoke(p *pairState, tid pcommon.TraceID, parent pcommon.SpanID, start time.Time, tool string, acqs []acquire) time.Time {
	ss := g.spansOf(p.pool)
	inv := g.span(ss, tid, parent, spans.SpanInvoke, ptrace.SpanKindInternal, start, start)
	inv.Attributes().PutStr(spans.AttrToolName, tool)
	inv.Attributes().PutStr(spans.AttrTransport, spans.TransportStreamableHTTP)
	inv.Attributes().PutStr(spans.AttrCacheKey, p.key)
	t := start.Add(g.jitter(20*time.Microsecond, 60*time.Microsecond))
	for _, a := range acqs {
		acq := g.span(ss, tid, inv.SpanID(), spans.SpanAcquire, ptrace.SpanKindInternal, t, t)
		acq.Attributes().PutBool(spans.AttrCacheHit, a.hit)
		acq.Attributes().PutStr(spans.AttrCacheKey, p.key)
		acq.Attributes().PutInt(spans.AttrAttempt, int64(max(a.attempt, 1)))
		for _, k := range spans.PoolSettingsAttrs {
			if v, ok := g.settings[p.pool][k]; ok {
				acq.Attributes().PutStr(k, v)
			}
		}
		if a.hit {
			t = t.Add(g.jitter(60*time.Microsecond, 800*time.Microsecond))
		} else {
			if a.missReason != "" {
				acq.Attributes().PutStr(spans.AttrMissReason, a.missReason)
			}
			hsStart := t.Add(g.jitter(30*time.Microsecond, 150*time.Microsecond))
			hsEnd := hsStart.Add(g.jitter(150*time.Millisecond, 400*time.Millisecond))
			hs := g.span(ss, tid, acq.SpanID(), spans.SpanHandshake, ptrace.SpanKindClient, hsStart, hsEnd)
			hs.Attributes().PutStr(spans.AttrSessionID, a.session)
			hs.Attributes().PutStr(spans.AttrProtocolVersion, "2025-06-18")
			hs.Attributes().PutStr(spans.AttrServerAddress, "mcp.example.internal")
			hs.Attributes().PutInt(spans.AttrServerPort, 443)
			t = hsEnd.Add(g.jitter(20*time.Microsecond, 100*time.Microsecond))
		}
		acq.SetEndTimestamp(pcommon.NewTimestampFromTime(t))
		if a.noCall {
			continue
		}
		callStart := t.Add(g.jitter(20*time.Microsecond, 80*time.Microsecond))
		callFor := a.callFor
		if callFor == 0 {
			callFor = g.jitter(20*time.Millisecond, 300*time.Millisecond)
		}
		callEnd := callStart.Add(callFor)
		g.requestID++
		call := g.span(ss, tid, inv.SpanID(), spans.SpanCallTool, ptrace.SpanKindClient, callStart, callEnd)
		call.Attributes().PutStr(spans.AttrMethodName, spans.MethodToolsCall)
		call.Attributes().PutStr(spans.AttrGenAIToolName, tool)
		call.Attributes().PutStr(spans.AttrSessionID, a.session)
		call.Attributes().PutStr(spans.AttrJSONRPCRequestID, strconv.Itoa(g.requestID))
		if a.callErr != "" {
			call.Attributes().PutStr(spans.AttrErrorType, a.callErr)
			call.Status().SetCode(ptrace.StatusCodeError)
			call.Status().SetMessage("tools/call failed: " + a.callErr)
		}
		t = callEnd.Add(g.jitter(20*time.Microsecond, 80*time.Microsecond))
	}
	inv.SetEndTimestamp(pcommon.NewTimestampFromTime(t))
	return t
}

// single emits a trace of one invocation rooted at the invoke span.
func (g *generator) single(p *pairState, start time.Time, acqs ...acquire) time.Time {
	return g.invoke(p, g.traceID(), pcommon.NewSpanIDEmpty(), start, "list_logs", acqs)
}

// trace emits the next trace(s) of kind on pair p and moves the pair's
// clock and session on; it returns the number of traces emitted.
func (g *generator) trace(p *pairState, kind string) int {
	start := p.at.Add(g.jitter(gapShort, 10*time.Second))
	fresh := func(reason string) acquire {
		p.session = g.sessionID()
		return acquire{session: p.session, missReason: reason}
	}
	hit := func() acquire { return acquire{hit: true, session: p.session} }
	traces := 1
	switch kind {
	case KindCold:
		p.seen = true
		p.at = g.single(p, start, fresh(spans.MissCold))
	case KindHit:
		p.at = g.single(p, start, hit())
	case KindTTL:
		start = p.at.Add(g.jitter(gapIdle, time.Minute))
		p.at = g.single(p, start, fresh(spans.MissTTL))
		p.sparePending = false
	case KindUnexplained:
		p.at = g.single(p, start, fresh(""))
	case KindHealthCheck:
		p.at = g.single(p, start, fresh(spans.MissHealthCheck))
	case KindFailedCall:
		a := hit()
		a.callErr = "transport_error"
		p.at = g.single(p, start, a)
		p.failedPending = true
	case KindAfterFailure:
		p.at = g.single(p, start, fresh(spans.MissAfterFailure))
		p.failedPending = false
	case KindRedial:
		expired := hit()
		expired.callErr = spans.ErrTypeSessionExpired
		redial := fresh(spans.MissRedial)
		redial.attempt = 2
		p.at = g.single(p, start, expired, redial)
	case KindConcurrent:
		long := hit()
		long.callFor = 10 * time.Second
		end1 := g.single(p, start, long)
		held := p.session
		end2 := g.single(p, start.Add(2*time.Second), fresh(spans.MissConcurrent))
		p.session = held
		p.at = later(end1, end2)
		// Both sessions are now idle, and a pool keeps both (its recent
		// peak is two): a later failed lease would be followed by a hit
		// on the other one, not an after_failure miss. An idle gap over
		// the TTL closes both, so the pair's story goes on with one.
		p.sparePending = true
		traces = 2
	case KindExecution, KindMultiSession:
		tid := g.traceID()
		ss := g.spansOf(p.pool)
		root := g.span(ss, tid, pcommon.NewSpanIDEmpty(), "executor.execute", ptrace.SpanKindInternal, start, start)
		t := start.Add(g.jitter(200*time.Microsecond, time.Millisecond))
		t = g.invoke(p, tid, root.SpanID(), t, "select_workspace", []acquire{hit()})
		second := hit()
		if kind == KindMultiSession {
			second = fresh("")
		}
		t = g.invoke(p, tid, root.SpanID(), t.Add(g.jitter(100*time.Microsecond, time.Millisecond)), "list_logs", []acquire{second})
		root.SetEndTimestamp(pcommon.NewTimestampFromTime(t))
		p.at = t
	case KindDoubleAcquire:
		first := hit()
		first.noCall = true
		p.at = g.single(p, start, first, hit())
	default:
		panic("scaleout: unknown trace kind " + kind) // the kinds are this file's constants
	}
	return traces
}
