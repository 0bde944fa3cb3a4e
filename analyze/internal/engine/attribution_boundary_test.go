package engine

import (
	"maps"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/measure"
	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/pool/idle"
	"github.com/mcptrace/mcptrace/spans"
)

// replayStep is one acquire of a scope replay's test: key, start, lease
// end and what the dump says of it.
type replayStep struct {
	key                         int32
	start, end                  int64
	hit, redial, failed, health bool
}

// TestTheReplayPinsEachCauseAtItsEdges pins the miss attribution (a scope's
// acquires replayed through the pool's idle core) at each of its edges: a
// miss that starts exactly when the key's last lease ended is not
// concurrent, concurrent takes precedence over after_failure, after_failure
// over ttl, an idle gap of exactly the TTL is not a ttl miss, a key idle
// for exactly twice the TTL plus one sweep interval is still known while
// one nanosecond more makes it cold, the global cap's eviction is evicted,
// and a redial is a redial even as its key's first acquire. The last
// step's cause is checked.
func TestTheReplayPinsEachCauseAtItsEdges(t *testing.T) {
	const ttl = 100
	const sweep = 50
	set := idle.Settings{TTL: ttl, MaxIdlePerKey: 1, MaxIdle: 64, SweepInterval: sweep}
	tests := []struct {
		name  string
		set   *idle.Settings
		steps []replayStep
		want  string
	}{
		{name: "redial over cold", steps: []replayStep{{redial: true}}, want: spans.MissRedial},
		{name: "redial over concurrent", steps: []replayStep{{end: 10}, {start: 5, end: 6, redial: true}}, want: spans.MissRedial},
		{name: "cold", steps: []replayStep{{end: 10}}, want: spans.MissCold},
		{name: "starting one ns before the last lease ended: concurrent", steps: []replayStep{{end: 10}, {start: 9, end: 11}}, want: spans.MissConcurrent},
		{name: "starting exactly when the last lease ended: not concurrent", steps: []replayStep{{end: 10}, {start: 10, end: 11}}, want: spans.MissUnexplained},
		{name: "concurrent over after_failure", steps: []replayStep{{end: 5, failed: true}, {start: 1, end: 10, hit: true}, {start: 9, end: 11}}, want: spans.MissConcurrent},
		{name: "after_failure exactly at the failed lease's end", steps: []replayStep{{end: 10, failed: true}, {start: 10, end: 11}}, want: spans.MissAfterFailure},
		{name: "after_failure over ttl", steps: []replayStep{{end: 10, failed: true}, {start: 10 + ttl + 1, end: 200}}, want: spans.MissAfterFailure},
		{name: "an idle gap of exactly the TTL: not ttl", steps: []replayStep{{end: 10}, {start: 10 + ttl, end: 200}}, want: spans.MissUnexplained},
		{name: "an idle gap one ns over the TTL: ttl", steps: []replayStep{{end: 10}, {start: 10 + ttl + 1, end: 200}}, want: spans.MissTTL},
		{name: "ttl over health_check", steps: []replayStep{{end: 10}, {start: 10 + ttl + 1, end: 200, health: true}}, want: spans.MissTTL},
		{name: "health_check when nothing contradicts it", steps: []replayStep{{end: 10}, {start: 10, end: 11, health: true}}, want: spans.MissHealthCheck},
		{name: "inactive exactly twice the TTL plus a sweep: still known", steps: []replayStep{{end: 10}, {start: 10 + 2*ttl + sweep, end: 400}}, want: spans.MissTTL},
		{name: "inactive one ns over twice the TTL plus a sweep: forgotten, cold", steps: []replayStep{{end: 10}, {start: 10 + 2*ttl + sweep + 1, end: 400}}, want: spans.MissCold},
		{name: "a hit keeps a key known", steps: []replayStep{{end: 10}, {start: 50, end: 60, hit: true}, {start: 60 + 2*ttl + sweep, end: 400}}, want: spans.MissTTL},
		{name: "a negative sweep interval sweeps every TTL", set: &idle.Settings{TTL: ttl, MaxIdlePerKey: 1, MaxIdle: 64, SweepInterval: -1},
			steps: []replayStep{{end: 10}, {start: 10 + 3*ttl + 1, end: 400}}, want: spans.MissCold},
		{name: "the global cap closes the least recently released: evicted", set: &idle.Settings{TTL: ttl, MaxIdlePerKey: 1, MaxIdle: 1},
			steps: []replayStep{{key: 0, end: 10}, {key: 1, start: 1, end: 11}, {key: 0, start: 12, end: 13}}, want: spans.MissEvicted},
		{name: "the global cap closes an expired session for ttl", set: &idle.Settings{TTL: ttl, MaxIdlePerKey: 1, MaxIdle: 1},
			steps: []replayStep{{key: 0, end: 10}, {key: 1, start: 50, end: 10 + ttl + 1}, {key: 0, start: 10 + ttl + 2, end: 300}}, want: spans.MissTTL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := set
			if tc.set != nil {
				s = *tc.set
			}
			r := measure.NewScopeReplay(s, false)
			got := ""
			for _, st := range tc.steps {
				got = r.Acquire(st.key, st.start, st.end, st.hit, st.redial, st.failed, st.health)
			}
			if got != tc.want {
				t.Errorf("cause = %q, want %q", got, tc.want)
			}
		})
	}
}

// pairEv is one acquire of pair (scope, 0) for the pair stage tests, in
// milliseconds; trace names it and breaks ties.
type pairEv struct {
	trace               byte
	scope               int32
	start, end          int64
	hit, failed, redial bool
}

func (e pairEv) event() record.Acquire {
	ms := int64(time.Millisecond)
	ev := record.Acquire{Start: e.start * ms, LeaseEnd: e.end * ms, Scope: e.scope, Key: 0, Session: -1, At: -1,
		Hit: e.hit, Failed: e.failed, Redial: e.redial, Span: uint64(e.trace)}
	ev.Trace[15] = e.trace
	return ev
}

// bothStages runs evs through a streaming pair stage (advance) and a batch
// one (advanceBatch), the two paths of the one attribution, and returns
// each one's report; scope i is named names[i].
func bothStages(evs []pairEv, names []string) map[string]report.PoolReport {
	out := map[string]report.PoolReport{}
	for name, p := range map[string]*measure.PairStage{
		"stream": measure.NewPairStage(rulefmt.Config{IdleTTL: time.Hour}),
		"batch":  measure.NewBatchPairStage(rulefmt.Config{IdleTTL: time.Hour}),
	} {
		// Added in reverse so the stage, not the input, puts them in order.
		in := make([]record.Acquire, 0, len(evs))
		for i := len(evs) - 1; i >= 0; i-- {
			in = append(in, evs[i].event())
		}
		p.Add(in)
		p.Advance(1 << 62)
		out[name] = p.Report(names)
	}
	return out
}

// TestPairStageTiesAndEqualTimestamps pins the state the attribution
// keeps between acquires, in both of the stage's paths: of two leases
// ending at the same moment, a clean one leaves its session idle (the next
// miss could have reused it: unexplained, whichever started first), two
// failed ones leave after_failure, a later clean lease clears a failure,
// equal timestamps are not overlaps, and a redial or a concurrent miss
// after a failed lease is attributed as such.
func TestPairStageTiesAndEqualTimestamps(t *testing.T) {
	tests := []struct {
		name string
		evs  []pairEv
		want map[string]int
	}{
		{
			name: "two leases end together, the first-started failed: the other's session stays idle, unexplained",
			evs:  []pairEv{{trace: 1, start: 0, end: 10, failed: true}, {trace: 2, start: 1, end: 10, hit: true}, {trace: 3, start: 20, end: 30}},
			want: map[string]int{spans.MissCold: 1, spans.MissUnexplained: 1},
		},
		{
			name: "two leases end together, the later-started failed: the other's session stays idle, unexplained",
			evs:  []pairEv{{trace: 1, start: 0, end: 10}, {trace: 2, start: 1, end: 10, hit: true, failed: true}, {trace: 3, start: 20, end: 30}},
			want: map[string]int{spans.MissCold: 1, spans.MissUnexplained: 1},
		},
		{
			name: "a failed lease that ended before the pair's last: unexplained",
			evs:  []pairEv{{trace: 1, start: 0, end: 10}, {trace: 2, start: 1, end: 5, hit: true, failed: true}, {trace: 3, start: 20, end: 30}},
			want: map[string]int{spans.MissCold: 1, spans.MissUnexplained: 1},
		},
		{
			name: "a clean lease ending after the failed one clears it: unexplained",
			evs:  []pairEv{{trace: 1, start: 0, end: 10, failed: true}, {trace: 2, start: 1, end: 15, hit: true}, {trace: 3, start: 20, end: 30}},
			want: map[string]int{spans.MissCold: 1, spans.MissUnexplained: 1},
		},
		{
			name: "both leases ending together failed: after_failure",
			evs:  []pairEv{{trace: 1, start: 0, end: 10, failed: true}, {trace: 2, start: 1, end: 10, failed: true}, {trace: 3, start: 20, end: 30}},
			want: map[string]int{spans.MissCold: 1, spans.MissConcurrent: 1, spans.MissAfterFailure: 1},
		},
		{
			name: "a miss starting when the failed lease ended: after_failure, not concurrent",
			evs:  []pairEv{{trace: 1, start: 0, end: 10, failed: true}, {trace: 2, start: 10, end: 20}},
			want: map[string]int{spans.MissCold: 1, spans.MissAfterFailure: 1},
		},
		{
			name: "a concurrent miss beside a failed lease: concurrent",
			evs:  []pairEv{{trace: 1, start: 0, end: 10, failed: true}, {trace: 2, start: 5, end: 20}},
			want: map[string]int{spans.MissCold: 1, spans.MissConcurrent: 1},
		},
		{
			name: "the redial of a failed lease: redial; the next miss after the redial's clean end: unexplained",
			evs:  []pairEv{{trace: 1, start: 0, end: 10, failed: true}, {trace: 1 + 16, start: 10, end: 20, redial: true}, {trace: 2, start: 30, end: 40}},
			want: map[string]int{spans.MissCold: 1, spans.MissRedial: 1, spans.MissUnexplained: 1},
		},
		{
			name: "two misses starting together: one cold, the other concurrent",
			evs:  []pairEv{{trace: 1, start: 0, end: 10}, {trace: 2, start: 0, end: 20}},
			want: map[string]int{spans.MissCold: 1, spans.MissConcurrent: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for path, r := range bothStages(tc.evs, []string{"scope"}) {
				got := map[string]int{}
				for k, n := range r.MissReasons {
					if n != 0 {
						got[k] = n
					}
				}
				if !maps.Equal(got, tc.want) {
					t.Errorf("%s: miss reasons %v, want %v", path, got, tc.want)
				}
			}
		})
	}
}

// TestExcessMissesAreClampedPerScope pins that a scope whose pairs began
// with a hit (the dump starts after the pool warmed up: fewer misses than
// keys) shows 0 excess misses, not a negative number, and does not cancel
// another scope's excess in the total; nor does the total of a warm dump
// go below 0.
func TestExcessMissesAreClampedPerScope(t *testing.T) {
	evs := []pairEv{
		{trace: 1, scope: 0, start: 0, end: 10, hit: true}, // warm: 0 misses, 1 key
		{trace: 2, scope: 1, start: 0, end: 10},            // cold
		{trace: 3, scope: 1, start: 20, end: 30},           // unexplained
		{trace: 4, scope: 1, start: 40, end: 50},           // unexplained
	}
	for path, r := range bothStages(evs, []string{"warm", "cold"}) {
		excess := map[string]int{}
		for _, sc := range r.ByScope {
			excess[sc.Scope] = sc.ExcessMisses
		}
		if want := map[string]int{"warm": 0, "cold": 2}; !maps.Equal(excess, want) {
			t.Errorf("%s: excess misses by scope %v, want %v", path, excess, want)
		}
		if r.ExcessMisses != 1 { // 3 misses over 2 keys in all
			t.Errorf("%s: excess misses %d, want 1", path, r.ExcessMisses)
		}
	}
	for path, r := range bothStages(evs[:1], []string{"warm"}) {
		if r.ExcessMisses != 0 || r.ByScope[0].ExcessMisses != 0 { // 0 misses over 1 key
			t.Errorf("%s: a warm dump's excess misses %d (scope %d), want 0", path, r.ExcessMisses, r.ByScope[0].ExcessMisses)
		}
	}
}
