package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcptrace/mcptrace/analyze"
)

// exitInterrupted is the exit code of every command stopped by SIGINT or
// SIGTERM: 128 + SIGINT, what shells report for a process Ctrl-C ended, so
// a script can tell an interrupted gate from a verdict (0, 1, 3) or bad
// input (2).
const exitInterrupted = 130

// signalContext returns a context canceled by the first SIGINT or SIGTERM.
// After that first signal the default handling comes back, so a second
// Ctrl-C ends the process at once should a command be slow to stop.
//
// SIGPIPE is ignored: a write to a closed standard output then fails with
// EPIPE, which the command reports (exit 2) after writing the files it was
// asked for, rather than the process dying mid-way.
func signalContext() (context.Context, context.CancelFunc) {
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// interruptedExit reports whether ctx, the context the command ran under,
// was canceled by a signal: then the command exits 130 whatever it
// returned (a read cut short, a demo stopped early), saying so on stderr.
func interruptedExit(ctx context.Context, stderr io.Writer) (int, bool) {
	if ctx.Err() == nil {
		return 0, false
	}
	fmt.Fprintln(stderr, "mcptrace: interrupted")
	return exitInterrupted, true
}

// The phases of a command that reads dumps, as inPhase names them: those
// of analyze.AnalyzeDumps, then the rendering.
const (
	phaseRead     = analyze.PhaseRead
	phaseIndex    = analyze.PhaseIndex
	phaseMeasures = analyze.PhaseMeasures
	phaseRules    = analyze.PhaseRules
	phaseRender   = "render"
)

// phaseHook, when not nil, is told each phase's name as it starts, on the
// phase's goroutine: the signal tests' helper process says it on stderr,
// to signal a command in the phase under test, and can hold the phase
// there, as a phase stuck in work that looks at no context would be.
var phaseHook func(phase string)

// inPhase runs fn, one phase of a command, so that a canceled ctx (SIGINT,
// SIGTERM) answers at once whatever the phase is doing: fn runs on its own
// goroutine and inPhase returns exit 130 as soon as ctx is done, even while
// fn is inside a library call that looks at no context (a regex match, a
// sort, a write blocked on a full pipe). The loops of analyze that can run
// long look at ctx themselves, so fn stops soon after; the process exits
// anyway. A ctx already done when the phase would start runs nothing.
func inPhase[A, B any](ctx context.Context, name string, fn func() (A, B, error)) (A, B, error) {
	var a A
	var b B
	if err := ctx.Err(); err != nil {
		return a, b, interruptedIn(name, err)
	}
	type result struct {
		a   A
		b   B
		err error
	}
	done := make(chan result, 1)
	go func() {
		if phaseHook != nil {
			phaseHook(name) // on the phase's goroutine: a hook that blocks is a phase stuck
		}
		a, b, err := fn()
		done <- result{a, b, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && ctx.Err() != nil {
			return a, b, interruptedIn(name, ctx.Err())
		}
		return r.a, r.b, r.err
	case <-ctx.Done():
		return a, b, interruptedIn(name, ctx.Err())
	}
}

// interruptedIn is the exit-130 error of a phase a signal stopped.
func interruptedIn(phase string, err error) error {
	return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted during %s: %w", phase, err)}
}

// phaseError is an analysis phase's error as an exit error: as is when
// already one (an interruption), else bad input (2).
func phaseError(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee
	}
	return &exitError{code: 2, err: err}
}
