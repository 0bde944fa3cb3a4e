package main

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/exp/trace"
)

// events builds trace events, each at its time in ms, for walk.
type events struct {
	t   *testing.T
	evs []trace.Event
}

func (b *events) add(ev trace.Event, err error) {
	b.t.Helper()
	if err != nil {
		b.t.Fatal(err)
	}
	b.evs = append(b.evs, ev)
}

func (b *events) procs(ms, n int) {
	b.add(trace.MakeEvent(trace.EventConfig[trace.Metric]{Time: trace.Time(ms * 1e6), Kind: trace.EventMetric,
		Details: trace.Metric{Name: "/sched/gomaxprocs:threads", Value: trace.Uint64Value(uint64(n))}}))
}

func (b *events) state(ms int, g trace.GoID, from, to trace.GoState) {
	b.add(trace.MakeEvent(trace.EventConfig[trace.StateTransition]{Time: trace.Time(ms * 1e6), Kind: trace.EventStateTransition,
		Goroutine: g, Details: trace.MakeGoStateTransition(g, from, to)}))
}

func (b *events) region(ms int, g trace.GoID, kind trace.EventKind, name string) {
	b.add(trace.MakeEvent(trace.EventConfig[trace.Region]{Time: trace.Time(ms * 1e6), Kind: kind,
		Goroutine: g, Details: trace.Region{Type: name}}))
}

// TestEachSituationGetsItsOwnTime pins, on events made by hand (no event
// but these, so no other one can start a new situation by chance), that
// the time after each kind of change goes to the situation it made: the
// work passing between two phases' goroutines (states alone), a phase
// ending (a region's end alone) and another beginning (a region's begin
// alone). One goroutine runs at a time on two procs: each situation's
// idle time is its length.
func TestEachSituationGetsItsOwnTime(t *testing.T) {
	const g1, g2 = trace.GoID(1), trace.GoID(2)
	b := &events{t: t}
	b.procs(0, 2)
	b.state(0, g2, trace.GoNotExist, trace.GoRunnable)
	b.state(0, g2, trace.GoRunnable, trace.GoRunning)
	b.region(0, g2, trace.EventRegionBegin, "group")
	b.state(0, g2, trace.GoRunning, trace.GoWaiting)
	b.state(0, g1, trace.GoNotExist, trace.GoRunnable)
	b.state(0, g1, trace.GoRunnable, trace.GoRunning)
	b.region(0, g1, trace.EventRegionBegin, "decode")
	b.state(10, g1, trace.GoRunning, trace.GoWaiting) // decode hands over to group
	b.state(10, g2, trace.GoWaiting, trace.GoRunnable)
	b.state(10, g2, trace.GoRunnable, trace.GoRunning)
	b.state(20, g2, trace.GoRunning, trace.GoWaiting) // and back
	b.state(20, g1, trace.GoWaiting, trace.GoRunnable)
	b.state(20, g1, trace.GoRunnable, trace.GoRunning)
	b.region(30, g1, trace.EventRegionEnd, "decode")
	b.region(35, g1, trace.EventRegionBegin, "finalize")
	b.state(45, g1, trace.GoRunning, trace.GoNotExist)

	w := newWalk()
	for _, ev := range b.evs {
		w.event(ev)
	}
	rep, err := w.report()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, row := range rep.Rows {
		got[strings.Join(row.Ran, ",")] += row.Idle
	}
	want := map[string]float64{"decode": 20, "group": 10, "-": 5, "finalize": 10}
	for phase, ms := range want {
		if d := got[phase] - ms; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s ran alone for %.3f core-ms idle, want %.0f (all: %v)", phase, got[phase], ms, got)
		}
	}
	if rep.Wall != 45 || rep.Idle != 45 {
		t.Errorf("wall %.3f ms, idle %.3f core-ms; want 45 and 45", rep.Wall, rep.Idle)
	}
	group := slices.IndexFunc(rep.Rows, func(r Row) bool { return slices.Equal(r.Ran, []string{"group"}) })
	if group < 0 || !slices.ContainsFunc(rep.Rows[group].Waiting, func(w string) bool { return strings.HasPrefix(w, "decode @ ") }) {
		t.Errorf("rows %+v: want decode waiting while group ran", rep.Rows)
	}
}
