package ingest

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// Source is where a run's spans come from: files ([Files]) or a tracing
// backend's query API (package analyze/backend). The engine drives every
// source the same way, so a figure never depends on where its spans were
// read: a source decodes its spans into the sink as Read does, batch by
// batch from the calling goroutine, and describes what it read.
type Source interface {
	// Read decodes every span of the source into sink and returns what
	// was read, one Input per file or query, even on error. It stops
	// promptly when ctx is done, returning ctx's error wrapped.
	Read(ctx context.Context, opts ReadOptions, sink Sink) ([]Input, error)
	// Rereadable reports whether a second Read yields the same spans: what
	// a speculative run needs to give up and read again holding every
	// trace. Stdin cannot; a backend whose window is still being written
	// to may answer differently, so it says no.
	Rereadable() bool
	// Bytes is how many bytes the source holds, as far as it knows
	// without reading (0 when it cannot tell): how much heap a run
	// readies before it starts.
	Bytes() int64
}

// Files is the source of the command line's paths: files, directories
// (walked), globs and "-" for stdin, read by [Read].
type Files []string

var _ Source = Files(nil)

// Read reads the paths: see the package function [Read].
func (f Files) Read(ctx context.Context, opts ReadOptions, sink Sink) ([]Input, error) {
	return Read(ctx, f, opts, sink)
}

// Rereadable reports whether the paths can be read a second time: each
// names a regular file (a directory's files are regular: the reader
// skips the rest), or a glob matching only those. Stdin, a pipe, a FIFO,
// /dev/fd/N (a shell's <(...)) or a device yields its bytes once. A path
// that cannot be found is the reader's error to report.
func (f Files) Rereadable() bool {
	for _, p := range f {
		if p == stdinPath {
			return false
		}
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() && !fi.Mode().IsRegular() {
				return false
			}
			continue
		}
		matches, _ := filepath.Glob(p)
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
				return false
			}
		}
	}
	return true
}

// Bytes sums the sizes of the regular files the paths name (directories
// walked, globs expanded), as far as they can be found; the reader
// reports any error later. Stdin counts as nothing.
func (f Files) Bytes() int64 {
	var n int64
	add := func(p string) {
		_ = filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
				n += fi.Size()
			}
			return nil
		})
	}
	for _, p := range f {
		if p == stdinPath {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			add(p)
			continue
		}
		matches, _ := filepath.Glob(p)
		for _, m := range matches {
			add(m)
		}
	}
	return n
}

// ReadFrom reads one input from r as Read reads a file named name: the
// same detection, decoders, bounds, warnings and cancellation. A
// backend's source (package analyze/backend) hands it each answer of its
// query API, so a span read from a backend is decoded by the very code
// that decodes it from a file.
func ReadFrom(ctx context.Context, name string, r io.Reader, opts ReadOptions, sink Sink) (Input, error) {
	opts.Stdin = r
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return readSource(ctx, source{path: name, stdin: true}, opts, workers, sink)
}

// BackendRead is what a backend's query asked for and fetched: the
// report says it beside the figures, so a reader knows which window of
// which services they measure and whether anything was left out.
type BackendRead struct {
	Backend  string    // the backend's kind, "jaeger"
	URL      string    // its base URL, without credentials
	Services []string  // the services asked for, in order
	Start    time.Time // the window: spans starting at or after Start
	End      time.Time // and before End
	Filter   string    // the span filter for people, "" for none
	Pages    int       // the pages kept (a page narrowed and asked again counts once)
	Traces   int       // the traces handed to the analysis
	Spans    int       // their spans
	Settling int       // traces still receiving spans, not judged
	Cut      bool      // a page held the most traces a request asks for at the narrowest range: traces may be missing
}
