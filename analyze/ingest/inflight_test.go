package ingest

import (
	"errors"
	"testing"
)

// TestTheShareInFlightWaitsButNeverForTheServedJob pins the share's rules:
// a record within the room left takes at once; the job the sink waits on
// takes at once however full the share is (else the sink, and every
// release, would wait on it: a deadlock); a later job waits until room is
// given back, or until the read stops; a charge larger than the share is
// cut to it, so it never waits for room that cannot exist.
func TestTheShareInFlightWaitsButNeverForTheServedJob(t *testing.T) {
	for _, tc := range []struct {
		name        string
		used, serve uint64 // used: bytes already taken, by job 1; serve: the job the sink waits on
		seq         uint64
		n, took     int64
		wait        bool // the take waits: it returns once room is given back
	}{
		{"within the room left", 6, 1, 2, 4, 4, false},
		{"one byte past the room left", 7, 1, 2, 4, 4, true},
		{"the served job on a full share", 10, 2, 2, 5, 5, false},
		{"an earlier job on a full share", 10, 3, 2, 5, 5, false},
		{"larger than the share", 0, 1, 2, 25, 10, false},
		{"larger than the share, the share in use", 1, 1, 2, 25, 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newInflight(10)
			stop := make(chan struct{})
			g.stop = stop
			if _, err := g.take(1, int64(tc.used)); err != nil {
				t.Fatal(err)
			}
			g.serve(tc.serve)
			type taken struct {
				n   int64
				err error
			}
			done := make(chan taken, 1)
			if !tc.wait {
				n, err := g.take(tc.seq, tc.n)
				if err != nil || n != tc.took {
					t.Fatalf("take = %d, %v; want %d at once", n, err, tc.took)
				}
				return
			}
			go func() {
				n, err := g.take(tc.seq, tc.n)
				done <- taken{n, err}
			}()
			g.give(int64(tc.used)) // the sink took job 1's records
			if got := <-done; got.err != nil || got.n != tc.took {
				t.Fatalf("take = %d, %v after room was given back; want %d", got.n, got.err, tc.took)
			}
			// A job that waits on a share nobody gives back ends with the read.
			go func() {
				n, err := g.take(tc.seq+1, 10)
				done <- taken{n, err}
			}()
			close(stop)
			if got := <-done; !errors.Is(got.err, errReadStopped) {
				t.Fatalf("take = %d, %v after the read stopped; want errReadStopped", got.n, got.err)
			}
		})
	}
}
