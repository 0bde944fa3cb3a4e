package report

import (
	"fmt"

	"github.com/mcptrace/mcptrace/spans"
)

// The headline's figures are drawn again broken down: per pool scope
// (pool.by_scope, the misses by cause of each scope too) and per protocol
// revision (by_protocol); the traces holding an unexplained miss
// (pool.unexplained_examples) name where that figure's misses are. A
// share is worth what its figure is worth, and is a number only where the
// figure is: this table says which figure each share breaks down, and
// BreakdownOf decides what it is worth, so that the JSON (a null), the
// table and Markdown ("—", "≥", "≤") and the HTML page agree with the
// headline.

// Breakdown is one share of a figure in the report's JSON.
type Breakdown struct {
	// Figure is the measure the share breaks down (a measure table name).
	Figure string
	// JSON is where the share is: keys from the top, "[]" for every
	// element of an array ("pool.by_scope[].hit_rate").
	JSON string
	// spanCounts marks by_protocol's counts of acquire spans, a number
	// only where the acquire spans are every acquire (BreakdownOf).
	spanCounts bool
}

// breakdownTable lists every share of a figure the report holds.
var breakdownTable = func() []Breakdown {
	var out []Breakdown
	for _, f := range []string{"acquires", "hits", "misses", "hit_rate", "handshakes", "keys", "cold_start_floor", "excess_misses"} {
		out = append(out, Breakdown{Figure: f, JSON: "pool.by_scope[]." + f})
	}
	for _, c := range spans.MissReasons {
		out = append(out, Breakdown{Figure: MissCauseFigure(c), JSON: "pool.by_scope[].miss_reasons." + c})
	}
	// A trace listed is one holding a miss the unexplained count counts.
	out = append(out, Breakdown{Figure: MissCauseFigure(spans.MissUnexplained), JSON: "pool.unexplained_examples"})
	out = append(out, Breakdown{Figure: "call.count", JSON: "by_protocol[].calls"})
	for _, f := range []string{"acquires", "hits", "misses", "hit_rate"} {
		out = append(out, Breakdown{Figure: f, JSON: "by_protocol[]." + f, spanCounts: true})
	}
	return out
}()

// Breakdowns returns the table of shares; the caller owns the slice.
func Breakdowns() []Breakdown { return append([]Breakdown(nil), breakdownTable...) }

// BreakdownOf is what one share is worth: its figure's worth
// (FigureOf), and for by_protocol's acquires, hits, misses and hit rate,
// not measurable when they do not cover every acquire. They count acquire
// spans by the revision on them; a writer that writes one only on a miss
// (acquire-on-miss: a hit is an invocation without one) or none at all
// (the acquires inferred from calls) leaves acquires no revision can be
// read from, and the per-revision hit rate would then be a wrong number.
// A report read back has the shares it wrote as null, and so reads the
// same.
func (r *Report) BreakdownOf(b Breakdown) FigureState {
	f := r.FigureOf(b.Figure)
	if !f.Known() || !b.spanCounts {
		return f
	}
	spansCounted := 0
	for _, g := range r.ByProtocol {
		spansCounted += g.Acquires
	}
	if spansCounted == r.Pool.Acquires {
		return f
	}
	return FigureState{State: NotMeasurable, Why: fmt.Sprintf("per revision only acquire spans are counted, and %d of the %d acquires have one "+
		"(the others are hits without an acquire span, or acquires inferred from calls)", spansCounted, r.Pool.Acquires)}
}

// ShareOf is BreakdownOf for the share at path, as the table of shares
// spells it ("by_protocol[].hit_rate", "pool.by_scope[].miss_reasons.ttl"),
// or FigureOf for the figure of the measure table at path
// ("pool.miss_reasons.ttl"): what the renderers ask of a cell. A path
// that is neither is measurable (it claims nothing).
func (r *Report) ShareOf(path string) FigureState {
	for _, b := range breakdownTable {
		if b.JSON == path {
			return r.BreakdownOf(b)
		}
	}
	for _, m := range measureTable {
		if m.JSON == path {
			return r.FigureOf(m.Name)
		}
	}
	return FigureState{State: Measurable}
}
