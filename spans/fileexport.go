package spans

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"go.opentelemetry.io/collector/pdata/ptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ErrExporterShutdown is returned by [FileExporter.ExportSpans] after
// [FileExporter.Shutdown]: the spans were not written. Callers that race a
// late export against shutdown can recognise it with errors.Is.
var ErrExporterShutdown = errors.New("trace file exporter is shut down")

// FileExporter is an [sdktrace.SpanExporter] that writes spans as the
// OpenTelemetry Collector's file exporter does in JSON mode: each export is
// one OTLP ExportTraceServiceRequest, marshaled by pdata's
// [ptrace.JSONMarshaler] (hex trace and span ids), on its own line. The
// result is a dump that the analyzer, the Collector's otlpjsonfile receiver
// and jq can all read, with no collector running.
//
// A FileExporter is safe for concurrent use: every ExportSpans call writes
// its line with a single Write under a lock, so lines from concurrent exports
// never interleave. Shutdown is idempotent. The zero value is not usable;
// build one with [NewFileExporter] or [CreateFileExporter].
type FileExporter struct {
	dest      string    // named in errors: the file path, or "writer"
	closer    io.Closer // closed by Shutdown; nil when the caller owns the writer
	marshaler ptrace.JSONMarshaler

	mu       sync.Mutex
	w        io.Writer // guarded by mu
	shutdown bool      // guarded by mu
}

var _ sdktrace.SpanExporter = (*FileExporter)(nil)

// NewFileExporter returns a FileExporter writing JSON lines to w. The caller
// keeps ownership of w: Shutdown stops writing but does not close it, so w
// may be a buffer, stdout or a file the caller closes itself.
func NewFileExporter(w io.Writer) *FileExporter {
	return &FileExporter{dest: "writer", w: w}
}

// CreateFileExporter creates the file at path, truncating any previous dump
// (one run, one file, as a test or demo expects), and returns a FileExporter
// that owns it: Shutdown closes the file. The parent directory must exist.
func CreateFileExporter(path string) (*FileExporter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create trace dump %s: %w", path, err)
	}
	return &FileExporter{dest: path, w: f, closer: f}, nil
}

// ExportSpans writes spans as one JSON line. A call with no spans writes
// nothing (the Collector never receives an empty request either). It returns
// ctx's error if ctx is already done, [ErrExporterShutdown] after Shutdown,
// and a wrapped write error naming the destination if the write fails.
func (e *FileExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("export spans to %s: %w", e.dest, err)
	}
	var line []byte
	if len(spans) > 0 {
		// Convert and marshal before taking the lock: it is the slow part and
		// needs no shared state.
		buf, err := e.marshaler.MarshalTraces(ToTraces(spans))
		if err != nil {
			return fmt.Errorf("marshal spans for %s: %w", e.dest, err)
		}
		line = append(buf, '\n')
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.shutdown {
		return fmt.Errorf("export spans to %s: %w", e.dest, ErrExporterShutdown)
	}
	if len(line) == 0 {
		return nil
	}
	if _, err := e.w.Write(line); err != nil {
		return fmt.Errorf("write trace dump %s: %w", e.dest, err)
	}
	return nil
}

// Shutdown stops the exporter: later exports fail with
// [ErrExporterShutdown]. For an exporter from [CreateFileExporter] it closes
// the file and returns the close error, if any. Shutdown is idempotent and
// safe to call concurrently; calls after the first return nil. It does not
// block on ctx: closing a file is not cancellable.
func (e *FileExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.shutdown {
		return nil
	}
	e.shutdown = true
	e.w = nil
	if e.closer != nil {
		if err := e.closer.Close(); err != nil {
			return fmt.Errorf("close trace dump %s: %w", e.dest, err)
		}
	}
	return nil
}
