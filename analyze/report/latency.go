package report

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
	// Sample is the series in at most SampleSize durations, ascending, in
	// milliseconds: every duration when Count is SampleSize or less, else
	// SampleSize evenly spaced order statistics. A baseline comparison
	// tests whether two runs' durations differ (a Mann-Whitney U test)
	// on it, which three percentiles cannot say. Only the pool's latency
	// series carry one; absent (an older report) it is nil, and a
	// comparison then says it cannot judge.
	Sample []float64 `json:"sample,omitempty"`
	// LeftOut counts the spans of the series written ending before they
	// started: their durations cannot be told, so they are no samples,
	// and with any left out the percentiles are not measurable
	// (Report.FigureOf). Absent when none.
	LeftOut int `json:"left_out,omitempty"`
}

// SampleSize bounds Percentiles.Sample: enough for the U test to find a
// shift of a fraction of the spread at alpha 0.05, small enough that a
// report stays a few kilobytes whatever the dump's size.
const SampleSize = 100
