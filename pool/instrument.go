package pool

import (
	"context"
	"encoding/hex"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcptrace/mcptrace/spans"
)

// instruments holds the pool's tracer and metric instruments. A nil tracer
// or meter means that signal is off, and the hit path then does no telemetry
// work at all (no spans, no allocations).
type instruments struct {
	tracer trace.Tracer
	// The start options of every span but the handshake: its kind alone,
	// as one prebuilt slice each. The attributes go in one SetAttributes
	// right after Start (see startInvoke), never in a trace.WithAttributes
	// option, which the SDK copies twice (into its start config, then into
	// the span): BenchmarkSpanSDK, kind+set-all against start-attrs.
	internalOpts, clientOpts []trace.SpanStartOption
	semconv                  bool // call spans in the MCP semantic conventions' form
	metrics                  bool
	poolAttr                 attribute.KeyValue
	// settings are the pool's own settings (settingsAttrs), which every
	// acquire span carries after its cache key, attempt and pool id.
	settings []attribute.KeyValue
	// keys holds the prebuilt attributes of the invoke and acquire spans
	// by cache key (see keySpans), so that a traced call builds no
	// attribute slice, option or variadic slice of its own.
	keys cowCache[string, *keySpans]

	acquires   metric.Int64Counter
	evictions  metric.Int64Counter
	redials    metric.Int64Counter
	failures   metric.Int64Counter
	waitTime   metric.Float64Histogram
	createTime metric.Float64Histogram
	useTime    metric.Float64Histogram
	opDuration metric.Float64Histogram
	connCount  metric.Int64ObservableUpDownCounter
	pending    metric.Int64ObservableUpDownCounter
	timeouts   metric.Int64Counter
	sessionDur metric.Float64Histogram
}

// durationBuckets suit loopback calls (sub-millisecond) up to slow remote
// handshakes (seconds).
var durationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

func newInstruments(o Options) *instruments {
	in := &instruments{
		poolAttr: attribute.String(spans.AttrPoolID, o.ID),
		semconv:  o.SemconvCallSpans,
		settings: settingsAttrs(o),
	}
	in.internalOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	in.clientOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	if tp := o.TracerProvider; tp != nil {
		if _, noop := tp.(tracenoop.TracerProvider); !noop {
			in.tracer = tp.Tracer(spans.ScopeName)
		}
	}
	return in
}

// registerMetrics creates the metric instruments; the connection gauge reads
// the pool's counts under its lock when collected, so leasing costs nothing.
func (in *instruments) registerMetrics(p *Pool, mp metric.MeterProvider) error {
	if mp == nil {
		return nil
	}
	if _, noop := mp.(metricnoop.MeterProvider); noop {
		return nil
	}
	m := mp.Meter(spans.ScopeName)
	if err := in.registerRecorded(m); err != nil {
		return err
	}
	if err := in.registerObserved(p, m); err != nil {
		return err
	}
	in.metrics = true
	return nil
}

// registerRecorded creates the counters and histograms the pool records
// into as things happen, stopping at the first the meter refuses.
func (in *instruments) registerRecorded(m metric.Meter) error {
	var err error
	hist := func(name, desc string) metric.Float64Histogram {
		if err != nil {
			return nil
		}
		var h metric.Float64Histogram
		h, err = m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(durationBuckets...))
		return h
	}
	counter := func(name, desc string) metric.Int64Counter {
		if err != nil {
			return nil
		}
		var c metric.Int64Counter
		c, err = m.Int64Counter(name, metric.WithUnit("{"+"event"+"}"), metric.WithDescription(desc))
		return c
	}
	in.acquires = counter(spans.MetricAcquires, "Session acquires by cache hit and miss reason.")
	in.evictions = counter(spans.MetricEvictions, "Idle sessions closed by the pool, by reason.")
	in.redials = counter(spans.MetricRedials, "Transparent redials after a reused session expired.")
	in.failures = counter(spans.MetricFailures, "Sessions dropped after a failed lease, by error type.")
	in.waitTime = hist(spans.MetricConnectionWaitTime, "Time to acquire a session, hit or miss.")
	in.createTime = hist(spans.MetricConnectionCreateTime, "Time to dial and initialize a new session.")
	in.useTime = hist(spans.MetricConnectionUseTime, "Time a session was leased.")
	in.opDuration = hist(spans.MetricOperationDuration, "Duration of MCP client operations.")
	in.sessionDur = hist(spans.MetricSessionDuration, "Lifetime of MCP client sessions, from handshake to close.")
	in.timeouts = counter(spans.MetricTimeouts, "Acquires that timed out waiting for a key's in-use cap.")
	return err
}

// registerObserved creates the gauges read from the pool when collected
// rather than recorded on every lease, so the hit path pays nothing for
// them: the sessions held by state and the acquires waiting.
func (in *instruments) registerObserved(p *Pool, m metric.Meter) error {
	idle := metric.WithAttributes(in.poolAttr, attribute.String(spans.AttrConnectionState, spans.StateIdle))
	used := metric.WithAttributes(in.poolAttr, attribute.String(spans.AttrConnectionState, spans.StateUsed))
	var err error
	in.connCount, err = m.Int64ObservableUpDownCounter(spans.MetricConnectionCount,
		metric.WithUnit("{session}"),
		metric.WithDescription("Sessions held by the pool, by state (idle or used)."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			p.mu.Lock()
			nIdle, nUsed := p.idle.IdleCount(), p.idle.InUse()
			p.mu.Unlock()
			o.Observe(int64(nIdle), idle)
			o.Observe(int64(nUsed), used)
			return nil
		}))
	if err != nil {
		return err
	}
	in.pending, err = m.Int64ObservableUpDownCounter(spans.MetricPendingRequests,
		metric.WithUnit("{request}"),
		metric.WithDescription("Acquires waiting for a key's in-use cap."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			p.mu.Lock()
			n := p.stats.pending
			p.mu.Unlock()
			o.Observe(int64(n), metric.WithAttributes(in.poolAttr))
			return nil
		}))
	return err
}

// acquireWaited records on the acquire span how long it has waited for the
// in-use cap so far.
func (in *instruments) acquireWaited(a acquireSpan, d time.Duration) {
	if a.span != nil {
		a.span.SetAttributes(attribute.Float64(spans.AttrAcquireWait, d.Seconds()))
	}
}

// acquireTimeout counts an acquire that gave up waiting for the in-use cap
// (a cancelled wait is not a timeout).
func (in *instruments) acquireTimeout(ctx context.Context, errType string) {
	if in.metrics && errType == spans.ErrTypeAcquireTimeout {
		in.timeouts.Add(ctx, 1, metric.WithAttributes(in.poolAttr))
	}
}

// sessionClosed records a session's lifetime, from its handshake to its
// close (mcp.client.session.duration).
func (in *instruments) sessionClosed(c *conn, now time.Time) {
	if in.metrics && !c.born.IsZero() {
		in.sessionDur.Record(context.Background(), seconds(now.Sub(c.born)), metric.WithAttributes(in.poolAttr, attribute.String(spans.AttrProtocolVersion, c.revision)))
	}
}

func seconds(d time.Duration) float64 { return d.Seconds() }

// startInvoke starts the invoke span (nil when tracing is off); endInvoke
// records the outcome and ends it. Its attributes come prebuilt per key and
// tool (keySpans), so the pool allocates nothing for it, and are set in one
// SetAttributes right after Start: the span then holds them from its start
// on, as it would with trace.WithAttributes, but the SDK copies them once
// instead of twice. Only a sampler or a span processor's OnStart sees the
// difference (no attributes yet); the pool's spans are sampled on their
// trace, not on their attributes.
func (in *instruments) startInvoke(ctx context.Context, t *Target, tool string) (context.Context, trace.Span) {
	if in.tracer == nil {
		return ctx, nil
	}
	ctx, span := in.tracer.Start(ctx, spans.SpanInvoke, in.internalOpts...)
	span.SetAttributes(in.keySpans(t.key).invokeAttrs(in, t.key, tool)...)
	return ctx, span
}

// endInvoke ends an invoke span started by startInvoke.
func endInvoke(span trace.Span, res *mcp.CallToolResult, err error) {
	if span != nil {
		endWithError(span, res, err)
		span.End()
	}
}

// endWithError sets error.type and the error status for a failed call or a
// tool result with isError.
func endWithError(span trace.Span, res *mcp.CallToolResult, err error) {
	switch {
	case err != nil:
		span.SetAttributes(attribute.String(spans.AttrErrorType, errorType(err)))
		span.SetStatus(codes.Error, err.Error())
	case res != nil && res.IsError:
		span.SetAttributes(attribute.String(spans.AttrErrorType, spans.ErrTypeToolError))
		span.SetStatus(codes.Error, "tool result has isError set")
	}
}

// acquireSpan is an acquire span in flight: the span (nil when tracing is
// off) and the attributes it was started for (cache key, attempt, pool id),
// which it sets together with its outcome in one SetAttributes when it
// ends, so that the SDK grows the span's attributes once (a hit sets a
// slice prebuilt per session: connSpans.hitAttrs). It is a small value.
type acquireSpan struct {
	span    trace.Span
	attempt int
	start   []attribute.KeyValue
}

// startAcquire starts the acquire span of attempt (1, or 2 on the redial).
func (in *instruments) startAcquire(ctx context.Context, t *Target, attempt int) (context.Context, acquireSpan) {
	if in.tracer == nil {
		return ctx, acquireSpan{}
	}
	ks := in.keySpans(t.key)
	a := acquireSpan{attempt: attempt}
	if attempt >= 1 && attempt < len(ks.acquire) {
		a.start = ks.acquire[attempt]
	} else {
		a.start = in.acquireAttrs(t.key, attempt)
	}
	ctx, a.span = in.tracer.Start(ctx, spans.SpanAcquire, in.internalOpts...)
	return ctx, a
}

// acquireAttrs builds the attributes the acquire span of key and attempt
// starts with: cache key, attempt, pool id and the pool's settings.
func (in *instruments) acquireAttrs(key string, attempt int) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 3+len(in.settings))
	attrs = append(attrs,
		attribute.String(spans.AttrCacheKey, key),
		attribute.Int(spans.AttrAttempt, attempt),
		in.poolAttr,
	)
	return append(attrs, in.settings...)
}

// settingsAttrs are the settings of a pool (o with its defaults filled in)
// that decide its hits and misses, as every acquire span records them: idle
// TTL, idle sessions per key, the sizing rule, the global idle cap and the
// sweep interval. Every acquire span, not the resource (one tracer provider
// may carry many pools) nor a scope's first span only (a sampled trace or
// a partial dump may not hold it): a replay reads the settings from any one
// acquire span of a pool scope. They join the prebuilt slices the acquire
// spans start with (keySpans), so the pool allocates nothing for them per
// acquire; the SDK does: they bring the span to ten attributes, past the
// eight its End deduplicates without a map on the heap, three allocations
// more (BenchmarkSpanSDK/kind+set-ten against kind+set-all).
func settingsAttrs(o Options) []attribute.KeyValue {
	sizing := spans.IdleSizingPeak
	if o.FixedIdlePerKey {
		sizing = spans.IdleSizingFixed
	}
	sweep := o.SweepInterval.Seconds()
	if o.SweepInterval < 0 {
		sweep = -1 // only on acquire, whatever negative duration was given
	}
	return []attribute.KeyValue{
		attribute.Float64(spans.AttrPoolIdleTTL, o.IdleTTL.Seconds()),
		attribute.Int(spans.AttrPoolMaxIdlePerKey, o.MaxIdlePerKey),
		attribute.String(spans.AttrPoolIdleSizing, sizing),
		attribute.Int(spans.AttrPoolMaxIdle, o.MaxIdle),
		attribute.Float64(spans.AttrPoolSweepInterval, sweep),
	}
}

// maxCachedSpanOpts bounds each cache of prebuilt span attributes (keys per
// pool, tools per key, tools per session): past it, a call builds its
// attributes itself, so a caller with unbounded key or tool names costs
// allocations, never memory.
const maxCachedSpanOpts = 256

// keySpans holds the prebuilt attributes of one cache key's invoke and
// acquire spans: an invoke span per tool (transport, cache key, pool id,
// tool name) and an acquire span per attempt (cache key, attempt, pool id).
// Each is one slice passed to SetAttributes as it is.
type keySpans struct {
	acquire [3][]attribute.KeyValue // by attempt (1, 2)
	invoke  cowCache[string, []attribute.KeyValue]
}

// keySpans returns key's prebuilt attributes, building them on the key's
// first traced call.
func (in *instruments) keySpans(key string) *keySpans {
	if ks, ok := in.keys.get(key); ok {
		return ks
	}
	ks := &keySpans{}
	for attempt := 1; attempt < len(ks.acquire); attempt++ {
		ks.acquire[attempt] = in.acquireAttrs(key, attempt)
	}
	return in.keys.put(key, ks)
}

// invokeAttrs returns the invoke span's attributes for tool.
func (ks *keySpans) invokeAttrs(in *instruments, key, tool string) []attribute.KeyValue {
	if attrs, ok := ks.invoke.get(tool); ok {
		return attrs
	}
	attrs := []attribute.KeyValue{
		attribute.String(spans.AttrTransport, spans.TransportStreamableHTTP),
		attribute.String(spans.AttrCacheKey, key),
		in.poolAttr,
		attribute.String(spans.AttrToolName, tool),
	}
	return ks.invoke.put(tool, attrs)
}

// connSpans holds what a session's spans reuse on every call: the call
// span's name and attributes per tool, and all the attributes of an acquire
// span that hits it. Its zero value is ready; it is safe for concurrent use
// (a sessionless server's shared client serves many leases at once).
type connSpans struct {
	call   cowCache[string, callSpan]
	hitEnd atomic.Pointer[[]attribute.KeyValue]
}

// callSpan is the call span of one tool on one session: its name (the
// tool's in the semantic conventions' form) and attributes.
type callSpan struct {
	name  string
	attrs []attribute.KeyValue
}

// cowCache is a small copy-on-write map for prebuilt span attributes: a
// lookup is an atomic load and a map read, with no lock and no allocation;
// an insert copies the map, which happens once per entry and stops at
// maxCachedSpanOpts entries. Its zero value is empty and ready.
type cowCache[K comparable, V any] struct {
	m atomic.Pointer[map[K]V]
}

// get returns the value stored for k.
func (c *cowCache[K, V]) get(k K) (V, bool) {
	if m := c.m.Load(); m != nil {
		v, ok := (*m)[k]
		return v, ok
	}
	var zero V
	return zero, false
}

// put stores v for k unless the cache is full or another goroutine stored
// one first, and returns the value stored (or v when full).
func (c *cowCache[K, V]) put(k K, v V) V {
	for {
		old := c.m.Load()
		var n int
		if old != nil {
			if have, ok := (*old)[k]; ok {
				return have
			}
			n = len(*old)
		}
		if n >= maxCachedSpanOpts {
			return v
		}
		m := make(map[K]V, n+1)
		if old != nil {
			maps.Copy(m, *old)
		}
		m[k] = v
		if c.m.CompareAndSwap(old, &m) {
			return v
		}
	}
}

// hitAttrs returns all the attributes of a first-attempt acquire span that
// hits c: start is what it started for (the key's, attempt 1), built once
// per session together with the outcome.
func (cs *connSpans) hitAttrs(c *conn, start []attribute.KeyValue) []attribute.KeyValue {
	if p := cs.hitEnd.Load(); p != nil {
		return *p
	}
	attrs := endAcquireAttrs(start, c, true, "")
	cs.hitEnd.Store(&attrs)
	return attrs
}

// endAcquireAttrs builds all the attributes of an acquire span: start (what
// it started for), then cache_hit, the session's protocol version, the miss
// reason on a miss and whether the server is sessionless.
func endAcquireAttrs(start []attribute.KeyValue, c *conn, hit bool, reason string) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, len(start)+4)
	attrs = append(attrs, start...)
	attrs = append(attrs,
		attribute.Bool(spans.AttrCacheHit, hit),
		attribute.String(spans.AttrProtocolVersion, c.revision),
	)
	if !hit {
		attrs = append(attrs, attribute.String(spans.AttrMissReason, reason))
	}
	if c.sessionless {
		attrs = append(attrs, attribute.Bool(spans.AttrSessionless, true))
	}
	return attrs
}

// keyMetrics holds a key's metric options, built once when the pool first
// sees the key, so that a hit records its counter and histograms without
// building attribute sets (or allocating) on every acquire.
type keyMetrics struct {
	keyAttr attribute.KeyValue
	hitAdd  []metric.AddOption
	hitWait []metric.RecordOption
	use     []metric.RecordOption
}

// newKeyMetrics returns the key's options, or nil when metrics are off.
func (in *instruments) newKeyMetrics(key string) *keyMetrics {
	if !in.metrics {
		return nil
	}
	keyAttr := attribute.String(spans.AttrCacheKey, key)
	hit := attribute.Bool(spans.AttrCacheHit, true)
	return &keyMetrics{
		keyAttr: keyAttr,
		hitAdd:  []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(in.poolAttr, keyAttr, hit, attribute.String(spans.AttrMissReason, "")))},
		hitWait: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(in.poolAttr, keyAttr, hit))},
		use:     []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(in.poolAttr, keyAttr))},
	}
}

// endAcquire ends the span of an acquire that leased c, with all its
// attributes in one SetAttributes.
func (in *instruments) endAcquire(ctx context.Context, a acquireSpan, start time.Time, km *keyMetrics, hit bool, reason string, c *conn) {
	if a.span != nil {
		if hit && a.attempt == 1 {
			// A first-attempt hit sets the same attributes every time:
			// built once per session.
			a.span.SetAttributes(c.spans.hitAttrs(c, a.start)...)
		} else {
			a.span.SetAttributes(endAcquireAttrs(a.start, c, hit, reason)...)
		}
		a.span.End()
	}
	if km == nil {
		return
	}
	wait := seconds(time.Since(start))
	if hit {
		in.acquires.Add(ctx, 1, km.hitAdd...)
		in.waitTime.Record(ctx, wait, km.hitWait...)
		return
	}
	miss := attribute.Bool(spans.AttrCacheHit, false)
	in.acquires.Add(ctx, 1, metric.WithAttributes(in.poolAttr, km.keyAttr, miss, attribute.String(spans.AttrMissReason, reason)))
	in.waitTime.Record(ctx, wait, metric.WithAttributes(in.poolAttr, km.keyAttr, miss))
}

// endAcquireFailed ends the span of an acquire that returned an error. A
// failed dial is a miss like any other and names its reason; version is the
// revision the acquire tried or knew ("" when none).
func (in *instruments) endAcquireFailed(ctx context.Context, a acquireSpan, err error, errType, reason, version string) {
	if a.span == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, len(a.start)+4)
	attrs = append(attrs, a.start...)
	attrs = append(attrs, attribute.Bool(spans.AttrCacheHit, false), attribute.String(spans.AttrErrorType, errType))
	if reason != "" {
		attrs = append(attrs, attribute.String(spans.AttrMissReason, reason))
	}
	if version != "" {
		attrs = append(attrs, attribute.String(spans.AttrProtocolVersion, version))
	}
	a.span.SetAttributes(attrs...)
	a.span.SetStatus(codes.Error, err.Error())
	a.span.End()
}

// startHandshake starts the handshake span of a dial of t. A pre-warm
// dial (ctx from withPrewarm) is marked plugin.mcp.prewarm and names its
// pool scope itself: no acquire span above it does.
func (in *instruments) startHandshake(ctx context.Context, t *Target) (context.Context, trace.Span) {
	if in.tracer == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{
		attribute.String(spans.AttrServerAddress, t.address),
		attribute.Int(spans.AttrServerPort, t.port),
		attribute.String(spans.AttrCacheKey, t.key),
	}
	if isPrewarm(ctx) {
		attrs = append(attrs, attribute.Bool(spans.AttrPrewarm, true), in.poolAttr)
	}
	return in.tracer.Start(ctx, spans.SpanHandshake, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endHandshake ends the handshake span with the negotiated revision, how it
// was chosen and what it cost: the request count, and one event per HTTP
// request (method, status, duration), so a fallback shows as a refused
// server/discover or initialize before the one that worked.
func (in *instruments) endHandshake(ctx context.Context, span trace.Span, start time.Time, c *conn, hs handshake, err error) {
	if span != nil {
		for _, r := range hs.log {
			span.AddEvent(spans.EventHandshakeRequest, trace.WithAttributes(
				attribute.String(spans.AttrMethodName, r.method),
				attribute.Int(spans.AttrHTTPStatusCode, r.status),
				attribute.Float64(spans.AttrDurationSeconds, r.duration.Seconds()),
			))
		}
		span.SetAttributes(
			attribute.String(spans.AttrNegotiation, hs.how),
			attribute.Int(spans.AttrHandshakeRequests, hs.requests),
		)
		if hs.version != "" {
			span.SetAttributes(attribute.String(spans.AttrProtocolVersion, hs.version))
		}
		if err != nil {
			span.SetAttributes(attribute.String(spans.AttrErrorType, errorType(err)))
			span.SetStatus(codes.Error, err.Error())
		} else if c.id != "" {
			span.SetAttributes(attribute.String(spans.AttrSessionID, c.id))
		}
		span.End()
	}
	if in.metrics {
		in.createTime.Record(ctx, seconds(time.Since(start)), metric.WithAttributes(in.poolAttr))
	}
}

// startCall starts the call span of tool on c. Its name and attributes
// are built on the session's first call of the tool and reused after; the
// attributes are set right after Start, as startInvoke's are.
func (in *instruments) startCall(ctx context.Context, c *conn, tool string) (context.Context, trace.Span) {
	if in.tracer == nil {
		return ctx, nil
	}
	cs, ok := c.spans.call.get(tool)
	if !ok {
		cs = c.spans.call.put(tool, in.newCallSpan(c, tool))
	}
	ctx, span := in.tracer.Start(ctx, cs.name, in.clientOpts...)
	span.SetAttributes(cs.attrs...)
	return in.withRPCID(ctx), span
}

// newCallSpan builds the call span of tool on c: method, tool, cache key,
// protocol version and session id (absent on a sessionless server), and in
// the semantic conventions' form (semconv.go) the "tools/call <tool>" name,
// the pool id (a call made on a held lease has no invoke or acquire span
// above it to name its pool scope, and the semconv vocabulary reads calls
// alone), gen_ai.operation.name, the server's address and port and the
// transport.
func (in *instruments) newCallSpan(c *conn, tool string) callSpan {
	attrs := make([]attribute.KeyValue, 0, 11)
	attrs = append(attrs,
		attribute.String(spans.AttrMethodName, spans.MethodToolsCall),
		attribute.String(spans.AttrGenAIToolName, tool),
		attribute.String(spans.AttrCacheKey, c.ks.Name()),
		attribute.String(spans.AttrProtocolVersion, c.revision),
	)
	if c.id != "" {
		attrs = append(attrs, attribute.String(spans.AttrSessionID, c.id))
	}
	name := spans.SpanCallTool
	if in.semconv {
		name = spans.SemconvSpanName(spans.MethodToolsCall, tool)
		attrs = append(attrs,
			in.poolAttr,
			attribute.String(spans.AttrGenAIOperationName, spans.GenAIOperationExecuteTool),
			attribute.String(spans.AttrServerAddress, c.target.address),
			attribute.Int(spans.AttrServerPort, c.target.port),
		)
		attrs = append(attrs, semconvNetAttrs...)
	}
	return callSpan{name: name, attrs: attrs}
}

func (in *instruments) endCall(ctx context.Context, span trace.Span, start time.Time, c *conn, tool string, res *mcp.CallToolResult, err error) {
	if span != nil {
		if in.semconv {
			endSemconvCall(ctx, span, c.w.scrub, res, err)
		} else {
			endWithError(span, res, err)
		}
		span.End()
	}
	if in.metrics {
		attrs := []attribute.KeyValue{in.poolAttr, attribute.String(spans.AttrMethodName, spans.MethodToolsCall), attribute.String(spans.AttrGenAIToolName, tool)}
		if err != nil {
			attrs = append(attrs, attribute.String(spans.AttrErrorType, errorType(err)))
		} else if res != nil && res.IsError {
			attrs = append(attrs, attribute.String(spans.AttrErrorType, spans.ErrTypeToolError))
		}
		in.opDuration.Record(ctx, seconds(time.Since(start)), metric.WithAttributes(attrs...))
	}
}

// injectMeta returns the _meta a call sends: a copy of the caller's meta
// plus the W3C trace context of ctx (when it has one, so the server can
// join the caller's trace), in buf's map (see callBuf). The caller's map is
// never modified, neither here nor by the SDK, which adds the 2026-07-28
// revision's per-request keys to the map it is given. An empty result goes
// out as no _meta at all (omitempty), as before. The traceparent is written
// straight from the span context into buf (see traceparentValue), so a
// traced call allocates nothing of its own for it.
func (in *instruments) injectMeta(ctx context.Context, meta mcp.Meta, buf *callBuf) mcp.Meta {
	out := buf.meta
	maps.Copy(out, meta)
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return out
	}
	buf.traceparent.set(sc)
	out[traceparentKey] = &buf.traceparent
	if ts := sc.TraceState(); ts.Len() > 0 {
		out[tracestateKey] = ts.String()
	}
	return out
}

// The W3C Trace Context keys, as propagation.TraceContext writes them.
const (
	traceparentKey = "traceparent"
	tracestateKey  = "tracestate"
)

// traceparentValue is a W3C traceparent, version 00:
// "00-<32 hex trace id>-<16 hex span id>-<2 hex flags>", in a fixed buffer.
// The _meta map holds a pointer to it, which fits an interface without the
// box a string needs, and encoding/json writes it as the JSON string it
// returns from MarshalText (copying it), exactly as
// propagation.TraceContext.Inject would write the string.
type traceparentValue struct{ b [55]byte }

// set encodes sc, keeping only the flags the spec defines (sampled,
// random), as propagation.TraceContext.Inject does.
func (v *traceparentValue) set(sc trace.SpanContext) {
	b := &v.b
	tid, sid := sc.TraceID(), sc.SpanID()
	b[0], b[1], b[2] = '0', '0', '-'
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	flags := [1]byte{byte(sc.TraceFlags() & (trace.FlagsSampled | trace.FlagsRandom))}
	hex.Encode(b[53:55], flags[:])
}

// MarshalText returns the traceparent. The slice is v's own buffer, valid
// until v is set again: encoding/json copies it at once.
func (v *traceparentValue) MarshalText() ([]byte, error) { return v.b[:], nil }

// String returns the traceparent, for printing.
func (v *traceparentValue) String() string { return string(v.b[:]) }

// callBuf is what Lease.CallTool lends the SDK for one call: the params it
// sends (a copy of the caller's) and, when traced, their _meta map holding
// the trace context. The SDK is done with both when ClientSession.CallTool
// returns: go-sdk v1.8.0 encodes the params into the JSON-RPC request
// synchronously (jsonrpc2.Connection.Call, NewCall, before the write), and
// keeps only those bytes; the 2026-07-28 revision's per-request _meta
// (mcp.injectRequestMeta) is written into this map before that encoding.
// So the buffers are recycled through callBufs, and a call allocates
// neither the params nor the map.
type callBuf struct {
	params      mcp.CallToolParams
	meta        mcp.Meta
	traceparent traceparentValue
}

// maxRecycledMeta bounds the _meta maps kept for reuse: a caller's
// unusually large _meta is not held on to after its call.
const maxRecycledMeta = 16

var callBufs = sync.Pool{New: func() any { return &callBuf{meta: make(mcp.Meta, 4)} }}

// getCallBuf returns an empty callBuf.
func getCallBuf() *callBuf { return callBufs.Get().(*callBuf) }

// putCallBuf empties b, so it holds nothing of the caller's, and recycles
// it. b must not be used after.
func putCallBuf(b *callBuf) {
	b.params = mcp.CallToolParams{}
	if len(b.meta) > maxRecycledMeta {
		return
	}
	clear(b.meta)
	callBufs.Put(b)
}

func (in *instruments) release(l Lease, now time.Time, drop bool, errType string) {
	km := l.c.ks.Data.metrics
	if km == nil {
		return
	}
	ctx := context.Background()
	in.useTime.Record(ctx, seconds(now.Sub(l.acquired)), km.use...)
	if drop {
		in.failures.Add(ctx, 1, metric.WithAttributes(in.poolAttr, km.keyAttr, attribute.String(spans.AttrErrorType, errType)))
	}
}

func (in *instruments) eviction(ctx context.Context, reason string) {
	if in.metrics {
		in.evictions.Add(ctx, 1, metric.WithAttributes(in.poolAttr, attribute.String(spans.AttrEvictionReason, reason)))
	}
}

func (in *instruments) redial(ctx context.Context) {
	if in.metrics {
		in.redials.Add(ctx, 1, metric.WithAttributes(in.poolAttr))
	}
}
