package whatif

import (
	"cmp"
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

// keyFigures are the JSON names of a row's figures that may depend on
// telling keys apart: every figure but the acquires counted. Marks.KeysMerged
// makes each not measurable, in every output, in every row where it does
// depend on them (keyFree).
var keyFigures = []string{"hits", "hit_rate", "misses_by_cause", "sessions_opened", "peak_sessions",
	"idle_session_seconds", figPrewarmDials, figPrewarmUnused}

// The JSON names of the pre-warm's figures, the only ones keyFree may
// keep.
const (
	figPrewarmDials  = "prewarm_dials"
	figPrewarmUnused = "prewarm_unused"
)

// keyFree says whether row r's figure (one of keyFigures) is the same
// whatever the keys of the replayed acquires are, so that it is the truth
// even where the replay merges keys. Only the pre-warm's can be:
//
//   - its dials, where the settings replay none (prewarm none, or no idle
//     session kept, IdlePerKey < 0: the replay dials nothing, so 0) or
//     the dump's own (as recorded: one per pre-warm handshake the dump
//     holds, each replayed whatever its key). A recent:N pre-warm dials as
//     many of its service's recent keys as there are, and merged keys are
//     fewer, so its dials are not;
//   - its unused dials, where those dials are key-free and 0: an unused
//     dial is one of them, so there are none. Where a dial was made, which
//     acquire takes its session, and so how many stay unused, is a matter
//     of keys.
//
// Every other figure reads the pairs' sessions, which merged keys share.
func keyFree(r Row, figure string) bool {
	s := r.Settings
	dials := s.Prewarm == 0 || s.Prewarm == PrewarmAsRecorded || s.IdlePerKey < 0
	switch figure {
	case figPrewarmDials:
		return dials
	case figPrewarmUnused:
		return dials && r.PrewarmDials == 0
	}
	return false
}

// keyFreeNote says, in the figures section, where a pre-warm figure that
// is not measurable in some rows is given all the same (keyFree).
const keyFreeNote = "; given in the rows where it does not depend on the keys: the dials of a pre-warm none or as recorded " +
	"(none, or one per pre-warm handshake the dump holds), and their unused where there are no dials"

// notMeasurable is a not-measurable figure's cell in the table, Markdown
// and HTML outputs, as the analysis's tables write one.
const notMeasurable = "—"

// KeysMergedLine is the table, Markdown and HTML outputs' line saying the
// replayed figures are not measurable, and why.
func KeysMergedLine(why string) string {
	return "NOT MEASURABLE (" + notMeasurable + "): hit rate, hits, misses by cause, sessions, peak and idle s of every row, " +
		"and pre-warm (unused) where it depends on the keys (the dials of a recent:N pre-warm, the unused of any dials): " +
		"the replay cannot tell the dump's keys apart (" + why + ")"
}

// bestNotMeasurable replaces the best-per-cost lines when the hit rates
// they rank are not measurable.
const bestNotMeasurable = bestHeading + ": not measurable (the hit rates it ranks are not)"

// cells is one row's figures as the table, Markdown and HTML outputs write
// them: hit rate, hits, misses by cause, sessions, peak, idle s, pre-warm
// (unused); when merged says the keys were merged, each notMeasurable but
// the pre-warm's where they are keyFree.
func cells(r Row, merged bool) [7]string {
	if merged {
		return [7]string{notMeasurable, notMeasurable, notMeasurable, notMeasurable, notMeasurable, notMeasurable, prewarmCell(r, true)}
	}
	return [7]string{textfmt.Percent(r.HitRate()), strconv.Itoa(r.Hits), causes(r.MissesByCause), strconv.Itoa(r.SessionsOpened),
		strconv.Itoa(r.PeakSessions), strconv.FormatFloat(r.IdleSessionSeconds, 'f', 1, 64), prewarmCell(r, false)}
}

// prewarmCell is the pre-warm cell, "dials (unused)": where merged says
// the keys were merged, each notMeasurable unless keyFree, and the cell
// notMeasurable alone when neither is.
func prewarmCell(r Row, merged bool) string {
	dials, unused := strconv.Itoa(r.PrewarmDials), strconv.Itoa(r.PrewarmUnused)
	if merged && !keyFree(r, figPrewarmDials) {
		dials = notMeasurable
	}
	if merged && !keyFree(r, figPrewarmUnused) {
		unused = notMeasurable
	}
	if dials == notMeasurable && unused == notMeasurable {
		return notMeasurable
	}
	return dials + " (" + unused + ")"
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

// figures is the JSON "figures" section: when the keys were merged, each
// of keyFigures that is not measurable in some row of rows (not keyFree),
// with why, and, where other rows give it all the same, where (as the
// analysis's report.Report.Figures); nil otherwise.
func figures(rows []Row, m Marks) map[string]report.FigureState {
	if m.KeysMerged == "" {
		return nil
	}
	out := make(map[string]report.FigureState, len(keyFigures))
	for _, n := range keyFigures {
		free := 0
		for _, r := range rows {
			if keyFree(r, n) {
				free++
			}
		}
		switch {
		case free == len(rows) && len(rows) > 0:
		case free > 0:
			out[n] = report.FigureState{State: report.NotMeasurable, Why: m.KeysMerged + keyFreeNote}
		default:
			out[n] = report.FigureState{State: report.NotMeasurable, Why: m.KeysMerged}
		}
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
