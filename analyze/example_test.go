package analyze_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// Open a dump, analyze it with the default configuration and read its
// pool's figures: the hit rate against the cold-start floor, the miss rate
// no pool can beat.
func Example() {
	cfg := rulefmt.Config{}.WithDefaults()
	dump, _, err := analyze.Load(context.Background(),
		[]string{"../testdata/traces/pooled.otlp.jsonl"},
		analyze.LoadOptions{Index: cfg.IndexOptions()})
	if err != nil {
		log.Fatal(err)
	}
	r, err := analyze.Analyze(dump, cfg)
	if err != nil {
		log.Fatal(err)
	}
	p := r.Pool
	fmt.Printf("acquires %d, hits %d, hit rate %.2f, cold-start floor %.2f\n",
		p.Acquires, p.Hits, *p.HitRate, *p.ColdStartFloor)
	// Output: acquires 6, hits 5, hit rate 0.83, cold-start floor 0.17
}
