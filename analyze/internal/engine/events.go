package engine

import (
	"strconv"

	"github.com/mcptrace/mcptrace/spans"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The MCP events: what the vocabulary stage (vocabulary_stage.go) makes of one index's
// spans, whoever wrote them, and all that the measures, the rules' measure
// lookups, the report and the engine's observations read. Strings (scopes,
// keys, sessions) are ids into the events' string table: the index's values,
// then the texts the stage made up (a key of server address and port, the
// identity of an enclosing session span).

// acquireEvent is one acquire: explicit (an acquire span), implied (an
// invocation without one, acquire-on-miss) or inferred from a call (no pool
// spans: a session's first call is the miss that opened it). It is the one
// acquire type from the stage to the miss attribution (pairStage), across
// observations and, as a PairEvent, across processes.
type acquireEvent struct {
	start    int64 // acquire start
	leaseEnd int64 // when the lease went back: the invocation's end, or the redial's start
	trace    pcommon.TraceID
	span     uint64 // span id of the acquire (or the implied hit's invocation, or the call)
	// at is the span's index in the index the stage read; -1 once the
	// event has left it (a forwarded PairEvent). Only index-local readers
	// (the rules' examples, the HTML timeline) use it.
	at                  int32
	scope, key, session int32 // string ids, -1 none; session only on an inferred acquire
	hit                 bool
	redial              bool // attempt 2: the transparent redial
	failed              bool // the lease ended in a failure that drops the session
	health              bool // the pool recorded health_check as the miss reason
	explicit            bool // an acquire span, not an implied hit or a call
	// prewarm marks no acquire but a pre-warm handshake (spans.AttrPrewarm,
	// with no acquire above it): the pair's first session, idle from the
	// handshake's end (leaseEnd), so that a miss after it is not cold but
	// what the pool calls it (ttl when it expired unused). The pair stage
	// reads it for the pair's state and counts it as nothing else.
	prewarm bool
	reason  uint8
}

// inferred reports whether ev was inferred from a call: its hit is decided
// by the attribution (the first call of its session is the miss).
func (ev *acquireEvent) inferred() bool { return ev.session >= 0 }

// callEvent is one tool call.
type callEvent struct {
	span, trace int32
	start, end  int64
	// exec is the call's execution: its trace, or with an execution root
	// the nearest root span at or above it (-1: under none).
	exec     int32
	session  int32 // string id, -1 when the call carries no session identity
	scope    int32 // string id, -1 none
	revision int32 // string id, -1 none
	failed   bool  // a failure that drops the session (a tool's isError is none)
	tie      tie   // whether the call is tied to its execution (measurable.go)
}

// handshakeEvent is one span that opened a session.
type handshakeEvent struct {
	span       int32
	parent     int32 // the span's parent (its acquire, in this pool's vocabulary), -1 none
	start, end int64
	scope      int32
	session    int32 // the session it opened, -1 when it does not say
	// revision is the protocol revision it negotiated, or its acquire's
	// (the one that paid for it).
	revision int32
	failed   bool
	// prewarm says the pool opened the session before any acquire asked
	// (spans.AttrPrewarm): a session opened, but no caller waited for it,
	// so it is no sample of the cold start an acquire pays.
	prewarm bool
}

// acquireSpan is what the per-revision figures and the latency read of an
// explicit acquire span.
type acquireSpan struct {
	revision    int32
	hitRecorded bool // its hit attribute says true
	hit         bool // the acquire event's hit
	dur         int64
}

// events is everything the stage made of one index.
type events struct {
	strs     []string // the index's values, then texts made by the stage
	made     map[string]int32
	acquires []acquireEvent
	// spans holds the explicit acquire spans, in x.order
	spans      []acquireSpan
	calls      []callEvent // in x.order, so each trace's together
	handshakes []handshakeEvent
	// handshakesByScope counts handshakes where they are what the
	// vocabulary counts (explicit acquires); inferred acquires count a
	// session's first call in the attribution instead.
	handshakesByScope map[int32]int
	// settingsByScope is, per scope with an acquire span that recorded
	// the pool's settings, the id of their text (pool_settings.go), or
	// settingsMixed; settingsIDs finds a set's text by its value ids. Nil
	// when no span recorded any.
	settingsByScope map[int32]int32
	settingsIDs     map[[len(spans.PoolSettingsAttrs)]int32]int32
	// serviceByScope is, per scope of an acquire, the service.name of the
	// resource of its first acquire (the value id; absent: none).
	serviceByScope map[int32]int32
	// poolSpans counts the spans the vocabulary recognised.
	poolSpans int
	// serverCalls counts the calls a server wrote (server kind, or the
	// caller's address on them): what tells a writer's side when its
	// vocabulary reads both (capabilities.go).
	serverCalls int
	// targetCalls counts the calls carrying the server's address
	// (Attributes.ServerAddress): what an inferred acquire's key holds.
	targetCalls int
	// execNames counts executions with and without a call per root name,
	// for a writer parenting calls to a session span (measurable.go).
	execNames map[string][2]int
	// traceIDs names each trace by index; execution examples read it.
	traceIDs func(t int32) string
	// compares counts acquiredBefore calls: a test pins that ordering an
	// invocation's acquires stays O(n log n) for a huge fan-out.
	compares int
}

// str returns the text of a string id, "" for -1.
func (e *events) str(id int32) string {
	if id < 0 {
		return ""
	}
	return e.strs[id]
}

// opt returns a string id as an optStr.
func (e *events) opt(id int32) optStr {
	if id < 0 {
		return optStr{}
	}
	return optStr{s: e.strs[id], ok: true}
}

// intern returns the id of a text the stage made up, appending it to the
// table once.
func (e *events) intern(s string) int32 {
	if id, ok := e.made[s]; ok {
		return id
	}
	if e.made == nil {
		e.made = map[string]int32{}
	}
	id := int32(len(e.strs))
	e.strs = append(e.strs, s)
	e.made[s] = id
	return id
}

// serverKey writes an inferred acquire's pool key, the server's (address,
// port), as one text, each part marked present or absent and the address
// length-prefixed so no two keys share a text; -1 for neither.
func (e *events) serverKey(addr, port int32) int32 {
	if addr < 0 && port < 0 {
		return -1
	}
	var b []byte
	if addr >= 0 {
		b = strconv.AppendInt(append(b, 'a'), int64(len(e.strs[addr])), 10)
		b = append(append(b, ':'), e.strs[addr]...)
	}
	if port >= 0 {
		b = append(append(b, 'p'), e.strs[port]...)
	}
	return e.intern(string(b))
}

// spanSession names an enclosing session span as a text: its trace and
// span id, which no attribute value can spell the same (a prefix no id
// has).
func spanSession(trace pcommon.TraceID, id uint64) string {
	return "\x00span:" + trace.String() + ":" + strconv.FormatUint(id, 16)
}

// exampleIDs returns the distinct hex ids of traces, sorted, at most
// MaxExamples.
func (e *events) exampleIDs(traces []int32) []string {
	return exampleIDsOf(traces, e.traceIDs)
}
