package whatif

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"

	"github.com/mcptrace/mcptrace/spans"
)

// Schema names the JSON report's version.
const Schema = "mcptrace.whatif/v1"

// OutOfScope is what the replay keeps as recorded, said in every output.
const OutOfScope = "kept as recorded: sessions the server forgot (redials), failed leases, call durations; out of scope: settings that change the workload (MaxInUsePerKey backpressure, AcquireTimeout, health checks, sessionless servers)"

// bestHeading and bestRule introduce the best-per-cost lines in every
// output: the text formats write them as one line, bestIntro, the HTML
// page the heading over the rule, so neither says "Best per cost" twice.
const (
	bestHeading  = "Best per cost"
	bestRuleBody = "the highest hit rate without paying more of that cost than as recorded; ties: the lower cost, then as recorded, then the table's order"
	bestRule     = "Each line is " + bestRuleBody + "."
	bestIntro    = bestHeading + " (" + bestRuleBody + "):"
)

// String names a setting as the flags spell it.
func (s Settings) String() string {
	per := strconv.Itoa(s.IdlePerKey)
	if s.Peak {
		per = "peak"
	}
	pre := "none"
	switch {
	case s.Prewarm == PrewarmAsRecorded:
		pre = "as-recorded"
	case s.Prewarm > 0:
		pre = "recent:" + strconv.Itoa(s.Prewarm)
	}
	return fmt.Sprintf("idle-ttl=%s idle-per-key=%s max-idle=%d prewarm=%s", s.IdleTTL, per, s.MaxIdle, pre)
}

// Marks are what an output says about its rows beyond their figures, the
// same in every format.
type Marks struct {
	// Assumed is true when the as-recorded row's settings were the user's
	// (--recorded-*), not those the dump recorded.
	Assumed bool
	// Partial, when not empty, says why the replayed acquires may not be
	// all the source held (an input damaged or reporting data missing, a
	// backend's window cut): rows priced on part of the workload must
	// say so wherever they are read.
	Partial string
	// KeysMerged, when not empty, says why the replay cannot tell the
	// dump's keys apart (KeysMergedWhy): every figure of a row but its
	// acquires, and its pre-warm's where they are keyFree, is then not
	// measurable, said in every output, and the rows are sorted by setting
	// (SortBySettings), not by hit rate.
	KeysMerged string
}

// Sort orders rows by hit rate, best first, then fewer sessions opened,
// then less idle cost, then the settings by value (Compare: 38s before
// 1m15s before 10m, where their text would put 10m0s first).
func Sort(rows []Row) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b.HitRate(), a.HitRate()), cmp.Compare(a.SessionsOpened, b.SessionsOpened),
			cmp.Compare(a.IdleSessionSeconds, b.IdleSessionSeconds), a.Settings.Compare(b.Settings))
	})
}

// Compare orders settings by value: the idle TTL, shorter first; then the
// idle sessions per key, fixed counts ascending before peak-following;
// then the global cap, smaller first; then pre-warm, as recorded, none,
// then recent:N ascending.
func (s Settings) Compare(o Settings) int {
	return cmp.Or(cmp.Compare(s.IdleTTL, o.IdleTTL), boolCompare(s.Peak, o.Peak), cmp.Compare(s.IdlePerKey, o.IdlePerKey),
		cmp.Compare(s.MaxIdle, o.MaxIdle), cmp.Compare(s.Prewarm, o.Prewarm))
}

// boolCompare orders false before true.
func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

type jsonRow struct {
	Settings           string         `json:"settings"`
	IdleTTLSeconds     float64        `json:"idle_ttl_s"`
	IdlePerKey         string         `json:"idle_per_key"`
	MaxIdle            int            `json:"max_idle"`
	Prewarm            int            `json:"prewarm_recent"`
	AsRecorded         bool           `json:"as_recorded"`
	Assumed            bool           `json:"assumed"`
	Acquires           int            `json:"acquires"`
	Hits               *int           `json:"hits"`
	HitRate            *float64       `json:"hit_rate"`
	MissesByCause      map[string]int `json:"misses_by_cause"`
	SessionsOpened     *int           `json:"sessions_opened"`
	PeakSessions       *int           `json:"peak_sessions"`
	IdleSessionSeconds *float64       `json:"idle_session_seconds"`
	PrewarmDials       *int           `json:"prewarm_dials"`
	PrewarmUnused      *int           `json:"prewarm_unused"`
}

// jsonRowOf is r's JSON row, its figures null (keyFigures) when m says the
// keys were merged, but for the pre-warm's where they are keyFree.
func jsonRowOf(r Row, m Marks) jsonRow {
	per := strconv.Itoa(r.Settings.IdlePerKey)
	if r.Settings.Peak {
		per = spans.IdleSizingPeak
	}
	j := jsonRow{Settings: r.Settings.String(), IdleTTLSeconds: r.Settings.IdleTTL.Seconds(), IdlePerKey: per,
		MaxIdle: r.Settings.MaxIdle, Prewarm: r.Settings.Prewarm, AsRecorded: r.AsRecorded, Assumed: r.AsRecorded && m.Assumed, Acquires: r.Acquires}
	if m.KeysMerged != "" {
		if keyFree(r, figPrewarmDials) {
			j.PrewarmDials = &r.PrewarmDials
		}
		if keyFree(r, figPrewarmUnused) {
			j.PrewarmUnused = &r.PrewarmUnused
		}
		return j
	}
	rate := r.HitRate()
	j.Hits, j.HitRate, j.MissesByCause, j.SessionsOpened = &r.Hits, &rate, r.MissesByCause, &r.SessionsOpened
	j.PeakSessions, j.IdleSessionSeconds, j.PrewarmDials, j.PrewarmUnused = &r.PeakSessions, &r.IdleSessionSeconds, &r.PrewarmDials, &r.PrewarmUnused
	return j
}

// jsonBest is one best_per_cost entry: the cost, the as-recorded row's
// figure (the budget), the best setting's text, hit rate and figure.
type jsonBest struct {
	Cost       string  `json:"cost"`
	Budget     float64 `json:"budget"`
	Settings   string  `json:"settings"`
	AsRecorded bool    `json:"as_recorded"`
	HitRate    float64 `json:"hit_rate"`
	Value      float64 `json:"value"`
}

// WriteJSON writes rows as mcptrace.whatif/v1: m.Assumed marks the
// as-recorded row's settings as the user's, m.Partial sets "partial" and
// says why in "partial_note", m.KeysMerged nulls every figure of keyFigures
// in every row where it is not keyFree, lists each such in "figures" (not
// measurable, and why, as the analysis's report does) and leaves
// "best_per_cost" empty.
func WriteJSON(w io.Writer, rows []Row, m Marks) error {
	out := struct {
		Schema      string                        `json:"schema"`
		Partial     bool                          `json:"partial"`
		PartialNote string                        `json:"partial_note,omitempty"`
		Figures     map[string]report.FigureState `json:"figures,omitempty"`
		OutOfScope  string                        `json:"out_of_scope"`
		Rows        []jsonRow                     `json:"rows"`
		Best        []jsonBest                    `json:"best_per_cost"`
	}{Schema: Schema, Partial: m.Partial != "", PartialNote: m.Partial, Figures: figures(rows, m), OutOfScope: OutOfScope, Rows: []jsonRow{}, Best: []jsonBest{}}
	for _, b := range bestOf(rows, m) {
		r := rows[b.Row]
		out.Best = append(out.Best, jsonBest{Cost: string(b.Cost), Budget: b.Budget, Settings: r.Settings.String(),
			AsRecorded: r.AsRecorded, HitRate: r.HitRate(), Value: b.Cost.Of(r)})
	}
	for _, r := range rows {
		out.Rows = append(out.Rows, jsonRowOf(r, m))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteTable writes rows as a table for people, sorted as given, under
// m.Partial's line when the rows replay part of the workload and
// m.KeysMerged's (KeysMergedLine) when its figures are not measurable.
func WriteTable(w io.Writer, rows []Row, m Marks) error {
	if m.Partial != "" {
		fmt.Fprintf(w, "%s\n\n", textfmt.TermSafe(PartialLine(m.Partial)))
	}
	if m.KeysMerged != "" {
		fmt.Fprintf(w, "%s\n\n", textfmt.TermSafe(KeysMergedLine(m.KeysMerged)))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTINGS\tHIT RATE\tACQUIRES\tHITS\tMISSES BY CAUSE\tSESSIONS\tPEAK\tIDLE s\tPRE-WARM (UNUSED)\t")
	for _, r := range rows {
		label := r.Settings.String()
		if r.AsRecorded {
			label += " " + recordedLabel(m.Assumed)
		}
		c := cells(r, m.KeysMerged != "")
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", label, c[0], r.Acquires, c[1], c[2], c[3], c[4], c[5], c[6])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if m.KeysMerged != "" {
		fmt.Fprintf(w, "\n%s\n", bestNotMeasurable)
	}
	if best := bestOf(rows, m); len(best) > 0 {
		fmt.Fprintf(w, "\n%s\n", bestIntro)
		for _, b := range best {
			head, tail := bestLine(b, rows)
			fmt.Fprintf(w, "  %s %s%s\n", head, rows[b.Row].Settings, tail)
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", OutOfScope)
	return err
}

// PartialLine is the partial marker's text in the table, Markdown and HTML
// outputs.
func PartialLine(why string) string { return "PARTIAL: " + why }

// causes writes a miss-cause map in the spans.MissReasons order.
func causes(m map[string]int) string {
	s := ""
	for _, c := range spans.MissReasons {
		if n := m[c]; n > 0 {
			if s != "" {
				s += " "
			}
			s += c + "=" + strconv.Itoa(n)
		}
	}
	if s == "" {
		return "-"
	}
	return s
}
