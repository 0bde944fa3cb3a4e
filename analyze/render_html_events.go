package analyze

import (
	"fmt"

	"github.com/mcptrace/mcptrace/spans"
)

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

// AcquireEvents returns every acquire of the index under cfg's profile,
// attributed exactly as [Analyze] attributes them, sorted by scope, then
// time. It is pure like Analyze, and costs one more pass of the pool
// measure over the index.
func AcquireEvents(idx *Index, cfg Config) ([]AcquireEvent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("acquire events: %w", err)
	}
	cfg = cfg.withDefaults()
	v := newVocab(idx, cfg)
	p := newPoolAcc(v, cfg, &latencyAcc{})
	p.collect()
	p.attribute()
	x := v.x

	// Sessions the dump names away from the acquire span: the handshake
	// child of a miss, and the calls of each invocation (start, session).
	hsSession := map[int32]int32{}
	type call struct {
		start   int64
		session int32
	}
	calls := map[int32][]call{}
	for _, i := range x.order {
		s := x.sp(i)
		switch {
		case s.name == v.handshake && s.parent >= 0:
			if val, ok := x.attrVal(i, v.kSession); ok {
				hsSession[s.parent] = val
			}
		case v.isCall(i):
			val, ok := x.attrVal(i, v.kSession)
			if !ok {
				continue
			}
			// The call's invocation: its nearest invoke ancestor, within a
			// few levels (the pool nests call_tool directly under invoke).
			inv := s.parent
			for depth := 0; inv >= 0 && x.sp(inv).name != v.invoke && depth < 4; depth++ {
				inv = x.sp(inv).parent
			}
			if inv >= 0 {
				calls[inv] = append(calls[inv], call{s.start, val})
			}
		}
	}

	out := make([]AcquireEvent, 0, len(p.events))
	for _, ev := range p.events {
		s := x.sp(ev.span)
		e := AcquireEvent{
			Start:   s.start,
			End:     s.end,
			Scope:   v.valueString(ev.scope),
			Hit:     ev.hit,
			Implied: s.name != v.acquire,
			TraceID: x.traceID(s.trace),
			SpanID:  fmt.Sprintf("%016x", s.id),
		}
		if !ev.hit {
			e.Cause = spans.MissReasons[ev.reason]
		}
		session := int32(-1)
		if val, ok := x.attrVal(ev.span, v.kSession); ok {
			session = val
		} else if val, ok := hsSession[ev.span]; ok {
			session = val
		} else if ev.parent >= 0 {
			best := int64(-1)
			for _, c := range calls[ev.parent] {
				if c.start >= ev.start && c.start <= ev.leaseEnd && (best < 0 || c.start < best) {
					best, session = c.start, c.session
				}
			}
		}
		e.Session = v.valueString(session)
		out = append(out, e)
	}
	sortEvents(out)
	return out, nil
}

// HandshakeEvents returns every handshake span of the index, sorted by
// scope, then time.
func HandshakeEvents(idx *Index, cfg Config) ([]HandshakeEvent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("handshake events: %w", err)
	}
	cfg = cfg.withDefaults()
	v := newVocab(idx, cfg)
	x := v.x
	var out []HandshakeEvent
	if v.handshake < 0 {
		return out, nil
	}
	for _, i := range x.order {
		s := x.sp(i)
		if s.name != v.handshake {
			continue
		}
		e := HandshakeEvent{
			Start:   s.start,
			End:     s.end,
			Scope:   v.valueString(v.scopeOf(i)),
			Failed:  s.status == statusError,
			TraceID: x.traceID(s.trace),
			SpanID:  fmt.Sprintf("%016x", s.id),
		}
		if val, ok := x.attrVal(i, v.kSession); ok {
			e.Session = x.vals[val]
		}
		out = append(out, e)
	}
	sortHandshakes(out)
	return out, nil
}
