package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/exp/trace"
)

// Report is where an execution trace's idle core time went.
type Report struct {
	Wall  float64 // ms from the first event to the last
	Procs int     // GOMAXPROCS, as the trace's metrics last said it
	Idle  float64 // core-ms no goroutine ran: Procs × wall, less what ran
	// Rows split Idle by situation, largest first.
	Rows []Row
}

// Row is one situation the cores idled in: the phases that ran (a
// goroutine outside every phase is "-"), and those that could not, each
// runnable (waiting for a core) or waiting where its stack says.
type Row struct {
	Ran     []string
	Waiting []string
	Idle    float64 // core-ms
}

// goState is what the walk keeps of one goroutine.
type goState struct {
	busy    bool     // running, or in a system call inside a phase
	regions []string // its open trace regions, innermost last
	waiting string   // where it waits ("runnable" for a core), "" when not
}

// phase is g's innermost region, "-" outside every one.
func (g *goState) phase() string {
	if len(g.regions) == 0 {
		return "-"
	}
	return g.regions[len(g.regions)-1]
}

// Analyze reads an execution trace and splits its idle core time by what
// the goroutines inside the analyzer's phases (its trace regions) were
// doing meanwhile. A goroutine in a system call counts as busy only
// inside a phase: the reader's reads copy bytes on a core, where the
// runtime's own calls (a signal handler's wait) hold none.
func Analyze(r io.Reader) (*Report, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	gs := map[trace.GoID]*goState{}
	of := func(id trace.GoID) *goState {
		g := gs[id]
		if g == nil {
			g = &goState{}
			gs[id] = g
		}
		return g
	}
	rows := map[string]*Row{}
	rep := &Report{}
	var first, last trace.Time
	for {
		ev, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read trace: %w", err)
		}
		if first == 0 {
			first = ev.Time()
		}
		if last != 0 && rep.Procs > 0 {
			account(rep, rows, gs, float64(ev.Time()-last)/1e6)
		}
		last = ev.Time()
		apply(rep, ev, of)
	}
	if first == 0 {
		return nil, errors.New("read trace: it holds no event")
	}
	rep.Wall = float64(last-first) / 1e6
	for _, row := range rows {
		rep.Rows = append(rep.Rows, *row)
	}
	slices.SortFunc(rep.Rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b.Idle, a.Idle), strings.Compare(key(a.Ran, a.Waiting), key(b.Ran, b.Waiting)))
	})
	return rep, nil
}

// apply updates the goroutines (and the procs) by one event.
func apply(rep *Report, ev trace.Event, of func(trace.GoID) *goState) {
	switch ev.Kind() {
	case trace.EventMetric:
		if m := ev.Metric(); m.Name == "/sched/gomaxprocs:threads" {
			rep.Procs = int(m.Value.Uint64())
		}
	case trace.EventRegionBegin:
		g := of(ev.Goroutine())
		g.regions = append(g.regions, ev.Region().Type)
	case trace.EventRegionEnd:
		if g := of(ev.Goroutine()); len(g.regions) > 0 {
			g.regions = g.regions[:len(g.regions)-1]
		}
	case trace.EventStateTransition:
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			return
		}
		g := of(st.Resource.Goroutine())
		_, to := st.Goroutine()
		g.busy, g.waiting = false, ""
		switch to {
		case trace.GoRunning:
			g.busy = true
		case trace.GoSyscall:
			g.busy = len(g.regions) > 0
		case trace.GoRunnable:
			g.waiting = "runnable"
		case trace.GoWaiting:
			g.waiting = blockedAt(ev.Stack())
		}
	}
}

// blockedAt names where a goroutine blocked: the first frame of its stack
// outside the runtime, without its package path.
func blockedAt(st trace.Stack) string {
	for f := range st.Frames() {
		if strings.HasPrefix(f.Func, "runtime.") || f.Func == "" {
			continue
		}
		name := f.Func
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		return name
	}
	return "?"
}

// account adds dt ms of the current situation's idle cores to its row.
func account(rep *Report, rows map[string]*Row, gs map[trace.GoID]*goState, dt float64) {
	busy := 0
	var ran, waiting []string
	for _, g := range gs {
		switch {
		case g.busy:
			busy++
			ran = append(ran, g.phase())
		case g.waiting != "" && len(g.regions) > 0:
			waiting = append(waiting, g.phase()+" @ "+g.waiting)
		}
	}
	idle := rep.Procs - busy
	if idle <= 0 || dt <= 0 {
		return
	}
	slices.Sort(ran)
	slices.Sort(waiting)
	waiting = slices.Compact(waiting)
	k := key(ran, waiting)
	row := rows[k]
	if row == nil {
		row = &Row{Ran: ran, Waiting: waiting}
		rows[k] = row
	}
	row.Idle += float64(idle) * dt
	rep.Idle += float64(idle) * dt
}

// key is a situation's map key.
func key(ran, waiting []string) string {
	return strings.Join(ran, ",") + "|" + strings.Join(waiting, ",")
}
