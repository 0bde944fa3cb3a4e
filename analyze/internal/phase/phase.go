// Package phase names the analyzer's phases in CPU profiles: the goroutine
// doing a phase's work carries the pprof label "phase" with its name while
// it does, so `go tool pprof -tags cpu.pprof` (a profile from --cpuprofile,
// or a benchmark's) splits a run's CPU by phase without a guess from
// function names: reading the files, decoding them, building the index,
// finalizing traces into a copy, detecting the vocabulary, observing
// (the vocabulary stage and the measures), merging observations,
// copying the open traces into a fresh open index (compact), and the
// report at the end.
package phase

import (
	"context"
	"runtime/pprof"
)

// Label is the pprof label key of a phase.
const Label = "phase"

// The phases, as the label's values.
const (
	Read     = "read"
	Decode   = "decode"
	Index    = "index"
	Finalize = "finalize"
	Detect   = "detect"
	Observe  = "observe"
	Merge    = "merge"
	Compact  = "compact"
	Report   = "report"
)

// Do runs f with the calling goroutine labelled phase name, then gives it
// back the labels of ctx (context.Background: none). A phase inside another is labelled
// as the inner one while it runs. It costs a small allocation per call, so
// it wraps a batch's or a group's work, never a span's.
func Do(ctx context.Context, name string, f func()) {
	pprof.Do(ctx, pprof.Labels(Label, name), func(context.Context) { f() })
}
