package mcptraceconnector

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// TestShutdownHonoursItsContextDuringAStuckSweep pins that Shutdown gives
// up when its context ends while a sweep is stuck (here in a metrics
// consumer that does not return): it returns the context's error instead
// of hanging the Collector's shutdown, skips the final flush (which must
// not race the sweep), and says the same on a second call. Once the
// consumer lets go, the sweep goroutine ends.
func TestShutdownHonoursItsContextDuringAStuckSweep(t *testing.T) {
	cases := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"the deadline passes", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Minute)
		}, context.DeadlineExceeded},
		{"the context is cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, a, _ := testLeg(t, time.Hour, 100) // A stays open: only the final flush would finalize it
				entered, release := make(chan struct{}), make(chan struct{})
				stuck, err := consumer.NewMetrics(func(context.Context, pmetric.Metrics) error {
					select {
					case entered <- struct{}{}:
						<-release // the first send: the sweep sticks here
					default:
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				c.metrics = stuck
				must(t, c.Start(context.Background(), componenttest.NewNopHost()))
				must(t, c.ConsumeTraces(context.Background(), batch(sp{'A', 1, "gw"})))
				<-entered // the first sweep emits the counters, and sticks

				ctx, cancel := tc.ctx()
				defer cancel()
				if err := c.Shutdown(ctx); !errors.Is(err, tc.want) {
					t.Errorf("Shutdown during a stuck sweep: err = %v, want %v", err, tc.want)
				}
				if err := c.Shutdown(context.Background()); !errors.Is(err, tc.want) {
					t.Errorf("second Shutdown: err = %v, want the first's %v", err, tc.want)
				}
				if got := a.seen(); len(got) != 0 {
					t.Errorf("finalized %+v during a stuck sweep, want nothing (the final flush is skipped)", got)
				}
				close(release)
				synctest.Wait() // the sweep returns and its goroutine sees the stop
			})
		})
	}
}
