package whatif

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/mcptrace/mcptrace/analyze/events"
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
)

// Bounds of the analysis report's what-if section: it replays the
// busiest keys only, so its replays of a dump of a million keys cost what
// a thousand keys' do (counting the keys stays one pass). The grid (ReportGrid) replays the workload some 28 times; at these
// bounds that stays a fraction of a second, and the busiest keys are
// those whose hits the settings move (a key acquired once is a cold miss
// under any setting).
const (
	// ReportMaxKeys caps the (pool scope, cache key) pairs replayed.
	ReportMaxKeys = 1000
	// ReportMaxAcquires caps their acquires: keys are taken, busiest
	// first, while their acquires fit (the busiest one always).
	ReportMaxAcquires = 200_000
)

// Sample says what CollectBusiest kept of the whole.
type Sample struct {
	// Keys and Acquires count the whole workload's (scope, key) pairs and
	// acquires; KeysShown and AcquiresShown those kept.
	Keys, KeysShown         int
	Acquires, AcquiresShown int
}

// Sampled reports whether keys were left out.
func (s Sample) Sampled() bool { return s.KeysShown < s.Keys }

// Note says, for a person, what the replay left out: "" when nothing.
func (s Sample) Note() string {
	if !s.Sampled() {
		return ""
	}
	c := textfmt.Count
	return fmt.Sprintf("Replayed over the %s busiest keys of %s (%s of %s acquires); %s more keys not shown. The idle caps and pre-warm see only these keys: each row is a pool serving them alone.",
		c(s.KeysShown), c(s.Keys), c(s.AcquiresShown), c(s.Acquires), c(s.Keys-s.KeysShown))
}

// pairName is a (pool scope, cache key) pair by its strings.
type pairName struct{ scope, key string }

// pairCount is a pair and its acquires.
type pairCount struct {
	name pairName
	n    int
}

// CollectBusiest gathers into a Workload the acquires each hands out (it
// is called twice: events.ReportEvents.EachAcquire) of the busiest (pool
// scope, cache key) pairs only, by acquires (ties: the first seen): at
// most maxKeys pairs and, beyond the busiest one, no more acquires than
// maxAcquires. Each kept pair keeps every acquire, so its replay is the
// pair's own. The first pass holds one count per pair, never the
// acquires, so a dump of a million keys costs its counts and the kept
// pairs' acquires only.
func CollectBusiest(each func(func(*events.Acquire)), maxKeys, maxAcquires int) (*Workload, Sample) {
	index := map[pairName]int{}
	var counts []pairCount // in first-seen order
	each(func(a *events.Acquire) {
		k := pairName{a.Scope, a.Key}
		i, ok := index[k]
		if !ok {
			i = len(counts)
			index[k] = i
			counts = append(counts, pairCount{name: k})
		}
		counts[i].n++
	})
	total := 0
	for _, c := range counts {
		total += c.n
	}
	smp := Sample{Keys: len(counts), KeysShown: len(counts), Acquires: total, AcquiresShown: total}
	c := NewCollector()
	if len(counts) <= maxKeys && total <= maxAcquires {
		each(c.Add)
		return c.Workload(), smp
	}
	keep := busiestPairs(counts, maxKeys, maxAcquires)
	smp.KeysShown, smp.AcquiresShown = len(keep), 0
	each(func(a *events.Acquire) {
		if keep[pairName{a.Scope, a.Key}] {
			smp.AcquiresShown++
			c.Add(a)
		}
	})
	return c.Workload(), smp
}

// busiestPairs picks the pairs CollectBusiest keeps from counts, which
// are in first-seen order (the stable sort keeps it among equals).
func busiestPairs(counts []pairCount, maxKeys, maxAcquires int) map[pairName]bool {
	slices.SortStableFunc(counts, func(a, b pairCount) int { return cmp.Compare(b.n, a.n) })
	keep := make(map[pairName]bool, min(maxKeys, len(counts)))
	acqs := 0
	for _, c := range counts {
		if len(keep) == maxKeys || (len(keep) > 0 && acqs+c.n > maxAcquires) {
			break
		}
		keep[c.name] = true
		acqs += c.n
	}
	return keep
}
