package report

// StreamReport is the report's account of a streaming analysis (an
// Engine with a Window or MaxOpenTraces); absent from a batch run's report.
type StreamReport struct {
	// WindowSeconds is EngineOptions.Window; MaxOpenTraces its bound, 0
	// for none.
	WindowSeconds float64 `json:"window_seconds"`
	MaxOpenTraces int     `json:"max_open_traces"`
	// LateSpans counts spans that arrived after their trace was finalized:
	// counted here, left out of every other figure.
	LateSpans int `json:"late_spans"`
	// CutTraces counts traces finalized early because MaxOpenTraces was
	// reached: a span of theirs arriving later is a late span.
	CutTraces int `json:"cut_traces"`
	// LateAcquires counts acquires attributed after a later acquire of
	// their (scope, key) pair had been: their trace was finalized long
	// after they started. Their miss cause is judged against the pair's
	// state at arrival, which may differ from a batch run's.
	LateAcquires int `json:"late_acquires"`
	// EarlyTraces counts traces finalized before the end of the input, by
	// the window or the bound: the traces whose spans were freed as the
	// stream went.
	EarlyTraces int `json:"early_traces"`
	// CompleteTraces counts the early traces finalized because their root
	// span had arrived (EngineOptions.HoldComplete), not by the window or
	// the bound.
	CompleteTraces int `json:"complete_traces"`
	// PeakOpenTraces is the most traces the stream held open at once (each
	// shard's peak, summed over the shards): what its memory grew with,
	// against MaxOpenTraces, or against the whole input's traces when the
	// window let little go.
	PeakOpenTraces int `json:"peak_open_traces"`
}
