package backend

import (
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// traceFacts is what deciding a trace's owner reads of it.
type traceFacts struct {
	first  int64 // the earliest start of a span this service's find selects, in the window; MaxInt64 none
	before bool  // an earlier service's find selects a span of it in the window
	last   int64 // the latest span end
}

// owners decides, for each trace of a page of service i's range
// [lo, hi), whether this page hands it over: the first service (in the
// query's order) whose find selects one of its spans starting in the
// window, and the range holding the earliest such span. Every trace is so
// handed over once, however many pages the backend returns it to.
func (r *pager) owners(i int, f Find, lo, hi time.Time, td ptrace.Traces) map[pcommon.TraceID]traceFacts {
	q := r.q
	start, end := q.Start.UnixNano(), q.End.UnixNano()
	facts := map[pcommon.TraceID]traceFacts{}
	eachSpan(td, func(svc string, s ptrace.Span) {
		id := s.TraceID()
		t, ok := facts[id]
		if !ok {
			t = traceFacts{first: math.MaxInt64}
		}
		t.last = max(t.last, int64(s.EndTimestamp()))
		at := int64(s.StartTimestamp())
		if at >= start && at < end {
			if q.API.Matches(f, svc, s) {
				t.first = min(t.first, at)
			}
			for _, other := range q.Services[:i] {
				g := f
				g.Service = other
				t.before = t.before || q.API.Matches(g, svc, s)
			}
		}
		facts[id] = t
	})
	for id, t := range facts {
		if t.before || t.first < lo.UnixNano() || t.first >= hi.UnixNano() {
			delete(facts, id)
		}
	}
	return facts
}

// hand gives the sink the traces this page owns (owners), apart from
// those still receiving spans, which it counts.
func (r *pager) hand(i int, f Find, lo, hi time.Time, td ptrace.Traces) error {
	own := r.owners(i, f, lo, hi, td)
	settled := r.q.now().Add(-r.q.Settle).UnixNano()
	b := r.in.Backend
	for id, t := range own {
		if t.last > settled {
			delete(own, id)
			b.Settling++
		}
	}
	b.Traces += len(own)
	n := 0
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool {
				_, keep := own[s.TraceID()]
				if keep {
					r.in.Widen(uint64(s.StartTimestamp()), uint64(s.EndTimestamp()))
					n++
				}
				return !keep
			})
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	if n == 0 {
		return nil
	}
	r.in.Spans += n
	b.Spans += n
	return r.sink.ConsumeTraces(r.in, td)
}
