package ingest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/phase"
)

// startedReader closes started on its first Read, so a test cancels only
// once the reader is really blocked.
type startedReader struct {
	r       io.Reader
	started chan struct{}
	once    bool
}

func (s *startedReader) Read(p []byte) (int, error) {
	if !s.once {
		s.once = true
		close(s.started)
	}
	return s.r.Read(p)
}

// readUntilCancel runs Read on paths, cancels once ready is closed, and
// returns Read's error, failing the test if Read does not return.
func readUntilCancel(t *testing.T, paths []string, opts ReadOptions, ready <-chan struct{}) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Read(ctx, paths, opts, SinkFunc(func(*Input, ptrace.Traces) error { return nil }))
		done <- err
	}()
	<-ready
	cancel()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second): // a bound on a hang, not a speed assertion
		t.Fatal("Read still blocked 30 s after its context was canceled")
		return nil
	}
}

func TestReadReturnsWhenCanceledWhileBlocked(t *testing.T) {
	t.Run("idle stdin", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		defer pw.Close() // releases the abandoned read
		started := make(chan struct{})
		err = readUntilCancel(t, []string{"-"}, ReadOptions{Stdin: &startedReader{r: pr, started: started}}, started)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Read = %v, want context.Canceled", err)
		}
	})
	t.Run("stdin idle after a partial line", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		defer pw.Close()
		if _, err := pw.Write([]byte(`{"resourceSpans":[`)); err != nil {
			t.Fatal(err)
		}
		started := make(chan struct{})
		err = readUntilCancel(t, []string{"-"}, ReadOptions{Stdin: &startedReader{r: pr, started: started}}, started)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Read = %v, want context.Canceled", err)
		}
	})
	t.Run("FIFO without a writer", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "dump.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
		// Opening a FIFO blocks until a writer comes.
		ready := make(chan struct{})
		testHookOpening = func(string) { close(ready) }
		defer func() { testHookOpening = nil }()
		err := readUntilCancel(t, []string{fifo}, ReadOptions{}, ready)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Read = %v, want context.Canceled", err)
		}
		// Release the abandoned open: a writer comes (O_RDWR never blocks
		// on a FIFO) and stays, since the open may not have reached the
		// kernel yet; the abandoned goroutine closes its end and returns.
		if _, err := os.OpenFile(fifo, os.O_RDWR, 0); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCancelReaderReadsInTheReadPhase pins that the goroutine making the
// read syscalls carries the read phase's label from its start: the
// kernel's copy of the input is the read phase's CPU in a profile, not
// the runtime's.
func TestCancelReaderReadsInTheReadPhase(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	c := newCancelReader(context.Background(), r)
	defer c.close()
	got := phase.Await("ingest.(*cancelReader).loop", 1, time.Minute)
	if len(got) == 0 {
		t.Fatal("no goroutine in cancelReader.loop")
	}
	for _, l := range got {
		if l != phase.Read {
			t.Errorf("a reading goroutine is labelled %q, want %q", l, phase.Read)
		}
	}
}
