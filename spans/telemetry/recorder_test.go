package telemetry_test

import (
	"context"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// newRecordingProvider returns a provider feeding a fresh Recorder; the
// provider is shut down when the test ends.
func newRecordingProvider(t *testing.T) (*sdktrace.TracerProvider, *telemetry.Recorder) {
	t.Helper()
	rec := telemetry.NewRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, rec
}

func TestRecorderRecordsSpansAsTheyEnd(t *testing.T) {
	tp, rec := newRecordingProvider(t)
	ctx, outer := tp.Tracer("t").Start(context.Background(), spans.SpanInvoke)
	_, inner := tp.Tracer("t").Start(ctx, spans.SpanAcquire)
	if got := len(rec.Spans()); got != 0 {
		t.Fatalf("recorded %d spans before any ended", got)
	}
	inner.End()
	// No flush, no shutdown: the span is there as soon as End returns.
	got := rec.Spans()
	if len(got) != 1 || got[0].Name() != spans.SpanAcquire {
		t.Fatalf("after one End: %d spans, want just %s", len(got), spans.SpanAcquire)
	}
	outer.End()
	var names []string
	for _, s := range rec.Spans() {
		names = append(names, s.Name())
	}
	if want := []string{spans.SpanAcquire, spans.SpanInvoke}; len(names) != 2 || names[0] != want[0] || names[1] != want[1] {
		t.Errorf("recorded %v, want %v in end order", names, want)
	}
}

func TestRecorderReturnsCopies(t *testing.T) {
	tp, rec := newRecordingProvider(t)
	_, s := tp.Tracer("t").Start(context.Background(), spans.SpanInvoke)
	s.End()

	snapshot := rec.Spans()
	snapshot[0] = nil
	if rec.Spans()[0] == nil {
		t.Error("modifying the Spans result changed the recorder")
	}

	td := rec.Traces()
	_, s2 := tp.Tracer("t").Start(context.Background(), spans.SpanCallTool)
	s2.End()
	if got := td.SpanCount(); got != 1 {
		t.Errorf("earlier Traces result now has %d spans, want 1", got)
	}
	if got := rec.Traces().SpanCount(); got != 2 {
		t.Errorf("Traces has %d spans, want 2", got)
	}
}

func TestRecorderReset(t *testing.T) {
	tp, rec := newRecordingProvider(t)
	_, s := tp.Tracer("t").Start(context.Background(), spans.SpanInvoke)
	s.End()
	rec.Reset()
	if got := len(rec.Spans()); got != 0 {
		t.Fatalf("after Reset: %d spans, want 0", got)
	}
	if got := rec.Traces().ResourceSpans().Len(); got != 0 {
		t.Fatalf("after Reset: %d resource spans, want 0", got)
	}
	_, s = tp.Tracer("t").Start(context.Background(), spans.SpanCallTool)
	s.End()
	if got := rec.Spans(); len(got) != 1 || got[0].Name() != spans.SpanCallTool {
		t.Errorf("after Reset and one span: %d spans", len(got))
	}
}

func TestRecorderConcurrentUse(t *testing.T) {
	tp, rec := newRecordingProvider(t)
	const workers, perWorker = 8, 50
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range perWorker {
				_, s := tp.Tracer("t").Start(context.Background(), spans.SpanCallTool)
				s.End()
				_ = rec.Traces() // readers race with writers
			}
		})
	}
	wg.Wait()
	if got, want := len(rec.Spans()), workers*perWorker; got != want {
		t.Errorf("recorded %d spans, want %d", got, want)
	}
}

func TestRecorderZeroValueIsUsable(t *testing.T) {
	var rec telemetry.Recorder
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(&rec))
	_, s := tp.Tracer("t").Start(context.Background(), spans.SpanInvoke)
	s.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := len(rec.Spans()); got != 1 {
		t.Errorf("zero-value recorder kept %d spans, want 1 (even after shutdown)", got)
	}
}
