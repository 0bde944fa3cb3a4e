package report

import "strings"

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
	// Unmatched names the measure's selectors (root, read, complete_when)
	// that match no span of the dump, in that order: a measure whose root
	// names another writer's spans reads 0 requests, and says why here
	// rather than passing for a dump with no requests. Empty when each
	// matched a span.
	Unmatched []UnmatchedSelector `json:"unmatched,omitempty"`
}

// UnmatchedSelector is one selector of a measure that matched no span.
type UnmatchedSelector struct {
	// Role is the selector's key in the measure: root, read or
	// complete_when.
	Role string `json:"role"`
	// Selector is the selector as the configuration gave it, in
	// rulefmt.Selector's compact form.
	Selector string `json:"selector"`
}

// HistogramBin is the number of requests with a given number of reads.
type HistogramBin struct {
	Reads    int `json:"reads"`
	Requests int `json:"requests"`
}

// UnmatchedNote says in one line, for people, which selectors of m
// matched no span ("" when each did): every report for people words it
// so.
func (m MeasureReport) UnmatchedNote() string {
	if len(m.Unmatched) == 0 {
		return ""
	}
	parts := make([]string, len(m.Unmatched))
	for i, u := range m.Unmatched {
		parts[i] = u.Role + " [" + u.Selector + "]"
	}
	return m.Name + ": no span matches its " + strings.Join(parts, ", nor its ")
}
