package analyze

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

	"github.com/mcptrace/mcptrace/internal/hostile"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// The fuzz targets feed arbitrary bytes to Read, forced to one format and
// detected, strict and not. Read must never panic or hang, every error
// must be a *ReadError naming the input, and what the sink receives must
// add up to Input.Spans. Their seed corpus (the generated dumps of the
// format and the hand-made broken inputs) runs in plain go test.

func FuzzReadOTLPJSON(f *testing.F) {
	seedFuzz(f, "otlp-json")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, FormatOTLPJSON) })
}

func FuzzReadOTLPProto(f *testing.F) {
	seedFuzz(f, "otlp-proto")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, FormatOTLPProto) })
}

func FuzzReadJaeger(f *testing.F) {
	seedFuzz(f, "jaeger")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, FormatJaeger) })
}

func FuzzReadTempo(f *testing.F) {
	seedFuzz(f, "tempo")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, FormatTempo) })
}

// seedFuzz adds every committed dump of one format in testdata/traces
// (those small enough to keep each exec quick) and every hand-made broken
// input of testdata/malformed. Plain go test, which runs the seeds as
// regression cases, gets the malformed inputs and two scenarios per
// encoding: the other dumps are read by the golden and format tests
// already, and as seeds they would add seconds to every run.
func seedFuzz(f *testing.F, format string) {
	fuzzing := false
	if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" {
		fuzzing = true
	}
	seeded := 0
	for _, enc := range tracegen.Encodings() {
		if enc.Format != format {
			continue
		}
		paths, err := filepath.Glob(filepath.Join("..", "testdata", "traces", "*."+enc.Ext))
		if err != nil {
			f.Fatal(err)
		}
		// The smallest dumps first: each seed costs a read of every mode
		// while the fuzzer gathers its baseline, which a 5 s CI run must
		// get through before it explores.
		slices.SortFunc(paths, func(a, b string) int { return cmp.Compare(seedSize(a), seedSize(b)) })
		kept := 0
		for _, path := range paths {
			if seedSize(path) > maxFuzzDumpSeedBytes || kept == maxFuzzDumpSeedsPerEncoding {
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
	malformed, err := filepath.Glob(filepath.Join("..", "testdata", "malformed", "*"))
	if err != nil || len(malformed) == 0 {
		f.Fatalf("seed: no malformed inputs (%v)", err)
	}
	for _, path := range malformed {
		if inflatedSize(f, path) > maxFuzzSeedBytes {
			continue // TestMalformedCorpus reads it; as a seed it would slow every exec
		}
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// maxFuzzSeedBytes leaves out of the seeds the few corpus files that
// decompress to megabytes: each mutation of one would cost a full read
// three times over.
const maxFuzzSeedBytes = 256 << 10

// maxFuzzDumpSeedBytes keeps the larger generated dumps out of the seeds:
// a mutation of a small one explores the same code at a fraction of the
// cost per exec.
const maxFuzzDumpSeedBytes = 24 << 10

// maxFuzzDumpSeedsPerEncoding bounds the dump seeds of each encoding.
const maxFuzzDumpSeedsPerEncoding = 4

// seedSize returns the size of a file, or a huge one when it cannot be
// read.
func seedSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 1 << 62
	}
	return fi.Size()
}

func fuzzRead(t *testing.T, data []byte, format Format) {
	for _, opts := range []ReadOptions{
		{Format: format, Workers: 2},
		{Format: format, Workers: 2, Strict: true},
		{Workers: 1},
	} {
		opts.Stdin = bytes.NewReader(data)
		sunk := 0
		inputs, err := Read(context.Background(), []string{"-"}, opts, func(in *Input, td ptrace.Traces) error {
			sunk += td.SpanCount()
			if in.Spans != sunk {
				t.Fatalf("Input.Spans = %d after the sink got %d", in.Spans, sunk)
			}
			return nil
		})
		if len(inputs) != 1 {
			t.Fatalf("%d inputs for one", len(inputs))
		}
		if inputs[0].Spans != sunk {
			t.Fatalf("Input.Spans = %d, the sink got %d", inputs[0].Spans, sunk)
		}
		if err != nil {
			re, ok := errors.AsType[*ReadError](err)
			if !ok || re.Path != "-" {
				t.Fatalf("error %v (%T) is not a ReadError naming the input", err, err)
			}
			if sunk > 0 && !opts.Strict {
				t.Fatalf("non-strict read kept %d spans yet failed: %v", sunk, err)
			}
			continue
		}
		if opts.Strict && inputs[0].Partial {
			t.Fatalf("strict read succeeded with a partial input: %+v", inputs[0])
		}
	}
	fuzzLoad(t, data, format)
}

// fuzzLoad reads data the way `mcptrace analyze` does, through Load and
// its fast path for OTLP JSON lines, and checks it indexes exactly what
// Read's pdata batches index: the same spans, traces, duplicates and
// incomplete traces, and the same error or none.
func fuzzLoad(t *testing.T, data []byte, format Format) {
	opts := ReadOptions{Format: format, Workers: 2, Stdin: bytes.NewReader(data)}
	idx, inputs, err := Load(context.Background(), []string{"-"}, LoadOptions{Read: opts})
	ref := NewIndex(IndexOptions{})
	opts.Stdin = bytes.NewReader(data)
	refInputs, refErr := Read(context.Background(), []string{"-"}, opts, func(_ *Input, td ptrace.Traces) error {
		ref.Add(td)
		return nil
	})
	if (err == nil) != (refErr == nil) {
		t.Fatalf("Load error %v, Read error %v", err, refErr)
	}
	if len(inputs) != 1 || len(refInputs) != 1 || inputs[0].Spans != refInputs[0].Spans || inputs[0].Partial != refInputs[0].Partial {
		t.Fatalf("Load read %+v, Read %+v", inputs, refInputs)
	}
	if idx.Spans() != ref.Spans() || idx.Traces() != ref.Traces() || idx.Duplicates() != ref.Duplicates() || idx.IncompleteTraces() != ref.IncompleteTraces() {
		t.Fatalf("Load indexed %d spans, %d traces, %d duplicates, %d incomplete; Read %d, %d, %d, %d",
			idx.Spans(), idx.Traces(), idx.Duplicates(), idx.IncompleteTraces(), ref.Spans(), ref.Traces(), ref.Duplicates(), ref.IncompleteTraces())
	}
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
		idx, _, err := Load(context.Background(), []string{"-"}, LoadOptions{Read: ReadOptions{Stdin: bytes.NewReader(data), MaxMemory: 8 << 20}})
		if err != nil {
			if _, ok := errors.AsType[*ReadError](err); !ok {
				t.Fatalf("error %v (%T) is not a ReadError", err, err)
			}
			return
		}
		root := Selector{Name: "plugin.mcp.connection.handshake"}
		for _, cfg := range []Config{{}, {ExecutionRoot: &root}} {
			_, err := Analyze(idx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			res, err := ObserveRules(idx, cfg, BuiltinRules(cfg), ObserveOptions{})
			if err != nil || len(res) != len(BuiltinRules(cfg)) {
				t.Fatalf("rules: %d results, %v", len(res), err)
			}
		}
	})
}

// TestMalformedInputsNameTheirPlace reads each broken input from disk in
// strict mode: the error names the file and a place in it. The corpus's
// readable-* files are well-formed dumps of broken spans (see
// malformed_test.go): they must read without an error.
func TestMalformedInputsNameTheirPlace(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "malformed", "*"))
	if err != nil || len(paths) < 8 {
		t.Fatalf("malformed inputs: %v, %v", paths, err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, _, err := readPaths(t, []string{path}, ReadOptions{Strict: true})
			if strings.HasPrefix(filepath.Base(path), "readable-") {
				if err != nil {
					t.Errorf("a well-formed dump failed to read: %v", err)
				}
				return
			}
			re, ok := errors.AsType[*ReadError](err)
			if !ok {
				t.Fatalf("err = %v, want a *ReadError", err)
			}
			if re.Path != path || !strings.HasPrefix(err.Error(), path) {
				t.Errorf("error %q does not start with the path %s", err, path)
			}
			if re.Line <= 0 && re.Offset < 0 && !errors.Is(err, ErrEmptyInput) {
				t.Errorf("error %q names no line or byte offset", err)
			}
			if re.Expected == "" {
				t.Errorf("error %q does not say what was expected", err)
			}
		})
	}
}
