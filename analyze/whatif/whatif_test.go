package whatif_test

import (
	"context"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/analyze/whatif"
)

// generatorSettings are the pool settings internal/tracegen's dumps assume
// (they record none): the pool's defaults.
var generatorSettings = whatif.Settings{IdleTTL: 5 * time.Minute, IdlePerKey: 1, Peak: true, MaxIdle: 64}

// buggyPool names the dumps whose misses no correct pool makes (a dial per
// call, a miss with an idle session there): the model, a correct pool,
// hits where they missed.
var buggyPool = map[string]bool{"per-call-dial.otlp.jsonl": true, "unexplained-miss.otlp.jsonl": true}

func load(t *testing.T, path string) *whatif.Workload {
	t.Helper()
	c := whatif.NewCollector()
	if _, err := analyze.ReadAcquires(context.Background(), ingest.Files{path}, rulefmt.Config{}, analyze.LoadOptions{}, c.Add); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c.Workload()
}

// TestAcquireRecordsAreAnalyzesFigures: the records ReadAcquires hands out
// add up to `mcptrace analyze`'s own pool figures on every testdata dump,
// and the replay at the generator's settings reproduces them on the dumps
// listed as reproducible (the others hold misses no correct pool makes).
func TestAcquireRecordsAreAnalyzesFigures(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/traces/*.otlp.jsonl")
	if len(paths) == 0 {
		t.Fatal("no testdata dumps")
	}
	for _, p := range paths {
		rep, err := analyze.AnalyzeFiles(context.Background(), []string{p}, rulefmt.Config{}, ingest.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w := load(t, p)
		rec := w.Recorded()
		want := map[string]int{}
		for k, v := range rep.Pool.MissReasons {
			if v > 0 {
				want[k] = int(v)
			}
		}
		if rec.Acquires != rep.Pool.Acquires || rec.Hits != rep.Pool.Hits || !maps.Equal(rec.MissesByCause, want) {
			t.Errorf("%s: records %d acquires %d hits %v; analyze %d %d %v", filepath.Base(p), rec.Acquires, rec.Hits, rec.MissesByCause, rep.Pool.Acquires, rep.Pool.Hits, want)
		}
		got := w.Replay(generatorSettings)
		match := got.Hits == rec.Hits && maps.Equal(got.MissesByCause, rec.MissesByCause)
		if wantMatch := !buggyPool[filepath.Base(p)]; match != wantMatch {
			t.Errorf("%s: replay %d hits %v; recorded %d %v; reproduced %v, want %v", filepath.Base(p), got.Hits, got.MissesByCause, rec.Hits, rec.MissesByCause, match, wantMatch)
		}
	}
}
