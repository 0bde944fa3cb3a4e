package engine

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestCorpusSpeculativeRunsEqualTheBatchAnalysis runs the third-party
// corpus (traces written by instrumentations we did not write, whose batch
// figures the corpus goldens hold against each server's own ledger)
// through the engine `mcptrace analyze` runs by default: speculative,
// finalizing at every root, on 1 and 2 shards, with the vocabulary
// detected. Each run either reports exactly the batch analysis, having
// finalized traces early, or says it is spoiled. Over the corpus, some
// runs must have held having handed their open index over before the
// end, or the test pins nothing (the corpus finalizes a trace or a few at
// a time, beside none still open: it never takes the copy path, which the
// generated dumps take).
func TestCorpusSpeculativeRunsEqualTheBatchAnalysis(t *testing.T) {
	defer func(n, m int) { rootedBatch, earlyPairBatch = n, m }(rootedBatch, earlyPairBatch)
	rootedBatch, earlyPairBatch = 1, 1
	dumps, err := filepath.Glob(filepath.Join(corpusDir, "*", "*.jsonl"))
	if err != nil || len(dumps) == 0 {
		t.Fatalf("corpus dumps: %v, %d found", err, len(dumps))
	}
	cfg := rulefmt.Config{Profile: rulefmt.ProfileAuto}
	var handovers int
	for _, path := range dumps {
		rel, _ := filepath.Rel(corpusDir, path)
		t.Run(rel, func(t *testing.T) {
			_, ref := loadAndAnalyze(t, path, cfg)
			want := renderString(t, ref, render.FormatJSON)
			for _, shards := range []int{1, 2} {
				e, err := newSpeculativeEngine(cfg, EngineOptions{Shards: shards})
				if err != nil {
					t.Fatal(err)
				}
				r, _, err := analyzeWith(context.Background(), e, ingest.Files{path}, LoadOptions{Read: ReadOptions{Strict: true}})
				if errors.Is(err, errSpoiled) {
					continue
				}
				if err != nil {
					t.Fatalf("%d shards: %v", shards, err)
				}
				if got := renderString(t, r, render.FormatJSON); got != want {
					t.Errorf("%d shards: report differs from Analyze's:\n%s", shards, cmp.Diff(want, got))
				}
				for _, s := range e.shards {
					handovers += s.handovers
				}
			}
		})
	}
	if handovers == 0 {
		t.Error("over the corpus: no run that held handed its open index over before the end")
	}
}
