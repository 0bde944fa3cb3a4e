package whatif

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/events"
)

// benchAcquires is a synthetic dump's acquires: 200k over 10 scopes and
// 500 keys, leases of 1-20 ms, some concurrent, gaps up to a few seconds.
func benchAcquires() []events.Acquire {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]events.Acquire, 0, 200_000)
	t := int64(0)
	for range cap(out) {
		t += rng.Int64N(int64(20 * time.Millisecond))
		s, k := rng.IntN(10), rng.IntN(500)
		out = append(out, events.Acquire{Scope: "s" + strconv.Itoa(s), Key: "k" + strconv.Itoa(k), Start: t,
			LeaseEnd: t + rng.Int64N(int64(20*time.Millisecond)), Attempt: 1, Hit: true})
	}
	return out
}

// BenchmarkReplay replays 200k acquires per op at one setting, reported as
// acquires/s; BenchmarkCollect, the baseline, collects the same records
// into a Workload (what loading them costs past the read).
func BenchmarkReplay(b *testing.B) {
	as := benchAcquires()
	c := NewCollector()
	for i := range as {
		c.Add(&as[i])
	}
	w := c.Workload()
	set := Settings{IdleTTL: time.Second, IdlePerKey: 1, Peak: true, MaxIdle: 64}
	b.ResetTimer()
	for range b.N {
		w.Replay(set)
	}
	b.ReportMetric(float64(len(as))*float64(b.N)/b.Elapsed().Seconds(), "acquires/s")
}

func BenchmarkCollect(b *testing.B) {
	as := benchAcquires()
	b.ResetTimer()
	for range b.N {
		c := NewCollector()
		for i := range as {
			c.Add(&as[i])
		}
		c.Workload()
	}
	b.ReportMetric(float64(len(as))*float64(b.N)/b.Elapsed().Seconds(), "acquires/s")
}
