package whatif_test

import (
	"context"
	"maps"
	"testing"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/analyze/whatif"
)

// seededDir holds two runs of one seeded demo workload that the real pool
// wrote at two settings (its README.md says how).
const seededDir = "../../testdata/traces/seeded/"

// loadRecorded reads a dump whose pool recorded its settings, at the
// recorded TTL (so that its own causes are analyze's at that TTL), and
// returns its workload and those settings.
func loadRecorded(t *testing.T, path string) (*whatif.Workload, whatif.Settings) {
	t.Helper()
	set, note, ok := load(t, path).RecordedSettings()
	if !ok {
		t.Fatalf("%s records no one set of settings (%s)", path, note)
	}
	c := whatif.NewCollector()
	if _, err := analyze.ReadAcquires(context.Background(), ingest.Files{path}, rulefmt.Config{IdleTTL: set.IdleTTL}, analyze.LoadOptions{}, c.Add); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c.Workload(), set
}

// TestReplayPredictsOneCommittedSeededRunFromTheOther: the committed runs
// of one seeded workload, at 240ms with one idle session per key and at
// 400ms with peak sizing, each predicted from the other's dump, equal the
// other's own hits, misses by cause and sessions opened exactly: data
// fixed in the repository, so no clock is involved and nothing is
// tolerated.
func TestReplayPredictsOneCommittedSeededRunFromTheOther(t *testing.T) {
	fixed, fixedSet := loadRecorded(t, seededDir+"fixed-240ms.otlp.jsonl.gz")
	peak, peakSet := loadRecorded(t, seededDir+"peak-400ms.otlp.jsonl.gz")
	if fixedSet.Peak || !peakSet.Peak || fixedSet.IdleTTL == peakSet.IdleTTL {
		t.Fatalf("settings %v and %v: want one fixed and one peak run at two TTLs", fixedSet, peakSet)
	}
	for _, tc := range []struct {
		name     string
		from, to *whatif.Workload
		set      whatif.Settings
	}{
		{"peak from fixed", fixed, peak, peakSet},
		{"fixed from peak", peak, fixed, fixedSet},
	} {
		got, want := tc.from.Replay(tc.set), tc.to.Recorded()
		if got.Acquires == 0 || got.Acquires != want.Acquires || got.Hits != want.Hits || got.SessionsOpened != want.SessionsOpened ||
			!maps.Equal(got.MissesByCause, want.MissesByCause) {
			t.Errorf("%s: predicted %d acquires %d hits %v %d sessions opened; the run: %d %d %v %d",
				tc.name, got.Acquires, got.Hits, got.MissesByCause, got.SessionsOpened, want.Acquires, want.Hits, want.MissesByCause, want.SessionsOpened)
		}
		if got.Hits == tc.from.Recorded().Hits {
			t.Errorf("%s: %d hits at both settings: the settings change nothing, so the prediction shows nothing", tc.name, got.Hits)
		}
	}
}
