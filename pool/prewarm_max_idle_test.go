package pool_test

import (
	"context"
	"testing"

	"github.com/mcptrace/mcptrace/pool"
)

// TestPrewarmDialsNoMoreKeysThanMaxIdle pins that New pre-warms at most
// MaxIdle keys, the first distinct ones given: a session the global idle
// cap would close at once is not dialed, and the key left out is a cold
// miss.
func TestPrewarmDialsNoMoreKeysThanMaxIdle(t *testing.T) {
	e := newPrewarmEnv(t)
	p := e.newPool(t, pool.Options{MaxIdle: 1, Prewarm: []*pool.Target{e.a, e.a, e.b}})
	if st := p.Stat(); st.PrewarmDials != 1 || st.IdleSessions != 1 || e.srv.Initializes() != 1 || sum(st.Evictions) != 0 {
		t.Fatalf("MaxIdle 1, pre-warm a, a, b: stat %+v, %d initializes; want a alone dialed and idle", st, e.srv.Initializes())
	}
	for _, tc := range []struct {
		tg  *pool.Target
		hit bool
	}{{e.a, true}, {e.b, false}} {
		l, err := p.Acquire(context.Background(), tc.tg)
		if err != nil {
			t.Fatal(err)
		}
		if l.CacheHit() != tc.hit {
			t.Errorf("acquire: hit %v, want %v (a pre-warmed, b not)", l.CacheHit(), tc.hit)
		}
		l.Release(nil)
	}
}
