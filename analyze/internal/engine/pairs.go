package engine

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// PairEvent is one acquire as miss attribution needs it, out of its trace:
// what a trace-routed analyzer (a TraceStream that forwards its pairs)
// hands to the one analyzer that sees every acquire of the acquire's
// (scope, key) pair (a PairStream). A miss's cause depends on the pair's
// earlier acquires, which sit in other traces: routing traces by trace id
// keeps each trace whole on one instance but scatters a pair's acquires
// over all of them, so the traces' instances forward these events, routed
// by pair, and the pair's instance attributes them in time order, exactly
// as one analysis of the whole dump would.
type PairEvent struct {
	// TraceID and SpanID name the acquire (or, where the vocabulary implies a
	// hit, the invocation) span.
	TraceID pcommon.TraceID
	SpanID  pcommon.SpanID
	// Scope is the pool scope and Key the cache key (for an acquire
	// inferred from a call, the server address and port); HasScope and
	// HasKey say whether the span had one ("" is a value).
	Scope, Key       string
	HasScope, HasKey bool
	// Session is set only on an acquire inferred from a call (a
	// vocabulary without pool spans): the session whose first call is the
	// miss that dialed it.
	Session    string
	HasSession bool
	// Start is when the acquire started and LeaseEnd when its lease ended
	// (Unix nanoseconds).
	Start, LeaseEnd int64
	// Hit, Redial, Failed and HealthCheck are the acquire's facts: it
	// reused a session; it is a second attempt; its lease failed; the pool
	// recorded health_check as its miss reason.
	Hit, Redial, Failed, HealthCheck bool
	// Settings is what the acquire's pool scope recorded of its settings
	// (nil: none seen by the forwarding analyzer): the attributing one
	// replays the scope under them, as one analysis of the dump would.
	Settings record.PoolSettings
	// Lacks is what the spans of the acquire's pool scope did not show
	// when the forwarding analyzer forwarded it (its writer's lacks, as
	// target_identity once one of the scope's acquire spans carried no
	// cache key): the attributing analyzer's causes for the scope are
	// worth no more (AcquireCount.Writer).
	Lacks rulefmt.Capability
}

// ForwardPairs makes every later Flush hand its acquires out as
// TraceOutcome.Pairs instead of attributing them: the stream then judges
// only what a trace holds (handshakes, executions, rules), and a
// PairStream that receives every acquire of a pair attributes the misses.
// It is how a fleet routed by trace id gets exact miss causes
// (docs/collector.md).
func (s *TraceStream) ForwardPairs() { s.pairs = pairsForward }

// DropPairs makes every later Flush leave the acquires out altogether:
// neither attributed nor handed out. It is for a driver that measures the
// same traces twice and forwards them from its other stream (the
// connector's traces → metrics leg beside its forwarding traces → logs
// leg), so that one does not build PairEvents to throw away.
func (s *TraceStream) DropPairs() { s.pairs = pairsDrop }

// pairMode is what a TraceStream's Flush does with the acquires.
type pairMode uint8

const (
	pairsAttribute pairMode = iota
	pairsForward
	pairsDrop
)

// takePairs empties the pair stage's buffer, into PairEvents when keep is
// set, and returns them with the handshakes merged since the last call.
func (s *TraceStream) takePairs(keep bool) ([]PairEvent, []PoolCount) {
	p := s.agg.pairs
	var out []PairEvent
	if keep {
		lacks := map[int32]rulefmt.Capability{}
		for _, b := range p.Bufs {
			for i := range b {
				if !b[i].Prewarm { // a PairEvent is an acquire: a forwarded pair reads a miss after a pre-warm as cold
					pe := s.agg.exportEvent(&b[i])
					pe.Lacks = s.agg.lacksOf(b[i].Scope, lacks)
					out = append(out, pe)
				}
			}
		}
	}
	p.Bufs, p.MinStart = p.Bufs[:0], math.MaxInt64
	_, handshakes := s.agg.takeCounts() // no acquire was attributed
	return out, handshakes
}

// lacksOf is what the spans of scope do not show (writerOf), memoized in
// memo for one batch of events.
func (a *aggregate) lacksOf(scope int32, memo map[int32]rulefmt.Capability) rulefmt.Capability {
	c, ok := memo[scope]
	if !ok {
		if w := a.writerOf(scope); w != nil {
			c = rulefmt.CapabilitiesOf(w.Lacks)
		}
		memo[scope] = c
	}
	return c
}

// exportEvent turns ev, keyed into a's string table, into a PairEvent.
func (a *aggregate) exportEvent(ev *record.Acquire) PairEvent {
	pe := PairEvent{
		TraceID: ev.Trace, Start: ev.Start, LeaseEnd: ev.LeaseEnd,
		Hit: ev.Hit, Redial: ev.Redial, Failed: ev.Failed, HealthCheck: ev.Health,
	}
	binary.BigEndian.PutUint64(pe.SpanID[:], ev.Span)
	if ev.Scope >= 0 {
		pe.Scope, pe.HasScope = a.strs[ev.Scope], true
	}
	if ev.Key >= 0 {
		pe.Key, pe.HasKey = a.strs[ev.Key], true
	}
	if ev.Session >= 0 {
		pe.Session, pe.HasSession = a.strs[ev.Session], true
	}
	if ps, mixed := a.recordedSettings(ev.Scope); !mixed {
		pe.Settings = ps
	}
	return pe
}

// importEvent is exportEvent's inverse, interning the strings into a.
func (a *aggregate) importEvent(pe *PairEvent) record.Acquire {
	ev := record.Acquire{
		Trace: pe.TraceID, Span: binary.BigEndian.Uint64(pe.SpanID[:]),
		Start: pe.Start, LeaseEnd: max(pe.LeaseEnd, pe.Start),
		At: -1, Scope: -1, Key: -1, Session: -1,
		Hit: pe.Hit, Redial: pe.Redial, Failed: pe.Failed, Health: pe.HealthCheck,
	}
	if pe.HasScope {
		ev.Scope = a.intern(pe.Scope)
	}
	if pe.HasKey {
		ev.Key = a.intern(pe.Key)
	}
	if pe.HasSession {
		ev.Session = a.intern(pe.Session)
	}
	if pe.Settings != nil {
		a.noteRecorded(ev.Scope, pe.Settings)
	}
	return ev
}

// noteRecorded notes ps as recorded by scope, as the vocabulary stage
// notes an acquire span's (recordSettings).
func (a *aggregate) noteRecorded(scope int32, ps record.PoolSettings) {
	var vals [len(spans.PoolSettingsAttrs)]int32
	for i, k := range spans.PoolSettingsAttrs {
		vals[i] = -1
		if v, ok := ps[k]; ok {
			vals[i] = a.intern(v)
		}
	}
	record.NoteSettings(a.settings, scope, a.intern(record.SettingsText(vals, a.strs)))
}

// PairStream attributes the misses of forwarded acquires (PairEvent), pair
// by pair in time order, with the pair stage of every other analysis: fed
// every acquire of its pairs, its counts equal a batch run's. The driver
// decides when an acquire can no longer be preceded by one still on its
// way (Attribute's before): the Collector connector holds each acquire for
// its wait on the wall clock. A PairStream is not safe for concurrent use.
type PairStream struct {
	agg *aggregate
}

// NewPairStream returns an empty stream attributing with cfg's idle TTL:
// that of the analyzers that forward to it (the attribution needs no
// vocabulary: the events carry what it reads).
func NewPairStream(cfg rulefmt.Config) (*PairStream, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	s := &PairStream{agg: newAggregate(cfg.WithDefaults())}
	s.agg.scopeLacks = map[int32]rulefmt.Capability{}
	return s, nil
}

// Add buffers events until an Attribute reaches their start. It does not
// keep evs.
func (s *PairStream) Add(evs []PairEvent) {
	if len(evs) == 0 {
		return
	}
	out := make([]record.Acquire, len(evs))
	for i := range evs {
		out[i] = s.agg.importEvent(&evs[i])
		if evs[i].Lacks != 0 {
			s.agg.scopeLacks[out[i].Scope] |= evs[i].Lacks
		}
	}
	s.agg.pairs.Add(out)
}

// Attribute attributes every buffered acquire that started before before
// (Unix nanoseconds; math.MaxInt64 for all) and returns what they add, by
// pool: acquires by hit and cause, and for inferred acquires the handshakes (a
// session's first call).
func (s *PairStream) Attribute(before int64) ([]AcquireCount, []PoolCount) {
	s.agg.pairs.Advance(before)
	return s.agg.takeCounts()
}

// Pending counts the acquires that wait for an Attribute.
func (s *PairStream) Pending() int { return s.agg.pairs.Pending() }

// LateAcquires counts the acquires attributed after a later acquire of
// their pair had been: their cause may differ from a batch run's.
func (s *PairStream) LateAcquires() int { return s.agg.pairs.Late }

// attributeAll attributes every buffered acquire and returns the counts.
func (a *aggregate) attributeAll() ([]AcquireCount, []PoolCount) {
	a.pairs.Advance(math.MaxInt64)
	return a.takeCounts()
}
