package measure

import (
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/spans"
)

// reasonIndex maps a miss reason to its index in spans.MissReasons.
var reasonIndex = func() map[string]uint8 {
	m := make(map[string]uint8, len(spans.MissReasons))
	for i, r := range spans.MissReasons {
		m[r] = uint8(i)
	}
	return m
}()

// scopeStats accumulates one scope's figures.
type scopeStats struct {
	acquires, Hits, misses, keys int
	Reasons                      reasonCounts
}

// reasonCounts counts misses by index into spans.MissReasons: an array, not
// a map, so a dump of 200k pool scopes attributes without 200k maps (the
// report makes its maps once, reasonCounts.asMap).
type reasonCounts [maxMissReasons]int

// maxMissReasons bounds spans.MissReasons (checked at init).
const maxMissReasons = 8

func init() {
	if len(spans.MissReasons) > maxMissReasons {
		panic("analyze: spans.MissReasons outgrew maxMissReasons")
	}
}

// asMap returns the counts keyed by reason, every reason present.
func (c *reasonCounts) asMap() map[string]int {
	m := newReasons()
	for i, r := range spans.MissReasons {
		m[r] = c[i]
	}
	return m
}

func newReasons() map[string]int {
	m := make(map[string]int, len(spans.MissReasons))
	for _, r := range spans.MissReasons {
		m[r] = 0
	}
	return m
}

// ratio returns a/b, or nil when b is 0 (the figure is undefined, not 0).
func ratio(a, b int) *float64 {
	if b == 0 {
		return nil
	}
	f := float64(a) / float64(b)
	return &f
}

// exampleTraces returns the distinct hex ids of traces, sorted, at most
// MaxExamples.
func exampleTraces(x *index.Index, traces []int32) []string {
	return record.ExampleIDs(traces, x.TraceID)
}
