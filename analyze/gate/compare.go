package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// Verdict is how the gate judges one measure of a run against its
// baseline. `mcptrace diff` and `mcptrace check --baseline` both print
// Compare's rows, so they never disagree.
type Verdict string

// The verdicts of a compared measure.
const (
	// VerdictRegression: the measure got worse beyond its tolerance and
	// the change is significant (p <= Alpha). Only this fails a check.
	VerdictRegression Verdict = "regression"
	// VerdictImprovement: it got better beyond its tolerance, significantly.
	VerdictImprovement Verdict = "improvement"
	// VerdictSame: no change the data can tell from noise, or a change
	// within the tolerance; Row.Why gives the test's p and sample sizes.
	VerdictSame Verdict = "~"
	// VerdictNotMeasurable: a side has no figure (no acquires, no samples,
	// executions not measurable, a figure the spans cannot show), or is
	// only a bound that lets the truth have moved less than the figures;
	// Row.Why says which side and why. Never a failure.
	VerdictNotMeasurable Verdict = "not measurable"
	// VerdictNotJudged: a size (acquires, keys), shown beside the others
	// but never compared.
	VerdictNotJudged Verdict = "not judged"
)

// Alpha is the significance level of every comparison, benchstat's: a
// change whose p-value is above it is noise (VerdictSame), whatever its
// size. Two runs of the same code differ by chance; with a handful of
// samples a p95 can double by chance alone.
const Alpha = 0.05

// MaxTrials bounds the outcomes per side the proportion test ranks: a side
// of more acquires is scaled down to this many, keeping its proportion,
// so a run of millions costs what a run of ten thousand does (and at ten
// thousand the test already finds a change of a point or two).
const MaxTrials = 10000

// thresholds are benchmath's settings for Alpha.
var thresholds = benchmath.Thresholds{CompareAlpha: Alpha}

// Row is one measure of two runs and the gate's verdict on it: a line of
// `mcptrace diff` and of `mcptrace check --baseline`, in every format.
type Row struct {
	// Measure is the measure's rule name (hit_rate, call.p99,
	// measures.NAME.unexpected).
	Measure string `json:"measure"`
	// Baseline and Current are its figures; null for a side without one.
	Baseline *float64 `json:"baseline"`
	Current  *float64 `json:"current"`
	// Verdict is the judgement; Regressed is Verdict == regression.
	Verdict   Verdict `json:"verdict"`
	Regressed bool    `json:"regressed"`
	// Why says what the verdict rests on: the test's p-value and sample
	// sizes, the tolerance, or why a side is not measurable.
	Why string `json:"why"`
	// P is the two-sided p-value of the Mann-Whitney U test of the two
	// sides; null when no test ran.
	P *float64 `json:"p"`
	// NBaseline and NCurrent are the sizes of the samples tested (latency
	// samples, or acquires, executions or requests for a rate or count).
	NBaseline int `json:"n_baseline"`
	NCurrent  int `json:"n_current"`
	// Allowed and Message say, for a regression, what the tolerance
	// permitted and what happened; "" otherwise.
	Allowed string `json:"allowed"`
	Message string `json:"message"`
	// BaselineFigure, CurrentFigure and ChangeFigure say what the two
	// figures and the change between them (current less baseline) are
	// worth: the truth (measurable), only a bound of it, or not
	// measurable (a side without a figure, or a change that sides bound
	// from opposite ends), with why. A figure drawn without its worth
	// would pass a bound off as the truth.
	BaselineFigure report.FigureState `json:"baseline_figure"`
	CurrentFigure  report.FigureState `json:"current_figure"`
	ChangeFigure   report.FigureState `json:"change_figure"`
}

// Regression is one measure that got worse than its baseline allows: a
// Row whose verdict is regression, in the shape the check's JSON lists.
type Regression struct {
	// Measure is the measure's rule name (hit_rate, call.p99,
	// measures.NAME.unexpected, ...).
	Measure  string  `json:"measure"`
	Baseline float64 `json:"baseline"`
	Current  float64 `json:"current"`
	// Allowed says what the tolerance permitted.
	Allowed string `json:"allowed"`
	// Message says it in a sentence, with the test's p-value.
	Message string `json:"message"`
	// BaselineFigure, CurrentFigure and ChangeFigure say what Baseline,
	// Current and the change between them are worth, as in Row: a
	// regression stands on bounds only when the truth moved at least as
	// far, but its figures are still only bounds.
	BaselineFigure report.FigureState `json:"baseline_figure"`
	CurrentFigure  report.FigureState `json:"current_figure"`
	ChangeFigure   report.FigureState `json:"change_figure"`
}

// Compare judges every measure of cur against base: one row per measure
// of the table of measures a rule may name (the pool figures, executions,
// latency percentiles), then the reads measures of either side, in the
// order rules list them. A measure regresses only when it moved the worse
// way beyond tol and a Mann-Whitney U test (benchmath.AssumeNothing) finds
// the change significant at Alpha: on the latency samples for a
// percentile, on the 0/1 outcomes of the acquires (executions, requests)
// for a rate or count. A side without a figure makes the row not
// measurable, never a regression.
func Compare(base, cur *report.Report, tol rulefmt.Tolerances) []Row {
	rows := []Row{}
	for _, m := range report.Measures() {
		if m.Rule {
			rows = append(rows, compareRow(m, m.Name, dumpSide(base, m), dumpSide(cur, m), tol))
		}
	}
	for _, name := range readsNames(base, cur) {
		for _, f := range report.ReadsFields() {
			if !f.Rule {
				continue
			}
			f.Noun = "measure " + name + ": " + f.Noun
			rows = append(rows, compareRow(f, readsPrefix+name+"."+f.Name, readsSide(base, name, f), readsSide(cur, name, f), tol))
		}
	}
	return rows
}

// Regressions returns the regressions of cur against base: the rows of
// Compare whose verdict is regression.
func Regressions(base, cur *report.Report, tol rulefmt.Tolerances) []Regression {
	return RegressionsOf(Compare(base, cur, tol))
}

// RegressionsOf returns the rows that regressed, in order, as Regressions.
func RegressionsOf(rows []Row) []Regression {
	out := []Regression{}
	for _, r := range rows {
		if r.Verdict == VerdictRegression {
			out = append(out, Regression{Measure: r.Measure, Baseline: *r.Baseline, Current: *r.Current, Allowed: r.Allowed, Message: r.Message,
				BaselineFigure: r.BaselineFigure, CurrentFigure: r.CurrentFigure, ChangeFigure: r.ChangeFigure})
		}
	}
	return out
}

// readsNames lists the reads measures of base then the new ones of cur.
func readsNames(base, cur *report.Report) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range []*report.Report{base, cur} {
		for _, m := range r.Measures {
			if !seen[m.Name] {
				seen[m.Name] = true
				out = append(out, m.Name)
			}
		}
	}
	return out
}

// side is one run's figure of a measure and what its test needs.
type side struct {
	v      float64
	ok     bool
	why    string    // why there is no figure, when !ok
	trials int       // what a rate or count is out of (Measure.Trials)
	sample []float64 // a latency row's sample
	count  int       // a latency row's series size
	// figure is what v is worth (report.Report.FigureOf): the truth, or
	// only a bound of it.
	figure report.FigureState
}

// dumpSide reads a dump-level measure m of r: no figure where the spans
// cannot show it (report.Report.FigureAsRead), else its value and what it is worth.
func dumpSide(r *report.Report, m report.Measure) side {
	if report.UnmeasuredExecutions(r, m) {
		return side{why: r.Executions.NotMeasurableText()}
	}
	f := r.FigureAsRead(m.Name)
	if !f.Known() {
		return side{why: f.Why}
	}
	v, ok := m.Value(r)
	s := side{v: v, ok: ok, figure: f}
	if m.Sample != nil {
		s.sample, s.count = m.Sample(r)
	}
	if m.Trials != "" {
		for _, t := range report.Measures() {
			if t.Name == m.Trials {
				n, _ := t.Value(r)
				s.trials = int(n)
			}
		}
	}
	return s.explain(m)
}

// readsSide reads field f of the reads measure name of r.
func readsSide(r *report.Report, name string, f report.Measure) side {
	for i := range r.Measures {
		mr := &r.Measures[i]
		if mr.Name != name {
			continue
		}
		v, ok := f.ReadsValue(mr)
		s := side{v: v, ok: ok}
		for _, t := range report.ReadsFields() {
			if t.Name == f.Trials {
				n, _ := t.ReadsValue(mr)
				s.trials = int(n)
			}
		}
		return s.explain(f)
	}
	return side{why: "no measure " + textfmt.QuoteInput(name)}
}

// worth is what s's figure is worth (report.Report.FigureAsRead): not
// measurable, with why, when s has none.
func (s side) worth() report.FigureState {
	switch {
	case !s.ok:
		return report.FigureState{State: report.NotMeasurable, Why: s.why}
	case s.figure.Exact():
		return report.FigureState{State: report.Measurable}
	}
	return s.figure
}

// explain says why s has no figure of m; a rate or count out of no
// trials (no acquires) has none either.
func (s side) explain(m report.Measure) side {
	none := "no data"
	switch {
	case m.Sample != nil:
		series, _, _ := strings.Cut(m.Name, ".")
		none = "no " + series + " samples"
	case m.Trials == "complete":
		none = "no complete request"
	case m.Trials != "":
		none = "no " + m.Trials
	}
	if s.ok && m.Trials != "" && s.trials <= 0 {
		s.ok = false
	}
	if !s.ok {
		s.why = none
	}
	return s
}

// compareRow judges measure m, named name, from its two sides.
func compareRow(m report.Measure, name string, b, c side, tol rulefmt.Tolerances) Row {
	row := Row{Measure: name, BaselineFigure: b.worth(), CurrentFigure: c.worth()}
	row.ChangeFigure = report.ChangeFigure(row.BaselineFigure, row.CurrentFigure)
	if b.ok {
		row.Baseline = &b.v
	}
	if c.ok {
		row.Current = &c.v
	}
	switch {
	case !b.ok || !c.ok:
		row.Verdict, row.Why = VerdictNotMeasurable, notMeasurable(b, c)
		return row
	case m.Baseline == report.BaselineNone:
		row.Verdict = VerdictNotJudged
		return row
	}
	t := significance(m, b, c)
	row.NBaseline, row.NCurrent = t.n1, t.n2
	ch := change(m, b, c, tol)
	if t.ran && t.p <= Alpha && m.Sample != nil && (ch.worse || ch.better) {
		// A run's calls share its machine: a busy run is slower in every
		// call, significantly so. A latency regresses only when it is
		// significantly slower than its tolerance allows, not merely slower.
		e := beyondTolerance(b, c, tol, ch.worse)
		if e.p > Alpha {
			row.P = &t.p
			row.Verdict, row.Why = VerdictSame, fmt.Sprintf("changed (%s) but not significantly beyond the tolerance (p=%.3f)", t, e.p)
			return row
		}
		t = e
	}
	if t.ran {
		row.P = &t.p
	}
	row.setVerdict(t, ch)
	row.unlessBounds(b, c)
	return row
}

// unlessBounds makes a regression or an improvement not measurable when
// a side is only a bound (side.figure) that lets the truth have moved
// less than the figures did: a change up stands only when the change is
// the truth or a lower bound of it (report.ChangeFigure: the current
// truth at least its figure, the baseline's at most its own), a change
// down only when it is the truth or an upper bound. So a bound never
// fails a check on a change the spans cannot tell.
func (row *Row) unlessBounds(b, c side) {
	if row.Verdict == VerdictSame {
		row.unlessChangeKnown()
		return
	}
	if row.Verdict != VerdictRegression && row.Verdict != VerdictImprovement {
		return
	}
	switch row.ChangeFigure.State {
	case report.Measurable:
		return
	case report.LowerBound:
		if c.v >= b.v {
			return
		}
	case report.UpperBound:
		if c.v < b.v {
			return
		}
	}
	// The bound each side may be and keep its truth at least as far from
	// the other side as its figure is.
	bAway, cAway := report.UpperBound, report.LowerBound
	if c.v < b.v {
		bAway, cAway = cAway, bAway
	}
	var why []string
	for _, s := range []struct {
		name string
		f    report.FigureState
		away report.Measurability
	}{{"baseline", b.figure, bAway}, {"current", c.figure, cAway}} {
		if !s.f.Exact() && s.f.State != s.away {
			why = append(why, s.name+" is "+boundWords[s.f.State]+": "+s.f.Why)
		}
	}
	row.Verdict, row.Regressed, row.Allowed, row.Message = VerdictNotMeasurable, false, "", ""
	row.Why = strings.Join(why, "; ") + "; the truth may not have changed as far"
}

// unlessChangeKnown makes a same verdict not measurable when the change
// is not the truth (report.ChangeFigure): a bound of it leaves the truth
// free to have moved past the tolerance on its open side, and a change
// between bounds either way, so "no change beyond the tolerance" is what
// the spans cannot tell; never a failure either.
func (row *Row) unlessChangeKnown() {
	if row.ChangeFigure.Exact() {
		return
	}
	worth := "not measurable"
	if row.ChangeFigure.State != report.NotMeasurable {
		worth = "only a " + render.StateWords(row.ChangeFigure.State)
	}
	row.Verdict = VerdictNotMeasurable
	row.Why = "the change is " + worth + ", " + row.ChangeFigure.Why + ": the truth may have moved past the tolerance"
}

// boundWords say what a bound is, beside its figure.
var boundWords = map[report.Measurability]string{report.LowerBound: "at least its figure (≥)", report.UpperBound: "at most its figure (≤)"}

// setVerdict sets the row's verdict from its significance test t and its
// change ch: the same unless t found a difference, then a regression or an
// improvement as ch moved past its tolerance, else the same within it.
func (row *Row) setVerdict(t test, ch shift) {
	switch {
	case !t.ran || t.p > Alpha:
		row.Verdict, row.Why = VerdictSame, t.String()
	case ch.worse:
		row.Verdict, row.Regressed, row.Why = VerdictRegression, true, t.String()
		row.Allowed, row.Message = ch.allowed, ch.message+" ("+t.String()+")"
	case ch.better:
		row.Verdict, row.Why = VerdictImprovement, t.String()
	default:
		row.Verdict, row.Why = VerdictSame, "within tolerance, "+t.String()
	}
}

// beyondTolerance tests a latency row against the edge of its tolerance:
// c's sample against b's with every duration moved as far as tol allows
// (the larger of LatencyRatio times it and LatencyMinDeltaMS more; for an
// improvement, the smaller of it divided and less). p is above Alpha, 1
// when c's median is not past the edge's, unless c is significantly past
// it.
func beyondTolerance(b, c side, tol rulefmt.Tolerances, worse bool) test {
	edge := make([]float64, len(b.sample))
	for i, v := range b.sample {
		if worse {
			edge[i] = max(v*tol.LatencyRatio, v+tol.LatencyMinDeltaMS)
		} else {
			edge[i] = min(v/tol.LatencyRatio, v-tol.LatencyMinDeltaMS)
		}
	}
	s1, s2 := benchmath.NewSample(edge, &thresholds), benchmath.NewSample(slices.Clone(c.sample), &thresholds)
	cmp := benchmath.AssumeNothing.Compare(s1, s2)
	m1, m2 := benchmath.AssumeNothing.Summary(s1, 1-Alpha).Center, benchmath.AssumeNothing.Summary(s2, 1-Alpha).Center
	if worse && m2 <= m1 || !worse && m2 >= m1 {
		cmp.P = 1
	}
	return test{ran: true, p: math.Min(cmp.P, 1), n1: cmp.N1, n2: cmp.N2, unit: "samples", against: " beyond the tolerance"}
}

// notMeasurable says which sides lack a figure, and why.
func notMeasurable(b, c side) string {
	if !b.ok && !c.ok && b.why == c.why {
		return "both sides: " + b.why
	}
	var parts []string
	if !b.ok {
		parts = append(parts, "baseline: "+b.why)
	}
	if !c.ok {
		parts = append(parts, "current: "+c.why)
	}
	return strings.Join(parts, "; ")
}

// test is the outcome of a significance test, or why none ran.
type test struct {
	ran     bool
	p       float64
	n1, n2  int
	unit    string // what n counts: "samples", "acquires"
	against string // what the p-value tests beyond a change: " beyond the tolerance"
	why     string // why no test ran
}

// String renders the test for people: "p=0.400, n=3 vs 3 samples".
func (t test) String() string {
	if !t.ran {
		return t.why
	}
	return fmt.Sprintf("p=%.3f%s, n=%d vs %d %s", t.p, t.against, t.n1, t.n2, t.unit)
}

// significance tests whether m's two sides differ: a Mann-Whitney U test
// (benchmath.AssumeNothing, as benchstat compares benchmarks) on the
// latency samples, or on the 0/1 outcomes of the trials of a rate or count
// (with two values the U test is the test of two proportions).
func significance(m report.Measure, b, c side) test {
	var x1, x2 []float64
	unit := "samples"
	switch {
	case m.Sample != nil:
		for _, s := range []struct {
			name string
			sd   side
		}{{"baseline", b}, {"current", c}} {
			if len(s.sd.sample) == 0 || len(s.sd.sample) > report.SampleSize || len(s.sd.sample) > s.sd.count {
				return test{why: fmt.Sprintf("no latency sample of at most %d in the %s (a report of an older mcptrace: analyze its dump again)", report.SampleSize, s.name)}
			}
		}
		x1, x2 = slices.Clone(b.sample), slices.Clone(c.sample)
	case m.Trials != "":
		x1, x2 = outcomes(m, b), outcomes(m, c)
		unit = m.Trials
		if m.Trials == "complete" {
			unit = "complete requests"
		}
	default:
		return test{why: "no test"}
	}
	cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(x1, &thresholds), benchmath.NewSample(x2, &thresholds))
	return test{ran: true, p: math.Min(cmp.P, 1), n1: cmp.N1, n2: cmp.N2, unit: unit}
}

// outcomes turns a side's rate or count into its trials' 0/1 outcomes (1
// for a hit, a miss above the floor, an unexpected request), at most
// MaxTrials of them, the proportion kept.
func outcomes(m report.Measure, s side) []float64 {
	n := s.trials
	k := s.v
	if m.Unit == report.UnitRatio {
		k *= float64(n)
	}
	if n > MaxTrials {
		k = k * MaxTrials / float64(n)
		n = MaxTrials
	}
	ones := int(min(max(math.Round(k), 0), float64(n)))
	out := make([]float64, n)
	for i := range ones {
		out[i] = 1
	}
	return out
}

// shift is how a measure moved against its tolerance.
type shift struct {
	worse, better    bool
	allowed, message string
}

// change says whether m moved from bs to cs beyond tol, the worse or the
// better way, as m.Baseline says; for the worse way, what was allowed and
// what happened, each figure of the message marked by what it is worth
// (render.MarkAs).
func change(m report.Measure, bs, cs side, tol rulefmt.Tolerances) shift {
	b, c := bs.v, cs.v
	bm := func(text string) string { return render.MarkAs(bs.worth(), text) }
	cm := func(text string) string { return render.MarkAs(cs.worth(), text) }
	var s shift
	switch m.Baseline {
	case report.BaselineDrop:
		drop := m.Tolerance(tol)
		s.worse, s.better = c < b-drop-1e-9, c > b+drop+1e-9
		s.allowed = ">= " + bm(textfmt.Figure(textfmt.Round4(b-drop)))
		s.message = fmt.Sprintf("%s fell from %s%% to %s%% (more than %.1f points)", m.Noun, bm(fmt.Sprintf("%.1f", b*100)), cm(fmt.Sprintf("%.1f", c*100)), drop*100)
	case report.BaselineGrowth:
		allow := m.Tolerance(tol)
		s.worse, s.better = c > b+allow, c < b-allow
		s.allowed = "<= " + bm(textfmt.Figure(b+allow))
		s.message = fmt.Sprintf("%s rose from %s to %s", m.Noun, bm(textfmt.Figure(b)), cm(textfmt.Figure(c)))
	case report.BaselineAppear:
		s.worse, s.better = b == 0 && c > 0, b > 0 && c == 0
		s.allowed = "0"
		s.message = fmt.Sprintf("%s %s where the baseline had none", cm(textfmt.Figure(c)), m.Noun)
	case report.BaselineLatency:
		s.worse = b > 0 && c > b*tol.LatencyRatio && c-b > tol.LatencyMinDeltaMS
		s.better = c > 0 && b > c*tol.LatencyRatio && b-c > tol.LatencyMinDeltaMS
		s.allowed = "<= " + bm(textfmt.Figure(textfmt.Round4(b*tol.LatencyRatio))) + " ms"
		if b > 0 {
			s.message = fmt.Sprintf("%s rose from %s ms to %s ms (x%.2f, more than x%s)", m.Noun, bm(textfmt.Figure(b)), cm(textfmt.Figure(c)), c/b, textfmt.Figure(tol.LatencyRatio))
		}
	}
	return s
}
