package whatif

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// Needs is what the replay needs of the writer's spans beyond the
// acquires: it replays each (pool scope, key) pair apart, so where the
// spans cannot tell two targets' keys apart their acquires replay as one
// key's, and every figure but the acquires counted is another workload's.
const Needs = rulefmt.CapTargetIdentity

// KeysMergedWhy says why the replay of acquires written by w cannot tell
// their keys apart, asked of the analysis's one place
// (report.Report.LacksWhy, the reason the report gives its own figures
// needing Needs), or "" when it can (w nil: a writer not known, taken to
// show everything, as the report takes it).
func KeysMergedWhy(w *report.WriterReport) string {
	return (&report.Report{Writer: w}).LacksWhy(Needs)
}

// keyFigures are the JSON names of a row's figures that depend on telling
// keys apart: every figure but the acquires counted. Marks.KeysMerged
// makes each not measurable, in every output.
var keyFigures = []string{"hits", "hit_rate", "misses_by_cause", "sessions_opened", "peak_sessions",
	"idle_session_seconds", "prewarm_dials", "prewarm_unused"}

// notMeasurable is a not-measurable figure's cell in the table, Markdown
// and HTML outputs, as the analysis's tables write one.
const notMeasurable = "—"

// KeysMergedLine is the table, Markdown and HTML outputs' line saying the
// replayed figures are not measurable, and why.
func KeysMergedLine(why string) string {
	return "NOT MEASURABLE (" + notMeasurable + "): hit rate, hits, misses by cause, sessions, peak, idle s and pre-warm of every row: " +
		"the replay cannot tell the dump's keys apart (" + why + ")"
}

// bestNotMeasurable replaces the best-per-cost lines when the hit rates
// they rank are not measurable.
const bestNotMeasurable = bestHeading + ": not measurable (the hit rates it ranks are not)"

// cells is one row's figures as the table, Markdown and HTML outputs write
// them: hit rate, hits, misses by cause, sessions, peak, idle s, pre-warm
// (unused); each notMeasurable when merged says the keys were merged.
func cells(r Row, merged bool) [7]string {
	if merged {
		return [7]string{notMeasurable, notMeasurable, notMeasurable, notMeasurable, notMeasurable, notMeasurable, notMeasurable}
	}
	return [7]string{textfmt.Percent(r.HitRate()), strconv.Itoa(r.Hits), causes(r.MissesByCause), strconv.Itoa(r.SessionsOpened),
		strconv.Itoa(r.PeakSessions), strconv.FormatFloat(r.IdleSessionSeconds, 'f', 1, 64), fmt.Sprintf("%d (%d)", r.PrewarmDials, r.PrewarmUnused)}
}

// sortedBy says in the Markdown and HTML outputs how the rows are sorted
// (Sort, or SortBySettings when the hit rates are not measurable).
func sortedBy(m Marks) string {
	if m.KeysMerged != "" {
		return "sorted by setting, as recorded first (the hit rates are not measurable)"
	}
	return "sorted by hit rate (then fewer sessions opened, then less idle time)"
}

// SortBySettings orders rows for an output whose hit rates are not
// measurable (Marks.KeysMerged): the as-recorded row first, then by
// setting (Settings.Compare), so the order tells nothing the figures
// cannot.
func SortBySettings(rows []Row) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		return cmp.Or(boolCompare(b.AsRecorded, a.AsRecorded), a.Settings.Compare(b.Settings))
	})
}

// figures is the JSON "figures" section: each of keyFigures not
// measurable, with why, when the keys were merged (as the analysis's
// report.Report.Figures); nil otherwise.
func figures(m Marks) map[string]report.FigureState {
	if m.KeysMerged == "" {
		return nil
	}
	out := make(map[string]report.FigureState, len(keyFigures))
	for _, n := range keyFigures {
		out[n] = report.FigureState{State: report.NotMeasurable, Why: m.KeysMerged}
	}
	return out
}

// bestOf is BestPerCost(rows), none when m says the hit rates it ranks
// are not measurable.
func bestOf(rows []Row, m Marks) []Best {
	if m.KeysMerged != "" {
		return nil
	}
	return BestPerCost(rows)
}

// SortFor sorts rows as the outputs under m say they are: by hit rate
// (Sort), or by setting (SortBySettings) when m.KeysMerged says the hit
// rates are not measurable.
func SortFor(rows []Row, m Marks) {
	if m.KeysMerged != "" {
		SortBySettings(rows)
		return
	}
	Sort(rows)
}
