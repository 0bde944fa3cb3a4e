// Package phase names the analyzer's phases in CPU profiles: the goroutine
// doing a phase's work carries the pprof label "phase" with its name while
// it does, so `go tool pprof -tags cpu.pprof` (a profile from --cpuprofile,
// or a benchmark's) splits a run's CPU by phase without a guess from
// function names: reading the files, decoding them, building the index,
// a stream's tracking of its open traces, finalizing traces into a copy,
// grouping an index's spans by trace (copies left out, parents linked),
// detecting the vocabulary, observing (the vocabulary stage and the
// measures), merging observations, copying the open traces into a fresh
// open index (compact), and the report at the end. The goroutines that
// only do one of these (the file reader's, a shard's, an observer's)
// carry its label from their start, so none of their CPU is left
// unlabelled, counted as the runtime's.
//
// The same names mark the phases in an execution trace (runtime/trace,
// the commands' --exectrace): each phase runs inside a trace region of
// its name, so a trace tells which phase each goroutine was in while the
// cores were idle, and what it waited for
// (internal/benchtools/idletrace). While no trace is being taken, a
// region costs a context lookup and a flag test per phase, not per span.
package phase

import (
	"context"
	"encoding/json"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"
)

// Label is the pprof label key of a phase.
const Label = "phase"

// The phases, as the label's values.
const (
	Read     = "read"
	Decode   = "decode"
	Index    = "index"
	Track    = "track" // a stream shard's bookkeeping of its open traces and its finalization scans
	Finalize = "finalize"
	Group    = "group" // index.Finish: spans grouped by trace, copies left out, parents linked
	Detect   = "detect"
	Observe  = "observe"
	Merge    = "merge"
	Compact  = "compact"
	Report   = "report"
)

// Do runs f with the calling goroutine labelled phase name (and inside a
// trace region of that name), then gives it back the labels of ctx
// (context.Background: none). A phase inside another is labelled
// as the inner one while it runs. It costs a small allocation per call, so
// it wraps a batch's or a group's work, never a span's.
func Do(ctx context.Context, name string, f func()) {
	pprof.Do(ctx, pprof.Labels(Label, name), func(ctx context.Context) { trace.WithRegion(ctx, name, f) })
}

// Go runs f on a new goroutine labelled phase name from its start (ctx's
// labels besides), inside a trace region of that name to its end: for a
// goroutine that does one phase's work all along, so even the work
// between its inner phases is counted as that phase's.
// f's ctx carries the label: its inner phases pass it to Do, which gives
// the goroutine back its labels, the phase's included, when they end.
func Go(ctx context.Context, name string, f func(ctx context.Context)) {
	go pprof.Do(ctx, pprof.Labels(Label, name), func(ctx context.Context) {
		trace.WithRegion(ctx, name, func() { f(ctx) })
	})
}

// Of returns the phase label of each goroutine whose stack holds a frame
// whose function name contains frame ("" for one without), read from a
// goroutine profile: what tests read to check a goroutine's label, since
// pprof offers no getter of a goroutine's labels.
func Of(frame string) []string {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1) // a strings.Builder never fails
	var out []string
	for _, block := range strings.Split(b.String(), "\n\n") {
		if !strings.Contains(block, frame) {
			continue
		}
		label, count := "", 1
		if c, _, ok := strings.Cut(block, " @ "); ok { // "N @ pc...": N goroutines alike
			if n, err := strconv.Atoi(strings.TrimSpace(c[strings.LastIndexByte(c, '\n')+1:])); err == nil {
				count = n
			}
		}
		for _, line := range strings.Split(block, "\n") {
			if rest, ok := strings.CutPrefix(line, "# labels: "); ok {
				var m map[string]string
				if json.Unmarshal([]byte(rest), &m) == nil {
					label = m[Label]
				}
			}
		}
		for range count {
			out = append(out, label)
		}
	}
	return out
}

// Await returns Of(frame) once it finds at least n goroutines in frame,
// or what it finds when timeout has passed: a goroutine just started may
// not have reached frame yet.
func Await(frame string, n int, timeout time.Duration) []string {
	deadline := time.Now().Add(timeout)
	for {
		got := Of(frame)
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(time.Millisecond)
	}
}
