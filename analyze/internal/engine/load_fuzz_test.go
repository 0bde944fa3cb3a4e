package engine

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/hostile"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// The Load fuzz targets feed arbitrary bytes through the path `mcptrace
// analyze` takes: ingest.Read into the index as a BatchSink, so OTLP JSON
// lines and OTLP protobuf records go through the projection decoders
// (analyze/ingest's fastjson.go and fastproto.go). The same bytes are read
// again into a second index through a plain Sink, which gets pdata only.
// Both must end the same: the same error text or none, the same inputs,
// the same counts and the same report. The reader's own
// properties (no panic, every error a *ReadError, Input.Spans) are fuzzed
// in analyze/ingest's FuzzRead targets.

func FuzzLoadOTLPJSON(f *testing.F) {
	seedLoadFuzz(f, "otlp-json")
	f.Fuzz(func(t *testing.T, data []byte) { checkLoadMatchesPdata(t, data, FormatOTLPJSON) })
}

func FuzzLoadOTLPProto(f *testing.F) {
	seedLoadFuzz(f, "otlp-proto")
	f.Fuzz(func(t *testing.T, data []byte) { checkLoadMatchesPdata(t, data, FormatOTLPProto) })
}

// loadFuzzIndex keeps extra attributes beyond the vocabulary, as a
// selector or --scope-attr would.
var loadFuzzIndex = rulefmt.IndexOptions{SpanAttrs: []string{"mcp.tool.name", "x"}, ResourceAttrs: []string{"deployment.environment", "x"}}

// checkLoadMatchesPdata loads data with Load and with a pdata-only sink and
// requires the same outcome. It returns the batches the projection
// decoders delivered.
func checkLoadMatchesPdata(t *testing.T, data []byte, format Format) int {
	t.Helper()
	opts := ReadOptions{Format: format, Workers: 2, Stdin: bytes.NewReader(data)}
	idx, inputs, err := load(context.Background(), ingest.Files{"-"}, LoadOptions{Read: opts, Index: loadFuzzIndex})
	ref := index.New(loadFuzzIndex)
	opts.Stdin = bytes.NewReader(data)
	refInputs, refErr := ingest.Read(context.Background(), []string{"-"}, opts, ingest.SinkFunc(func(_ *Input, td ptrace.Traces) error {
		ref.Add(td)
		return nil
	}))
	ref.SetInputs(refInputs)
	if (err == nil) != (refErr == nil) || err != nil && err.Error() != refErr.Error() {
		t.Fatalf("Load error %v\npdata error %v", err, refErr)
	}
	if len(inputs) != 1 || len(refInputs) != 1 || inputs[0].Spans != refInputs[0].Spans || inputs[0].Partial != refInputs[0].Partial ||
		!slices.Equal(inputs[0].Warnings, refInputs[0].Warnings) {
		t.Fatalf("Load read %+v\npdata %+v", inputs, refInputs)
	}
	// The indexes intern values in another order when a record holds
	// several resources (a batch lists its resources first), so they are
	// compared by what they answer: counts and the whole report.
	if idx.Spans() != ref.Spans() || idx.Traces() != ref.Traces() || idx.Duplicates() != ref.Duplicates() || idx.IncompleteTraces() != ref.IncompleteTraces() {
		t.Fatalf("Load indexed %d spans, %d traces, %d duplicates, %d incomplete; pdata %d, %d, %d, %d",
			idx.Spans(), idx.Traces(), idx.Duplicates(), idx.IncompleteTraces(), ref.Spans(), ref.Traces(), ref.Duplicates(), ref.IncompleteTraces())
	}
	got, want := reportJSON(t, idx), reportJSON(t, ref)
	if !bytes.Equal(got, want) {
		t.Fatalf("Load's report differs from the pdata path's:\nLoad:  %s\npdata: %s", got, want)
	}
	return idx.FastBatches
}

// reportJSON analyzes idx with the default configuration and renders the
// JSON report.
func reportJSON(t *testing.T, idx *index.Index) []byte {
	t.Helper()
	rep, err := Analyze(asDump(idx), rulefmt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := render.JSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// seedLoadFuzz adds the smallest committed dumps of the format (two
// scenarios in plain go test, which replays seeds as regression cases; four
// per encoding when fuzzing) and the hand-made broken inputs of
// testdata/malformed that stay small once decompressed.
func seedLoadFuzz(f *testing.F, format string) {
	fuzzing := false
	if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" {
		fuzzing = true
	}
	seeded := 0
	for _, enc := range tracegen.Encodings() {
		if enc.Format != format {
			continue
		}
		paths, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "traces", "*."+enc.Ext))
		if err != nil {
			f.Fatal(err)
		}
		slices.SortFunc(paths, func(a, b string) int { return cmp.Compare(fileSize(f, a), fileSize(f, b)) })
		kept := 0
		for _, path := range paths {
			if fileSize(f, path) > 24<<10 || kept == 4 {
				continue
			}
			if base := filepath.Base(path); !fuzzing && !strings.HasPrefix(base, "semconv.") && !strings.HasPrefix(base, "cold-init-one-read.") {
				continue
			}
			kept++
			data, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
			seeded++
		}
	}
	if seeded == 0 {
		f.Fatalf("seed: no %s dumps in testdata/traces (run go generate ./internal/tracegen)", format)
	}
	malformed, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "malformed", "*"))
	if err != nil || len(malformed) == 0 {
		f.Fatalf("seed: no malformed inputs (%v)", err)
	}
	for _, path := range malformed {
		if inflatedSize(f, path) > 256<<10 {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// TestLoadProjectionMatchesPdata loads a generated dump in each encoding
// with a projection decoder: every record must go through it (or this
// compares pdata with pdata), and the index and report must equal those of
// the pdata path.
func TestLoadProjectionMatchesPdata(t *testing.T) {
	for _, enc := range []string{"otlp-jsonl", "otlp-proto"} {
		t.Run(enc, func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := tracegen.WriteBench(&buf, enc, 3000); err != nil {
				t.Fatal(err)
			}
			records := bytes.Count(buf.Bytes(), []byte("\n"))
			format := FormatOTLPJSON
			if enc == "otlp-proto" {
				format, records = FormatOTLPProto, countRecords(t, buf.Bytes())
			}
			if fast := checkLoadMatchesPdata(t, buf.Bytes(), format); fast != records || records == 0 {
				t.Fatalf("the projection decoder took %d of %d records", fast, records)
			}
		})
	}
}

// countRecords counts the length-prefixed records of data.
func countRecords(t *testing.T, data []byte) int {
	n := 0
	for len(data) >= 4 {
		size := int(data[0])<<24 | int(data[1])<<16 | int(data[2])<<8 | int(data[3])
		if 4+size > len(data) {
			t.Fatalf("a record of %d bytes with %d left", size, len(data)-4)
		}
		data = data[4+size:]
		n++
	}
	return n
}

// FuzzLoadHostileShapes loads the hostile shapes of internal/hostile (deep
// chains, fan-out, long lines, duplicates, documents with unknown fields),
// at fuzzed sizes, cut at a fuzzed place, through Load under a small
// memory budget, then judges them with the built-in rules: no panic, no
// hang, an error only as a *ReadError, and rules that always answer.
func FuzzLoadHostileShapes(f *testing.F) {
	for i := range hostile.Shapes() {
		f.Add(uint8(i), uint16(300), uint32(0))
		f.Add(uint8(i), uint16(2000), uint32(5000))
	}
	shapes := hostile.Shapes()
	f.Fuzz(func(t *testing.T, which uint8, n uint16, cut uint32) {
		s := shapes[int(which)%len(shapes)]
		size := int64(n)
		if s.Unit == "bytes" {
			size = 64 + int64(n)*32 // up to 2 MB: past the 1 MiB record cap
		}
		var buf bytes.Buffer
		if err := s.Write(&buf, max(size, 1)); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		if cut > 0 && int(cut) < len(data) {
			data = data[:cut]
		}
		idx, _, err := load(context.Background(), ingest.Files{"-"}, LoadOptions{Read: ReadOptions{Stdin: bytes.NewReader(data), MaxMemory: 8 << 20}})
		if err != nil {
			if _, ok := errors.AsType[*ReadError](err); !ok {
				t.Fatalf("error %v (%T) is not a ReadError", err, err)
			}
			return
		}
		root := rulefmt.Selector{Name: "plugin.mcp.connection.handshake"}
		for _, cfg := range []rulefmt.Config{{}, {ExecutionRoot: &root}} {
			a, err := AnalyzeRules(asDump(idx), cfg, rulefmt.BuiltinRules(cfg), ObserveOptions{})
			if err != nil || len(a.Rules) != len(rulefmt.BuiltinRules(cfg)) {
				t.Fatalf("rules: %v", err)
			}
		}
	})
}
