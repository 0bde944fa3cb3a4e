package engine

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestAnOpenTracesEarliestSpanHoldsThePairStage pins the stream's low
// mark: an open trace holds back the attribution of every acquire that
// starts after its earliest span, not after its latest one. Trace A's
// acquire (at 0) arrives before A's later work (at 10 s) and A stays open
// (its root comes last); B's acquire of the same key at 5 s finalizes
// with the window. Held back, B is attributed after A, as in a batch run
// (a miss with A's session idle: unexplained); let go at A's latest span
// start, B would be attributed first and A would come late.
func TestAnOpenTracesEarliestSpanHoldsThePairStage(t *testing.T) {
	acquire := func(d *dump, ss ptrace.SpanSlice, trace, parent uint64, at time.Duration, session string) {
		d.invocation(ss, lease{trace: trace, parent: parent, start: at, end: at + time.Second, key: "k", hit: false, handshake: true, session: session})
	}
	const rootA = 999
	first, second, third, last := newDump(), newDump(), newDump(), newDump()
	res := func(d *dump) ptrace.SpanSlice { return d.resource(spans.ResourceServiceName, "gw") }
	// A's acquire, then its long later work, both under a root to come.
	ssA := res(first)
	acquire(first, ssA, 1, rootA, 0, "s1")
	first.add(ssA, sp{trace: 1, parent: rootA, name: "later.work", start: 10 * time.Second, end: 20*time.Minute + 30*time.Second})
	// B, rooted, at 5 s.
	acquire(second, res(second), 2, 0, 5*time.Second, "s2")
	// C moves the watermark on by more than an eighth of the window (a
	// scan), far past B's end: B finalizes; A, whose later work ended
	// within the window, stays open.
	acquire(third, res(third), 3, 0, 20*time.Minute+39*time.Second, "s3")
	// A's root.
	last.add(res(last), sp{trace: 1, id: rootA, name: "request", start: 0, end: 20*time.Minute + 30*time.Second})
	batches := []ptrace.Traces{first.td, second.td, third.td, last.td}

	cfg := rulefmt.Config{}
	batch := engineReport(t, cfg, EngineOptions{Shards: 1}, batches)
	stream := engineReport(t, cfg, EngineOptions{Shards: 1, Window: time.Minute}, batches)
	if stream.Stream == nil || stream.Stream.LateAcquires != 0 || stream.Stream.EarlyTraces == 0 {
		t.Errorf("stream: %+v, want B finalized early and no late acquire", stream.Stream)
	}
	for _, cause := range []string{spans.MissCold, spans.MissUnexplained} {
		if b, s := batch.Pool.MissReasons[cause], stream.Pool.MissReasons[cause]; b != s {
			t.Errorf("%s misses: stream %d, batch %d", cause, s, b)
		}
	}
	if batch.Pool.MissReasons[spans.MissUnexplained] != 1 {
		t.Errorf("batch: miss reasons %v, want B unexplained (A's session idle)", batch.Pool.MissReasons)
	}
}
