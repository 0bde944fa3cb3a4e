package whatif

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
)

// MaxGrid is the most settings combinations one what-if run replays. Each
// combination is a whole replay of the dump (linear in its acquires) and a
// row of the output, so the grid, the product of the settings lists'
// lengths, is what multiplies the work: 10,000 rows is already more than a
// person reads and, on a dump of a million acquires, minutes of replay.
// Three lists of 300, 300 and 10 values would be 900,000 replays; the
// lists are checked before the dump is read or any combination is built.
const MaxGrid = 10_000

// ErrGridTooLarge is returned (wrapped) by CheckGrid for a grid past
// MaxGrid: a usage error, which the CLI answers with exit 2.
var ErrGridTooLarge = errors.New("settings grid too large")

// GridList is one settings list of a what-if run: the flag that gave it
// and how many values it holds.
type GridList struct {
	// Flag names the list as the user gave it (--idle-ttl).
	Flag string
	// Len is how many values it holds.
	Len int
}

// CheckGrid fails (wrapping ErrGridTooLarge) when the lists' lengths
// multiply past MaxGrid, before any combination is built: the error names
// each list's length, the product and how to narrow it.
func CheckGrid(lists ...GridList) error {
	product := 1
	parts := make([]string, 0, len(lists))
	for _, l := range lists {
		product = satMul(product, l.Len)
		parts = append(parts, fmt.Sprintf("%s %s values", textfmt.Count(l.Len), l.Flag))
	}
	if product <= MaxGrid {
		return nil
	}
	return fmt.Errorf("%w: %s make %s settings combinations, over the limit of %s (each is one replay of the dump): give fewer values to the longest list, or split the run into several whatif runs",
		ErrGridTooLarge, strings.Join(parts, " × "), textfmt.Count(product), textfmt.Count(MaxGrid))
}

// satMul is a*b for non-negative a and b, MaxInt past it: lists long
// enough to overflow are still refused, never accepted as a small grid.
func satMul(a, b int) int {
	if a < 0 || b < 0 {
		return math.MaxInt
	}
	if a != 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}

// MaxReplayedAcquires bounds a what-if run's replay work: its settings
// combinations times the dump's acquires (10 million acquire replays,
// some five seconds). MaxGrid alone bounds the rows, but 10,000
// combinations of a dump of 12,000 acquires were a minute of replay. A
// single combination is never refused: replaying the dump once is linear
// in what was read.
const MaxReplayedAcquires = 10_000_000

// CheckWork fails (wrapping ErrGridTooLarge) when combos settings
// combinations of a dump of acquires acquires would replay more than
// MaxReplayedAcquires acquires; it runs once the dump is read, before any
// replay. The error names both factors and how to narrow the run.
func CheckWork(combos, acquires int) error {
	work := satMul(combos, acquires)
	if combos <= 1 || work <= MaxReplayedAcquires {
		return nil
	}
	return fmt.Errorf("%w: %s settings combinations × %s acquires make %s acquire replays, over the limit of %s: give fewer values, or replay a shorter dump",
		ErrGridTooLarge, textfmt.Count(combos), textfmt.Count(acquires), textfmt.Count(work), textfmt.Count(MaxReplayedAcquires))
}
