package whatif

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"time"

	"github.com/mcptrace/mcptrace/analyze/events"
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// DefaultAssumed is the as-recorded row's settings where a dump records
// none: the pool's defaults (pool.DefaultIdleTTL, peak-following sizing of
// at least pool.DefaultMaxIdlePerKey, pool.DefaultMaxIdle, no pre-warm),
// which are also `mcptrace whatif`'s --recorded-* defaults.
var DefaultAssumed = Settings{IdleTTL: rulefmt.DefaultIdleTTL, IdlePerKey: 1, Peak: true, MaxIdle: 64}

// ReportTTLFactors are the idle TTLs the analysis report's section replays,
// as multiples of the as-recorded TTL: a decade around it, on a log scale
// as the chart draws it.
var ReportTTLFactors = []float64{0.125, 0.25, 0.5, 1, 2, 4, 8}

// ReportGrid returns the settings the analysis report's what-if section
// replays around rec: each idle TTL of ReportTTLFactors times rec's
// (rounded to the second, at least one), crossed with idle per key fixed
// at 1, fixed at 2, peak-following, and rec's own sizing, at rec's global
// cap and pre-warm. So each chart line is one idle-per-key setting, and
// the as-recorded row sits on one of them. rec itself is among the
// settings; none is repeated.
func ReportGrid(rec Settings) []Settings {
	sizings := []Settings{{IdlePerKey: 1}, {IdlePerKey: 2}, {IdlePerKey: 1, Peak: true}, {IdlePerKey: rec.IdlePerKey, Peak: rec.Peak}}
	var out []Settings
	for _, sz := range sizings {
		for _, f := range ReportTTLFactors {
			ttl := max(time.Duration(float64(rec.IdleTTL)*f).Round(time.Second), time.Second)
			if f == 1 {
				ttl = rec.IdleTTL
			}
			s := Settings{IdleTTL: ttl, IdlePerKey: sz.IdlePerKey, Peak: sz.Peak, MaxIdle: rec.MaxIdle, Prewarm: rec.Prewarm}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

var absentTmpl = template.Must(template.New("absent").Parse(`<section class="whatif" id="whatif">
<h2>What-if replay</h2>
<p class="muted">{{.}}</p>
</section>
`))

var sampleTmpl = template.Must(template.New("sample").Parse(`<p class="muted" id="whatif-sample">{{.}}</p>
`))

var noteTmpl = template.Must(template.New("note").Parse(`<p class="muted" id="whatif-note">{{.}}</p>
`))

// NoAcquires is what the analysis report's what-if section says when the
// dump has no acquire to replay.
const NoAcquires = "No what-if replay: the dump holds no acquire (no pool spans and no session-bearing calls), so there is nothing to replay."

// WriteReportSection writes the what-if section of the analysis's HTML
// report (analyze/htmlreport): the dump's acquires (ev, analyze's report
// events) replayed at the as-recorded settings and at ReportGrid around
// them, through WriteHTMLSection: over the busiest ReportMaxKeys keys
// (CollectBusiest), said above the section when keys are left out. The
// as-recorded row is at the settings every pool scope recorded; where the
// dump records none, or its scopes disagree (said above the section), at
// assume, labelled assumed. keysMerged is the analysis's KeysMergedWhy of
// its writer: when not empty, the rows' figures are not measurable
// (Marks.KeysMerged) and sorted by setting. A dump without an acquire gets
// a section that says why it has no replay.
func WriteReportSection(w io.Writer, ev *events.ReportEvents, assume Settings, keysMerged string) error {
	return writeReportSection(w, ev.EachAcquire, assume, keysMerged)
}

// writeReportSection is WriteReportSection over the acquires each hands
// out (twice, as CollectBusiest reads them).
func writeReportSection(w io.Writer, each func(func(*events.Acquire)), assume Settings, keysMerged string) error {
	wl, smp := CollectBusiest(each, ReportMaxKeys, ReportMaxAcquires)
	if wl.Acquires() == 0 {
		if err := absentTmpl.Execute(w, NoAcquires); err != nil {
			return fmt.Errorf("whatif: render html: %w", err)
		}
		return nil
	}
	rec, note, ok := wl.RecordedSettings()
	if !ok {
		rec = assume
		if note != "" {
			if err := noteTmpl.Execute(w, textfmt.TermSafe(note)+": the as-recorded row is at the pool's defaults (assumed)."); err != nil {
				return fmt.Errorf("whatif: render html: %w", err)
			}
		}
	}
	if note := smp.Note(); note != "" {
		if err := sampleTmpl.Execute(w, note); err != nil {
			return fmt.Errorf("whatif: render html: %w", err)
		}
	}
	asRec := wl.Replay(rec)
	asRec.AsRecorded = true
	rows := []Row{asRec}
	for _, s := range ReportGrid(rec) {
		if s != rec {
			rows = append(rows, wl.Replay(s))
		}
	}
	m := Marks{Assumed: !ok, KeysMerged: keysMerged}
	SortFor(rows, m)
	return WriteHTMLSection(w, rows, m)
}
