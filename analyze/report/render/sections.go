package render

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
)

// section is one group of a human report: a title, an optional note and a
// small table. The table and Markdown renderers draw the same sections, so
// the two never disagree on content.
type section struct {
	title  string
	notes  []string
	header []string
	rows   [][]string
	flex   int // the free-text column clipped to fit the width, -1 for none
}

// sections lays the report out for people: overview, pool, misses by cause,
// latency, scopes, protocol revisions, executions and measures (a section
// with nothing to say is left out).
func (r view) sections() []section {
	out := []section{r.dumpSection(), r.poolSection()}
	if r.Pool.Misses > 0 {
		out = append(out, r.missSection())
	}
	out = append(out, r.headline(report.SectionLatency, "operation"))
	if len(r.Pool.ByScope) > 0 {
		out = append(out, r.scopeSection())
	}
	if len(r.ByProtocol) > 1 || (len(r.ByProtocol) == 1 && r.ByProtocol[0].ProtocolVersion != "") {
		out = append(out, r.protocolSection())
	}
	out = append(out, r.executionsSection())
	if len(r.Measures) > 0 {
		out = append(out, r.measuresSection())
	}
	for i := range out {
		out[i] = out[i].capRows(MaxRows)
	}
	return out
}

// dumpSection is the overview: what was read, the settings, and what went
// wrong reading it.
func (r view) dumpSection() section {
	ov := section{title: "Dump", flex: -1, header: []string{"inputs", "spans", "duplicates", "traces", "incomplete", "window"}}
	window := cmp.Or(r.Window.Text(), "-")
	ov.rows = [][]string{{itoa(len(r.Inputs)), itoa(r.Spans), itoa(r.DuplicateSpans), itoa(r.Traces), itoa(r.IncompleteTraces), window}}
	ov.notes = append(ov.notes, fmt.Sprintf("profile %s, %s, executions by %s", r.Settings.Profile, idleNote(r.Settings), clip(r.Executions.Root)))
	ov.notes = append(ov.notes, r.recognitionNotes()...)
	if r.Settings.ScopeAttr != "" {
		ov.notes = append(ov.notes, "pool scope from attribute "+r.Settings.ScopeAttr)
	}
	for _, in := range r.Inputs {
		if in.Backend != nil {
			ov.notes = append(ov.notes, in.Backend.Text())
		}
	}
	if r.Partial {
		ov.notes = append(ov.notes, partialNote(r.Inputs))
	}
	if note := r.RunsNote(); note != "" {
		ov.notes = append(ov.notes, note)
	}
	ov.notes = append(ov.notes, r.Warnings...)
	for _, in := range r.Inputs {
		if len(in.Warnings) > 0 {
			ov.notes = append(ov.notes, fmt.Sprintf("%s: %d warning(s), first: %s", in.Path, len(in.Warnings), in.Warnings[0]))
		}
	}
	return ov
}

// partialNote says why the report is partial: a damaged file, or a
// backend's window cut or still being written.
func partialNote(inputs []report.InputReport) string {
	for _, in := range inputs {
		if in.Partial && in.Backend != nil {
			return "PARTIAL: the backend's window was cut or still being written; figures cover what was fetched"
		}
	}
	return "PARTIAL: an input was damaged; figures cover what was read before the damage"
}

// poolSection is the pool's headline with its verdict.
func (r view) poolSection() section {
	pool := r.headline(report.SectionPool, "")
	if r.FigureOf("unexplained_misses").Exact() {
		pool.notes = append(pool.notes, poolVerdict(r.Pool))
	}
	return pool
}

// missSection counts the misses by cause, each drawn and noted as its
// figure is worth (report.SectionMisses of the measure table), naming the
// traces of unexplained ones where their count is known: as unexplained
// where each is (report.FigureState.Certain), else as misses that may be.
func (r view) missSection() section {
	miss := r.headline(report.SectionMisses, "")
	if ex := r.Pool.UnexplainedExamples; len(ex) > 0 {
		switch f := r.ShareOf("pool.unexplained_examples"); {
		case f.Certain():
			miss.notes = append(miss.notes, "unexplained in traces: "+strings.Join(ex, ", "))
		case f.Known():
			miss.notes = append(miss.notes, "possibly unexplained (the spans cannot tell which) in traces: "+strings.Join(ex, ", "))
		}
	}
	return miss
}

// scopeSection is one row per pool scope.
func (r view) scopeSection() section {
	sc := section{title: "By pool scope", flex: 0, header: []string{"scope", "acquires", "hits", "misses", "hit rate", "keys", "floor", "excess", "unexplained"}}
	for _, s := range r.Pool.ByScope {
		name := s.Scope
		if name == "" {
			name = "(none)"
		}
		sc.rows = append(sc.rows, []string{name, r.mark("acquires", itoa(s.Acquires)), r.mark("hits", itoa(s.Hits)), r.mark("misses", itoa(s.Misses)),
			r.mark("hit_rate", pct(s.HitRate)), r.mark("keys", itoa(s.Keys)), r.mark("cold_start_floor", pct(s.ColdStartFloor)),
			r.mark("excess_misses", itoa(s.ExcessMisses)), r.mark("unexplained_misses", itoa(report.Unexplained(s.MissReasons)))})
	}
	if len(sc.rows) > 0 {
		sc.notes = append(sc.notes, r.markNote(scopeFigures...)...)
	}
	return sc
}

// mark draws text, a breakdown of figure name (a cell of a per-scope or
// per-revision row), as the headline draws the figure itself: "—" where
// the spans cannot show it, "≥"/"≤" before a bound (report.Report.FigureOf).
func (r view) mark(name, text string) string { return MarkAs(r.FigureOf(name), text) }

// MarkAs draws text as a figure worth f: "—", "≥ text", "≤ text" or text.
// Every table for people that draws a figure which may be a bound (the
// report's, the gate's comparison) draws it with this mark.
func MarkAs(f report.FigureState, text string) string {
	switch f.State {
	case report.NotMeasurable:
		return NotMeasurableCell
	case report.LowerBound:
		return "≥ " + text
	case report.UpperBound:
		return "≤ " + text
	}
	return text
}

// scopeFigures are the figures a per-scope row breaks down.
var scopeFigures = []string{"acquires", "hits", "misses", "hit_rate", "keys", "cold_start_floor", "excess_misses", "unexplained_misses"}

// markNote says, under a breakdown of names, that its marks are the
// headline's.
func (r view) markNote(names ...string) []string {
	for _, name := range names {
		if !r.FigureOf(name).Exact() {
			return []string{"marked figures (—, ≥, ≤) are as in the headline, for the reasons given there"}
		}
	}
	return nil
}

// protocolSection is one row per protocol revision, with a note for each
// sessionless one.
func (r view) protocolSection() section {
	bp := section{title: "By protocol revision (cold starts in ms)", flex: -1, header: []string{"revision", "sessions", "traces", "calls", "acquires", "hits", "misses", "hit %", "cold p50", "cold p95"}}
	for _, g := range r.ByProtocol {
		name, kind := g.ProtocolVersion, "stateful"
		if name == "" {
			name = "(none)"
		}
		if g.Sessionless {
			kind = "sessionless"
		}
		of := func(key string) report.FigureState { return r.ShareOf("by_protocol[]." + key) }
		bp.rows = append(bp.rows, []string{name, kind, itoa(g.Traces), MarkAs(of("calls"), itoa(g.Calls)), MarkAs(of("acquires"), itoa(g.Acquires)),
			MarkAs(of("hits"), itoa(g.Hits)), MarkAs(of("misses"), itoa(g.Misses)), MarkAs(of("hit_rate"), pct(g.HitRate)), ms(g.ColdStart.P50), ms(g.ColdStart.P95)})
		if g.Sessionless {
			bp.notes = append(bp.notes, fmt.Sprintf("%s is sessionless: the session rules do not apply; a miss costs a cold start of %s ms (p50) over %d handshake(s)", name, ms(g.ColdStart.P50), g.ColdStart.Count))
		}
	}
	if f := r.ShareOf("by_protocol[].acquires"); len(bp.rows) > 0 && !f.Known() && r.FigureOf("acquires").Known() {
		bp.notes = append(bp.notes, "acquires, hits, misses and hit % per revision are not measurable: "+f.Why)
	} else if len(bp.rows) > 0 {
		bp.notes = append(bp.notes, r.markNote("call.count", "acquires", "hits", "misses", "hit_rate")...)
	}
	return bp
}

// executionsSection is the executions' headline, saying when they measure
// nothing and when they spread over several sessions.
func (r view) executionsSection() section {
	e := r.Executions
	ex := r.headline(report.SectionExecutions, "")
	if !e.Measurable {
		// One line says why, for every figure of the section.
		ex.notes = []string{"NOT MEASURABLE: the spans do not tie calls to executions, and the session rules do not apply; " + e.WhyNot}
	}
	if e.MultiSession > 0 && r.FigureOf("multi_session_executions").Known() {
		ex.notes = append(ex.notes, "executions spread over several downstream sessions lose session state; examples: "+strings.Join(e.Examples, ", "))
	}
	return ex
}

// measuresSection is the reads-per-request measures' headline, with each
// measure's histogram and unexpected traces.
func (r view) measuresSection() section {
	out := r.readsHeadline()
	for _, m := range r.Measures {
		hist := make([]string, 0, len(m.Histogram))
		for _, b := range m.Histogram {
			hist = append(hist, fmt.Sprintf("%d read(s): %d", b.Reads, b.Requests))
		}
		if len(hist) > 0 {
			out.notes = append(out.notes, m.Name+" complete requests by reads: "+strings.Join(hist, ", "))
		}
		if len(m.Examples) > 0 {
			out.notes = append(out.notes, m.Name+" unexpected in traces: "+strings.Join(m.Examples, ", "))
		}
		if note := m.UnmatchedNote(); note != "" {
			out.notes = append(out.notes, clipTo(note, MaxNote))
		}
	}
	return out
}

// MaxRows caps the rows of a section in the reports for people (a dump of
// 200k pool scopes must not print 200k rows): the first MaxRows are drawn,
// and a note says how many more the JSON report holds.
const MaxRows = 200

// capRows returns s with at most n rows, saying how many it left out.
func (s section) capRows(n int) section {
	if len(s.rows) <= n {
		return s
	}
	left := len(s.rows) - n
	s.rows = s.rows[:n]
	s.notes = append(s.notes, fmt.Sprintf("… and %d more rows, left out here: the JSON report (--format json) has them all", left))
	return s
}

// poolVerdict says in one line what the pool figures mean.
func poolVerdict(p report.PoolReport) string {
	switch {
	case p.Acquires == 0:
		return "no acquires in this dump (wrong --profile?)"
	case p.UnexplainedMisses > 0:
		return fmt.Sprintf("%d unexplained miss(es): a pooled session should have been reused", p.UnexplainedMisses)
	case p.ExcessMisses == 0:
		return "every miss is a cold start: the pool is at its floor"
	}
	return fmt.Sprintf("%d miss(es) above the cold-start floor, each explained by its cause", p.ExcessMisses)
}

// errWriter remembers the first write error so rendering can check once.
type errWriter = textfmt.ErrWriter

func itoa(n int) string { return strconv.Itoa(n) }

// pct renders a ratio as a percentage (textfmt.Percent: never 0% above 0
// nor 100% below 1), "-" when undefined.
func pct(f *float64) string {
	if f == nil {
		return "-"
	}
	return textfmt.Percent(*f)
}

// ms renders milliseconds, "-" when undefined.
func ms(f *float64) string {
	if f == nil {
		return "-"
	}
	return strconv.FormatFloat(*f, 'f', 3, 64)
}

// clip shortens free text to report.MaxCell runes with an ellipsis.
func clip(s string) string { return clipTo(s, report.MaxCell) }

// Percent draws a ratio as the reports do: one decimal, or the few more it
// takes never to read 0% above 0 nor 100% below 1 (a ceiling of 99.975% is
// not a pool that never misses). It is exported for the commands that
// print figures of their own beside a report (mcptrace demo), so every
// percentage a user reads follows one rule.
func Percent(ratio float64) string { return textfmt.Percent(ratio) }

// idleNote says whose idle settings the misses were attributed under.
func idleNote(s report.Settings) string {
	ttl := time.Duration(s.IdleTTLSeconds * float64(time.Second))
	switch s.PoolSettings {
	case report.SettingsRecorded:
		return "idle settings as each pool scope recorded them"
	case report.SettingsMixed:
		return fmt.Sprintf("idle settings as recorded where a pool scope did, else idle TTL %s assumed (by scope below)", ttl)
	case report.SettingsAssumed:
		return fmt.Sprintf("idle TTL %s assumed (no pool scope recorded settings it could be replayed under)", ttl)
	}
	return fmt.Sprintf("idle TTL %s", ttl)
}

// recognitionNotes says, for the reports for people, what was read: the
// vocabulary, the spans recognised, each vocabulary's resources when they
// differ, and, when nothing was recognised, what was seen and what would
// read it. Names are clipped and escaped by the renderers (notes).
func (r view) recognitionNotes() []string {
	rc := r.Recognition
	if r.NothingRecognised() {
		return strings.Split(r.UnrecognisedText(), "\n")
	}
	note := fmt.Sprintf("vocabulary %s: %d of %d spans recognised", r.Settings.Vocabulary, rc.RecognisedSpans, r.Spans)
	if r.Settings.Vocabulary == report.VocabMixed || len(rc.Vocabularies) > 1 {
		parts := make([]string, 0, len(rc.Vocabularies))
		for _, u := range rc.Vocabularies {
			parts = append(parts, fmt.Sprintf("%s %d resource(s), %d span(s)", u.Vocabulary, u.Resources, u.Spans))
		}
		note += " (" + strings.Join(parts, "; ") + ")"
	}
	return []string{note}
}
