package report

import (
	"slices"
	"strconv"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// This file is the one table of measures. A row names a figure of the
// Report, says what it counts and which way is better, how the report
// draws it, how a rule reads it and how the gate compares it with a
// baseline. The report's headline sections and the measure table of
// docs/analysis-schema.md (both drawn by analyze/report/render),
// MeasureValue, MeasureNames, and the gate's regressions and diff are all
// read from it: a new measure is its Report field and its row. The table
// is data only: how a row is drawn is its Draw and Show, read by the
// renderers.

// Unit is what a measure counts in.
type Unit string

// The units of measures.
const (
	// UnitRatio is a quotient of two counts: hits / acquires (a fraction,
	// drawn as a percentage), acquires / handshakes.
	UnitRatio Unit = "ratio"
	// UnitCount is a whole number of things (spans, traces, misses).
	UnitCount Unit = "count"
	// UnitMS is milliseconds of span time.
	UnitMS Unit = "ms"
)

// Better says which way a measure improves; the gate only calls a change
// in the other direction a regression.
type Better string

// The directions of "better".
const (
	// BetterHigher: more is better (a hit rate).
	BetterHigher Better = "higher"
	// BetterLower: less is better (misses, latency).
	BetterLower Better = "lower"
	// BetterNeither: a size, not a quality (acquires, traces).
	BetterNeither Better = "neither"
)

// Draw is how a report for people draws a measure's value.
type Draw int

// The formats of a value; each draws "-" for a value without data.
const (
	// DrawInt draws a whole number: 12.
	DrawInt Draw = iota
	// DrawPercent draws a ratio as a percentage with one decimal, 83.3%,
	// or the few more it takes never to read 0% above 0 nor 100% below 1
	// (textfmt.Percent).
	DrawPercent
	// DrawDecimal draws a number with two decimals: 6.00.
	DrawDecimal
	// DrawMS draws milliseconds with three decimals: 899.315.
	DrawMS
)

// BaselineCheck says how the gate compares a measure with its baseline
// (see Tolerances); the zero value never regresses.
type BaselineCheck int

// The baseline checks.
const (
	// BaselineNone: the measure is shown in a diff but never regresses.
	BaselineNone BaselineCheck = iota
	// BaselineDrop: a ratio that may fall by at most Tolerance (absolute)
	// below its baseline; compared only when both sides have data.
	BaselineDrop
	// BaselineGrowth: a count that may grow by at most Tolerance over its
	// baseline (a missing value counts as 0).
	BaselineGrowth
	// BaselineAppear: a count that regresses when it is above 0 where the
	// baseline had 0.
	BaselineAppear
	// BaselineLatency: milliseconds that may grow to Tolerances.LatencyRatio
	// times the baseline, growth below Tolerances.LatencyMinDeltaMS being
	// noise; compared only when both sides have data.
	BaselineLatency
)

// Column places a measure in a headline section of the report for people.
type Column struct {
	// Section is the title of the section that shows the measure; "" when
	// the report shows it elsewhere or not at all.
	Section string
	// Row, in a section with one row per group (latency by operation),
	// names the group; "" in a one-row section.
	Row string
	// Label is the column header.
	Label string
	// Order places the column within its section, lowest first.
	Order int
	// Always draws the value even when the measure has no data for a rule
	// (a reads measure's unexpected count before any request completed).
	Always bool
}

// Measure is one row of the table of measures.
type Measure struct {
	// Name is how a rule, a regression and a diff name the measure:
	// hit_rate, call.p99; for a reads-per-request field, the field
	// (unexpected), named measures.NAME.unexpected.
	Name string
	// Unit is what the value counts in.
	Unit Unit
	// Better is which way the measure improves.
	Better Better
	// Draw is how the report for people draws the value.
	Draw Draw
	// JSON is where the value is in the report's JSON: pool.hit_rate, or
	// for a reads field the key within measures[].
	JSON string
	// Doc says in a sentence what the measure is, for the schema doc.
	Doc string
	// Show places the measure in the report's headline; zero when the
	// headline does not show it.
	Show Column
	// Rule is true when rules, baselines and diff may name the measure
	// (rulefmt.MeasureNames lists it; set from it); false for a figure only the report shows.
	Rule bool
	// Needs are what the writer must show for the figure to be a number
	// at all; Under, what it must show for the number not to be only a
	// lower bound (a writer without them counts fewer); Over, not only an
	// upper bound. Report.FigureOf reads them (figures.go).
	Needs, Under, Over rulefmt.Capability
	// Doubt, when set, says what the spans' own data makes of the figure
	// beyond what the writer shows (a latency series with spans that end
	// before they start): measurable, a bound or not measurable, with
	// why. Report.FigureOf reads it with Needs, Under and Over.
	Doubt func(*Report) FigureState
	// Baseline is how the gate compares the measure with its baseline.
	Baseline BaselineCheck
	// Tolerance is the allowed change of BaselineDrop and BaselineGrowth,
	// read from the gate's tolerances.
	Tolerance func(rulefmt.Tolerances) float64
	// Noun names the measure in a regression's message ("hit rate",
	// "unexplained misses").
	Noun string
	// Value reads a dump-level measure from a report; false when the
	// report has no data for it. Nil for reads fields.
	Value func(*Report) (float64, bool)
	// ReadsValue reads a reads-per-request field from one measure's
	// report. Nil for dump-level measures.
	ReadsValue func(*MeasureReport) (float64, bool)
	// Trials names the count a rate or count is out of (acquires for the
	// hit rate, the floor and the misses, executions for multi-session
	// executions, complete for a reads field): none of them is a figure
	// without trials, and for BaselineDrop, BaselineGrowth and
	// BaselineAppear the gate tests whether the proportion changed, so a
	// few acquires more or less never read as a regression. "" for the
	// other rows.
	Trials string
	// Sample reads a latency row's series sample (Percentiles.Sample) and
	// its count, for the gate's significance test; nil for other rows.
	Sample func(*Report) ([]float64, int)
}

// optional and count adapt report fields to a row's Value.
func optional(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

func count(n int) (float64, bool) { return float64(n), true }

// latencySeries are the latency series of the pool measure, in report
// order: the rule name, the report's label, the series in a report.
var latencySeries = []struct {
	name, label, doc string
	get              func(*LatencyReport) *Percentiles
	needs            rulefmt.Capability // the spans the series times
	under            rulefmt.Capability // without which its count is a lower bound
}{
	{"acquire_hit", "acquire (hit)", "acquire spans that reused a session", func(l *LatencyReport) *Percentiles { return &l.AcquireHit }, rulefmt.CapAcquireSpans, 0},
	{"acquire_miss", "acquire (miss)", "acquire spans that dialed", func(l *LatencyReport) *Percentiles { return &l.AcquireMiss }, rulefmt.CapAcquireSpans, 0},
	{"handshake", "handshake", "handshake spans", func(l *LatencyReport) *Percentiles { return &l.Handshake }, rulefmt.CapHandshakeSpans, 0},
	{"call", "call", "call spans", func(l *LatencyReport) *Percentiles { return &l.Call }, rulefmt.CapCalls, rulefmt.CapRefusedAttempts | rulefmt.CapCallAttempts},
}

// leftOutFigure is what a percentile of latency series p (of doc's spans)
// is worth: not measurable when some of its spans end before they start,
// their durations left out of the samples (they could be any, so the
// percentile of the rest bounds the truth from neither side); else
// measurable. The series' count stays the truth: it counts the samples,
// and LeftOut the spans left out.
func leftOutFigure(p *Percentiles, doc string) FigureState {
	if p.LeftOut == 0 {
		return FigureState{State: Measurable}
	}
	return FigureState{State: NotMeasurable, Why: strconv.Itoa(p.LeftOut) + " of the " + doc + " end before they start: their durations cannot be told, so they are no samples"}
}

// latencyQuantiles are the percentiles of each latency series.
var latencyQuantiles = []struct {
	name string
	get  func(*Percentiles) *float64
}{
	{"p50", func(p *Percentiles) *float64 { return p.P50 }},
	{"p95", func(p *Percentiles) *float64 { return p.P95 }},
	{"p99", func(p *Percentiles) *float64 { return p.P99 }},
}

// The titles of the headline sections of the report for people, as a
// row's Column.Section names them: where a measure is shown is data of
// its row, so the renderers lay the headline out from the table alone.
const (
	SectionPool       = "Pool"
	SectionLatency    = "Latency (ms)"
	SectionExecutions = "Executions"
	SectionReads      = "Reads per request"
	SectionMisses     = "Misses by cause"
)

// measureTable is the table of dump-level measures, in the order rules,
// regressions and diffs list them.
var measureTable = markRuleMeasures(func() []Measure {
	t := []Measure{
		{Name: "hit_rate", Needs: rulefmt.CapAcquires, Under: rulefmt.CapRefusedAttempts,
			Unit: UnitRatio, Better: BetterHigher, Draw: DrawPercent, JSON: "pool.hit_rate",
			Doc:      "Hits / acquires; no data without acquires.",
			Show:     Column{Section: SectionPool, Label: "hit rate", Order: 4},
			Baseline: BaselineDrop, Tolerance: func(t rulefmt.Tolerances) float64 { return t.HitRateDrop }, Noun: "hit rate", Trials: "acquires",
			Doubt: sessionsMerged(UpperBound, true),
			Value: func(r *Report) (float64, bool) { return optional(r.Pool.HitRate) }},
		{Name: "cold_start_floor", Needs: rulefmt.CapAcquires, Under: rulefmt.CapTargetIdentity, Over: rulefmt.CapRefusedAttempts,
			Unit: UnitRatio, Better: BetterLower, Draw: DrawPercent, JSON: "pool.cold_start_floor",
			Doc:  "Distinct (pool scope, cache key) pairs / acquires: a miss rate, the misses no pool can avoid; the best hit rate is 1 − it. Compare excess_misses with 0, not hit_rate with it.",
			Show: Column{Section: SectionPool, Label: "floor", Order: 9}, Trials: "acquires",
			Value: func(r *Report) (float64, bool) { return optional(r.Pool.ColdStartFloor) }},
		{Name: "excess_misses", Needs: rulefmt.CapAcquires, Over: rulefmt.CapTargetIdentity,
			Unit: UnitCount, Better: BetterLower, Draw: DrawInt, JSON: "pool.excess_misses",
			Doc:      "Misses above the cold-start floor.",
			Show:     Column{Section: SectionPool, Label: "excess", Order: 10},
			Baseline: BaselineGrowth, Tolerance: func(t rulefmt.Tolerances) float64 { return float64(t.ExcessMisses) }, Noun: "misses above the cold-start floor", Trials: "acquires",
			Doubt: sessionsMerged(LowerBound, true),
			Value: func(r *Report) (float64, bool) { return count(r.Pool.ExcessMisses) }},
		{Name: "unexplained_misses", Needs: rulefmt.CapAcquires | rulefmt.CapTargetIdentity, Over: rulefmt.CapRefusedAttempts | rulefmt.CapAcquireAttempts,
			Unit: UnitCount, Better: BetterLower, Draw: DrawInt, JSON: "pool.unexplained_misses",
			Doc:      "Misses with no explaining cause (unexplained, or evicted by the idle caps): a session the pool should have reused.",
			Baseline: BaselineGrowth, Tolerance: func(t rulefmt.Tolerances) float64 { return float64(t.UnexplainedMisses) }, Noun: "unexplained misses", Trials: "acquires",
			Doubt: sessionsMerged(NotMeasurable, true),
			Value: func(r *Report) (float64, bool) { return count(Unexplained(r.Pool.MissReasons)) }},
		{Name: "acquires", Needs: rulefmt.CapAcquires, Under: rulefmt.CapRefusedAttempts,
			Unit: UnitCount, Better: BetterNeither, Draw: DrawInt, JSON: "pool.acquires",
			Doc:   "Acquires, hit or miss.",
			Show:  Column{Section: SectionPool, Label: "acquires", Order: 1},
			Value: func(r *Report) (float64, bool) { return count(r.Pool.Acquires) }},
		{Name: "hits", Needs: rulefmt.CapAcquires, Under: rulefmt.CapRefusedAttempts,
			Unit: UnitCount, Better: BetterNeither, Draw: DrawInt, JSON: "pool.hits",
			Doc:   "Acquires that reused an idle session.",
			Show:  Column{Section: SectionPool, Label: "hits", Order: 2},
			Doubt: sessionsMerged(UpperBound, true),
			Value: func(r *Report) (float64, bool) { return count(r.Pool.Hits) }},
		{Name: "misses", Needs: rulefmt.CapAcquires,
			Unit: UnitCount, Better: BetterNeither, Draw: DrawInt, JSON: "pool.misses",
			Doc:   "Acquires that dialed a new session.",
			Show:  Column{Section: SectionPool, Label: "misses", Order: 3},
			Doubt: sessionsMerged(LowerBound, true),
			Value: func(r *Report) (float64, bool) { return count(r.Pool.Misses) }},
		{Name: "handshakes", Needs: rulefmt.CapHandshakes, Under: rulefmt.CapHandshakeSpans,
			Unit: UnitCount, Better: BetterNeither, Draw: DrawInt, JSON: "pool.handshakes",
			Doc:   "Handshake spans.",
			Show:  Column{Section: SectionPool, Label: "handshakes", Order: 5},
			Doubt: sessionsMerged(LowerBound, true),
			Value: func(r *Report) (float64, bool) { return count(r.Pool.Handshakes) }},
		{Name: "acquires_per_handshake", Needs: rulefmt.CapAcquires | rulefmt.CapHandshakes, Under: rulefmt.CapRefusedAttempts,
			Unit: UnitRatio, Better: BetterHigher, Draw: DrawDecimal, JSON: "pool.acquires_per_handshake",
			Doc:   "Acquires / handshakes: calls each dial served; report only.",
			Show:  Column{Section: SectionPool, Label: "per dial", Order: 6},
			Doubt: sessionsMerged(UpperBound, true),
			Value: func(r *Report) (float64, bool) { return optional(r.Pool.AcquiresPerHandshake) }},
		{Name: "scopes", Unit: UnitCount, Better: BetterNeither, Draw: DrawInt, JSON: "pool.scopes",
			Doc:   "Distinct pool scopes; report only.",
			Show:  Column{Section: SectionPool, Label: "scopes", Order: 7},
			Value: func(r *Report) (float64, bool) { return count(r.Pool.Scopes) }},
		{Name: "keys", Needs: rulefmt.CapAcquires, Under: rulefmt.CapTargetIdentity,
			Unit: UnitCount, Better: BetterNeither, Draw: DrawInt, JSON: "pool.keys",
			Doc:   "Distinct (pool scope, cache key) pairs; report only.",
			Show:  Column{Section: SectionPool, Label: "keys", Order: 8},
			Value: func(r *Report) (float64, bool) { return count(r.Pool.Keys) }},
	}
	t = append(t, missCauseRows(t)...)
	t = append(t, []Measure{
		{Name: "executions", Needs: rulefmt.CapCalls,
			Unit: UnitCount, Better: BetterNeither, Draw: DrawInt, JSON: "executions.count",
			Doc:   "Executions with at least one tool call; report only.",
			Show:  Column{Section: SectionExecutions, Label: "executions", Order: 1},
			Value: func(r *Report) (float64, bool) { return count(r.Executions.Count) }},
		{Name: "multi_session_executions", Needs: rulefmt.CapCalls | rulefmt.CapSessionID,
			Unit: UnitCount, Better: BetterLower, Draw: DrawInt, JSON: "executions.multi_session",
			Doc:      "Executions whose tool calls ran on more than one " + spans.AttrSessionID + ".",
			Show:     Column{Section: SectionExecutions, Label: "multi-session", Order: 2},
			Baseline: BaselineAppear, Noun: "execution(s) spread over several " + spans.AttrSessionID, Trials: "executions",
			Doubt: sessionsMerged(LowerBound, false),
			Value: func(r *Report) (float64, bool) { return count(r.Executions.MultiSession) }},
		{Name: "max_sessions_per_execution", Needs: rulefmt.CapCalls | rulefmt.CapSessionID,
			Unit: UnitCount, Better: BetterLower, Draw: DrawInt, JSON: "executions.max_sessions",
			Doc:   "The most sessions one execution used.",
			Show:  Column{Section: SectionExecutions, Label: "max sessions", Order: 3},
			Doubt: sessionsMerged(LowerBound, false),
			Value: func(r *Report) (float64, bool) { return count(r.Executions.MaxSessions) }},
	}...)
	for _, s := range latencySeries {
		t = append(t, Measure{Name: s.name + ".count", Unit: UnitCount, Better: BetterNeither, Draw: DrawInt, Needs: s.needs, Under: s.under,
			JSON: "pool.latency_ms." + s.name + ".count", Doc: "Samples of the " + s.name + " latency: " + s.doc + "; report only.",
			Show:  Column{Section: SectionLatency, Row: s.label, Label: "count", Order: 1},
			Value: func(r *Report) (float64, bool) { return count(s.get(&r.Pool.Latency).Count) }})
		for i, q := range latencyQuantiles {
			t = append(t, Measure{Name: s.name + "." + q.name, Unit: UnitMS, Better: BetterLower, Draw: DrawMS, Needs: s.needs,
				JSON: "pool.latency_ms." + s.name + "." + q.name, Doc: "The " + q.name + " of " + s.doc + ", in milliseconds.",
				Show:     Column{Section: SectionLatency, Row: s.label, Label: q.name, Order: 2 + i},
				Baseline: BaselineLatency, Noun: s.name + "." + q.name + " latency",
				Sample: func(r *Report) ([]float64, int) { p := s.get(&r.Pool.Latency); return p.Sample, p.Count },
				Doubt:  func(r *Report) FigureState { return leftOutFigure(s.get(&r.Pool.Latency), s.doc) },
				Value:  func(r *Report) (float64, bool) { return optional(q.get(s.get(&r.Pool.Latency))) }})
		}
	}
	return t
}(), rulefmt.MeasureNames(nil))

// MissCauseFigure names the figure of the misses of cause (one of
// spans.MissReasons): its row of the measure table and its entry in a
// report's figures.
func MissCauseFigure(cause string) string { return "miss_reasons." + cause }

// sessionsMerged is the Doubt of a figure that counts distinct sessions,
// merged being what it is worth where the writer's session identities may
// have merged (WriterReport.SessionsMerged: two that differ only in a lone
// surrogate read as one), with that reason; measurable elsewhere.
// Merging makes fewer distinct sessions, never more: the sessions an
// execution used, and the executions that used more than one, are lower
// bounds. inferredOnly says the figure counts sessions only where
// acquires are inferred from the calls (no acquire span), each session's
// first call its miss and handshake: a merged session's first call reads
// as a hit, so misses, handshakes and excess misses are lower bounds,
// hits, the hit rate and acquires per handshake upper bounds.
func sessionsMerged(merged Measurability, inferredOnly bool) func(*Report) FigureState {
	return func(r *Report) FigureState {
		if r.Writer == nil || r.Writer.SessionsMerged == "" || inferredOnly && r.Shows().Has(rulefmt.CapAcquireSpans) {
			return FigureState{State: Measurable}
		}
		return FigureState{State: merged, Why: r.Writer.SessionsMerged}
	}
}

// unseenRedialOver and unseenRedialNeeds are what the causes of a miss
// need of acquire_attempts (missCauseRows). An unseen redial is replayed
// as a first attempt: it takes the idle session the pool skipped (the
// one its first attempt just released, with acquire spans) and closes
// it, or finds none; either way it is filed under another cause, and
// the first attempt's lease, which a seen redial marks failed, ends
// clean. The misses are what the spans say, so the causes together
// count the unseen redials too many. cold reads only whether the key is
// known, which the first attempt made it: never the unseen redial's
// cause, and unmoved. concurrent reads only the leases out, which are
// the same: only the unseen redial can add to it, so it is an upper
// bound. unexplained only gains: the redial's own close and each miss
// that finds the skipped session gone read as unexplained where the
// pool's replay read it, or gained it (unexplained_misses' row holds
// acquire_attempts as Over). ttl, after_failure and evicted may lose: a
// later miss reads the close the unseen redial made in place of the
// after_failure its first attempt left, or of the expiry or eviction of
// the session it skipped; so they are not measurable. health_check gains
// only (the close of a redial recorded health_check).
var (
	unseenRedialOver = map[string]rulefmt.Capability{spans.MissConcurrent: rulefmt.CapAcquireAttempts,
		spans.MissHealthCheck: rulefmt.CapAcquireAttempts}
	unseenRedialNeeds = map[string]rulefmt.Capability{spans.MissTTL: rulefmt.CapAcquireAttempts,
		spans.MissAfterFailure: rulefmt.CapAcquireAttempts, spans.MissEvicted: rulefmt.CapAcquireAttempts}
)

// missCauseDocs say what each cause of a miss is, for the schema doc.
var missCauseDocs = map[string]string{
	spans.MissCold:         "its key was one the pool did not know (its first acquire, or the first after the pool forgot it)",
	spans.MissConcurrent:   "another lease or dial of its key was out",
	spans.MissTTL:          "its key's last session sat idle longer than the idle TTL",
	spans.MissRedial:       "it was a second attempt (" + spans.AttrAttempt + " 2 or more), after a reused session was expired",
	spans.MissAfterFailure: "its key's last session was closed on a failed lease or dial",
	spans.MissHealthCheck:  "the pool's health check closed the idle session it found",
	spans.MissEvicted:      "the idle caps closed its key's last session; one of unexplained_misses",
	spans.MissUnexplained:  "an idle session was there to reuse, or nothing removed one; one of unexplained_misses",
}

// missCauseRows are the rows of the misses by cause (pool.miss_reasons),
// one per spans.MissReasons in its order, for the report only. The replay
// attributes a miss by the state of its (pool scope, key) pair, so a
// cause is worth what the pairs are: without target_identity two targets
// read as one pair, and pairs are fewer. A merged pair's first miss is
// also its own pair's, so cold is then a lower bound; a redial is the
// attempt number on the span, whatever the pairs; the other explained
// causes read another target's sessions and may be off either way, so
// they are not measurable; evicted and unexplained are the shares of
// unexplained_misses (t's row) and worth what it is. Without
// acquire_attempts no redial is seen: redial is a lower bound, the others
// as unseenRedialOver and unseenRedialNeeds say. Where acquires are
// inferred from the calls' sessions and two sessions may have read as
// one (sessionsMerged), the second one's first call reads as a hit, not
// the miss it was: a cold miss so lost is only gone (no later acquire
// finds its key less known: a hit makes it known and active as a miss
// does), so cold is a lower bound; the replay then holds a session the
// pool did not, so the other explained causes, and unexplained_misses,
// may be off either way and are not measurable; redial is never read from
// a call.
func missCauseRows(t []Measure) []Measure {
	unexplained := t[slices.IndexFunc(t, func(m Measure) bool { return m.Name == "unexplained_misses" })]
	out := make([]Measure, 0, len(spans.MissReasons))
	for i, cause := range spans.MissReasons {
		m := Measure{Name: MissCauseFigure(cause), Needs: rulefmt.CapAcquires,
			Unit: UnitCount, Better: BetterNeither, Draw: DrawInt, JSON: "pool.miss_reasons." + cause,
			Doc:   "Misses attributed " + cause + ": " + missCauseDocs[cause] + "; report only.",
			Show:  Column{Section: SectionMisses, Label: cause, Order: i + 1},
			Value: func(r *Report) (float64, bool) { return count(r.Pool.MissReasons[cause]) }}
		switch {
		case !spans.IsExplainedMiss(cause):
			m.Needs, m.Under, m.Over, m.Better, m.Doubt = unexplained.Needs, unexplained.Under, unexplained.Over, unexplained.Better, unexplained.Doubt
		case cause == spans.MissCold:
			m.Under, m.Doubt = rulefmt.CapTargetIdentity, sessionsMerged(LowerBound, true)
		case cause == spans.MissRedial:
			m.Under = rulefmt.CapAcquireAttempts
		default:
			m.Needs, m.Doubt = m.Needs|rulefmt.CapTargetIdentity, sessionsMerged(NotMeasurable, true)
		}
		m.Needs, m.Over = m.Needs|unseenRedialNeeds[cause], (m.Over|unseenRedialOver[cause])&^unseenRedialNeeds[cause]
		out = append(out, m)
	}
	return out
}

// readsTable is the table of the fields of a reads-per-request measure, in
// the order rules and diffs list them; a rule names one as
// measures.NAME.FIELD.
var readsTable = markRuleMeasures([]Measure{
	{Name: "unexpected", Unit: UnitCount, Better: BetterLower, Draw: DrawInt, JSON: "unexpected",
		Doc:      "Complete requests whose count differs from expect; no data without a complete request.",
		Show:     Column{Section: SectionReads, Label: "unexpected", Order: 5, Always: true},
		Baseline: BaselineGrowth, Tolerance: func(t rulefmt.Tolerances) float64 { return float64(t.Unexpected) }, Noun: "unexpected requests", Trials: "complete",
		ReadsValue: func(m *MeasureReport) (float64, bool) { return float64(m.Unexpected), m.Complete > 0 }},
	{Name: "incomplete", Unit: UnitCount, Better: BetterLower, Draw: DrawInt, JSON: "incomplete",
		Doc:        "Requests not counted: their trace is not complete yet.",
		Show:       Column{Section: SectionReads, Label: "incomplete", Order: 3},
		ReadsValue: func(m *MeasureReport) (float64, bool) { return count(m.Incomplete) }},
	{Name: "complete", Unit: UnitCount, Better: BetterNeither, Draw: DrawInt, JSON: "complete",
		Doc:        "Requests whose trace is complete, so their reads are counted.",
		Show:       Column{Section: SectionReads, Label: "complete", Order: 2},
		ReadsValue: func(m *MeasureReport) (float64, bool) { return count(m.Complete) }},
	{Name: "requests", Unit: UnitCount, Better: BetterNeither, Draw: DrawInt, JSON: "requests",
		Doc:        "Requests (spans matching the root).",
		Show:       Column{Section: SectionReads, Label: "requests", Order: 1},
		ReadsValue: func(m *MeasureReport) (float64, bool) { return count(m.Requests) }},
	{Name: "expect", Unit: UnitCount, Better: BetterNeither, Draw: DrawInt, JSON: "expect",
		Doc:  "The configured count every complete request should have; report only.",
		Show: Column{Section: SectionReads, Label: "expect", Order: 4},
		ReadsValue: func(m *MeasureReport) (float64, bool) {
			if m.Expect == nil {
				return 0, false
			}
			return count(*m.Expect)
		}},
}, rulefmt.ReadsFieldNames())

// markRuleMeasures sets Rule on the rows of t that names (the rule
// language's measure names, from rulefmt) lists, so which measures a rule may
// compare is said once, where rules are parsed, and returns t.
func markRuleMeasures(t []Measure, names []string) []Measure {
	for i := range t {
		t[i].Rule = slices.Contains(names, t[i].Name)
	}
	return t
}

// Measures returns the table of dump-level measures, in the order rules,
// regressions and diffs list them. The caller owns the slice.
func Measures() []Measure { return slices.Clone(measureTable) }

// ReadsFields returns the table of the fields of a reads-per-request
// measure (a rule names one as measures.NAME.FIELD). The caller owns the
// slice.
func ReadsFields() []Measure { return slices.Clone(readsTable) }

// LookupMeasure finds the row of a measure by the name a rule uses; for
// measures.NAME.FIELD it returns the field's row and NAME. False for a
// name no rule may use.
func LookupMeasure(name string) (m Measure, readsName string, ok bool) {
	if rest, isReads := strings.CutPrefix(name, rulefmt.ReadsPrefix); isReads {
		dot := strings.LastIndexByte(rest, '.')
		if dot < 0 {
			return Measure{}, "", false
		}
		for _, f := range readsTable {
			if f.Rule && f.Name == rest[dot+1:] {
				return f, rest[:dot], true
			}
		}
		return Measure{}, "", false
	}
	for _, m := range measureTable {
		if m.Rule && m.Name == name {
			return m, "", true
		}
	}
	return Measure{}, "", false
}

// MeasureValue returns a dump-level measure of a report by the name a rule
// uses (see [rulefmt.MeasureNames]); false when the report has no data for it (a
// figure the writer's spans cannot show, Report.FigureOf; no
// acquires for a hit rate, no samples for a percentile, no complete request
// for a reads measure's unexpected count) or no such measure exists.
func MeasureValue(r *Report, name string) (float64, bool) {
	m, reads, ok := LookupMeasure(name)
	switch {
	case !ok, UnmeasuredExecutions(r, m), !r.FigureOf(m.Name).Known():
		return 0, false
	case m.ReadsValue == nil:
		return m.Value(r)
	}
	for i := range r.Measures {
		if r.Measures[i].Name == reads {
			return m.ReadsValue(&r.Measures[i])
		}
	}
	return 0, false
}
