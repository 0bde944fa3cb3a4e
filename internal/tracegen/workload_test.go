package tracegen

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/spans"
)

// These run in the plain `go test ./...` (no binaries needed): the
// workload the end-to-end test sends must be the same on every run, hold
// every kind of trace, and keep each pair's acquires in time order across
// the requests, or the connector's per-backend miss causes could not equal
// mcptrace analyze's.

func TestWorkloadIsDeterministic(t *testing.T) {
	cfg := WorkloadConfig{Seed: 7, Traces: 500, Pools: []string{"p", "q"}, KeysPerPool: 3, TracesPerBatch: 25}
	a, err := GenerateWorkload(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateWorkload(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Batches) != len(b.Batches) {
		t.Fatalf("%d batches, then %d", len(a.Batches), len(b.Batches))
	}
	var m ptrace.ProtoMarshaler
	for i := range a.Batches {
		x, _ := m.MarshalTraces(a.Batches[i])
		y, _ := m.MarshalTraces(b.Batches[i])
		if string(x) != string(y) {
			t.Fatalf("batch %d differs between two runs with the same seed", i)
		}
	}
}

func TestWorkloadHoldsEveryKindInPairTimeOrder(t *testing.T) {
	wl, err := GenerateWorkload(WorkloadConfig{Seed: 1, Traces: 3000, Pools: []string{"pool-a", "pool-b"}, KeysPerPool: 8, TracesPerBatch: 40})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{KindCold, KindHit, KindExecution, KindTTL, KindUnexplained, KindHealthCheck,
		KindFailedCall, KindAfterFailure, KindRedial, KindConcurrent, KindMultiSession, KindDoubleAcquire} {
		if wl.Kinds[k] == 0 {
			t.Errorf("no %s trace in the workload", k)
		}
	}
	// Per pair, each trace's first acquire starts after the previous
	// trace's first acquire on the pair, in send order.
	var order []pcommon.TraceID
	pairOf := map[pcommon.TraceID]string{}
	first := map[pcommon.TraceID]pcommon.Timestamp{}
	seen := map[pcommon.TraceID]bool{}
	for _, td := range wl.Batches {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			pool, _ := rs.Resource().Attributes().Get(spans.ResourceServiceInstanceID)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					sp := ss.At(k)
					id := sp.TraceID()
					if !seen[id] {
						seen[id] = true
						order = append(order, id)
					}
					if sp.Name() != spans.SpanAcquire {
						continue
					}
					if at, ok := first[id]; !ok || sp.StartTimestamp() < at {
						first[id] = sp.StartTimestamp()
						key, _ := sp.Attributes().Get(spans.AttrCacheKey)
						pairOf[id] = pool.AsString() + "/" + key.AsString()
					}
				}
			}
		}
	}
	if len(order) != wl.Traces {
		t.Errorf("%d traces in the batches, the workload says %d", len(order), wl.Traces)
	}
	last := map[string]pcommon.Timestamp{}
	for _, id := range order {
		p, ok := pairOf[id]
		if !ok {
			t.Fatalf("trace %s has no acquire", id)
		}
		if first[id] < last[p] {
			t.Fatalf("trace %s on %s starts before the pair's previous trace sent", id, p)
		}
		last[p] = first[id]
	}
}

func TestWorkloadConfigMustBePositive(t *testing.T) {
	for _, cfg := range []WorkloadConfig{
		{Traces: 0, Pools: []string{"p"}, KeysPerPool: 1, TracesPerBatch: 1},
		{Traces: 1, KeysPerPool: 1, TracesPerBatch: 1},
		{Traces: 1, Pools: []string{"p"}, TracesPerBatch: 1},
		{Traces: 1, Pools: []string{"p"}, KeysPerPool: 1},
	} {
		if _, err := GenerateWorkload(cfg); err == nil {
			t.Errorf("GenerateWorkload(%+v) accepted a config with nothing to generate", cfg)
		}
	}
}
