// Command gen writes mcptrace's generated trace dumps: every scenario of
// package tracegen in every encoding, into testdata/traces (run it through
// `go generate ./internal/tracegen`), or, with -bench, one large dump of the
// pool vocabulary for the benchmarks.
//
// Usage:
//
//	gen -out DIR
//	gen -bench SPANS -encoding otlp-jsonl -o FILE
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcptrace/mcptrace/internal/tracegen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	out := flag.String("out", "", "directory to write every scenario dump into")
	bench := flag.Int("bench", 0, "write one benchmark dump of at least this many spans instead")
	encoding := flag.String("encoding", "otlp-jsonl", "encoding of the benchmark dump: otlp-jsonl or otlp-proto")
	file := flag.String("o", "", "file to write the benchmark dump to")
	flag.Parse()

	switch {
	case *bench > 0:
		if *file == "" {
			return errors.New("-bench needs -o FILE")
		}
		return writeBench(*file, *encoding, *bench)
	case *out != "":
		return writeAll(*out)
	default:
		flag.Usage()
		return errors.New("need -out DIR or -bench SPANS -o FILE")
	}
}

func writeAll(dir string) error {
	files, err := tracegen.Files()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}

func writeBench(path, encoding string, spans int) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	n, err := tracegen.WriteBench(bw, encoding, spans)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(os.Stderr, "gen: wrote %d spans to %s\n", n, path)
	return nil
}
