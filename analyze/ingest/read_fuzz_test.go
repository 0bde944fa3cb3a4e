package ingest

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
		paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "traces", "*."+enc.Ext))
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
	malformed, err := filepath.Glob(filepath.Join("..", "..", "testdata", "malformed", "*"))
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
		// A plain Sink gets pdata; a BatchSink, as analyze's index is,
		// gets the projection decoders' batches where they apply.
		var plain, batched []Input
		var plainErr error
		for _, batches := range []bool{false, true} {
			opts.Stdin = bytes.NewReader(data)
			opts.Keep = testKeep
			s := &countingSink{t: t}
			var sink Sink = SinkFunc(s.ConsumeTraces)
			if batches {
				sink = s
			}
			inputs, err := Read(context.Background(), []string{"-"}, opts, sink)
			if len(inputs) != 1 {
				t.Fatalf("%d inputs for one", len(inputs))
			}
			if inputs[0].Spans != s.spans {
				t.Fatalf("Input.Spans = %d, the sink got %d", inputs[0].Spans, s.spans)
			}
			if !batches && s.batches > 0 {
				t.Fatalf("a plain Sink got %d batches", s.batches)
			}
			if err != nil {
				re, ok := errors.AsType[*ReadError](err)
				if !ok || re.Path != "-" {
					t.Fatalf("error %v (%T) is not a ReadError naming the input", err, err)
				}
				if s.spans > 0 && !opts.Strict {
					t.Fatalf("non-strict read kept %d spans yet failed: %v", s.spans, err)
				}
			} else if opts.Strict && inputs[0].Partial {
				t.Fatalf("strict read succeeded with a partial input: %+v", inputs[0])
			}
			if batches {
				batched = inputs
				sameErr := (err == nil) == (plainErr == nil) && (err == nil || err.Error() == plainErr.Error())
				if !sameErr || batched[0].Spans != plain[0].Spans || batched[0].Partial != plain[0].Partial ||
					!slices.Equal(batched[0].Warnings, plain[0].Warnings) {
					t.Fatalf("with batches: %+v, %v; with pdata only: %+v, %v", batched[0], err, plain[0], plainErr)
				}
			} else {
				plain, plainErr = inputs, err
			}
		}
	}
}

// countingSink counts what it gets and checks Input.Spans as it goes.
type countingSink struct {
	t              testing.TB
	spans, batches int
}

func (s *countingSink) ConsumeTraces(in *Input, td ptrace.Traces) error {
	s.spans += td.SpanCount()
	if in.Spans != s.spans {
		s.t.Fatalf("Input.Spans = %d after the sink got %d", in.Spans, s.spans)
	}
	return nil
}

func (s *countingSink) ConsumeBatch(in *Input, b *Batch) error {
	s.batches++
	s.spans += len(b.Spans)
	if in.Spans != s.spans {
		s.t.Fatalf("Input.Spans = %d after the sink got %d", in.Spans, s.spans)
	}
	return nil
}

// inflatedSize is the size of what a gzip or zstd file holds (as far as it
// decompresses), or the file's size.
func inflatedSize(t testing.TB, path string) int64 {
	t.Helper()
	raw, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	s, err := openStream(path, raw, -1, 0, maxZstdWindow)
	if err != nil {
		return 0
	}
	defer s.close()
	var n int64
	buf := make([]byte, 64<<10)
	for {
		k, err := s.Read(buf)
		n += int64(k)
		if err != nil {
			return n
		}
	}
}

// TestMalformedInputsNameTheirPlace reads each broken input from disk in
// strict mode: the error names the file and a place in it. The corpus's
// readable-* files are well-formed dumps of broken spans, its cut-* files
// dumps with a value nested past MaxDepth (see malformed_test.go): they
// must read without an error.
func TestMalformedInputsNameTheirPlace(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "malformed", "*"))
	if err != nil || len(paths) < 8 {
		t.Fatalf("malformed inputs: %v, %v", paths, err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, _, err := readPaths(t, []string{path}, ReadOptions{Strict: true})
			if strings.HasPrefix(filepath.Base(path), "readable-") || strings.HasPrefix(filepath.Base(path), "cut-") {
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
