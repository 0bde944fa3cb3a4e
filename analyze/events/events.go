package events

// ReportEvents are the dump's events as the HTML report draws them beside
// the report: the handshakes, the calls and, held compactly by whoever
// built them, the acquires. It holds no index and no span, only values, so
// the report's renderer never reads the index nor runs a measure again.
type ReportEvents struct {
	// Handshakes are sorted by scope, then start.
	Handshakes []HandshakeEvent
	// Calls are the tool calls, in the order the analyzer read them: what
	// the report's call-latency distribution is drawn from.
	Calls []CallEvent

	acquires AcquireTable
}

// AcquireTable is how the builder of [ReportEvents] holds the acquires: a
// dozen bytes an acquire rather than an [AcquireEvent]'s hundred, each made
// when asked for, so a report holds a million of them.
type AcquireTable interface {
	// Len is the number of acquires At hands out.
	Len() int
	// At returns the i-th acquire, 0 <= i < Len, sorted by scope, then
	// start, then trace and span id.
	At(i int) AcquireEvent
	// Each hands every acquire to fn as a replay of the pool reads it:
	// pair by pair, each pair's in time order, with the pre-warm dials.
	Each(fn func(*Acquire))
}

// NewReportEvents is the events of one dump: its handshakes, its calls and
// its acquires (nil: none).
func NewReportEvents(handshakes []HandshakeEvent, calls []CallEvent, acquires AcquireTable) *ReportEvents {
	return &ReportEvents{Handshakes: handshakes, Calls: calls, acquires: acquires}
}

// NumAcquires is the number of acquires [ReportEvents.Acquire] hands out.
func (r *ReportEvents) NumAcquires() int {
	if r.acquires == nil {
		return 0
	}
	return r.acquires.Len()
}

// Acquire returns the i-th acquire (0 <= i < NumAcquires) with the cause
// the one miss attribution gave it and the session its lease used, sorted
// by scope, then start, then trace and span id. It is made on each call,
// so a reader holds only the acquires it keeps.
func (r *ReportEvents) Acquire(i int) AcquireEvent { return r.acquires.At(i) }

// EachAcquire hands every acquire to fn as a replay of the pool
// (analyze/whatif) reads it, exactly as analyze.ReadAcquires does for the
// same dump: pair by pair, each pair's in time order, causes attributed as
// the report's, with the settings its scope recorded, and the pre-warm
// dials (Acquire.Prewarm). fn must not keep the pointer.
func (r *ReportEvents) EachAcquire(fn func(*Acquire)) {
	if r.acquires != nil {
		r.acquires.Each(fn)
	}
}

// CallEvent is one tool call's times, unix nanoseconds: the report draws
// its latency, which the report gives only as percentiles.
type CallEvent struct {
	Start, End int64
}

// AcquireEvent is one acquire as the pool measure sees it, with the cause
// it attributed to a miss: what the HTML report's session timeline draws.
type AcquireEvent struct {
	// Start and End are the acquire span's times, unix nanoseconds (for an
	// implied hit under acquire-on-miss, the invocation's).
	Start, End int64
	// Scope is the pool scope; "" when nothing names it.
	Scope string
	// Session is the downstream session the lease used (mcp.session.id, from
	// the acquire, its handshake, or the first call of the lease); "" when
	// the dump does not say.
	Session string
	// Hit is true when the acquire reused an idle session.
	Hit bool
	// Cause is the attributed miss reason (one of spans.MissReasons); ""
	// for a hit.
	Cause string
	// Implied is true for a hit the dump shows only by the absence of an
	// acquire span (profile acquire-on-miss): TraceID and SpanID then name
	// the invocation, and Start and End are its times.
	Implied bool
	// TraceID and SpanID name the acquire span in hex.
	TraceID, SpanID string
}

// HandshakeEvent is one handshake span: a new downstream session dialed
// and initialized.
type HandshakeEvent struct {
	// Start and End are the span's times, unix nanoseconds.
	Start, End int64
	// Scope is the pool scope; Session the session it opened ("" when it
	// failed or the dump does not say).
	Scope, Session string
	// Failed is true when the handshake ended in error.
	Failed bool
	// TraceID and SpanID name the handshake span in hex.
	TraceID, SpanID string
}

// Acquire is one acquire as a replay of the pool (analyze/whatif) needs
// it: its pair, when it started and its lease ended, and what the dump says
// of it, its miss cause attributed exactly as `mcptrace analyze` attributes
// it. It holds no span: a replay keeps these, never the traces.
type Acquire struct {
	// Scope is the pool scope and Key the cache key; HasScope and HasKey
	// say whether the span had one.
	Scope, Key       string
	HasScope, HasKey bool
	// Start is when the acquire started and LeaseEnd when its lease ended
	// (Unix nanoseconds, LeaseEnd >= Start).
	Start, LeaseEnd int64
	// Hit says it reused an idle session; Cause is a miss's cause (a
	// spans.Miss* value), "" on a hit.
	Hit   bool
	Cause string
	// Failed says the lease ended in a failure that drops the session.
	Failed bool
	// Attempt is 1, or 2 on the transparent redial after an expired
	// session.
	Attempt int
	// HealthCheck says the pool recorded health_check as the miss reason.
	HealthCheck bool
	// Prewarm marks no acquire but a pre-warm dial of the key before any
	// acquire asked (Options.Prewarm): its session idle from LeaseEnd.
	// Hit, Cause and Attempt say nothing then.
	Prewarm bool
	// Settings is what the acquire's pool scope recorded of its settings
	// on its acquire spans (spans.PoolSettingsAttrs), shared by all the
	// scope's acquires; nil when none of them recorded any, or when they
	// recorded different ones (SettingsMixed). A replay at these settings
	// is the run as recorded, not as assumed.
	Settings PoolSettings
	// SettingsMixed says the scope's acquire spans recorded different
	// settings: no one set is the scope's.
	SettingsMixed bool
	// Service is the service.name of the scope's acquires (HasService: it
	// had one): a replay's pre-warm ranks the keys of the same service's
	// earlier scopes.
	Service    string
	HasService bool
}
