package demo_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/internal/demo"
	"github.com/mcptrace/mcptrace/spans"
)

// TestSeededPlanIsTheSeedsAlone: the seeded workload's calls (keys, order,
// burst widths, gaps) depend on the seed and the shape only, never on the
// pool settings, so two settings run on one seed make the same calls; a
// different seed draws another plan; and the plan holds what makes the
// settings matter: idle gaps, bursts and scope restarts with pre-warm
// lists of the keys called most recently.
func TestSeededPlanIsTheSeedsAlone(t *testing.T) {
	base := demo.Config{Scopes: 3, Seeded: demo.Seeded{Seed: 7, Steps: 10}}
	other := base
	other.Seeded.IdleTTL, other.Seeded.MaxIdlePerKey, other.Seeded.FixedIdlePerKey = 5e9, 2, true
	a, b := demo.SeededPlan(base), demo.SeededPlan(other)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("pool settings changed the plan:\n%v\n%v", a, b)
	}
	reseeded := base
	reseeded.Seeded.Seed = 8
	if reflect.DeepEqual(a, demo.SeededPlan(reseeded)) {
		t.Error("seeds 7 and 8 drew the same plan")
	}
	if len(a) != 3 {
		t.Fatalf("%d scopes, want 3", len(a))
	}
	var gaps, bursts int
	for _, sc := range a {
		if len(sc.Steps) != 10 || sc.Steps[0].Gap != 0 {
			t.Errorf("scope steps = %v: want 10, the first without a gap", sc.Steps)
		}
		for _, st := range sc.Steps {
			if st.Gap > 0 {
				gaps++
			}
			if st.Width > 1 {
				bursts++
			}
		}
	}
	if gaps == 0 || bursts == 0 {
		t.Errorf("plan has %d gaps and %d bursts, want some of each", gaps, bursts)
	}
	warm := base
	warm.Seeded.PrewarmRecent = 2
	pw := demo.SeededPlan(warm)
	if len(pw[0].Prewarm) != 0 {
		t.Errorf("the first scope pre-warms %v: no previous scope called anything", pw[0].Prewarm)
	}
	last := pw[0].Steps[len(pw[0].Steps)-1].Key
	if len(pw[1].Prewarm) == 0 || pw[1].Prewarm[0] != last {
		t.Errorf("scope 2 pre-warms %v, want the last key scope 1 called (%d) first", pw[1].Prewarm, last)
	}
}

// TestSeededRunRepeatsWhatTheClockCannotChange runs one seed twice at the
// same settings, then with a pre-warm of the most recent key. What the
// plan alone decides must repeat exactly under any load: the acquires (one
// per call), the cold misses (a key's first use in its scope) and the
// pre-warm dials (one per restart). The ttl and concurrent misses repeat
// too as long as every step finishes within Hold (the planned clock, see
// Seeded.Slot); on a loaded machine a late release can turn a ttl miss into
// a hit, so they are logged here, not compared.
func TestSeededRunRepeatsWhatTheClockCannotChange(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the seeded workload three times (a few seconds each)")
	}
	cfg := demo.Config{Modes: []demo.Mode{demo.ModeSeeded}, Scopes: 3, Seeded: demo.Seeded{Seed: 3, Steps: 8,
		IdleTTL: 100 * time.Millisecond, Gap: 240 * time.Millisecond, Slot: 80 * time.Millisecond, Hold: 40 * time.Millisecond}}
	run := func(cfg demo.Config) demo.Result {
		t.Helper()
		rs, err := demo.Run(context.Background(), cfg)
		if err != nil || len(rs) != 1 {
			t.Fatalf("Run: %v, %d results", err, len(rs))
		}
		t.Logf("seed %d, pre-warm recent:%d: %d acquires, %d hits, misses %v, %d sessions opened, %d pre-warm dials",
			*rs[0].Seed, cfg.Seeded.PrewarmRecent, rs[0].Acquires, rs[0].Hits, rs[0].MissReasons, rs[0].SessionsOpened, rs[0].PrewarmDials)
		return rs[0]
	}
	first, second := run(cfg), run(cfg)
	if first.Errors != 0 || first.Acquires != int64(first.Calls) || first.MissReasons[spans.MissTTL] == 0 {
		t.Errorf("run: %d errors, %d acquires for %d calls, %d ttl misses: want none, one per call, some", first.Errors, first.Acquires, first.Calls, first.MissReasons[spans.MissTTL])
	}
	if second.Acquires != first.Acquires || second.MissReasons[spans.MissCold] != first.MissReasons[spans.MissCold] {
		t.Errorf("one seed, two runs: %d and %d acquires, %d and %d cold misses", first.Acquires, second.Acquires, first.MissReasons[spans.MissCold], second.MissReasons[spans.MissCold])
	}
	warm := cfg
	warm.Seeded.PrewarmRecent = 1
	w := run(warm)
	if w.PrewarmDials != 2 || w.Calls != first.Calls || w.MissReasons[spans.MissCold] >= first.MissReasons[spans.MissCold] {
		t.Errorf("pre-warm recent:1 over 3 scopes: %d pre-warm dials, %d calls, %d cold misses; want 2, %d, fewer than %d",
			w.PrewarmDials, w.Calls, w.MissReasons[spans.MissCold], first.Calls, first.MissReasons[spans.MissCold])
	}
}
