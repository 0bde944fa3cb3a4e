package analyze

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
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

// seedFuzz adds the committed dumps of one format (the smaller scenarios,
// to keep the corpus quick) and every hand-made broken input.
func seedFuzz(f *testing.F, format string) {
	for _, sc := range []string{"semconv", "cold-init-one-read"} {
		for _, enc := range tracegen.Encodings() {
			if enc.Format != format {
				continue
			}
			data, err := os.ReadFile(filepath.Join("..", "testdata", "traces", sc+"."+enc.Ext))
			if err != nil {
				f.Fatalf("seed: %v (run go generate ./internal/tracegen)", err)
			}
			f.Add(data)
		}
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
