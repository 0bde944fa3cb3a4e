package ingest

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// BenchmarkDepthCheck measures what the nesting limit costs on the path that
// pays it: JSON records decoded by pdata (the projection decoders never
// run the check, and a protobuf record pays nothing: pdata checks its depth
// itself and protoDepth runs only to name the place of a refused one). It
// decodes the benchmark dump's lines with pdata alone, with the check
// first, and the check alone, in the same run, so check=only over
// check=off is the check's share.
func BenchmarkDepthCheck(b *testing.B) {
	data, want := benchRecords(b, "otlp-jsonl")
	recs := splitLines(b, data)
	plain := unmarshaled(&ptrace.JSONUnmarshaler{})
	for _, side := range []struct {
		name   string
		decode func([]byte) (int, bool)
	}{
		{"check=off", plain},
		{"check=on", func(r []byte) (int, bool) {
			if jsonDepth(r) != nil {
				return 0, false
			}
			return plain(r)
		}},
		{"check=only", func(r []byte) (int, bool) { return 0, jsonDepth(r) == nil }},
	} {
		b.Run("jsonl/"+side.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if n := decodeAll(b, recs, side.decode); n != want && side.name != "check=only" {
					b.Fatalf("decoded %d spans, want %d", n, want)
				}
			}
		})
	}
}
