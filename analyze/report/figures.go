package report

import (
	"fmt"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// A figure is the truth only where the writer's spans carry what it
// counts. The report says, per figure, which it is: measurable (the
// number is the truth), a lower or upper bound (the truth is at least, or
// at most, the number: a server-side writer never sees an attempt refused
// before a handler, so it counts fewer acquires than there were), or not
// measurable (there is no number to give). FigureOf is the one function
// that decides it, from what the writer shows (Report.Writer), what the
// spans showed of executions (Report.Executions) and what the measure
// needs (its row of the measure table); every output reads it.

// Measurability is what a figure is worth.
type Measurability string

// The measurabilities.
const (
	// Measurable: the number is the truth.
	Measurable Measurability = "measurable"
	// LowerBound: the truth is at least the number.
	LowerBound Measurability = "lower_bound"
	// UpperBound: the truth is at most the number.
	UpperBound Measurability = "upper_bound"
	// NotMeasurable: the spans cannot show the figure; there is no number.
	NotMeasurable Measurability = "not_measurable"
)

// FigureState is one figure's measurability and, unless measurable, why.
type FigureState struct {
	State Measurability `json:"state"`
	Why   string        `json:"why,omitempty"`
}

// Known reports whether the figure has a number at all (measurable or a
// bound).
func (f FigureState) Known() bool { return f.State != NotMeasurable }

// Exact reports whether the figure's number is the truth.
func (f FigureState) Exact() bool { return f.State == Measurable || f.State == "" }

// Certain reports whether every item the figure counts certainly is one:
// the figure is exact, or a lower bound (the spans may hide more of them,
// never show one that is not). An upper bound may count some that are
// not, and an unmeasurable figure counts nothing. A driver that labels
// each item with the figure it counts in (the Collector connector's miss
// causes) may label it so only when this holds.
func (f FigureState) Certain() bool { return f.Exact() || f.State == LowerBound }

// WriterReport says what the writer of the spans can show: the
// vocabulary read, its side (as declared, or as the calls showed it), what
// it parents request spans to, and the capabilities it shows and lacks
// (rulefmt.Capability names).
type WriterReport struct {
	Vocabulary string            `json:"vocabulary"`
	Side       rulefmt.Side      `json:"side"`
	Parenting  rulefmt.Parenting `json:"parenting"`
	// ServerCalls counts the calls a server wrote (server kind, or the
	// caller's address on them).
	ServerCalls int      `json:"server_calls"`
	Shows       []string `json:"shows"`
	Lacks       []string `json:"lacks"`
	// SessionHint, when calls carry no session identity under a user's
	// vocabulary, says which key of the block gives them one.
	SessionHint string `json:"session_hint,omitempty"`
	// IdentityLost, when the spans name their targets but the readers may
	// have read two keys as one (escaped lone surrogates read as U+FFFD),
	// says so: the reason a figure needing target_identity gives, in
	// place of the capability's own (no key at all), which would be wrong.
	IdentityLost string `json:"identity_lost,omitempty"`
	// SessionsMerged, when the calls carry session identities but the
	// readers may have read two of them as one (escaped lone surrogates
	// read as U+FFFD), says so: the reason a figure counting distinct
	// sessions gives for being only a bound, or not measurable
	// (sessionsMergedFigure).
	SessionsMerged string `json:"sessions_merged,omitempty"`
}

// shows is the set of capabilities of w; every capability for a report
// without a writer section (one read back from an older file, taken to be
// measurable as it was), and a later capability (rulefmt.LaterCapabilities)
// for a section naming it in neither list (written before it was one).
func (w *WriterReport) shows() rulefmt.Capability {
	if w == nil {
		return ^rulefmt.Capability(0)
	}
	named := rulefmt.CapabilitiesOf(w.Shows)
	return named | rulefmt.LaterCapabilities&^(named|rulefmt.CapabilitiesOf(w.Lacks))
}

// FigureOf is the one place a figure's measurability is decided: the
// measure's needs against what the writer shows, whether any span of the
// dump was recognised at all (NothingRecognised: no writer, so nothing
// shown) and, for an execution figure, whether the spans tied calls to
// executions. A name no measure
// has is measurable (it claims nothing).
func (r *Report) FigureOf(name string) FigureState {
	m, ok := measureRow(name)
	if !ok {
		return FigureState{State: Measurable}
	}
	f := r.writerFigure(m)
	if m.Doubt != nil {
		f = f.and(m.Doubt(r))
	}
	return f
}

// and is what a figure is worth when f says one thing of it and g, from
// another cause, another: not measurable if either is or if they bound it
// from opposite sides, else the one bound, with every why.
func (f FigureState) and(g FigureState) FigureState {
	switch {
	case g.Exact():
		return f
	case f.Exact():
		return g
	}
	why := f.Why
	if g.Why != f.Why {
		why += "; " + g.Why
	}
	switch {
	case f.State == NotMeasurable || g.State == NotMeasurable:
		return FigureState{State: NotMeasurable, Why: why}
	case f.State != g.State:
		return FigureState{State: NotMeasurable, Why: why + " (it may be off either way)"}
	}
	return FigureState{State: f.State, Why: why}
}

// writerFigure is what measure m is worth by what the writer shows and
// whether the spans tied calls to executions.
func (r *Report) writerFigure(m Measure) FigureState {
	shows := r.Writer.shows()
	var why []string
	if r.Writer != nil && m.Needs != 0 && r.NothingRecognised() {
		why = append(why, "no span of the dump is one a vocabulary reads")
	}
	if strings.HasPrefix(m.JSON, "executions.") && !r.Executions.Measurable {
		why = append(why, r.Executions.WhyNot)
	}
	if lack := m.Needs &^ shows; lack != 0 {
		why = append(why, r.lackWhy(lack))
	}
	under, over := m.Under&^shows, m.Over&^shows
	switch {
	case len(why) > 0:
		return FigureState{State: NotMeasurable, Why: strings.Join(why, "; ")}
	case under != 0 && over != 0:
		return FigureState{State: NotMeasurable, Why: r.lackWhy(under|over) + " (it may be off either way)"}
	case under != 0:
		return FigureState{State: LowerBound, Why: r.lackWhy(under)}
	case over != 0:
		return FigureState{State: UpperBound, Why: r.lackWhy(over)}
	}
	return FigureState{State: Measurable}
}

// lackWhy says why the writer lacks c, with the key to add when a user's
// vocabulary mapped no session identity (what acquires and handshakes
// are inferred from, without pool spans), and the writer's IdentityLost
// as the reason for a target identity the spans name but the readers may
// have merged.
func (r *Report) lackWhy(c rulefmt.Capability) string {
	lost := ""
	if c.Has(rulefmt.CapTargetIdentity) && r.Writer != nil && r.Writer.IdentityLost != "" {
		// The spans name their targets: the capability's own reason (no
		// key at all) would be wrong.
		c &^= rulefmt.CapTargetIdentity
		lost = r.Writer.IdentityLost
	}
	why := c.Why()
	// A session identity is what acquires and handshakes are inferred from.
	if c&(rulefmt.CapSessionID|rulefmt.CapAcquires|rulefmt.CapHandshakes) != 0 && r.Writer != nil && r.Writer.SessionHint != "" {
		why += ": add " + r.Writer.SessionHint
	}
	if why == "" || lost == "" {
		return why + lost
	}
	return why + "; " + lost
}

// FigureAsRead is FigureOf for a report that may have been read back from
// a file: what the analysis that wrote it declared in r.Figures where the
// writer section alone would say less (not measurable where FigureOf has
// a number; a bound where FigureOf says the truth, as for a report whose
// writer section is missing). The gate's baseline checks and comparisons
// ask it.
func (r *Report) FigureAsRead(name string) FigureState {
	f := r.FigureOf(name)
	switch d := r.Figures[name]; {
	case f.Known() && !d.Known(), f.Exact() && !d.Exact():
		return d
	}
	return f
}

// ChangeFigure is what the change from a figure worth base to one worth
// cur (cur's number less base's) is worth: the truth when both are; a
// lower bound when cur is at least its number or base at most its own
// (the truth moved at least as far up, or less far down), an upper bound
// the other way round; not measurable when a side is, or when the two
// bound the change from opposite sides (it may be off either way). Each
// reason says its side, or both sides for one reason of both.
func ChangeFigure(base, cur FigureState) FigureState {
	flip := map[Measurability]Measurability{LowerBound: UpperBound, UpperBound: LowerBound}
	b, c := base, cur
	bSide, cSide := "baseline: ", "current: "
	if !b.Exact() && !c.Exact() && b.Why == c.Why {
		bSide, cSide = "both sides: ", "both sides: "
	}
	if !b.Exact() {
		b = FigureState{State: b.State, Why: bSide + b.Why}
		if to, ok := flip[b.State]; ok {
			b.State = to
		}
	}
	if !c.Exact() {
		c.Why = cSide + c.Why
	}
	f := c.and(b)
	if f.State == "" {
		f.State = Measurable
	}
	return f
}

// DeclareFigures sets r.Figures from FigureOf for every figure of the
// measure table that is not measurable, or only a bound: what the JSON
// carries (a null where there is no number) and a report read back keeps.
func (r *Report) DeclareFigures() {
	r.Figures = map[string]FigureState{}
	for _, m := range measureTable {
		if f := r.FigureOf(m.Name); !f.Exact() {
			r.Figures[m.Name] = f
		}
	}
}

// measureRow finds a dump-level measure's row by name, whether or not
// rules may name it.
func measureRow(name string) (Measure, bool) {
	for _, m := range measureTable {
		if m.Name == name {
			return m, true
		}
	}
	return Measure{}, false
}

// Shows returns what the writer of r's spans can show; every capability
// for a report without a writer section (read back from an older file).
func (r *Report) Shows() rulefmt.Capability { return r.Writer.shows() }

// LacksWhy says why a rule or figure needing need does not apply to r's
// spans; "" when the writer shows all of it.
func (r *Report) LacksWhy(need rulefmt.Capability) string {
	if lack := need &^ r.Shows(); lack != 0 {
		return r.lackWhy(lack)
	}
	return ""
}

// SpanQuantityOf is what a rule's count over its selected spans (of, one
// of rulefmt.SpanQuantities; attribute, distinct's) is worth, as FigureOf
// is for a measure: the gate asks it before a scope's count decides an
// expectation. Escaped lone surrogates, read as U+FFFD, may have made
// two values one, and merging makes fewer distinct values, never more:
// pool_sessions and lost_sessions (a forgotten session is one followed by
// another) and distinct(mcp.session.id) are lower bounds where session
// identities may have merged (WriterReport.SessionsMerged, sessionsMerged
// as the session figures ask), distinct of another attribute wherever
// the inputs held a lone surrogate (the spans say no more of it). count
// counts spans, whatever their values.
func (r *Report) SpanQuantityOf(of, attribute string) FigureState {
	switch {
	case of == rulefmt.QuantityPoolSessions || of == rulefmt.QuantityLostSessions ||
		(of == rulefmt.QuantityDistinct && attribute == spans.AttrSessionID):
		return sessionsMerged(LowerBound, false)(r)
	case of != rulefmt.QuantityDistinct:
		return FigureState{State: Measurable}
	}
	n := 0
	for _, in := range r.Inputs {
		n += in.LoneSurrogates
	}
	if n == 0 {
		return FigureState{State: Measurable}
	}
	return FigureState{State: LowerBound, Why: fmt.Sprintf("the inputs held %d escaped lone UTF-16 surrogates (\\uD800-\\uDFFF without their pair), "+
		"read as U+FFFD: values of %s that differ only in a lone surrogate read as one", n, textfmt.ClipTo(attribute, MaxCell))}
}
