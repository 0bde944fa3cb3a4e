package engine

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	spansvocab "github.com/mcptrace/mcptrace/spans"
)

// TestMissCausesMatchTheWorkloadsLedger reads generated workloads and holds
// every miss cause to the count the generator wrote into its ledger (the
// kinds of trace it told), not to an earlier run of the analyzer. A
// multi-session execution's second call is a miss nothing explains, so it
// counts with the unexplained ones.
func TestMissCausesMatchTheWorkloadsLedger(t *testing.T) {
	for _, seed := range []uint64{3, 7, 11, 25} {
		wl, err := tracegen.GenerateWorkload(tracegen.WorkloadConfig{Seed: seed, Traces: 500, Pools: []string{"p", "q"}, KeysPerPool: 3, TracesPerBatch: 25})
		if err != nil {
			t.Fatal(err)
		}
		cfg := rulefmt.Config{}
		idx := index.New(cfg.IndexOptions())
		for _, td := range wl.Batches {
			idx.Add(td)
		}
		r, err := Analyze(asDump(idx), cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{
			spansvocab.MissCold:         wl.Kinds[tracegen.KindCold],
			spansvocab.MissTTL:          wl.Kinds[tracegen.KindTTL],
			spansvocab.MissHealthCheck:  wl.Kinds[tracegen.KindHealthCheck],
			spansvocab.MissAfterFailure: wl.Kinds[tracegen.KindAfterFailure],
			spansvocab.MissRedial:       wl.Kinds[tracegen.KindRedial],
			spansvocab.MissConcurrent:   wl.Kinds[tracegen.KindConcurrent],
			spansvocab.MissUnexplained:  wl.Kinds[tracegen.KindUnexplained] + wl.Kinds[tracegen.KindMultiSession],
		}
		for cause, n := range want {
			if got := r.Pool.MissReasons[cause]; got != n {
				t.Errorf("seed %d: %d %s misses, the ledger says %d (kinds %v)", seed, got, cause, n, wl.Kinds)
			}
		}
	}
}

// TestBenchMissCausesMatchWhatTheSpansRecord holds the benchmark dump's
// miss causes to the reasons its generator recorded on the acquire spans:
// a cold miss per (scope, key) pair and a ttl miss after every idle pause.
func TestBenchMissCausesMatchWhatTheSpansRecord(t *testing.T) {
	cfg := rulefmt.Config{}
	idx := index.New(cfg.IndexOptions())
	recorded := map[string]int{}
	_, err := tracegen.BenchBatches(100_000, func(td ptrace.Traces) error {
		countMissReasons(td, recorded)
		idx.Add(td)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if recorded[spansvocab.MissTTL] == 0 {
		t.Fatal("the dump holds no ttl miss: the comparison does not cover it")
	}
	r, err := Analyze(asDump(idx), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, cause := range spansvocab.MissReasons {
		if got := r.Pool.MissReasons[cause]; got != recorded[cause] {
			t.Errorf("%d %s misses, the spans record %d (%v)", got, cause, recorded[cause], recorded)
		}
	}
}

// countMissReasons adds the miss reasons td's acquire spans record.
func countMissReasons(td ptrace.Traces, into map[string]int) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			sps := sss.At(j).Spans()
			for k := 0; k < sps.Len(); k++ {
				if v, ok := sps.At(k).Attributes().Get(spansvocab.AttrMissReason); ok {
					into[v.Str()]++
				}
			}
		}
	}
}
