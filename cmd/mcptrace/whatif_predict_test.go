package main

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/analyze/whatif"
	"github.com/mcptrace/mcptrace/spans"
)

// seededRun runs the seeded demo workload of seed 5 against the fixture
// at the given pool settings and returns its dump's workload, read with
// the run's TTL.
func seededRun(t *testing.T, ttl time.Duration, perKey, prewarm string) *whatif.Workload {
	t.Helper()
	dump := filepath.Join(t.TempDir(), "seeded.jsonl")
	if _, _, err := execute(t, "demo", "--format", "json", "--out", dump, "--seed", "5", "--scopes", "3", "--executions", "10",
		"--idle-ttl", ttl.String(), "--gap", "150ms", "--idle-per-key", perKey, "--prewarm", prewarm); err != nil {
		t.Fatal(err)
	}
	c := whatif.NewCollector()
	if _, err := analyze.ReadAcquires(context.Background(), []string{dump}, rulefmt.Config{IdleTTL: ttl}, analyze.LoadOptions{}, c.Add); err != nil {
		t.Fatal(err)
	}
	return c.Workload()
}

// TestWhatifPredictsAnotherSettingsRun runs one seeded workload at
// settings A and at settings B (and a real pre-warm run), predicts each
// run from the other's dump, and holds the prediction's hits, misses by
// cause and sessions opened to the run's measured figures within 2% of
// its acquires: the model against the pool, not against itself.
func TestWhatifPredictsAnotherSettingsRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	a := whatif.Settings{IdleTTL: 100 * time.Millisecond, IdlePerKey: 1, MaxIdle: 64}
	b := whatif.Settings{IdleTTL: 400 * time.Millisecond, IdlePerKey: 1, Peak: true, MaxIdle: 64}
	p := a
	p.Prewarm = 1
	runA := seededRun(t, a.IdleTTL, "1", "none")
	runB := seededRun(t, b.IdleTTL, "peak", "none")
	runP := seededRun(t, p.IdleTTL, "1", "recent:1")
	for _, tc := range []struct {
		name     string
		from, to *whatif.Workload
		set      whatif.Settings
		prewarm  int
	}{
		{"B from A", runA, runB, b, 0},
		{"A from B", runB, runA, a, 0},
		{"recent:1 from none", runA, runP, p, 2},
		{"none from recent:1", runP, runA, a, 0},
	} {
		got, want := tc.from.Replay(tc.set), tc.to.Recorded()
		tol := math.Ceil(float64(want.Acquires) * 0.02) // 2% of the acquires, in whole acquires
		if got.Acquires != want.Acquires {
			t.Fatalf("%s: %d acquires predicted, %d measured: not the same workload", tc.name, got.Acquires, want.Acquires)
		}
		off := func(x, y int) bool { return float64(x-y) > tol || float64(y-x) > tol }
		if off(got.Hits, want.Hits) || off(got.SessionsOpened, want.SessionsOpened+tc.prewarm) {
			t.Errorf("%s: predicted %d hits %d sessions opened; measured %d hits %d sessions (+%d pre-warm)", tc.name, got.Hits, got.SessionsOpened, want.Hits, want.SessionsOpened, tc.prewarm)
		}
		for _, c := range spans.MissReasons {
			if off(got.MissesByCause[c], want.MissesByCause[c]) {
				t.Errorf("%s: %s misses predicted %d, measured %d (%v against %v)", tc.name, c, got.MissesByCause[c], want.MissesByCause[c], got.MissesByCause, want.MissesByCause)
			}
		}
		if tc.prewarm > 0 && got.PrewarmDials != tc.prewarm {
			t.Errorf("%s: %d pre-warm dials predicted, the run made %d", tc.name, got.PrewarmDials, tc.prewarm)
		}
		t.Logf("%s: predicted %d hits %v; measured %d %v", tc.name, got.Hits, got.MissesByCause, want.Hits, want.MissesByCause)
	}
}
