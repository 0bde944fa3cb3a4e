package measure

import (
	"cmp"
	"slices"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/poll"
	"github.com/mcptrace/mcptrace/analyze/internal/selector"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// readsAcc evaluates one reads-per-request measure.
type readsAcc struct {
	x                              *index.Index
	m                              rulefmt.ReadMeasure
	root, read, notUnder, complete *selector.Matcher // notUnder and complete may be nil
	Poll                           *poll.Poll        // nil: never stops

	// readSeen says read matched a span in a request's trace (countReads),
	// completeSeen that complete_when matched one anywhere.
	readSeen, completeSeen bool
}

// NewReadsAcc compiles the read measure m against x (its root, read,
// not_under and complete_when selectors), to count reads per request.
func NewReadsAcc(x *index.Index, m rulefmt.ReadMeasure) (*readsAcc, error) {
	a := &readsAcc{x: x, m: m}
	var err error
	if a.root, err = selector.Compile(x, m.Root); err != nil {
		return nil, err
	}
	if a.read, err = selector.Compile(x, m.Read); err != nil {
		return nil, err
	}
	if m.NotUnder != nil {
		if a.notUnder, err = selector.Compile(x, *m.NotUnder); err != nil {
			return nil, err
		}
	}
	if m.CompleteWhen != nil {
		if a.complete, err = selector.Compile(x, *m.CompleteWhen); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Report returns the measure's figures over the index: reads per complete
// request as a histogram, the requests not judged, and example traces.
func (a *readsAcc) Report() report.MeasureReport {
	x := a.x
	r := report.MeasureReport{Name: a.m.Name, Description: a.m.Description, Expect: a.m.Expect, Histogram: []report.HistogramBin{}, Examples: []string{}}
	counts := map[int]int{}
	var examples []int32
	reads := map[int32]int{} // request span -> reads beneath it
	t0 := x.Tree()
	sum := make([]int32, x.NumSpans) // per span: reads counted for it, over its subtree
	for t := range x.TraceRecs {
		if a.Poll.Stop() {
			break
		}
		tr := &x.TraceRecs[t]
		clear(reads)
		reqs, completeSeen := a.requests(x.Order[tr.First:tr.First+tr.N], reads)
		a.completeSeen = a.completeSeen || completeSeen
		if reqs == 0 {
			continue
		}
		a.countReads(t0.DFS[tr.First:tr.First+tr.N], reads, sum)
		r.Requests += reqs
		if tr.Incomplete || !completeSeen {
			r.Incomplete += reqs
			continue
		}
		r.Complete += reqs
		for _, n := range reads {
			counts[n]++
			if a.m.Expect != nil && n != *a.m.Expect {
				r.Unexpected++
				examples = append(examples, int32(t))
			}
		}
	}
	for n, c := range counts {
		r.Histogram = append(r.Histogram, report.HistogramBin{Reads: n, Requests: c})
	}
	slices.SortFunc(r.Histogram, func(a, b report.HistogramBin) int { return cmp.Compare(a.Reads, b.Reads) })
	r.Examples = exampleTraces(x, examples)
	r.Unmatched = Unmatched(a.m, r.Requests > 0, a.readSeen || a.readAnywhere(), a.completeSeen)
	return r
}

// readAnywhere reports whether read matches a span outside the requests'
// traces, which countReads did not look at: one pass, made only when no
// request's trace held a read.
func (a *readsAcc) readAnywhere() bool {
	for _, i := range a.x.Order {
		if a.Poll.Stop() {
			return false // cancelled: the report is dropped
		}
		if a.read.Match(i) {
			return true
		}
	}
	return false
}

// Unmatched lists m's selectors that matched no span, given which did:
// root, read and complete_when (when set), in that order.
func Unmatched(m rulefmt.ReadMeasure, rootSeen, readSeen, completeSeen bool) []report.UnmatchedSelector {
	var out []report.UnmatchedSelector
	if !rootSeen {
		out = append(out, report.UnmatchedSelector{Role: "root", Selector: m.Root.String()})
	}
	if !readSeen {
		out = append(out, report.UnmatchedSelector{Role: "read", Selector: m.Read.String()})
	}
	if m.CompleteWhen != nil && !completeSeen {
		out = append(out, report.UnmatchedSelector{Role: "complete_when", Selector: m.CompleteWhen.String()})
	}
	return out
}

// MergeUnmatched returns the selectors unmatched in both a and b, the
// merge of two parts of one dump: a selector matched in either part
// matched a span of the dump. Both are in Unmatched's order.
func MergeUnmatched(a, b []report.UnmatchedSelector) []report.UnmatchedSelector {
	var out []report.UnmatchedSelector
	for _, u := range a {
		if slices.Contains(b, u) {
			out = append(out, u)
		}
	}
	return out
}

// requests files the request spans of one trace's group into reads (at 0)
// and counts them; completeSeen says whether a span of the group meets the
// completeness condition (always, without one).
func (a *readsAcc) requests(group []int32, reads map[int32]int) (reqs int, completeSeen bool) {
	completeSeen = a.complete == nil
	for _, i := range group {
		if a.root.Match(i) {
			reads[i] += 0
			reqs++
		}
		if !completeSeen && a.complete.Match(i) {
			completeSeen = true
		}
	}
	return reqs, completeSeen
}

// countReads sets, for each request of reads, the reads beneath it in one
// trace (dfs, its spans in depth-first order); sum is scratch, one slot a
// span of the index.
//
// Every request above a read counts it, unless a not_under span sits
// between them: the read counts for its proper ancestors up to and
// including the nearest not_under one. Each such path gets +1 at its
// bottom and -1 just above its top, and a request's reads are the sum over
// its subtree: one pass up the depth-first order instead of a walk up the
// ancestors of every read.
func (a *readsAcc) countReads(dfs []int32, reads map[int32]int, sum []int32) {
	x := a.x
	for _, i := range dfs {
		sum[i] = 0
	}
	for _, i := range dfs {
		if !a.read.Match(i) {
			continue
		}
		a.readSeen = true
		p := x.Span(i).Parent
		if p < 0 {
			continue
		}
		sum[p]++
		if a.notUnder != nil {
			if stop := a.notUnder.Nearest(i); stop >= 0 {
				if above := x.Span(stop).Parent; above >= 0 {
					sum[above]--
				}
			}
		}
	}
	for k := len(dfs) - 1; k >= 0; k-- {
		i := dfs[k]
		if p := x.Span(i).Parent; p >= 0 {
			sum[p] += sum[i]
		}
		if _, isReq := reads[i]; isReq {
			reads[i] = int(sum[i])
		}
	}
}
