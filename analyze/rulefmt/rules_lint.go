package rulefmt

import (
	"fmt"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
)

// Warning is something a configuration file says that parses and runs but
// very likely does not mean what it reads: `mcptrace rules` and every
// command loading the file print it, and nothing fails for it.
type Warning struct {
	// File, Line and Column locate what the warning is about.
	File         string
	Line, Column int
	// Msg says what is wrong and what to write instead.
	Msg string
}

// String renders the warning as FILE:LINE:COLUMN: MESSAGE.
func (w Warning) String() string {
	return fmt.Sprintf("%s:%d:%d: %s", w.File, w.Line, w.Column, w.Msg)
}

// The two measures a rule must not compare with each other: the
// cold-start floor is a MISS rate (keys / acquires: the misses no pool
// can avoid), the hit rate a hit rate. hit_rate >= cold_start_floor holds
// for a pool far from its floor (a hit rate of 50% is above a floor of
// 12.5%, with dozens of misses a pool could have avoided).
const (
	measureHitRate        = "hit_rate"
	measureColdStartFloor = "cold_start_floor"
)

// LintRules returns the warnings of rules read from path: each
// expectation comparing the hit rate with the cold-start floor, with what
// to write instead.
func LintRules(path string, rules []Rule) []Warning {
	var out []Warning
	for _, r := range rules {
		for _, e := range r.Expect {
			a, b := e.Of, e.Than.Measure
			if !(a == measureHitRate && b == measureColdStartFloor || a == measureColdStartFloor && b == measureHitRate) {
				continue
			}
			out = append(out, Warning{File: path, Line: e.Line, Column: e.Column, Msg: fmt.Sprintf(
				"rule %s: %q compares the hit rate with the cold-start floor, a miss rate (keys / acquires: the misses no pool can avoid), "+
					"so it holds for a pool far from its floor; to require the pool at its floor write %q "+
					"(the hit rate then equals its ceiling, 1 - cold_start_floor), or bound the misses a pool could have avoided with %q",
				textfmt.QuoteInput(r.ID), e.String(), "excess_misses <= 0", "excess_misses <= N")})
		}
	}
	return out
}
