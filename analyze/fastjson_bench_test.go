package analyze

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkFastOTLPJSONDecode compares, on one goroutine, the fast decoder
// Load uses for OTLP JSON lines with the pdata decoder Read uses, on the
// lines of the generated benchmark dump.
func BenchmarkFastOTLPJSONDecode(b *testing.B) {
	path, _ := writeBenchDump(b, b.TempDir(), "otlp-jsonl", 100_000)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var lines [][]byte
	for l := range bytes.Lines(data) {
		lines = append(lines, bytes.TrimSpace(l))
	}
	keys := newFastKeys(IndexOptions{})
	for _, bench := range []struct {
		name   string
		decode func([]byte) (int, bool)
	}{
		{"fast", func(l []byte) (int, bool) {
			b, ok := decodeFastOTLP(l, keys)
			if !ok {
				return 0, false
			}
			return len(b.spans), true
		}},
		{"pdata", func(l []byte) (int, bool) {
			td, err := unmarshalOTLPJSON(l)
			return td.SpanCount(), err == nil
		}},
	} {
		b.Run(bench.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			spans := 0
			for b.Loop() {
				for _, l := range lines {
					n, ok := bench.decode(l)
					if !ok {
						b.Fatal("a benchmark line did not decode")
					}
					spans += n
				}
			}
			b.ReportMetric(float64(spans)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}
