package ingest

import (
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// keepingSink keeps every batch it is given (as an engine's shards do) and
// notes what each held then, to compare after Read has moved on.
type keepingSink struct {
	kept  []*Batch
	spans []int
	names []string
}

func (s *keepingSink) ConsumeTraces(*Input, ptrace.Traces) error { return nil }

func (s *keepingSink) ConsumeBatch(_ *Input, b *Batch) error {
	b.Keep()
	s.kept = append(s.kept, b)
	s.spans = append(s.spans, len(b.Spans))
	s.names = append(s.names, b.Spans[0].Name)
	return nil
}

// TestAKeptBatchIsNotRecycledUntilReleased pins Keep and Release: a batch
// the sink kept still holds its spans after Read has returned (Read's own
// reference let go is not the last one): the sink's is the one left. Both committed OTLP JSON lines and protobuf dumps, whose
// batches come from the projection decoders.
func TestAKeptBatchIsNotRecycledUntilReleased(t *testing.T) {
	for _, name := range []string{"acquire-on-miss.otlp.jsonl", "acquire-on-miss.otlp.pb"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "..", "testdata", "traces", name)
			s := &keepingSink{}
			if _, err := Read(t.Context(), []string{path}, ReadOptions{Strict: true, Keep: testKeep}, s); err != nil {
				t.Fatal(err)
			}
			if len(s.kept) == 0 {
				t.Fatal("the dump gave the BatchSink no batch")
			}
			for i, b := range s.kept {
				if len(b.Spans) != s.spans[i] || len(b.Spans) == 0 || b.Spans[0].Name != s.names[i] {
					t.Errorf("kept batch %d holds %d spans after Read returned, want its %d (first named %q): recycled while kept",
						i, len(b.Spans), s.spans[i], s.names[i])
				}
				if got := b.refs.Load(); got != 1 {
					t.Errorf("kept batch %d has %d references after Read, want the sink's 1", i, got)
				}
				Release(b)
			}
		})
	}
}
