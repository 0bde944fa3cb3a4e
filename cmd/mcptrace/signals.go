package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// exitInterrupted is the exit code of every command stopped by SIGINT or
// SIGTERM: 128 + SIGINT, what shells report for a process Ctrl-C ended, so
// a script can tell an interrupted gate from a verdict (0, 1, 3) or bad
// input (2).
const exitInterrupted = 130

// signalContext returns a context canceled by the first SIGINT or SIGTERM.
// After that first signal the default handling comes back, so a second
// Ctrl-C ends the process at once should a command be slow to stop.
func signalContext() (context.Context, context.CancelFunc) {
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
