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
	Idle  float64 // core-ms no goroutine ran: Procs × wall, less what ran; the rows' sum
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
	w := newWalk()
	for {
		ev, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read trace: %w", err)
		}
		w.event(ev)
	}
	return w.report()
}

// report is what the walk found, its rows largest first; an error when
// it saw no event.
func (w *walk) report() (*Report, error) {
	if !w.seen {
		return nil, errors.New("read trace: it holds no event")
	}
	rep := &Report{Wall: float64(w.last-w.first) / 1e6, Procs: w.procs}
	for _, row := range w.rows {
		rep.Rows = append(rep.Rows, *row)
		rep.Idle += row.Idle
	}
	slices.SortFunc(rep.Rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b.Idle, a.Idle), strings.Compare(key(a.Ran, a.Waiting), key(b.Ran, b.Waiting)))
	})
	return rep, nil
}

// walk is Analyze's state between events: the goroutines, how many are
// busy, and the row of the situation they are in, found again only after
// an event changed it (most events leave the situation as it was).
type walk struct {
	first, last trace.Time // the first event's time and the latest's
	seen        bool       // an event was walked: first and last hold
	procs       int        // GOMAXPROCS, as the trace's metrics last said it
	gs          map[trace.GoID]*goState
	busy        int
	row         *Row // nil: the situation changed since it was last found
	rows        map[string]*Row
}

// newWalk returns a walk before any event.
func newWalk() *walk { return &walk{gs: map[trace.GoID]*goState{}, rows: map[string]*Row{}} }

// event accounts the time since the last event to the situation it
// ended, then applies ev.
func (w *walk) event(ev trace.Event) {
	if !w.seen {
		w.first, w.seen = ev.Time(), true
	} else {
		w.account(float64(ev.Time()-w.last) / 1e6)
	}
	w.last = ev.Time()
	w.apply(ev)
}

// of returns goroutine id's state, made on first sight.
func (w *walk) of(id trace.GoID) *goState {
	g := w.gs[id]
	if g == nil {
		g = &goState{}
		w.gs[id] = g
	}
	return g
}

// apply updates the goroutines (and the procs) by one event.
func (w *walk) apply(ev trace.Event) {
	switch ev.Kind() {
	case trace.EventMetric:
		if m := ev.Metric(); m.Name == "/sched/gomaxprocs:threads" {
			w.procs = int(m.Value.Uint64())
		}
	case trace.EventRegionBegin:
		g := w.of(ev.Goroutine())
		g.regions = append(g.regions, ev.Region().Type)
		w.row = nil
	case trace.EventRegionEnd:
		if g := w.of(ev.Goroutine()); len(g.regions) > 0 {
			g.regions = g.regions[:len(g.regions)-1]
			w.row = nil
		}
	case trace.EventStateTransition:
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			return
		}
		g := w.of(st.Resource.Goroutine())
		if g.busy {
			w.busy--
		}
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
		if g.busy {
			w.busy++
		}
		w.row = nil
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
func (w *walk) account(dt float64) {
	idle := w.procs - w.busy
	if idle <= 0 || dt <= 0 {
		return
	}
	if w.row == nil {
		w.row = w.situation()
	}
	w.row.Idle += float64(idle) * dt
}

// situation returns the row of the situation the goroutines are in:
// the phases running, and those waiting with where they wait.
func (w *walk) situation() *Row {
	var ran, waiting []string
	for _, g := range w.gs {
		switch {
		case g.busy:
			ran = append(ran, g.phase())
		case g.waiting != "" && len(g.regions) > 0:
			waiting = append(waiting, g.phase()+" @ "+g.waiting)
		}
	}
	slices.Sort(ran)
	slices.Sort(waiting)
	waiting = slices.Compact(waiting)
	k := key(ran, waiting)
	row := w.rows[k]
	if row == nil {
		row = &Row{Ran: ran, Waiting: waiting}
		w.rows[k] = row
	}
	return row
}

// key is a situation's map key.
func key(ran, waiting []string) string {
	return strings.Join(ran, ",") + "|" + strings.Join(waiting, ",")
}
