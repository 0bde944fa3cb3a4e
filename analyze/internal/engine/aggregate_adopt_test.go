package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/measure"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// An aggregate that adopted one observation's string table re-keys every
// later observation it merges into that table: adopting changes what the
// aggregate holds, never what it reports.
func TestAnAggregateThatAdoptedReKeysTheNextObservation(t *testing.T) {
	cfg := rulefmt.Config{}.WithDefaults()
	paths := []string{tracesDir + "/pooled.otlp.jsonl", tracesDir + "/prod-cold-starts.otlp.jsonl"}
	reportOf := func(adoptFirst bool) string {
		agg := newAggregate(cfg)
		agg.pairs = measure.NewBatchPairStage(cfg)
		for i, path := range paths {
			idx, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{Index: cfg.IndexOptions(), Read: ReadOptions{Strict: true}})
			if err != nil {
				t.Fatal(err)
			}
			o, err := observe(idx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				agg.useProfile(o.profile)
				if adoptFirst && !agg.adopt(o) {
					t.Fatalf("%s: adopt refused", path)
				}
			}
			agg.merge(o)
		}
		raw, err := json.Marshal(agg.report(nil))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	adopted, rekeyed := reportOf(true), reportOf(false)
	if adopted != rekeyed {
		t.Fatalf("the report after adopting differs from the one re-keying every observation:\nadopted: %s\nre-keyed: %s", adopted, rekeyed)
	}
}
