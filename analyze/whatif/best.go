package whatif

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
)

// Cost names one of a Row's cost columns, as the JSON report spells it.
type Cost string

// The cost columns the best-per-cost lines are drawn for, in the table's
// order.
const (
	CostSessionsOpened     Cost = "sessions_opened"
	CostPeakSessions       Cost = "peak_sessions"
	CostIdleSessionSeconds Cost = "idle_session_seconds"
	CostPrewarmUnused      Cost = "prewarm_unused"
)

// Costs are the cost columns, in the order every output lists them.
var Costs = []Cost{CostSessionsOpened, CostPeakSessions, CostIdleSessionSeconds, CostPrewarmUnused}

// Label is the cost as a person reads it.
func (c Cost) Label() string {
	switch c {
	case CostSessionsOpened:
		return "sessions opened"
	case CostPeakSessions:
		return "peak sessions"
	case CostIdleSessionSeconds:
		return "idle session-seconds"
	case CostPrewarmUnused:
		return "unused pre-warm handshakes"
	}
	return string(c)
}

// Of is the row's figure for the cost.
func (c Cost) Of(r Row) float64 {
	switch c {
	case CostSessionsOpened:
		return float64(r.SessionsOpened)
	case CostPeakSessions:
		return float64(r.PeakSessions)
	case CostIdleSessionSeconds:
		return r.IdleSessionSeconds
	case CostPrewarmUnused:
		return float64(r.PrewarmUnused)
	}
	return 0
}

// Best is the best setting for one cost: of the rows costing at most
// what the as-recorded row costs (Budget), the one with the highest hit
// rate. Row indexes the rows Best was computed over.
type Best struct {
	Cost   Cost
	Budget float64
	Row    int
}

// BestPerCost answers, for each cost column, "without paying more of it
// than today, what is the best hit rate, and at which setting?": among
// the rows whose cost is at most the as-recorded row's, the highest hit
// rate; equal hit rates go to the lower cost, then to the as-recorded row
// (no change for nothing), then to the earlier row in the given order
// (Sort's). The as-recorded row is always a candidate, so every cost has
// an answer; without an as-recorded row there is no budget and no answer
// (nil).
func BestPerCost(rows []Row) []Best {
	rec := -1
	for i, r := range rows {
		if r.AsRecorded {
			rec = i
			break
		}
	}
	if rec < 0 {
		return nil
	}
	out := make([]Best, 0, len(Costs))
	for _, c := range Costs {
		budget, best := c.Of(rows[rec]), rec
		for i, r := range rows {
			if c.Of(r) > budget || i == best {
				continue
			}
			// Strictly better only: a tie keeps the as-recorded row (the
			// first candidate) or the earlier row.
			b := rows[best]
			if cmp.Or(cmp.Compare(r.HitRate(), b.HitRate()), cmp.Compare(c.Of(b), c.Of(r))) > 0 {
				best = i
			}
		}
		out = append(out, Best{Cost: c, Budget: budget, Row: best})
	}
	return out
}

// format writes a figure of the cost as the table shows it.
func (c Cost) format(v float64) string {
	if c == CostIdleSessionSeconds {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// bestLine is a Best said to a person, the setting apart (so each format
// can quote it its own way): "at most 41 sessions opened:", the setting,
// then ", hit rate 55.3% against 12.8% as recorded, at 23 sessions opened".
func bestLine(b Best, rows []Row) (head, tail string) {
	r := rows[b.Row]
	head = fmt.Sprintf("at most %s %s:", b.Cost.format(b.Budget), b.Cost.Label())
	if r.AsRecorded {
		return head, ", hit rate " + textfmt.Percent(r.HitRate()) + ", the as-recorded setting: none replayed does better without costing more"
	}
	return head, fmt.Sprintf(", hit rate %s against %s as recorded, at %s %s", textfmt.Percent(r.HitRate()), textfmt.Percent(asRecordedRate(rows)), b.Cost.format(b.Cost.Of(r)), b.Cost.Label())
}

// asRecordedRate is the as-recorded row's hit rate (0 without one).
func asRecordedRate(rows []Row) float64 {
	for _, r := range rows {
		if r.AsRecorded {
			return r.HitRate()
		}
	}
	return 0
}
