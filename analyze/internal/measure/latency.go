package measure

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/report"
)

// The latency series.
const (
	LatAcquireHit = iota
	LatAcquireMiss
	LatHandshake
	LatCall
	NumLatencies
)

// latencyAcc collects durations in nanoseconds per series, and counts
// per series the spans written ending before they started, whose
// durations the spans cannot tell (LeftOut): no sample.
type latencyAcc struct {
	Series  [NumLatencies][]int64
	LeftOut [NumLatencies]int
}

// grow reserves room for n more samples in series, so a million spans do
// not regrow (and copy) the slice again and again.
func (l *latencyAcc) grow(series, n int) {
	l.Series[series] = slices.Grow(l.Series[series], n)
}

// add records a duration d of series; a negative one (durOf's for a span
// ending before it started) is left out, and counted.
func (l *latencyAcc) add(series int, d int64) {
	if d < 0 {
		l.LeftOut[series]++
		return
	}
	l.Series[series] = append(l.Series[series], d)
}

// durOf is the duration of a span from start to end, -1 when none says
// the span was written ending before it started (its end clamped).
func durOf(start, end int64, none bool) int64 {
	if none {
		return -1
	}
	return end - start
}

// Percentiles returns the p50, p95 and p99 of ds in milliseconds, rounded
// to the microsecond. It reorders ds: selecting three ranks costs a few
// linear passes where sorting a million samples would not.
func Percentiles(ds []int64) report.Percentiles {
	p := report.Percentiles{Count: len(ds)}
	if len(ds) == 0 {
		return p
	}
	rank := func(q float64) *float64 {
		ms := math.Round(float64(SelectNth(ds, NearestRank(q, len(ds))))/1e3) / 1e3
		return &ms
	}
	p.P50, p.P95, p.P99 = rank(50), rank(95), rank(99)
	return p
}

// NearestRank is the 0-based rank of the q-th percentile of n > 0 values
// by the nearest-rank method (the smallest value with at least q% of the
// values at or below it): ceil(q/100 × n) − 1, within [0, n−1]. Exact and
// folded series both rank by it.
func NearestRank(q float64, n int) int {
	return min(max(int(math.Ceil(q/100*float64(n)))-1, 0), n-1)
}

// SelectNth reorders ds so that ds[n] is the value it would have if ds were
// sorted, with nothing larger before it and nothing smaller after it, and
// returns it (Hoare's selection, median-of-three pivots).
func SelectNth(ds []int64, n int) int64 {
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

// SketchExact is how many samples a bounded latency series keeps exactly.
// Past it the series folds its samples into a fixed log-bucket histogram,
// so a stream of any length costs a bounded amount per series; below it
// (every dump in testdata, most real dumps) percentiles are exact. Every
// analysis bounds its series, a batch run's and Analyze's over one index
// too: once a series is folded its percentiles depend only on the samples,
// not on when the traces were finalized, so a stream's figures equal the
// batch run's on the same spans, and `analyze` (the engine) and `check`
// (one index) agree on any dump.
const SketchExact = 1 << 16

// Log buckets of the histogram: durations below 2^(sketchSubBits+1) ns have
// a bucket each; above, a bucket spans 1/2^sketchSubBits of its lower bound
// (7 bits: 1/128). A percentile read from the histogram is the midpoint of
// its bucket, so its relative error is at most 1/256 (0.4%) of the exact
// nearest-rank answer; the rank itself is exact.
const (
	sketchSubBits = 7
	sketchSub     = 1 << sketchSubBits
	SketchBuckets = 2*sketchSub + (63-sketchSubBits)*sketchSub
)

// Sketch is one latency series: exact samples, then, once bounded and past
// sketchExact samples, a histogram. Two sketches merge exactly (merging
// histograms adds counts), so the shards of the engine and the traces
// finalized one after another fold into the same series whatever their
// order. The zero value is an empty, unbounded (always exact) series.
type Sketch struct {
	Samples []int64  // nil once folded
	Buckets []uint64 // nil until folded
	N       int      // samples seen
	Bounded bool     // fold past sketchExact samples
	// LeftOut counts the durations left out: spans written ending before
	// they started, whose durations the spans cannot tell.
	LeftOut int
}

// Add records one duration; a negative one is no duration the spans can
// tell, left out of the samples and counted in LeftOut.
func (s *Sketch) Add(d int64) {
	if d < 0 {
		s.LeftOut++
		return
	}
	s.N++
	if s.Buckets == nil {
		s.Samples = append(s.Samples, d)
		if s.Bounded && len(s.Samples) > SketchExact {
			s.Fold()
		}
		return
	}
	s.Buckets[BucketOf(d)]++
}

// Bound makes s a bounded series, folding it if it is past the bound.
func (s *Sketch) Bound() {
	s.Bounded = true
	if s.Buckets == nil && len(s.Samples) > SketchExact {
		s.Fold()
	}
}

// Merge adds o's samples to s.
func (s *Sketch) Merge(o *Sketch) {
	s.LeftOut += o.LeftOut
	if o.N == 0 {
		return
	}
	if s.Buckets == nil && o.Buckets == nil && (!s.Bounded || len(s.Samples)+len(o.Samples) <= SketchExact) {
		s.Samples = append(s.Samples, o.Samples...)
		s.N += o.N
		return
	}
	s.Fold()
	for _, d := range o.Samples {
		s.Buckets[BucketOf(d)]++
	}
	for i, c := range o.Buckets {
		s.Buckets[i] += c
	}
	s.N += o.N
}

// Fold moves the exact samples into the histogram.
func (s *Sketch) Fold() {
	if s.Buckets == nil {
		s.Buckets = make([]uint64, SketchBuckets)
	}
	for _, d := range s.Samples {
		s.Buckets[BucketOf(d)]++
	}
	s.Samples = nil
}

// BucketOf returns the histogram bucket of a duration d >= 0.
func BucketOf(d int64) int {
	u := uint64(d)
	if u < 2*sketchSub {
		return int(u)
	}
	e := bits.Len64(u) - (sketchSubBits + 1) // >= 1
	m := u >> e                              // in [sketchSub, 2*sketchSub)
	return 2*sketchSub + (e-1)*sketchSub + int(m-sketchSub)
}

// BucketMid returns the midpoint of bucket b, in nanoseconds.
func BucketMid(b int) int64 {
	if b < 2*sketchSub {
		return int64(b)
	}
	e := (b-2*sketchSub)/sketchSub + 1
	m := uint64((b-2*sketchSub)%sketchSub + sketchSub)
	lo := m << e
	return int64(lo + (uint64(1)<<e)/2)
}

// Percentiles returns the series' p50, p95 and p99 as percentiles does:
// exact unless folded, within 0.4% once folded.
func (s *Sketch) Percentiles() report.Percentiles {
	if s.Buckets == nil {
		p := Percentiles(s.Samples)
		p.LeftOut = s.LeftOut
		return p
	}
	p := report.Percentiles{Count: s.N, LeftOut: s.LeftOut}
	rank := func(q float64) *float64 {
		i := uint64(NearestRank(q, s.N))
		var seen uint64
		for b, c := range s.Buckets {
			seen += c
			if seen > i {
				ms := math.Round(float64(BucketMid(b))/1e3) / 1e3
				return &ms
			}
		}
		return nil // unreachable: the counts sum to n
	}
	p.P50, p.P95, p.P99 = rank(50), rank(95), rank(99)
	return p
}

// Sample returns the series in at most report.SampleSize durations in
// milliseconds, ascending (report.Percentiles.Sample): every duration up
// to the bound, else the order statistics at evenly spaced ranks, read from
// the exact samples (sorted in place) or, once folded, the histogram's
// bucket midpoints. Nil for an empty series.
func (s *Sketch) Sample() []float64 {
	if s.N == 0 {
		return nil
	}
	k := min(s.N, report.SampleSize)
	out := make([]float64, 0, k)
	ms := func(d int64) float64 { return math.Round(float64(d)/1e3) / 1e3 }
	if s.Buckets == nil {
		slices.Sort(s.Samples)
		for i := range k {
			out = append(out, ms(s.Samples[SampleRank(i, k, s.N)]))
		}
		return out
	}
	var seen uint64
	for b, c := range s.Buckets {
		seen += c
		for len(out) < k && uint64(SampleRank(len(out), k, s.N)) < seen {
			out = append(out, ms(BucketMid(b)))
		}
	}
	return out
}

// SampleRank is the 0-based rank of the i-th (0 ≤ i < k) of k evenly
// spaced order statistics of n values: the middle of the i-th of k equal
// slices, (2i+1)n/2k, which for i < k is below n.
func SampleRank(i, k, n int) int {
	return (2*i + 1) * n / (2 * k)
}

// PercentilesWithSample is percentiles with the series' sample, for the
// pool's latency series a baseline comparison tests.
func (s *Sketch) PercentilesWithSample() report.Percentiles {
	p := s.Percentiles()
	p.Sample = s.Sample()
	return p
}

// Latencies collects the duration series from the events: explicit
// acquire spans by hit, handshakes and calls.
func Latencies(e *record.Table) *latencyAcc {
	l := &latencyAcc{}
	l.grow(LatHandshake, len(e.Handshakes))
	l.grow(LatCall, len(e.Calls))
	for _, h := range e.Handshakes {
		if !h.Prewarm { // no caller waited for a pre-warm dial
			l.add(LatHandshake, durOf(h.Start, h.End, h.NoDuration))
		}
	}
	for _, c := range e.Calls {
		l.add(LatCall, durOf(c.Start, c.End, c.NoDuration))
	}
	for _, a := range e.Spans {
		if a.Hit {
			l.add(LatAcquireHit, a.Dur)
		} else {
			l.add(LatAcquireMiss, a.Dur)
		}
	}
	return l
}

// LeftOutWarnings says, for each latency series of l with spans left out
// (written ending before they started), how many and what it does to the
// series' figures; nil when none was.
func LeftOutWarnings(l *report.LatencyReport) []string {
	var out []string
	for _, s := range []struct {
		name string
		p    *report.Percentiles
	}{{"acquire_hit", &l.AcquireHit}, {"acquire_miss", &l.AcquireMiss}, {"handshake", &l.Handshake}, {"call", &l.Call}} {
		if n := s.p.LeftOut; n > 0 {
			out = append(out, fmt.Sprintf("%d span(s) of the %s latency end before they start: left out of its samples (its count), its percentiles are not measurable", n, s.name))
		}
	}
	return out
}
