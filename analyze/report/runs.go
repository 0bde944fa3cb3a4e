package report

import (
	"fmt"
	"slices"
	"time"
)

// WindowOf is the Window from start to end, Unix nanoseconds; both null
// when end is 0 (no span).
func WindowOf(start, end uint64) Window {
	if end == 0 {
		return Window{}
	}
	s, e := time.Unix(0, int64(min(start, 1<<63-1))).UTC(), time.Unix(0, int64(min(end, 1<<63-1))).UTC()
	return Window{Start: &s, End: &e}
}

// RunGap is how far apart two inputs' windows lie, at least, to be two
// runs: a Collector rotating its file exporter's output writes one run
// into files whose windows touch or overlap; runs started one after
// another by hand or by CI lie minutes apart.
const RunGap = time.Minute

// Runs groups inputs into runs: inputs whose windows overlap or lie less
// than RunGap apart (directly or through others) are one run. Each run
// lists its inputs' indices, in order of their windows' starts (ties by
// index); runs are in order of their first start. Inputs without a span
// are in none. A directory of several runs analyzed as one merges
// unrelated traffic into one hit rate: the reports say so, and
// `mcptrace analyze --split-by run` reports each run apart.
func Runs(inputs []InputReport) [][]int {
	var order []int
	for i, in := range inputs {
		if in.Window.Start != nil && in.Window.End != nil {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return inputs[a].Window.Start.Compare(*inputs[b].Window.Start)
	})
	var runs [][]int
	var end time.Time
	for _, i := range order {
		w := inputs[i].Window
		if len(runs) == 0 || w.Start.Sub(end) >= RunGap {
			runs = append(runs, nil)
			end = *w.End
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], i)
		if w.End.After(end) {
			end = *w.End
		}
	}
	return runs
}

// RunsNote says, for a report whose inputs hold several runs (Runs), that
// they were analyzed as one; "" for one run or none. Every report for
// people words it so.
func (r *Report) RunsNote() string {
	runs := Runs(r.Inputs)
	if len(runs) < 2 {
		return ""
	}
	return fmt.Sprintf("SEVERAL RUNS: the %d inputs hold %d runs, their windows %s or more apart, analyzed here as one; mcptrace analyze --split-by run reports each apart",
		len(r.Inputs), len(runs), RunGap)
}
