package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

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
//
// What a crash can lose. The exporter keeps no buffer: each export is one
// write(2), so a line it has exported is in the operating system's hands
// and survives the process being killed (SIGKILL, OOM killer, a panic). Two
// things can still be lost:
//   - spans not yet exported: with batching (Config.Synchronous false) the
//     SDK's batch processor holds up to its queue (2048 spans by default,
//     ended in the last few seconds) in memory, and a killed process loses
//     them; the dump then ends early and the analyzer reports the traces cut
//     short as incomplete. Shutdown or a flush exports them first;
//     Config.Synchronous exports each span as it ends and loses none.
//   - written lines not yet on disk when the machine itself fails (power, a
//     kernel panic): [FileExporter.ForceFlush] and Shutdown call Sync on the
//     file, so everything exported before them is on stable storage.
//
// A line cut by a crash in the middle of a write is reported by the analyzer
// as a truncated last line; the lines before it are read.
type FileExporter struct {
	dest      string    // named in errors: the file path, or "writer"
	closer    io.Closer // closed by Shutdown; nil when the caller owns the writer
	marshaler ptrace.JSONMarshaler

	mu       sync.Mutex
	w        io.Writer // guarded by mu
	shutdown bool      // guarded by mu
}

// syncer is what ForceFlush and Shutdown call to put written lines on
// stable storage; *os.File implements it.
type syncer interface{ Sync() error }

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

// ForceFlush puts every line exported so far on stable storage: it calls
// Sync on the destination when it has one (a file), so a machine crash after
// ForceFlush returns loses none of them. The exporter buffers nothing itself;
// spans still queued in a batch span processor are flushed by the tracer
// provider's ForceFlush, which callers run first (Telemetry.ForceFlush does
// both). A destination that cannot be synced (a pipe, a terminal, a buffer)
// is not an error. After Shutdown it returns nil. It does not block on ctx:
// fsync is not cancellable.
func (e *FileExporter) ForceFlush(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.shutdown {
		return nil
	}
	return e.syncLocked()
}

// syncLocked syncs the destination. e.mu must be held.
func (e *FileExporter) syncLocked() error {
	s, ok := e.w.(syncer)
	if !ok {
		return nil
	}
	if err := s.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		// EINVAL and ENOTSUP: a pipe, socket or terminal, nothing to sync.
		return fmt.Errorf("sync trace dump %s: %w", e.dest, err)
	}
	return nil
}

// Shutdown stops the exporter: later exports fail with
// [ErrExporterShutdown]. It first syncs the destination as ForceFlush does,
// so the dump is on stable storage, then, for an exporter from
// [CreateFileExporter], closes the file; it returns the sync and close
// errors, if any. Shutdown is idempotent and safe to call concurrently;
// calls after the first return nil. It does not block on ctx: syncing and
// closing a file are not cancellable.
func (e *FileExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.shutdown {
		return nil
	}
	e.shutdown = true
	var errs []error
	if err := e.syncLocked(); err != nil {
		errs = append(errs, err)
	}
	e.w = nil
	if e.closer != nil {
		if err := e.closer.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close trace dump %s: %w", e.dest, err))
		}
	}
	return errors.Join(errs...)
}
