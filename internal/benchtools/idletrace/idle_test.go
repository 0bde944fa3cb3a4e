package main

import (
	"bytes"
	"context"
	"runtime"
	"runtime/trace"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// spin does n steps of arithmetic that allocates nothing: a phase's work
// that keeps one core busy without the collector joining in.
func spin(n int) uint64 {
	x := uint64(1)
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// TestIdleTimeIsSplitByThePhasesThatRanAndWaited pins what the report
// says of a run on two procs where one phase works while another waits
// on a channel for it: the largest idle situation is the working phase
// alone, the waiting one listed with where it waits, one proc's idle time
// at most, and the procs are the trace's own GOMAXPROCS. A situation
// that changes by a goroutine's state alone, or by its region alone, is
// told apart from the one before.
func TestIdleTimeIsSplitByThePhasesThatRanAndWaited(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	release, done := make(chan struct{}), make(chan struct{})
	go trace.WithRegion(ctx, "index", func() { <-release; close(done) })
	// A goroutine outside every phase blocked in a system call all along
	// (the runtime's own, such as a signal wait, are alike) holds no core.
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	read := make(chan struct{})
	go func() {
		var b [1]byte
		_, _ = syscall.Read(fds[0], b[:]) // blocks in the kernel, not the poller
		close(read)
	}()
	// Then the work passes to another phase's goroutine with no region
	// begun or ended (group), and then to another phase of the first
	// goroutine with no goroutine blocked or woken (finalize): each is a
	// situation of its own.
	startGroup, groupDone := make(chan struct{}), make(chan struct{})
	var sink, groupSink uint64
	go trace.WithRegion(ctx, "group", func() { <-startGroup; groupSink = spin(30_000_000); close(groupDone) })
	trace.WithRegion(ctx, "decode", func() {
		sink = spin(100_000_000)
		close(startGroup)
		<-groupDone
	})
	trace.WithRegion(ctx, "finalize", func() { sink += spin(30_000_000) + groupSink })
	close(release)
	<-done
	if _, err := syscall.Write(fds[1], []byte{1}); err != nil {
		t.Fatal(err)
	}
	<-read
	trace.Stop()
	_ = sink

	rep, err := Analyze(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Procs != 2 || rep.Idle <= 0 || rep.Idle > 2*rep.Wall {
		t.Fatalf("%d procs, %.1f core-ms idle of %.1f ms; want 2 procs and some idle time, at most all of it", rep.Procs, rep.Idle, rep.Wall)
	}
	top := rep.Rows[0]
	waits := slices.IndexFunc(top.Waiting, func(w string) bool { return strings.HasPrefix(w, "index @ ") })
	if !slices.Equal(top.Ran, []string{"decode"}) || waits < 0 {
		t.Errorf("largest idle situation: ran %v, waiting %v; want decode alone, index waiting", top.Ran, top.Waiting)
	}
	alone := func(phase, waiting string) bool {
		return slices.ContainsFunc(rep.Rows, func(row Row) bool {
			return slices.Equal(row.Ran, []string{phase}) && row.Idle > 0 &&
				(waiting == "" || slices.ContainsFunc(row.Waiting, func(w string) bool { return strings.HasPrefix(w, waiting+" @ ") }))
		})
	}
	if !alone("group", "decode") || !alone("finalize", "") {
		t.Errorf("rows %+v: want group alone while decode waits, and finalize alone", rep.Rows)
	}
	// One goroutine runs, one proc of two idles: no more than the wall.
	if top.Idle > rep.Wall {
		t.Errorf("decode alone: %.1f core-ms idle in %.1f ms: more than the one idle proc", top.Idle, rep.Wall)
	}
	sum := 0.0
	for _, row := range rep.Rows {
		sum += row.Idle
	}
	if d := sum - rep.Idle; d > 1e-6 || d < -1e-6 {
		t.Errorf("rows add up to %.3f core-ms, the idle total is %.3f", sum, rep.Idle)
	}
}

// TestAnalyzeRefusesWhatIsNoTrace pins that input which is not an
// execution trace is an error, not an empty report.
func TestAnalyzeRefusesWhatIsNoTrace(t *testing.T) {
	for _, in := range []string{"", "not a trace", "go 1.22 trace\x00\x00\x00\x00"} {
		if rep, err := Analyze(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error, report %+v", in, rep)
		}
	}
}
