package mcptraceconnector

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// sweeper is the lifecycle both kinds of leg share: periodic work on a
// goroutine of its own from Start until Shutdown, then final work once.
// Start may be skipped (Shutdown alone still runs the final work) and
// Shutdown may be called twice (the second returns the first's error).
type sweeper struct {
	started  atomic.Bool
	stop     chan struct{}
	stopped  chan struct{}
	shutOnce sync.Once
	shutErr  error
}

func newSweeper() *sweeper {
	return &sweeper{stop: make(chan struct{}), stopped: make(chan struct{})}
}

// start runs tick every interval on a new goroutine, the first time it is
// called; later calls do nothing.
func (s *sweeper) start(every time.Duration, tick func(now time.Time)) {
	if !s.started.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer close(s.stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case now := <-t.C:
				tick(now)
			}
		}
	}()
}

// shutdown stops the goroutine, waiting for a tick in progress, then runs
// final, once. It returns ctx's error, and skips final, if the tick does
// not end in time: final must not race a tick.
func (s *sweeper) shutdown(ctx context.Context, final func() error) error {
	s.shutOnce.Do(func() {
		if s.started.Load() {
			close(s.stop)
			select {
			case <-s.stopped:
			case <-ctx.Done():
				s.shutErr = ctx.Err()
				return
			}
		}
		s.shutErr = final()
	})
	return s.shutErr
}
