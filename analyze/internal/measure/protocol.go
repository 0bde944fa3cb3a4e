package measure

import (
	"cmp"
	"slices"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/report"
)

// ProtoFigures is one protocol revision's share of the by_protocol figures
// over some whole traces: mergeable, since every count is per trace and the
// cold starts are a sketch.
type ProtoFigures struct {
	acquires, hits, misses, calls, traces int
	sessions                              bool // a call of the revision carried a session id
	Cold                                  Sketch
}

// Merge adds o's figures to g.
func (g *ProtoFigures) Merge(o *ProtoFigures) {
	g.acquires += o.acquires
	g.hits += o.hits
	g.misses += o.misses
	g.calls += o.calls
	g.traces += o.traces
	g.sessions = g.sessions || o.sessions
	g.Cold.Merge(&o.Cold)
}

// ProtocolFigures groups the explicit acquires, handshakes and calls by
// their protocol revision; an absent revision is its own group, apart from
// an empty one. An acquire is a hit here as everywhere: as the vocabulary
// stage decided (its hit attribute, or no handshake under it when the
// attribute is absent or no boolean).
func ProtocolFigures(e *record.Table) map[record.OptStr]*ProtoFigures {
	// Calls come each trace's together, so a group counts a trace when its
	// first call there comes: no set of traces per group.
	type acc struct {
		ProtoFigures
		lastTrace int32
	}
	groups := map[int32]*acc{}
	get := func(ver int32) *acc {
		g, ok := groups[ver]
		if !ok {
			g = &acc{lastTrace: -1}
			groups[ver] = g
		}
		return g
	}
	for _, a := range e.Spans {
		g := get(a.Revision)
		g.acquires++
		if a.Hit {
			g.hits++
		} else {
			g.misses++
		}
	}
	for _, h := range e.Handshakes {
		if !h.Prewarm { // a cold start no caller waited for
			get(h.Revision).Cold.Add(durOf(h.Start, h.End, h.NoDuration))
		}
	}
	for _, c := range e.Calls {
		g := get(c.Revision)
		g.calls++
		if g.lastTrace != c.Trace {
			g.lastTrace = c.Trace
			g.traces++
		}
		if c.Session >= 0 {
			g.sessions = true
		}
	}
	out := make(map[record.OptStr]*ProtoFigures, len(groups))
	for ver, g := range groups {
		out[e.Opt(ver)] = &g.ProtoFigures
	}
	return out
}

// ProtocolReports renders merged per-revision figures in version order (""
// first). It returns an empty slice when there are none.
func ProtocolReports(groups map[record.OptStr]*ProtoFigures) []report.ProtocolReport {
	out := make([]report.ProtocolReport, 0, len(groups))
	for ver, g := range groups {
		r := report.ProtocolReport{
			ProtocolVersion: ver.S,
			Traces:          g.traces,
			Calls:           g.calls,
			Acquires:        g.acquires,
			Hits:            g.hits,
			Misses:          g.misses,
			HitRate:         ratio(g.hits, g.acquires),
			ColdStart:       g.Cold.Percentiles(),
		}
		r.Sessionless = report.IsSessionlessProtocol(r.ProtocolVersion) || (r.ProtocolVersion != "" && r.Calls > 0 && !g.sessions)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b report.ProtocolReport) int { return cmp.Compare(a.ProtocolVersion, b.ProtocolVersion) })
	return out
}
