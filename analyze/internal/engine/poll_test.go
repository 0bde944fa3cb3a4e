package engine

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// countingCtx is a context that reports itself cancelled from its k-th
// Err call on: it lets a test cancel an analysis in the middle of a loop,
// at a step it chooses, without a clock.
type countingCtx struct {
	context.Context
	calls, k int
}

func (c *countingCtx) Err() error {
	c.calls++
	if c.calls >= c.k {
		return context.Canceled
	}
	return nil
}

func (c *countingCtx) Done() <-chan struct{} { return make(chan struct{}) }

// The measures stop when their context is done, in the middle of their
// loops (every loop that can run long checks the context), and
// an analysis whose context stays live reports exactly what Analyze does.
func TestAnalyzeContextStopsTheMeasuresMidLoop(t *testing.T) {
	idx := index.New(rulefmt.IndexOptions{})
	if _, err := tracegen.BenchBatches(60_000, func(td ptrace.Traces) error { idx.Add(td); return nil }); err != nil {
		t.Fatal(err)
	}
	want, err := Analyze(asDump(idx), rulefmt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := AnalyzeContext(context.Background(), asDump(idx), rulefmt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(live, want) {
		t.Error("AnalyzeContext with a live context differs from Analyze")
	}
	for _, k := range []int{1, 2, 5, 10} {
		ctx := &countingCtx{Context: context.Background(), k: k}
		r, err := AnalyzeContext(ctx, asDump(idx), rulefmt.Config{})
		if !errors.Is(err, context.Canceled) || r != nil {
			t.Errorf("cancelled at its %d-th look: report %v, err %v; want nil, context.Canceled", k, r != nil, err)
		}
		// Looking every pollEvery steps, a pass over 60k spans that went on
		// after the cancellation would look many more times.
		if ctx.calls != k {
			t.Errorf("cancelled at its %d-th look, the analysis looked %d times: it went on past the cancellation", k, ctx.calls)
		}
	}
}
