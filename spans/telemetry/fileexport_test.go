package telemetry_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

func TestFileExporterWritesOneOTLPJSONLinePerExport(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "dump.jsonl")
	exp, err := telemetry.CreateFileExporter(path)
	if err != nil {
		t.Fatal(err)
	}
	// A syncer exports each span as it ends: one export, one line.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tracer := tp.Tracer(spans.ScopeName)

	invokeCtx, invoke := tracer.Start(ctx, spans.SpanInvoke,
		trace.WithAttributes(attribute.String(spans.AttrToolName, "list_logs")))
	_, acquire := tracer.Start(invokeCtx, spans.SpanAcquire,
		trace.WithAttributes(attribute.Bool(spans.AttrCacheHit, true), attribute.Int(spans.AttrAttempt, 1)))
	acquire.End()
	invoke.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}

	lines, traces := readDump(t, path)
	if len(lines) != 2 {
		t.Fatalf("dump has %d lines, want 2 (one per export)", len(lines))
	}
	wantOrder := []struct {
		span trace.Span
		name string
	}{{acquire, spans.SpanAcquire}, {invoke, spans.SpanInvoke}}
	for i, w := range wantOrder {
		got := flatten(traces[i])
		if len(got) != 1 {
			t.Fatalf("line %d holds %d spans, want 1", i+1, len(got))
		}
		s := got[0].Span
		if s.Name() != w.name {
			t.Errorf("line %d span = %q, want %q", i+1, s.Name(), w.name)
		}
		sc := w.span.SpanContext()
		// The Collector's JSON encoding: ids as lower-case hex strings.
		for _, want := range []string{
			`"traceId":"` + sc.TraceID().String() + `"`,
			`"spanId":"` + sc.SpanID().String() + `"`,
		} {
			if !strings.Contains(lines[i], want) {
				t.Errorf("line %d lacks %s:\n%s", i+1, want, lines[i])
			}
		}
		if got[0].Scope.Name() != spans.ScopeName {
			t.Errorf("line %d scope = %q, want %q", i+1, got[0].Scope.Name(), spans.ScopeName)
		}
	}
	acq := flatten(traces[0])[0].Span
	if got, want := acq.ParentSpanID().String(), invoke.SpanContext().SpanID().String(); got != want {
		t.Errorf("acquire parent = %s, want invoke %s", got, want)
	}
	if v, ok := acq.Attributes().Get(spans.AttrCacheHit); !ok || !v.Bool() {
		t.Errorf("acquire %s = %v (present %v), want true", spans.AttrCacheHit, v.AsRaw(), ok)
	}
	if v, ok := acq.Attributes().Get(spans.AttrAttempt); !ok || v.Int() != 1 {
		t.Errorf("acquire %s = %v (present %v), want 1", spans.AttrAttempt, v.AsRaw(), ok)
	}
	inv := flatten(traces[1])[0].Span
	if got := strAttr(inv.Attributes(), spans.AttrToolName); got != "list_logs" {
		t.Errorf("invoke %s = %q, want list_logs", spans.AttrToolName, got)
	}
}

func TestFileExporterBatchWritesAllSpansInOneLine(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	exp := telemetry.NewFileExporter(&buf)
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	for range 5 {
		_, s := tp.Tracer("t").Start(ctx, spans.SpanCallTool)
		s.End()
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	lines, traces := parseDump(t, buf.Bytes())
	if len(lines) != 1 {
		t.Fatalf("dump has %d lines, want 1 batch", len(lines))
	}
	if got := traces[0].SpanCount(); got != 5 {
		t.Errorf("batch holds %d spans, want 5", got)
	}
}

func TestFileExporterConcurrentExportsWriteWholeLines(t *testing.T) {
	const (
		workers   = 8
		exports   = 25
		batchSize = 4
	)
	rec := telemetry.NewRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	for range batchSize {
		_, s := tp.Tracer("t").Start(context.Background(), spans.SpanCallTool,
			trace.WithAttributes(attribute.String(spans.AttrToolName, strings.Repeat("x", 2048))))
		s.End()
	}
	batch := rec.Spans()

	// A bare bytes.Buffer is not safe for concurrent use: the race detector
	// fails the test unless the exporter serialises its writes.
	var buf bytes.Buffer
	exp := telemetry.NewFileExporter(&buf)
	var wg sync.WaitGroup
	errs := make(chan error, workers*exports)
	for range workers {
		wg.Go(func() {
			for range exports {
				if err := exp.ExportSpans(context.Background(), batch); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("export: %v", err)
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}

	lines, traces := parseDump(t, buf.Bytes())
	if got, want := len(lines), workers*exports; got != want {
		t.Fatalf("dump has %d lines, want %d", got, want)
	}
	for i, td := range traces {
		if got := td.SpanCount(); got != batchSize {
			t.Fatalf("line %d holds %d spans, want %d", i+1, got, batchSize)
		}
	}
}

func TestFileExporterLifecycle(t *testing.T) {
	ctx := context.Background()
	rec := telemetry.NewRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(ctx) }()
	_, s := tp.Tracer("t").Start(ctx, spans.SpanInvoke)
	s.End()
	one := rec.Spans()

	t.Run("shutdown is idempotent and closes the file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "dump.jsonl")
		exp, err := telemetry.CreateFileExporter(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := exp.ExportSpans(ctx, one); err != nil {
			t.Fatalf("export: %v", err)
		}
		for i := range 3 {
			if err := exp.Shutdown(ctx); err != nil {
				t.Fatalf("shutdown #%d: %v", i+1, err)
			}
		}
		err = exp.ExportSpans(ctx, one)
		if !errors.Is(err, telemetry.ErrExporterShutdown) {
			t.Fatalf("export after shutdown = %v, want ErrExporterShutdown", err)
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name the file", err)
		}
		if lines, _ := readDump(t, path); len(lines) != 1 {
			t.Errorf("dump has %d lines, want the 1 written before shutdown", len(lines))
		}
	})

	t.Run("export after shutdown errors even when empty", func(t *testing.T) {
		exp := telemetry.NewFileExporter(&bytes.Buffer{})
		if err := exp.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if err := exp.ExportSpans(ctx, nil); !errors.Is(err, telemetry.ErrExporterShutdown) {
			t.Fatalf("empty export after shutdown = %v, want ErrExporterShutdown", err)
		}
	})

	t.Run("shutdown leaves a caller's writer open", func(t *testing.T) {
		w := &closeRecorder{}
		exp := telemetry.NewFileExporter(w)
		if err := exp.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if w.closed {
			t.Error("Shutdown closed a writer the caller owns")
		}
	})

	t.Run("empty export writes nothing", func(t *testing.T) {
		var buf bytes.Buffer
		exp := telemetry.NewFileExporter(&buf)
		if err := exp.ExportSpans(ctx, nil); err != nil {
			t.Fatalf("export: %v", err)
		}
		if buf.Len() != 0 {
			t.Errorf("empty export wrote %q", buf.String())
		}
	})

	t.Run("canceled context is not written", func(t *testing.T) {
		var buf bytes.Buffer
		exp := telemetry.NewFileExporter(&buf)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := exp.ExportSpans(cctx, one); !errors.Is(err, context.Canceled) {
			t.Fatalf("export = %v, want context.Canceled", err)
		}
		if buf.Len() != 0 {
			t.Errorf("canceled export wrote %q", buf.String())
		}
	})

	t.Run("write failure is reported", func(t *testing.T) {
		exp := telemetry.NewFileExporter(failingWriter{})
		err := exp.ExportSpans(ctx, one)
		if !errors.Is(err, errDiskFull) {
			t.Fatalf("export = %v, want the write error", err)
		}
		if !strings.Contains(err.Error(), "write trace dump") {
			t.Errorf("error %q lacks context", err)
		}
	})
}

func TestCreateFileExporter(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		path    string
		prepare func(t *testing.T, path string)
		wantErr bool
	}{
		{name: "new file", path: filepath.Join(dir, "new.jsonl")},
		{
			name: "truncates an old dump",
			path: filepath.Join(dir, "old.jsonl"),
			prepare: func(t *testing.T, path string) {
				if err := os.WriteFile(path, []byte("stale\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
		},
		{name: "missing directory", path: filepath.Join(dir, "missing", "dump.jsonl"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.prepare != nil {
				tt.prepare(t, tt.path)
			}
			exp, err := telemetry.CreateFileExporter(tt.path)
			if tt.wantErr {
				if err == nil {
					_ = exp.Shutdown(context.Background())
					t.Fatal("CreateFileExporter succeeded, want an error")
				}
				if !strings.Contains(err.Error(), tt.path) {
					t.Errorf("error %q does not name the path", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CreateFileExporter: %v", err)
			}
			if err := exp.Shutdown(context.Background()); err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			data, err := os.ReadFile(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) != 0 {
				t.Errorf("file holds %q, want empty", data)
			}
		})
	}
}

type closeRecorder struct {
	bytes.Buffer
	closed bool
}

func (c *closeRecorder) Close() error {
	c.closed = true
	return nil
}

var errDiskFull = errors.New("disk full")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

// syncRecorder is a destination that counts Sync calls, as *os.File would
// receive them, and can fail them.
type syncRecorder struct {
	bytes.Buffer
	syncs   int
	syncErr error
}

func (s *syncRecorder) Sync() error { s.syncs++; return s.syncErr }

// TestFileExporterSyncsOnFlushAndShutdown pins that the exporter puts
// the dump on stable storage when flushed and when shut down, and reports a
// failed sync instead of dropping it.
func TestFileExporterSyncsOnFlushAndShutdown(t *testing.T) {
	ctx := context.Background()
	dst := &syncRecorder{}
	exp := telemetry.NewFileExporter(dst)
	if err := exp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	if dst.syncs != 1 {
		t.Errorf("ForceFlush synced %d times, want 1", dst.syncs)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if dst.syncs != 2 {
		t.Errorf("Shutdown did not sync: %d syncs, want 2", dst.syncs)
	}
	if err := exp.ForceFlush(ctx); err != nil || dst.syncs != 2 {
		t.Errorf("ForceFlush after Shutdown: err %v, %d syncs, want nil and 2", err, dst.syncs)
	}

	failing := &syncRecorder{syncErr: errors.New("disk on fire")}
	exp = telemetry.NewFileExporter(failing)
	if err := exp.ForceFlush(ctx); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("ForceFlush with a failing sync: err = %v", err)
	}
	if err := exp.Shutdown(ctx); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Shutdown with a failing sync: err = %v", err)
	}
}

// TestFileExporterToAPipeIsNotASyncError pins that a destination that cannot
// be synced (a pipe: EINVAL) is not reported as a failure.
func TestFileExporterToAPipeIsNotASyncError(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	exp := telemetry.NewFileExporter(w)
	if err := exp.ForceFlush(context.Background()); err != nil {
		t.Errorf("ForceFlush on a pipe: %v", err)
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown on a pipe: %v", err)
	}
}

// crashChildEnv makes the test binary the child of
// TestTelemetryFlushSurvivesSIGKILL: it writes spans, flushes if asked, and
// kills itself.
const crashChildEnv = "MCPTRACE_SPANS_CRASH_CHILD"

// crashSpans is how many spans the child ends before it is killed: fewer
// than the batch queue, so without a flush they all sit in memory.
const crashSpans = 300

// TestTelemetryFlushSurvivesSIGKILL runs a child process that exports to a
// dump with batching, ends crashSpans spans and kills itself with SIGKILL.
// Without a flush the batch processor's queue dies with the process (the
// loss the exporter's doc describes); after Telemetry.ForceFlush every span
// is in the dump.
func TestTelemetryFlushSurvivesSIGKILL(t *testing.T) {
	if mode := os.Getenv(crashChildEnv); mode != "" {
		crashChild(mode)
		return
	}
	for _, c := range []struct {
		mode    string
		atLeast int
		atMost  int
	}{{"flush", crashSpans, crashSpans}, {"noflush", 0, crashSpans - 1}} {
		t.Run(c.mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dump.jsonl")
			cmd := exec.Command(os.Args[0], "-test.run=^TestTelemetryFlushSurvivesSIGKILL$")
			cmd.Env = append(os.Environ(), crashChildEnv+"="+c.mode, "MCPTRACE_SPANS_CRASH_DUMP="+path)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child did not die by SIGKILL: %v\n%s", err, out)
			}
			n := 0
			if data, err := os.ReadFile(path); err == nil && len(data) > 0 {
				_, traces := readDump(t, path)
				for _, tr := range traces {
					n += len(flatten(tr))
				}
			}
			if n < c.atLeast || n > c.atMost {
				t.Errorf("%s: %d spans in the dump after SIGKILL, want %d..%d", c.mode, n, c.atLeast, c.atMost)
			}
		})
	}
}

// crashChild is the child's body; it never returns.
func crashChild(mode string) {
	ctx := context.Background()
	tel, err := telemetry.Setup(ctx, telemetry.Config{Exporter: telemetry.ExporterFile, FilePath: os.Getenv("MCPTRACE_SPANS_CRASH_DUMP")})
	if err != nil {
		os.Exit(3)
	}
	tracer := tel.Tracer()
	for range crashSpans {
		_, s := tracer.Start(ctx, spans.SpanAcquire)
		s.End()
	}
	if mode == "flush" {
		if err := tel.ForceFlush(ctx); err != nil {
			os.Exit(4)
		}
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL is not deliverable late, but never return into the test
}
