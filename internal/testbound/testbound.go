// Package testbound bounds how long a test waits on a child process or a
// real part (a browser, Prometheus, a peer server) by the test binary's own
// deadline, go test -timeout, instead of a wall-clock constant: a constant
// a quiet machine never nears is reached on a loaded one, and the suite then
// fails because the machine was busy. The context it gives ends a grace
// period before the binary would panic, so a hung child is still killed and
// reported with its output; with -timeout 0 it never ends.
package testbound

import (
	"context"
	"time"
)

// Deadliner is what Context needs of a test: *testing.T has it.
type Deadliner interface {
	Deadline() (time.Time, bool)
}

// Context returns a context that ends Grace(left) before t's deadline,
// where left is the time until it, and never when t has none. The caller
// cancels it, as any context.
func Context(t Deadliner) (context.Context, context.CancelFunc) {
	d, ok := t.Deadline()
	if !ok {
		return context.WithCancel(context.Background())
	}
	return context.WithDeadline(context.Background(), d.Add(-Grace(time.Until(d))))
}

// Grace is how long before the binary's deadline a bounded wait gives up,
// given left until it: a tenth of it, at least 5 s and at most a minute,
// the time a failing test needs to kill its child and print what it saw.
func Grace(left time.Duration) time.Duration {
	return min(max(left/10, 5*time.Second), time.Minute)
}
