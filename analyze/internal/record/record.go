// Package record holds the MCP events: what the vocabulary stage makes of
// one index's spans, whoever wrote them, and all that the measures, the
// rules' measure lookups, the report and the engine's observations read.
// Strings (scopes, keys, sessions) are ids into the table's string table:
// the index's values, then the texts the stage made up (a key of server
// address and port, the identity of an enclosing session span). It sits
// under every stage so that the stages share one event type and none of
// them imports another to read it.
package record

import (
	"slices"
	"strconv"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/spans"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Acquire is one acquire: explicit (an acquire span), implied (an
// invocation without one, acquire-on-miss) or inferred from a call (no pool
// spans: a session's first call is the miss that opened it). It is the one
// acquire type from the stage to the miss attribution (pairStage), across
// observations and, as a PairEvent, across processes.
type Acquire struct {
	Start    int64 // acquire start
	LeaseEnd int64 // when the lease went back: the invocation's end, or the redial's start; never before Start (the vocabulary stage, and the pairs' import, clamp it)
	Trace    pcommon.TraceID
	Span     uint64 // span id of the acquire (or the implied hit's invocation, or the call)
	// At is the span's index in the index the stage read; -1 once the
	// event has left it (a forwarded PairEvent). Only index-local readers
	// (the rules' examples, the HTML timeline) use it.
	At                  int32
	Scope, Key, Session int32 // string ids, -1 none; session only on an inferred acquire
	Hit                 bool
	Redial              bool // attempt 2: the transparent redial
	Failed              bool // the lease ended in a failure that drops the session
	Health              bool // the pool recorded health_check as the miss reason
	Explicit            bool // an acquire span, not an implied hit or a call
	// Prewarm marks no acquire but a pre-warm handshake (spans.AttrPrewarm,
	// with no acquire above it): the pair's first session, idle from the
	// handshake's end (leaseEnd), so that a miss after it is not cold but
	// what the pool calls it (ttl when it expired unused). The pair stage
	// reads it for the pair's state and counts it as nothing else.
	Prewarm bool
	Reason  uint8
}

// Inferred reports whether ev was inferred from a call: its hit is decided
// by the attribution (the first call of its session is the miss).
func (ev *Acquire) Inferred() bool { return ev.Session >= 0 }

// Call is one tool call.
type Call struct {
	Span, Trace int32
	Start, End  int64
	// Exec is the call's execution: its trace, or with an execution root
	// the nearest root span at or above it (-1: under none).
	Exec     int32
	Session  int32 // string id, -1 when the call carries no session identity
	Scope    int32 // string id, -1 none
	Revision int32 // string id, -1 none
	Failed   bool  // a failure that drops the session (a tool's isError is none)
	Tie      Tie   // whether the call is tied to its execution (vocab's rootClock)
	// NoDuration says the span was written ending before it started
	// (End is clamped to Start): its duration is no latency sample.
	NoDuration bool
}

// Handshake is one span that opened a session.
type Handshake struct {
	Span       int32
	Parent     int32 // the span's parent (its acquire, in this pool's vocabulary), -1 none
	Start, End int64
	Scope      int32
	Session    int32 // the session it opened, -1 when it does not say
	// Revision is the protocol revision it negotiated, or its acquire's
	// (the one that paid for it).
	Revision int32
	Failed   bool
	// Prewarm says the pool opened the session before any acquire asked
	// (spans.AttrPrewarm): a session opened, but no caller waited for it,
	// so it is no sample of the cold start an acquire pays.
	Prewarm bool
	// NoDuration says the span was written ending before it started:
	// its duration is no latency sample.
	NoDuration bool
}

// AcquireSpan is what the per-revision figures and the latency read of an
// explicit acquire span.
type AcquireSpan struct {
	Revision int32
	Hit      bool  // the acquire event's hit
	Dur      int64 // -1 when the span was written ending before it started: no sample
}

// Table is everything the stage made of one index.
type Table struct {
	Strs     []string // the index's values, then texts made by the stage
	Made     map[string]int32
	Acquires []Acquire
	// Spans holds the explicit acquire spans, in x.order
	Spans      []AcquireSpan
	Calls      []Call // in x.order, so each trace's together
	Handshakes []Handshake
	// HandshakesByScope counts handshakes where they are what the
	// vocabulary counts (explicit acquires); inferred acquires count a
	// session's first call in the attribution instead.
	HandshakesByScope map[int32]int
	// SettingsByScope is, per scope with an acquire span that recorded
	// the pool's settings, the id of their text (the engine's pool_settings.go), or
	// settingsMixed; settingsIDs finds a set's text by its value ids. Nil
	// when no span recorded any.
	SettingsByScope map[int32]int32
	SettingsIDs     map[[len(spans.PoolSettingsAttrs)]int32]int32
	// ServiceByScope is, per scope of an acquire, the service.name of the
	// resource of its first acquire (the value id; absent: none).
	ServiceByScope map[int32]int32
	// PoolSpans counts the spans the vocabulary recognised.
	PoolSpans int
	// ServerCalls counts the calls a server wrote (server kind, or the
	// caller's address on them): what tells a writer's side when its
	// vocabulary reads both (rulefmt's capabilities.go).
	ServerCalls int
	// TargetCalls counts the calls carrying the server's address
	// (Attributes.ServerAddress): what an inferred acquire's key holds.
	TargetCalls int
	// ExecNames counts executions with and without a call per root name,
	// for a writer parenting calls to a session span (vocab's rootClock).
	ExecNames map[string][2]int
	// TraceIDs names each trace by index; execution examples read it.
	TraceIDs func(t int32) string
	// HitsNotBool counts acquire spans whose hit attribute (HitAttr)
	// holds no boolean, read as absent; HitNotBoolValues are the first
	// MaxHitNotBoolValues distinct texts of it, for the warning.
	HitsNotBool      int
	HitAttr          string
	HitNotBoolValues []string
	// Compares counts acquiredBefore calls: a test pins that ordering an
	// invocation's acquires stays O(n log n) for a huge fan-out.
	Compares int
}

// MaxHitNotBoolValues bounds the distinct non-boolean hit values a
// warning names: enough to show the kinds a writer sent, few enough that
// a hostile dump cannot grow it.
const MaxHitNotBoolValues = 3

// NoteHitNotBool counts an acquire span whose hit attribute attr holds
// val, no boolean, keeping the first few distinct values for the warning.
func (e *Table) NoteHitNotBool(attr, val string) {
	e.HitsNotBool++
	e.HitAttr = attr
	e.HitNotBoolValues = AddDistinct(e.HitNotBoolValues, val)
}

// AddDistinct appends val to vals unless vals holds it or holds
// MaxHitNotBoolValues already.
func AddDistinct(vals []string, val string) []string {
	if len(vals) >= MaxHitNotBoolValues || slices.Contains(vals, val) {
		return vals
	}
	return append(vals, val)
}

// Str returns the text of a string id, "" for -1.
func (e *Table) Str(id int32) string {
	if id < 0 {
		return ""
	}
	return e.Strs[id]
}

// Opt returns a string id as an optStr.
func (e *Table) Opt(id int32) OptStr {
	if id < 0 {
		return OptStr{}
	}
	return OptStr{S: e.Strs[id], ok: true}
}

// Intern returns the id of a text the stage made up, appending it to the
// table once.
func (e *Table) Intern(s string) int32 {
	if id, ok := e.Made[s]; ok {
		return id
	}
	if e.Made == nil {
		e.Made = map[string]int32{}
	}
	id := int32(len(e.Strs))
	e.Strs = append(e.Strs, s)
	e.Made[s] = id
	return id
}

// ServerKey writes an inferred acquire's pool key, the server's (address,
// port), as one text, each part marked present or absent and the address
// length-prefixed so no two keys share a text; -1 for neither.
func (e *Table) ServerKey(addr, port int32) int32 {
	if addr < 0 && port < 0 {
		return -1
	}
	var b []byte
	if addr >= 0 {
		b = strconv.AppendInt(append(b, 'a'), int64(len(e.Strs[addr])), 10)
		b = append(append(b, ':'), e.Strs[addr]...)
	}
	if port >= 0 {
		b = append(append(b, 'p'), e.Strs[port]...)
	}
	return e.Intern(string(b))
}

// SpanSession names an enclosing session span as a text: its trace and
// span id, which no attribute value can spell the same (a prefix no id
// has).
func SpanSession(trace pcommon.TraceID, id uint64) string {
	return "\x00span:" + trace.String() + ":" + strconv.FormatUint(id, 16)
}

// ExampleIDs returns the distinct hex ids of traces, sorted, at most
// MaxExamples.
func (e *Table) ExampleIDs(traces []int32) []string {
	return ExampleIDs(traces, e.TraceIDs)
}

// Tie says whether a call is tied to its execution.
type Tie uint8

const (
	Tied            Tie = iota
	TieOutsideRoot      // under no execution root (or its trace's root is the call, or a session span)
	TieOutlivesRoot     // ends after its execution's root span ended
)

// ExampleIDs returns the distinct ids traceID gives traces, sorted, at
// most report.MaxExamples.
func ExampleIDs(traces []int32, traceID func(int32) string) []string {
	ids := make([]string, 0, len(traces))
	for _, t := range traces {
		ids = append(ids, traceID(t))
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) > report.MaxExamples {
		ids = ids[:report.MaxExamples]
	}
	return ids
}

// OptStr is an interned value taken out of its index: a string that may be
// absent. Absent (id -1) is not the same as "", so the figures keyed by it
// group exactly as they would by id within one index.
type OptStr struct {
	S  string
	ok bool
}

// MaxNameCounts bounds the distinct names counted per name: the
// unrecognised span names an observation keeps (its most frequent) and a detection holds in all: a
// dump of high-cardinality names ("GET /users/1234") costs no more than
// this, and the ten most frequent are exact unless a name's spans are
// spread thinly over many observations; the executions per root name
// (Table.ExecNames) are bounded the same.
const MaxNameCounts = 1024
