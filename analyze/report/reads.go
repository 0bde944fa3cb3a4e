package report

// MeasureReport is one reads-per-request measure of the configuration.
type MeasureReport struct {
	// Name and Description come from the configuration.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Requests counts spans matching the root selector.
	Requests int `json:"requests"`
	// Complete counts requests whose trace is complete (no missing parent)
	// and holds a span matching complete_when: only their counts are trusted.
	Complete int `json:"complete"`
	// Incomplete counts the other requests: neither a pass nor a fail.
	Incomplete int `json:"incomplete"`
	// Expect is the configured expected count; null when none is set.
	Expect *int `json:"expect"`
	// Histogram counts complete requests by their number of reads, sorted
	// by reads.
	Histogram []HistogramBin `json:"histogram"`
	// Unexpected counts complete requests whose reads differ from Expect (0
	// without Expect).
	Unexpected int `json:"unexpected"`
	// Examples are trace ids of unexpected requests, sorted, at most
	// MaxExamples.
	Examples []string `json:"examples"`
}

// HistogramBin is the number of requests with a given number of reads.
type HistogramBin struct {
	Reads    int `json:"reads"`
	Requests int `json:"requests"`
}
