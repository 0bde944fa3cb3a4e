package gate

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// ErrBaselineFigures is returned for a baseline holding a figure no
// analysis writes: a rate outside [0, 1], a count below 0 or not whole, a
// number past what a span can last, a hit rate that is not its hits over
// its acquires. Such a file was damaged or edited; compared with, it would
// judge the current run against figures nobody measured, so it is refused
// whole, naming the field, rather than read in part.
var ErrBaselineFigures = errors.New("a figure no analysis writes")

// maxMS is the longest duration a span can show, in milliseconds: an
// int64 of nanoseconds.
const maxMS = math.MaxInt64 / 1e6

// checkBaselineFigures reports the first figure of rep, by its JSON key,
// that no analysis could have written: each row of the measure table (and
// of each reads measure) read as a rule reads it, against what its unit
// allows, then the hit rate against the hits and acquires it is made of.
func checkBaselineFigures(rep *report.Report) error {
	for _, m := range report.Measures() {
		if m.Value == nil {
			continue
		}
		if v, ok := m.Value(rep); ok {
			if err := figureInRange(m, v); err != nil {
				return fmt.Errorf("%s %w", m.JSON, err)
			}
		}
	}
	for i := range rep.Measures {
		for _, f := range report.ReadsFields() {
			if v, ok := f.ReadsValue(&rep.Measures[i]); ok {
				if err := figureInRange(f, v); err != nil {
					return fmt.Errorf("measures[%d].%s %w", i, f.JSON, err)
				}
			}
		}
	}
	return checkHitRate(rep)
}

// figureInRange says what is wrong with v as a value of m: not a finite
// number, below 0, a rate (drawn as a percentage) above 1, a count not
// whole, milliseconds longer than a span can last; nil when nothing.
func figureInRange(m report.Measure, v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return errors.New("is not a finite number")
	case v < 0:
		return fmt.Errorf("is %s, below 0", num(v))
	case m.Unit == report.UnitRatio && m.Draw == report.DrawPercent && v > 1:
		return fmt.Errorf("is %s, a rate above 1", num(v))
	case m.Unit == report.UnitCount && v != math.Trunc(v):
		return fmt.Errorf("is %s, a count that is not whole", num(v))
	case m.Unit == report.UnitMS && v > maxMS:
		return fmt.Errorf("is %s ms, longer than a span can last", num(v))
	}
	return nil
}

// checkHitRate reports a hit rate that is not rep's hits over its
// acquires (to within 1e-9, far above a float64's rounding), one given
// without acquires, hits or misses above the acquires, or a null hit rate
// for acquires whose figure the report does not declare not measurable;
// nothing when the acquires or hits are themselves not measurable.
func checkHitRate(rep *report.Report) error {
	p := &rep.Pool
	if !rep.FigureAsRead("acquires").Known() || !rep.FigureAsRead("hits").Known() {
		return nil // null in the JSON: nothing to hold the rate to
	}
	switch {
	case p.Hits > p.Acquires:
		return fmt.Errorf("pool.hits is %d, above pool.acquires (%d)", p.Hits, p.Acquires)
	case p.Misses > p.Acquires:
		return fmt.Errorf("pool.misses is %d, above pool.acquires (%d)", p.Misses, p.Acquires)
	case p.HitRate == nil:
		if p.Acquires > 0 && rep.FigureAsRead("hit_rate").Known() {
			return fmt.Errorf("pool.hit_rate is null, though pool.acquires is %d and figures does not declare it not measurable", p.Acquires)
		}
	case p.Acquires == 0:
		return fmt.Errorf("pool.hit_rate is %s, though pool.acquires is 0", num(*p.HitRate))
	case math.Abs(*p.HitRate-float64(p.Hits)/float64(p.Acquires)) > 1e-9:
		return fmt.Errorf("pool.hit_rate is %s, not pool.hits / pool.acquires (%d / %d)", num(*p.HitRate), p.Hits, p.Acquires)
	}
	return nil
}

// num writes v as the JSON held it.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
