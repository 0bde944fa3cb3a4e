// Package spans is mcptrace's vocabulary: the one place that spells span
// names, attribute keys, metric names, miss reasons and the TraceQL text that
// finds an unexplained miss.
//
// The names follow the production gateway the project was born from, so its
// traces and ours read the same, and the OpenTelemetry MCP and database
// connection-pool semantic conventions where those exist. Every other package
// of the module refers to these constants; none spells the strings itself.
//
// The package imports nothing, so that reading the names (the analyzer, the
// dashboards generator, a Collector component) links neither the
// OpenTelemetry SDK, nor the OTLP exporters, nor gRPC, nor the Prometheus
// client: a test in internal/archtest holds that line. Building the telemetry
// pipeline that emits these names (SDK setup, exporters, the OTLP JSON-lines
// file exporter, the in-memory recorder, the Prometheus endpoint) lives in
// [github.com/mcptrace/mcptrace/spans/telemetry].
package spans

// Span names. An invocation is one tool call through the pool: an invoke span
// with an acquire child (hit or miss), a handshake under the acquire on a
// miss, and a call_tool span for the request itself.
const (
	// SpanInvoke wraps one tool invocation through the pool.
	SpanInvoke = "plugin.mcp.invoke"
	// SpanAcquire is emitted on every acquire, hit or miss.
	SpanAcquire = "plugin.mcp.connection.acquire"
	// SpanHandshake is the dial and MCP initialize of a new session (miss only).
	SpanHandshake = "plugin.mcp.connection.handshake"
	// SpanCallTool is the tools/call request on a leased session.
	SpanCallTool = "plugin.mcp.client.call_tool"
)

// Attribute keys on the pool's spans.
const (
	// AttrToolName is the tool name on the invoke span.
	AttrToolName = "mcp.tool.name"
	// AttrTransport names the downstream transport ("streamable-http").
	AttrTransport = "plugin.mcp.transport"
	// AttrCacheKey is the hashed pool key; never the raw identity.
	AttrCacheKey = "plugin.mcp.cache_key"
	// AttrCacheHit is true when an acquire reused an idle session.
	AttrCacheHit = "plugin.mcp.cache_hit"
	// AttrAttempt is 1 for a first acquire and 2 for the transparent redial.
	AttrAttempt = "plugin.mcp.attempt"
	// AttrMissReason says why an acquire missed (see the Miss* constants).
	AttrMissReason = "plugin.mcp.miss_reason"
	// AttrPoolID names the pool scope (one pool instance).
	AttrPoolID = "plugin.mcp.pool.id"

	// AttrSessionID is the downstream Mcp-Session-Id (OTel MCP conventions).
	AttrSessionID = "mcp.session.id"
	// AttrProtocolVersion is the negotiated MCP protocol version.
	AttrProtocolVersion = "mcp.protocol.version"
	// AttrMethodName is the JSON-RPC method, "tools/call" on call spans.
	AttrMethodName = "mcp.method.name"
	// AttrGenAIToolName is the tool name on call spans (GenAI conventions).
	AttrGenAIToolName = "gen_ai.tool.name"
	// AttrJSONRPCRequestID is the JSON-RPC request id when known.
	AttrJSONRPCRequestID = "jsonrpc.request.id"
	// AttrErrorType classifies a failure (see the Err* constants).
	AttrErrorType = "error.type"
	// AttrServerAddress and AttrServerPort name the downstream server.
	AttrServerAddress = "server.address"
	AttrServerPort    = "server.port"
	// AttrClientAddress names the caller on a server-side span: a call
	// span carrying it was written by the server, which never sees an
	// attempt refused before its handler.
	AttrClientAddress = "client.address"

	// AttrSessionless is true on an acquire span whose lease rides a
	// sessionless server's shared client (MCP 2026-07-28, or an older
	// server that issues no Mcp-Session-Id): session rules do not apply.
	AttrSessionless = "plugin.mcp.sessionless"
	// AttrNegotiation says how a handshake chose its protocol revision (see
	// the Negotiation* constants).
	AttrNegotiation = "plugin.mcp.negotiation"
	// AttrHandshakeRequests is the number of HTTP requests a handshake made
	// (server/discover, initialize, notifications/initialized, retries):
	// what the cold start cost in round trips.
	AttrHandshakeRequests = "plugin.mcp.handshake.requests"
	// AttrHTTPStatusCode is the HTTP status of one handshake request, on
	// EventHandshakeRequest.
	AttrHTTPStatusCode = "http.response.status_code"
	// AttrDurationSeconds is the duration of one handshake request, on
	// EventHandshakeRequest.
	AttrDurationSeconds = "plugin.mcp.duration_s"

	// AttrAcquireWait is how long an acquire waited for its key's in-use
	// cap, in seconds; absent when it did not wait.
	AttrAcquireWait = "plugin.mcp.acquire.wait_s"

	// The pool's own settings, on every acquire span, so that a dump says
	// under which settings its hits and misses happened and a replay
	// (mcptrace whatif) can label the run at those settings "as recorded"
	// and reproduce it. They ride every acquire span, not the resource
	// (one tracer provider may carry many pools with different settings)
	// nor only a scope's first span (a sampled trace or a dump cut out of a
	// longer run may not hold it): any one acquire span of a pool scope
	// tells its settings.

	// AttrPoolIdleTTL is Options.IdleTTL in seconds: how long an idle
	// session may wait before it is closed instead of reused.
	AttrPoolIdleTTL = "plugin.mcp.pool.idle_ttl_s"
	// AttrPoolMaxIdlePerKey is Options.MaxIdlePerKey with its default
	// filled in: the idle sessions a key keeps at least (negative: none,
	// a session per call).
	AttrPoolMaxIdlePerKey = "plugin.mcp.pool.max_idle_per_key"
	// AttrPoolIdleSizing is how a key's idle limit is sized: IdleSizingPeak
	// (its in-use peak within the idle TTL, at least MaxIdlePerKey) or
	// IdleSizingFixed (Options.FixedIdlePerKey: MaxIdlePerKey, whatever the
	// bursts). Which one decides whether a burst's sessions wait for the
	// next burst, the concurrent misses a replay must predict.
	AttrPoolIdleSizing = "plugin.mcp.pool.idle_sizing"
	// AttrPoolMaxIdle is Options.MaxIdle with its default filled in: the
	// global cap on idle sessions, least recently used closed first.
	AttrPoolMaxIdle = "plugin.mcp.pool.max_idle"
	// AttrPoolSweepInterval is Options.SweepInterval in seconds with its
	// default filled in: how often idle sessions past their TTL are closed
	// and keys idle for twice the TTL forgotten (a forgotten key's next miss
	// is cold, not ttl). -1: no background sweep, only on acquire, at
	// most once per idle TTL.
	AttrPoolSweepInterval = "plugin.mcp.pool.sweep_interval_s"

	// AttrPrewarm is true on a handshake span the pool made to pre-warm a
	// key (Options.Prewarm) before any acquire asked for it: a session
	// opened that no acquire paid for, so neither a miss nor an acquire's
	// handshake latency. Such a span has no acquire parent and carries
	// AttrPoolID and AttrCacheKey itself.
	AttrPrewarm = "plugin.mcp.prewarm"

	// AttrConnectionState is the state label of the connection count gauge.
	AttrConnectionState = "mcp.pool.connection.state"
	// AttrEvictionReason labels evictions (see the Evict* constants).
	AttrEvictionReason = "mcp.pool.eviction.reason"
	// AttrPhase is the pprof label and metric attribute naming pool work:
	// PhaseHandshake or PhaseCall.
	AttrPhase = "mcp.pool.phase"
)

// EventHandshakeRequest is a span event on the handshake span for each HTTP
// request the handshake made, with AttrMethodName, AttrHTTPStatusCode and
// AttrDurationSeconds: the negotiation's cost, request by request.
const EventHandshakeRequest = "plugin.mcp.handshake.request"

// Negotiations: the value of AttrNegotiation.
const (
	// NegotiationPinned: the target or pool pinned the revision.
	NegotiationPinned = "pinned"
	// NegotiationRemembered: an earlier handshake of the key found the
	// revision; this one used it directly.
	NegotiationRemembered = "remembered"
	// NegotiationProbed: the key's first handshake tried the newest
	// revision and the server spoke it.
	NegotiationProbed = "probed"
	// NegotiationFallback: the server refused the first revision tried and
	// the handshake retried with one it listed or an older one, paying an
	// extra round trip.
	NegotiationFallback = "fallback"
)

// MCP protocol revisions the pool negotiates between.
const (
	// ProtocolModern is MCP 2026-07-28: no sessions, server/discover.
	ProtocolModern = "2026-07-28"
	// ProtocolLegacy is MCP 2025-11-25: initialize and Mcp-Session-Id.
	ProtocolLegacy = "2025-11-25"
)

// Resource attribute keys that name a pool scope when AttrPoolID is absent.
const (
	ResourceServiceInstanceID = "service.instance.id"
	ResourceServiceName       = "service.name"
)

// MethodToolsCall is the value of AttrMethodName on call spans.
const MethodToolsCall = "tools/call"

// The OpenTelemetry MCP semantic conventions, as the pool writes them with
// pool.Options.SemconvCallSpans: semantic-conventions-genai v0.1.0,
// docs/gen-ai/mcp.md, the "MCP client" span (status Development). The span
// name is "{mcp.method.name} {target}" (SemconvSpanName), the kind CLIENT;
// the attribute keys the conventions share with the pool's own spans
// (AttrMethodName, AttrGenAIToolName, AttrSessionID, AttrProtocolVersion,
// AttrJSONRPCRequestID, AttrErrorType, AttrServerAddress, AttrServerPort)
// are spelled above, the rest here.
const (
	// AttrGenAIOperationName is GenAIOperationExecuteTool on a tools/call
	// client span and absent on every other ("SHOULD NOT be set otherwise").
	AttrGenAIOperationName = "gen_ai.operation.name"
	// AttrNetworkTransport is the transport protocol under the MCP session:
	// NetworkTransportTCP for streamable HTTP.
	AttrNetworkTransport = "network.transport"
	// AttrNetworkProtocolName is the application protocol:
	// NetworkProtocolHTTP for streamable HTTP.
	AttrNetworkProtocolName = "network.protocol.name"
	// AttrRPCResponseStatusCode is the JSON-RPC error code of an error
	// response, as a string ("-32602"); absent on a success.
	AttrRPCResponseStatusCode = "rpc.response.status_code"
)

// Values of the semantic conventions' attributes.
const (
	// GenAIOperationExecuteTool is AttrGenAIOperationName on tools/call.
	GenAIOperationExecuteTool = "execute_tool"
	// NetworkTransportTCP is AttrNetworkTransport over HTTP.
	NetworkTransportTCP = "tcp"
	// NetworkProtocolHTTP is AttrNetworkProtocolName over HTTP.
	NetworkProtocolHTTP = "http"
	// MethodInitialize is the 2025-11-25 handshake request: the semantic
	// conventions' "initialize" client span.
	MethodInitialize = "initialize"
	// MethodServerDiscover is the 2026-07-28 handshake request (the
	// conventions' "{mcp.method.name}" span, with no target).
	MethodServerDiscover = "server/discover"
)

// SemconvSpanName is the MCP conventions' span name of a request:
// "{mcp.method.name} {target}" where the request has a low-cardinality
// target (the tool of tools/call), else the method alone ("initialize").
func SemconvSpanName(method, target string) string {
	if target == "" {
		return method
	}
	return method + " " + target
}

// PoolSettingsAttrs are the settings attributes the pool writes on every
// acquire span (AttrPoolIdleTTL ... AttrPoolSweepInterval), in one fixed
// order: what an analyzer keeps and reads to know the settings a dump was
// recorded at. An array, so no reader can change it.
var PoolSettingsAttrs = [...]string{AttrPoolIdleTTL, AttrPoolMaxIdlePerKey, AttrPoolIdleSizing, AttrPoolMaxIdle, AttrPoolSweepInterval}

// Idle sizings: the value of AttrPoolIdleSizing.
const (
	// IdleSizingPeak: a key keeps as many idle sessions as its in-use peak
	// within the idle TTL, at least MaxIdlePerKey (the pool's default).
	IdleSizingPeak = "peak"
	// IdleSizingFixed: a key keeps at most MaxIdlePerKey idle sessions
	// (Options.FixedIdlePerKey).
	IdleSizingFixed = "fixed"
)

// TransportStreamableHTTP is the value of AttrTransport for HTTP servers.
const TransportStreamableHTTP = "streamable-http"

// Miss reasons: the value of AttrMissReason. The pool records the reason it
// knows; the analyzer attributes misses from the spans alone and adds
// MissUnexplained for a miss no rule accounts for.
const (
	// MissCold is the first acquire of a key in a pool scope.
	MissCold = "cold"
	// MissConcurrent is an acquire while every session of the key was leased.
	MissConcurrent = "concurrent"
	// MissTTL is an acquire after the idle session outlived the idle TTL.
	MissTTL = "ttl"
	// MissRedial is the second attempt after a reused session was expired.
	MissRedial = "redial"
	// MissAfterFailure follows a lease whose session was dropped on failure.
	MissAfterFailure = "after_failure"
	// MissHealthCheck follows an idle session that failed its ping.
	MissHealthCheck = "health_check"
	// MissEvicted follows an idle session closed by the idle caps.
	MissEvicted = "evicted"
	// MissUnexplained is the analyzer's verdict on a miss with no cause.
	MissUnexplained = "unexplained"
)

// ExplainedMissReasons is the one definition of an explained miss: a miss
// whose cause is one of these is accounted for; any other miss (no reason,
// MissUnexplained, MissEvicted, or a reason outside this vocabulary) is
// unexplained: a session the pool should have reused. The pool records its
// reason on every miss, the analyzer attributes misses to these causes from
// whole traces, and TraceQLUnexplainedMiss and the dashboards select acquire
// spans outside them. MissEvicted is recorded but not explained: the idle
// caps closed a session its key needed again, a sizing miss to chase (the
// per-call demo's misses). Read-only.
var ExplainedMissReasons = []string{MissCold, MissConcurrent, MissTTL, MissRedial, MissAfterFailure, MissHealthCheck}

// IsExplainedMiss reports whether reason is one of ExplainedMissReasons.
func IsExplainedMiss(reason string) bool {
	for _, r := range ExplainedMissReasons {
		if r == reason {
			return true
		}
	}
	return false
}

// TraceQLUnexplainedMiss is the Tempo TraceQL spanset of unexplained misses
// by the one definition (ExplainedMissReasons): acquire spans that missed
// with no miss_reason or one outside the explained causes. A query sees one
// span, so it relies on the reason the pool recorded; mcptrace analyze, which
// sees whole traces, can also explain a miss the pool left without a reason.
// The regular expression is anchored, so a reason that merely contains an
// explained one stays unexplained. Narrow it (a pool or key filter) by
// appending a "| { ... }" stage.
const TraceQLUnexplainedMiss = `{ name = "` + SpanAcquire + `" && span.` + AttrCacheHit + ` = false && (span.` + AttrMissReason + ` = nil || span.` + AttrMissReason + ` !~ "^(` +
	MissCold + `|` + MissConcurrent + `|` + MissTTL + `|` + MissRedial + `|` + MissAfterFailure + `|` + MissHealthCheck + `)$") }`

// MissReasons lists the reasons the analyzer reports, in report order: the
// explained causes (ExplainedMissReasons), then MissEvicted and
// MissUnexplained, the two a pool should not have had.
var MissReasons = []string{MissCold, MissConcurrent, MissTTL, MissRedial, MissAfterFailure, MissHealthCheck, MissEvicted, MissUnexplained}

// MissCauseUnknown is the connector's AttrMissCause on a miss whose cause
// the spans of its pool cannot show: the analyzer decides it (the cause's
// figure is not measurable, report.Report.FigureOf), as for acquire spans
// without a target identity, which read every target of a pool as one
// key, so that a concurrent, ttl, after_failure, health_check, evicted or
// unexplained miss may have been another (cold, redial and hits stay what
// they are).
// It is no miss reason (not in MissReasons): a counter labelled with it
// says how many misses have no cause that can be known, so a series of
// every cause still sums to the misses while no cause is claimed falsely.
const MissCauseUnknown = "unknown"

// Eviction reasons: the value of AttrEvictionReason.
const (
	EvictTTL         = "ttl"          // idle longer than the idle TTL
	EvictIdleLimit   = "idle_limit"   // released while the key's idle slots were full
	EvictLRU         = "lru"          // the global idle cap closed the least recently used
	EvictHealthCheck = "health_check" // ping failed before reuse
	EvictPoolClosed  = "pool_closed"  // the pool was closed
)

// Error types: the value of AttrErrorType on failed spans and metrics.
const (
	ErrTypeSessionExpired = "session_expired" // 404 to a session-bearing request
	ErrTypeBadSession     = "bad_session"     // 400 to a session-bearing request
	ErrTypeTransport      = "transport"       // the connection failed
	ErrTypeHTTPStatus     = "http_status"     // another non-2xx HTTP status
	ErrTypeCanceled       = "canceled"        // context canceled or deadline exceeded
	ErrTypeToolError      = "tool_error"      // the tool answered isError: true
	ErrTypePoolClosed     = "pool_closed"     // acquire on a closed pool
	ErrTypeHandshake      = "handshake"       // the dial or initialize failed
	ErrTypeProtocol       = "protocol_error"  // the server answered a JSON-RPC error
	ErrTypeCircuitOpen    = "circuit_open"    // the key's circuit breaker failed the acquire fast
	ErrTypeAcquireTimeout = "acquire_timeout" // waited past the acquire timeout for the in-use cap
	// The server broke a bound the pool holds every server to (see the
	// pool's "Against a hostile server" promises): the session is dropped
	// and the call is not retried.
	ErrTypeResponseTooLarge = "response_too_large" // a body or SSE event over Options.MaxResponseBytes
	ErrTypeRedirect         = "redirect"           // a redirect the pool does not follow
	ErrTypeBadSessionID     = "bad_session_id"     // an Mcp-Session-Id the pool refuses
)

// Connection states: the value of AttrConnectionState.
const (
	StateIdle = "idle"
	StateUsed = "used"
)

// Phases: the value of AttrPhase and of the pprof label PprofLabelPhase.
const (
	PhaseHandshake = "handshake"
	PhaseCall      = "call"
)

// pprof label keys set by the pool so a CPU profile splits by key and phase.
const (
	PprofLabelKey   = "mcp.pool.key"
	PprofLabelPhase = "phase"
)

// Metric names, after OpenTelemetry's db.client.connection.* pool conventions
// under an mcp.pool. prefix, plus the MCP client operation duration.
const (
	// MetricConnectionCount is an up-down counter of sessions by
	// AttrConnectionState (idle or used).
	MetricConnectionCount = "mcp.pool.connection.count"
	// MetricConnectionCreateTime is the handshake duration histogram (s).
	MetricConnectionCreateTime = "mcp.pool.connection.create_time"
	// MetricConnectionWaitTime is the acquire duration histogram (s), with
	// AttrCacheHit.
	MetricConnectionWaitTime = "mcp.pool.connection.wait_time"
	// MetricConnectionUseTime is how long a lease was held (s).
	MetricConnectionUseTime = "mcp.pool.connection.use_time"
	// MetricAcquires counts acquires by AttrCacheHit and AttrMissReason.
	MetricAcquires = "mcp.pool.acquires"
	// MetricEvictions counts idle sessions closed, by AttrEvictionReason.
	MetricEvictions = "mcp.pool.evictions"
	// MetricRedials counts transparent redials of expired sessions.
	MetricRedials = "mcp.pool.redials"
	// MetricFailures counts dropped sessions by AttrErrorType.
	MetricFailures = "mcp.pool.failures"
	// MetricPendingRequests is an up-down counter of acquires waiting for
	// a key's in-use cap (db.client.connection.pending_requests).
	MetricPendingRequests = "mcp.pool.connection.pending_requests"
	// MetricTimeouts counts acquires that timed out waiting for the in-use
	// cap (db.client.connection.timeouts).
	MetricTimeouts = "mcp.pool.connection.timeouts"
	// MetricSessionDuration is the MCP client session lifetime histogram
	// (s), from handshake to close (OTel MCP conventions).
	MetricSessionDuration = "mcp.client.session.duration"
	// MetricOperationDuration is the MCP client operation duration (s).
	MetricOperationDuration = "mcp.client.operation.duration"
)

// Instrumentation scope of the pool's tracer and meter.
const ScopeName = "github.com/mcptrace/mcptrace/pool"

// Metric names of the mcptrace Collector connector
// (collector/mcptraceconnector): the analyzer's measures counted in-stream,
// per finalized trace, as cumulative counters. They are a contract (the "MCP
// pool fleet" dashboard and users' alerts depend on them) and differ from the
// pool's own Metric* names on purpose: the pool records what it saw, the
// connector what the analyzer attributes from whole traces. The Prometheus
// exporter turns dots into underscores and adds _total
// (mcptrace.pool.acquires → mcptrace_pool_acquires_total).
const (
	// ConnectorMetricAcquires counts acquires by AttrPoolID, AttrCacheHit
	// and, on misses, AttrMissCause.
	ConnectorMetricAcquires = "mcptrace.pool.acquires"
	// ConnectorMetricHandshakes counts handshakes by AttrPoolID.
	ConnectorMetricHandshakes = "mcptrace.pool.handshakes"
	// ConnectorMetricExecutions counts executions by AttrPoolID and
	// AttrMultiSession.
	ConnectorMetricExecutions = "mcptrace.executions"
	// ConnectorMetricRuleViolations counts rule violations by AttrRuleID and
	// AttrRuleSeverity.
	ConnectorMetricRuleViolations = "mcptrace.rule.violations"
	// ConnectorMetricTracesFinalized counts traces finalized for any
	// reason, cut ones included. No attributes.
	ConnectorMetricTracesFinalized = "mcptrace.traces.finalized"
	// ConnectorMetricTracesLateSpans counts spans that arrived after their
	// trace was finalized; they are not analysed. No attributes.
	ConnectorMetricTracesLateSpans = "mcptrace.traces.late_spans"
	// ConnectorMetricTracesCut counts traces finalized early by the
	// connector's max_open_traces. No attributes.
	ConnectorMetricTracesCut = "mcptrace.traces.cut"
	// ConnectorMetricAcquiresPending is a gauge of the acquires the
	// connector's pairs leg (attribution: forward) holds, not yet
	// attributed: each waits pair_wait for earlier acquires of its pair.
	// No attributes.
	ConnectorMetricAcquiresPending = "mcptrace.pool.acquires.pending"
)

// Attribute keys of the connector's metrics and log records (besides
// AttrPoolID and AttrCacheHit, which keep the pool's spelling).
const (
	// AttrMissCause is the analyzer's attribution of a miss (MissReasons),
	// or MissCauseUnknown where the spans cannot show it; absent on hits.
	AttrMissCause = "mcptrace.miss.cause"
	// AttrMultiSession is true when an execution used more than one session.
	AttrMultiSession = "mcptrace.execution.multi_session"
	// AttrRuleID names a rule of mcptrace.yaml or a built-in rule.
	AttrRuleID = "mcptrace.rule.id"
	// AttrRuleSeverity is a rule's severity: error or warning.
	AttrRuleSeverity = "mcptrace.rule.severity"
	// AttrFinding is the finding text on a violation's log record.
	AttrFinding = "mcptrace.finding"
	// AttrTraceQL is the TraceQL query that finds a violation in Tempo.
	AttrTraceQL = "mcptrace.traceql"
)

// The connector's acquire records: with attribution forward, the
// trace-routed tier sends each acquire it measured as one log record
// (event ConnectorEventAcquire, the acquire's trace and span ids, its start
// as the record's timestamp) to the instance that owns its (scope, key)
// pair, which attributes the misses in time order. A routing exporter sends
// every record of a pair to one instance by AttrPairScope and AttrPairKey
// (the loadbalancing exporter's routing_key attributes).
const (
	// ConnectorEventAcquire is the event name of an acquire record.
	ConnectorEventAcquire = "mcptrace.pool.acquire"
	// AttrPairScope is the acquire's pool scope; absent when none.
	AttrPairScope = "mcptrace.pair.scope"
	// AttrPairKey is the acquire's cache key (under the semconv profile the
	// server's address and port); absent when none.
	AttrPairKey = "mcptrace.pair.key"
	// AttrPairSession is the call's session id under the semconv profile.
	AttrPairSession = "mcptrace.pair.session"
	// AttrPairLeaseEnd is when the acquire's lease ended, Unix nanoseconds.
	AttrPairLeaseEnd = "mcptrace.pair.lease_end"
	// AttrPairHit, AttrPairRedial, AttrPairFailed and AttrPairHealthCheck
	// are the acquire's facts: it reused a session; it is a second attempt;
	// its lease failed; the pool recorded health_check as its miss reason.
	AttrPairHit         = "mcptrace.pair.hit"
	AttrPairRedial      = "mcptrace.pair.redial"
	AttrPairFailed      = "mcptrace.pair.failed"
	AttrPairHealthCheck = "mcptrace.pair.health_check"
	// AttrPairLacks lists what the forwarding analyzer's spans could not
	// show (the names of a report's writer.lacks, as target_identity for
	// acquire spans without a cache key); absent when nothing. The
	// attributing instance's miss causes are worth no more.
	AttrPairLacks = "mcptrace.pair.lacks"
)
