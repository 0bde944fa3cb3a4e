package analyze

import (
	"math"
	"slices"
)

// LatencyReport holds the duration percentiles of the pool's operations, in
// milliseconds.
type LatencyReport struct {
	// AcquireHit is the acquire span's duration when it reused a session.
	AcquireHit Percentiles `json:"acquire_hit"`
	// AcquireMiss is the acquire span's duration when it dialed.
	AcquireMiss Percentiles `json:"acquire_miss"`
	// Handshake is the handshake span's duration (dial and initialize).
	Handshake Percentiles `json:"handshake"`
	// Call is the tool call span's duration.
	Call Percentiles `json:"call"`
}

// Percentiles summarises durations by nearest rank: the p-th percentile is
// the smallest duration at least p% of the samples do not exceed. The
// percentiles are null when Count is 0.
type Percentiles struct {
	Count int      `json:"count"`
	P50   *float64 `json:"p50"`
	P95   *float64 `json:"p95"`
	P99   *float64 `json:"p99"`
}

// The latency series.
const (
	latAcquireHit = iota
	latAcquireMiss
	latHandshake
	latCall
	numLatencies
)

// latencyAcc collects durations in nanoseconds per series.
type latencyAcc struct {
	series [numLatencies][]int64
}

// grow reserves room for n more samples in series, so a million spans do
// not regrow (and copy) the slice again and again.
func (l *latencyAcc) grow(series, n int) {
	l.series[series] = slices.Grow(l.series[series], n)
}

func (l *latencyAcc) add(series int, d int64) {
	l.series[series] = append(l.series[series], max(d, 0))
}

func (l *latencyAcc) report() LatencyReport {
	return LatencyReport{
		AcquireHit:  percentiles(l.series[latAcquireHit]),
		AcquireMiss: percentiles(l.series[latAcquireMiss]),
		Handshake:   percentiles(l.series[latHandshake]),
		Call:        percentiles(l.series[latCall]),
	}
}

// percentiles returns the p50, p95 and p99 of ds in milliseconds, rounded
// to the microsecond. It reorders ds: selecting three ranks costs a few
// linear passes where sorting a million samples would not.
func percentiles(ds []int64) Percentiles {
	p := Percentiles{Count: len(ds)}
	if len(ds) == 0 {
		return p
	}
	rank := func(q float64) *float64 {
		i := int(math.Ceil(q/100*float64(len(ds)))) - 1
		i = min(max(i, 0), len(ds)-1)
		ms := math.Round(float64(selectNth(ds, i))/1e3) / 1e3
		return &ms
	}
	p.P50, p.P95, p.P99 = rank(50), rank(95), rank(99)
	return p
}

// selectNth reorders ds so that ds[n] is the value it would have if ds were
// sorted, with nothing larger before it and nothing smaller after it, and
// returns it (Hoare's selection, median-of-three pivots).
func selectNth(ds []int64, n int) int64 {
	lo, hi := 0, len(ds)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if ds[mid] < ds[lo] {
			ds[mid], ds[lo] = ds[lo], ds[mid]
		}
		if ds[hi] < ds[lo] {
			ds[hi], ds[lo] = ds[lo], ds[hi]
		}
		if ds[hi] < ds[mid] {
			ds[hi], ds[mid] = ds[mid], ds[hi]
		}
		pivot := ds[mid]
		i, j := lo, hi
		for i <= j {
			for ds[i] < pivot {
				i++
			}
			for ds[j] > pivot {
				j--
			}
			if i <= j {
				ds[i], ds[j] = ds[j], ds[i]
				i++
				j--
			}
		}
		switch {
		case n <= j:
			hi = j
		case n >= i:
			lo = i
		default:
			return ds[n]
		}
	}
	return ds[n]
}
