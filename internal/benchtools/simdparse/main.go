// Command simdparse measures github.com/minio/simdjson-go, the SIMD JSON
// parser the reader could have been built on, on the lines of an OTLP JSON
// lines dump held in memory, on one goroutine: parse only (the structural
// scan and the tape), and parse then walk the tape to every span's ids,
// name, kind, times and attributes, the fields the projection decoder of
// analyze/ingest reads. scripts/bench-reader.sh compares it with that
// decoder (BenchmarkDecodeOnly/jsonl/ours at -cpu 1) on the same generated
// records.
//
// It is its own module (this directory's go.mod) so that the main module
// does not require a parser it does not use.
//
// Usage:
//
//	simdparse [-iters N] [-spans N] FILE
//
// It prints {"parse_spans_s":X,"walk_spans_s":Y,"spans":N}: the median
// over the iterations of each pass's spans per second (the spans the walk
// found, over the pass's time). With -spans it fails unless the walk found
// that many spans.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/minio/simdjson-go"
)

// main reports a failure on stderr with a non-zero status, so the bench
// script stops instead of comparing a missing figure.
func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "simdparse:", err)
		os.Exit(1)
	}
}

func run() error {
	iters := flag.Int("iters", 3, "timed passes of each kind")
	want := flag.Int("spans", 0, "fail unless the walk finds this many spans (0: no check)")
	flag.Parse()
	if flag.NArg() != 1 || *iters < 1 {
		return errors.New("usage: simdparse [-iters N] [-spans N] FILE")
	}
	if !simdjson.SupportedCPU() {
		return errors.New("this CPU lacks the instructions simdjson-go needs (AVX2 and CLMUL)")
	}
	runtime.GOMAXPROCS(1)
	data, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		return err
	}
	lines := bytes.FieldsFunc(data, func(r rune) bool { return r == '\n' })
	var parse, walk []float64
	spans := 0
	for range *iters {
		secs, _, err := pass(lines, false)
		if err != nil {
			return err
		}
		parse = append(parse, secs)
		if secs, spans, err = pass(lines, true); err != nil {
			return err
		}
		walk = append(walk, secs)
	}
	if *want > 0 && spans != *want {
		return fmt.Errorf("the walk found %d spans, want %d", spans, *want)
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"parse_spans_s": float64(spans) / median(parse), "walk_spans_s": float64(spans) / median(walk), "spans": spans,
	})
}

// pass parses every line, walking each tape to its spans when walk is
// set, and returns the pass's seconds and the spans walked.
func pass(lines [][]byte, walk bool) (float64, int, error) {
	var pj *simdjson.ParsedJson
	var w walker
	start := time.Now()
	for _, l := range lines {
		var err error
		if pj, err = simdjson.Parse(l, pj, simdjson.WithCopyStrings(false)); err != nil {
			return 0, 0, fmt.Errorf("parse: %w", err)
		}
		if walk {
			if err := w.request(pj); err != nil {
				return 0, 0, err
			}
		}
	}
	return time.Since(start).Seconds(), w.spans, nil
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}
