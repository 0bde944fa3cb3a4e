package telemetry

import (
	"context"
	"slices"
	"sync"

	"go.opentelemetry.io/collector/pdata/ptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Recorder is an in-memory [sdktrace.SpanProcessor] for tests: it records
// every span synchronously as it ends, so a test can assert on the spans of
// an operation as soon as the operation returns, with no exporter, batch
// delay or flush in between. Add it through [Config.SpanProcessors] or
// [sdktrace.WithSpanProcessor].
//
// A Recorder is safe for concurrent use. Its zero value is ready to use;
// [NewRecorder] exists for symmetry with the other constructors. Shutdown
// and ForceFlush do nothing, so recorded spans stay readable after the
// tracer provider shuts down.
type Recorder struct {
	mu    sync.Mutex
	spans []sdktrace.ReadOnlySpan // guarded by mu; in end order
}

var _ sdktrace.SpanProcessor = (*Recorder)(nil)

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{}
}

// OnStart does nothing: only finished spans are recorded.
func (r *Recorder) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd records s. The SDK calls it synchronously from span.End.
func (r *Recorder) OnEnd(s sdktrace.ReadOnlySpan) {
	r.mu.Lock()
	r.spans = append(r.spans, s)
	r.mu.Unlock()
}

// Shutdown does nothing and keeps what was recorded.
func (r *Recorder) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing: spans are recorded as they end.
func (r *Recorder) ForceFlush(context.Context) error { return nil }

// Spans returns the spans recorded so far, in the order they ended. The
// slice is a copy the caller may modify; the spans themselves are the SDK's
// immutable snapshots.
func (r *Recorder) Spans() []sdktrace.ReadOnlySpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Traces returns everything recorded so far converted by [ToTraces]: a fresh
// copy in the OTLP data model that later recording does not change.
func (r *Recorder) Traces() ptrace.Traces {
	return ToTraces(r.Spans())
}

// Reset forgets every recorded span, so one provider can serve several
// subtests.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.spans = nil
	r.mu.Unlock()
}
