package analyze

import (
	"maps"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestReasonForPinsEachBoundaryAndPrecedence pins the miss attribution's
// rule at each of its edges: a miss that starts exactly when the pair's last
// lease ended is not concurrent, concurrent takes precedence over
// after_failure, after_failure over ttl, an idle gap of exactly the TTL is
// not a ttl miss, and a redial is a redial even as its pair's first acquire.
func TestReasonForPinsEachBoundaryAndPrecedence(t *testing.T) {
	const ttl = 100
	tests := []struct {
		name               string
		redial, first      bool
		start, lastEnd     int64
		lastFailed, health bool
		want               string
	}{
		{name: "redial over cold", redial: true, first: true, want: spans.MissRedial},
		{name: "redial over concurrent", redial: true, start: 5, lastEnd: 10, want: spans.MissRedial},
		{name: "cold over concurrent", first: true, start: 5, lastEnd: 10, want: spans.MissCold},
		{name: "starting one ns before the last lease ended: concurrent", start: 9, lastEnd: 10, want: spans.MissConcurrent},
		{name: "starting exactly when the last lease ended: not concurrent", start: 10, lastEnd: 10, want: spans.MissUnexplained},
		{name: "concurrent over after_failure", start: 9, lastEnd: 10, lastFailed: true, want: spans.MissConcurrent},
		{name: "after_failure exactly at the failed lease's end", start: 10, lastEnd: 10, lastFailed: true, want: spans.MissAfterFailure},
		{name: "after_failure over ttl", start: 10 + ttl + 1, lastEnd: 10, lastFailed: true, want: spans.MissAfterFailure},
		{name: "an idle gap of exactly the TTL: not ttl", start: 10 + ttl, lastEnd: 10, want: spans.MissUnexplained},
		{name: "an idle gap one ns over the TTL: ttl", start: 10 + ttl + 1, lastEnd: 10, want: spans.MissTTL},
		{name: "ttl over health_check", start: 10 + ttl + 1, lastEnd: 10, health: true, want: spans.MissTTL},
		{name: "health_check when nothing contradicts it", start: 10, lastEnd: 10, health: true, want: spans.MissHealthCheck},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := reasonFor(tc.redial, tc.first, tc.start, tc.lastEnd, tc.lastFailed, tc.health, ttl); got != tc.want {
				t.Errorf("reasonFor = %s, want %s", got, tc.want)
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

func (e pairEv) event() acquireEvent {
	ms := int64(time.Millisecond)
	ev := acquireEvent{start: e.start * ms, leaseEnd: e.end * ms, scope: e.scope, key: 0, session: -1, at: -1,
		hit: e.hit, failed: e.failed, redial: e.redial, span: uint64(e.trace)}
	ev.trace[15] = e.trace
	return ev
}

// bothStages runs evs through a streaming pair stage (advance) and a batch
// one (advanceBatch), the two paths of the one attribution, and returns
// each one's report; scope i is named names[i].
func bothStages(evs []pairEv, names []string) map[string]report.PoolReport {
	out := map[string]report.PoolReport{}
	for name, p := range map[string]*pairStage{
		"stream": newPairStage(rulefmt.Config{IdleTTL: time.Hour}),
		"batch":  newBatchPairStage(rulefmt.Config{IdleTTL: time.Hour}),
	} {
		// Added in reverse so the stage, not the input, puts them in order.
		in := make([]acquireEvent, 0, len(evs))
		for i := len(evs) - 1; i >= 0; i-- {
			in = append(in, evs[i].event())
		}
		p.add(in)
		p.advance(1 << 62)
		out[name] = p.report(names)
	}
	return out
}

// TestPairStageTiesAndEqualTimestamps pins the pair state the attribution
// keeps between acquires, in both of the stage's paths: of two leases
// ending at the same moment the failed one decides (whichever started
// first), a lease that ended earlier does not, a later clean lease clears
// a failure, equal timestamps are not overlaps, and a redial or a
// concurrent miss after a failed lease is attributed as such.
func TestPairStageTiesAndEqualTimestamps(t *testing.T) {
	tests := []struct {
		name string
		evs  []pairEv
		want map[string]int
	}{
		{
			name: "two leases end together, the first-started failed: after_failure",
			evs:  []pairEv{{trace: 1, start: 0, end: 10, failed: true}, {trace: 2, start: 1, end: 10, hit: true}, {trace: 3, start: 20, end: 30}},
			want: map[string]int{spans.MissCold: 1, spans.MissAfterFailure: 1},
		},
		{
			name: "two leases end together, the later-started failed: after_failure",
			evs:  []pairEv{{trace: 1, start: 0, end: 10}, {trace: 2, start: 1, end: 10, hit: true, failed: true}, {trace: 3, start: 20, end: 30}},
			want: map[string]int{spans.MissCold: 1, spans.MissAfterFailure: 1},
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
