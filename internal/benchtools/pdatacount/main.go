// Command pdatacount computes the pool's hit rate from an OTLP JSON lines
// dump the way a Go programmer would without mcptrace: read the file line
// by line on one goroutine, decode each line with pdata's
// ptrace.JSONUnmarshaler (the Collector's own decoder) and count the
// acquire spans and those whose hit attribute is true.
// scripts/bench-versus.sh times it against `mcptrace analyze`.
//
// With -truth SPANS it decodes nothing: it counts the same two numbers in
// the batches internal/tracegen generates for a benchmark dump of SPANS
// spans, before any encoding, which is the answer every tool of the bench
// must give for the dump `gen -bench SPANS` writes.
//
// Usage:
//
//	pdatacount FILE
//	pdatacount -truth SPANS
//
// It prints {"acquires":N,"hits":M,"spans":S}.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// counts is the answer every tool of the bench prints, in the same JSON
// shape, so the script compares them field by field.
type counts struct {
	Acquires int64 `json:"acquires"`
	Hits     int64 `json:"hits"`
	Spans    int64 `json:"spans"`
}

// main reports a failure on stderr with a non-zero status, so the bench
// script stops instead of comparing a missing answer.
func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "pdatacount:", err)
		os.Exit(1)
	}
}

// run picks the mode from the flags and prints the counts as one JSON line.
func run() error {
	truth := flag.Int("truth", 0, "count the generator's benchmark workload of at least this many spans instead of reading a file")
	flag.Parse()
	var c counts
	var err error
	switch {
	case *truth > 0 && flag.NArg() == 0:
		c, err = generated(*truth)
	case *truth == 0 && flag.NArg() == 1:
		c, err = decoded(flag.Arg(0))
	default:
		return errors.New("usage: pdatacount FILE | pdatacount -truth SPANS")
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(c)
}

// decoded opens the JSON lines file and counts its spans through pdata,
// one line at a time, so memory holds one batch and never the dump.
func decoded(path string) (counts, error) {
	f, err := os.Open(path)
	if err != nil {
		return counts{}, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var u ptrace.JSONUnmarshaler
	var c counts
	var line []byte
	for n := 1; ; n++ {
		line, err = readLine(r, line[:0])
		if len(line) > 0 {
			td, uerr := u.UnmarshalTraces(line)
			if uerr != nil {
				return c, fmt.Errorf("%s:%d: %w", path, n, uerr)
			}
			c.add(td)
		}
		if err == io.EOF {
			return c, nil
		}
		if err != nil {
			return c, fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// readLine appends the next line of r, without its newline, to buf and
// returns it. Batches are lines of several megabytes, past a
// bufio.Scanner's default limit and possibly past the reader's buffer, so
// it gathers ReadSlice's pieces into buf, which the caller reuses. The
// error is io.EOF after the last line.
func readLine(r *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		piece, err := r.ReadSlice('\n')
		buf = append(buf, piece...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if n := len(buf); n > 0 && buf[n-1] == '\n' {
			buf = buf[:n-1]
		}
		return buf, err
	}
}

// generated counts the generator's benchmark batches as generated, the
// truth the decoders' answers are held against.
func generated(spanCount int) (counts, error) {
	var c counts
	_, err := tracegen.BenchBatches(spanCount, func(td ptrace.Traces) error {
		c.add(td)
		return nil
	})
	return c, err
}

// add counts one batch: every span, the spans named like the pool's
// acquire span, and among those the ones whose hit attribute is the
// boolean true, which is what the pool writes on a hit.
func (c *counts) add(td ptrace.Traces) {
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			ss := sss.At(j).Spans()
			c.Spans += int64(ss.Len())
			for k := range ss.Len() {
				s := ss.At(k)
				if s.Name() != spans.SpanAcquire {
					continue
				}
				c.Acquires++
				if v, ok := s.Attributes().Get(spans.AttrCacheHit); ok && v.Type() == pcommon.ValueTypeBool && v.Bool() {
					c.Hits++
				}
			}
		}
	}
}
