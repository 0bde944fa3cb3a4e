package engine

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	spansvocab "github.com/mcptrace/mcptrace/spans"
)

// poolCounts are acquires by "pool hit" / "pool miss=cause" and handshakes
// by "pool handshakes", zero counts left out: what a fleet's counters sum
// to.
type poolCounts map[string]int

func (c poolCounts) add(acquires []AcquireCount, handshakes []PoolCount) {
	for _, a := range acquires {
		if a.Hit {
			c[fmt.Sprintf("%q hit", a.Pool)] += a.N
		} else {
			c[fmt.Sprintf("%q miss=%s", a.Pool, a.MissCause)] += a.N
		}
	}
	for _, h := range handshakes {
		c[fmt.Sprintf("%q handshakes", h.Pool)] += h.N
	}
}

// reportCounts are the same counts out of a batch report.
func reportCounts(r *report.Report) poolCounts {
	c := poolCounts{}
	for _, sc := range r.Pool.ByScope {
		if sc.Hits > 0 {
			c[fmt.Sprintf("%q hit", sc.Scope)] += sc.Hits
		}
		for cause, n := range sc.MissReasons {
			if n > 0 {
				c[fmt.Sprintf("%q miss=%s", sc.Scope, cause)] += n
			}
		}
		if sc.Handshakes > 0 {
			c[fmt.Sprintf("%q handshakes", sc.Scope)] += sc.Handshakes
		}
	}
	return c
}

// tracesByID regroups single-span batches into one ptrace.Traces per trace,
// in first-seen order.
func tracesByID(spans []ptrace.Traces) []ptrace.Traces {
	var out []ptrace.Traces
	at := map[pcommon.TraceID]int{}
	for _, td := range spans {
		id := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
		i, ok := at[id]
		if !ok {
			i = len(out)
			at[id] = i
			out = append(out, ptrace.NewTraces())
		}
		td.ResourceSpans().MoveAndAppendTo(out[i].ResourceSpans())
	}
	return out
}

// pairRoute is the pair tier's routing: a hash of the pool scope (its
// keys share the scope's idle caps, so one instance replays them all).
func pairRoute(pe PairEvent, n int) int {
	h := fnv.New32a()
	fmt.Fprintf(h, "%t%q", pe.HasScope, pe.Scope)
	return int(h.Sum32() % uint32(n))
}

// TestForwardedPairsAttributeAsOneAnalysis pins what makes miss causes
// exact across a fleet routed by trace id: on every dump, the traces split
// over three forwarding TraceStreams (shuffled, measured in small groups)
// and their acquires routed by pair to two PairStreams, in shuffled order,
// sum to the batch analysis's acquires by pool, hit and cause and its
// handshakes; and a PairStream attributing in two steps (before a cut
// time, then the rest) counts what one step counts.
func TestForwardedPairsAttributeAsOneAnalysis(t *testing.T) {
	seen := map[string]bool{}
	for _, path := range goldenDumps(t) {
		name := filepath.Base(path)
		scenario, _, _ := strings.Cut(name, ".")
		if seen[scenario] {
			continue // one encoding per scenario: the readers are tested elsewhere
		}
		seen[scenario] = true
		t.Run(scenario, func(t *testing.T) {
			cfg := scenarioConfig(t, scenario)
			_, ref := loadAndAnalyze(t, path, cfg)
			if ref.Pool.Acquires == 0 {
				t.Skip("no acquires in this dump")
			}
			checkForwardedPairs(t, cfg, ref, readSpans(t, path), uint64(len(name)))
		})
	}
	t.Run("workload", func(t *testing.T) {
		// The scale-out test's workload: every miss cause, two pools.
		wl, err := tracegen.GenerateWorkload(tracegen.WorkloadConfig{Seed: 3, Traces: 600, Pools: []string{"pool-a", "pool-b"}, KeysPerPool: 8, TracesPerBatch: 40})
		if err != nil {
			t.Fatal(err)
		}
		cfg := rulefmt.Config{}
		idx := index.New(cfg.IndexOptions())
		var spans []ptrace.Traces
		for _, td := range wl.Batches {
			idx.Add(td)
			spans = append(spans, singleSpans(td)...)
		}
		ref, err := Analyze(asDump(idx), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, cause := range spansvocab.MissReasons {
			if cause == spansvocab.MissEvicted {
				continue // the workload records no settings: the default caps never bind (TestForwardedPairsCarryTheirScopesSettings)
			}
			if ref.Pool.MissReasons[cause] == 0 {
				t.Fatalf("the workload has no %s miss: the comparison does not cover it", cause)
			}
		}
		checkForwardedPairs(t, cfg, ref, spans, 3)
	})
}

// singleSpans copies each span of td into its own ptrace.Traces, with its
// resource and scope.
func singleSpans(td ptrace.Traces) []ptrace.Traces {
	var out []ptrace.Traces
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				one := ptrace.NewTraces()
				ors := one.ResourceSpans().AppendEmpty()
				rs.Resource().CopyTo(ors.Resource())
				oss := ors.ScopeSpans().AppendEmpty()
				ss.Scope().CopyTo(oss.Scope())
				ss.Spans().At(k).CopyTo(oss.Spans().AppendEmpty())
				out = append(out, one)
			}
		}
	}
	return out
}

// checkForwardedPairs is the fleet comparison of
// TestForwardedPairsAttributeAsOneAnalysis on spans (one span per batch),
// against ref, their batch analysis with cfg.
func checkForwardedPairs(t *testing.T, cfg rulefmt.Config, ref *report.Report, spans []ptrace.Traces, seed uint64) {
	t.Helper()
	want := reportCounts(ref)
	rng := rand.New(rand.NewPCG(7, seed))
	traces := tracesByID(spans)
	rng.Shuffle(len(traces), func(i, j int) { traces[i], traces[j] = traces[j], traces[i] })

	const traceTier, pairTier, group = 3, 2, 5
	got, traceHandshakes := poolCounts{}, poolCounts{}
	var events []PairEvent
	for tier := range traceTier {
		ts, err := NewTraceStream(cfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ts.ForwardPairs()
		flush := func() {
			o, err := ts.Flush()
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Acquires) > 0 {
				t.Fatalf("a forwarding stream attributed %d acquire counts itself", len(o.Acquires))
			}
			events = append(events, o.Pairs...)
			got.add(nil, o.Handshakes)
			traceHandshakes.add(nil, o.Handshakes)
		}
		n := 0
		for _, td := range traces {
			id := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
			if int(id[15])%traceTier != tier {
				continue
			}
			ts.Add(td)
			if n++; n%group == 0 {
				flush()
			}
		}
		flush()
	}
	rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })

	var starts []int64
	for tier := range pairTier {
		ps, err := NewPairStream(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var mine []PairEvent
		for _, ev := range events {
			if pairRoute(ev, pairTier) == tier {
				mine = append(mine, ev)
				starts = append(starts, ev.Start)
			}
		}
		ps.Add(mine)
		if ps.Pending() != len(mine) {
			t.Fatalf("pair stream %d holds %d of the %d acquires routed to it", tier, ps.Pending(), len(mine))
		}
		got.add(ps.Attribute(math.MaxInt64))
		if ps.Pending() != 0 || ps.LateAcquires() != 0 {
			t.Fatalf("pair stream %d: %d pending, %d late after attributing everything", tier, ps.Pending(), ps.LateAcquires())
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("three trace streams forwarding to two pair streams differ from the batch analysis (-batch +fleet):\n%s", d)
	}

	// Two steps, cut at the median start, count what one step does.
	slices.Sort(starts)
	cut := starts[len(starts)/2]
	ps, err := NewPairStream(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ps.Add(events)
	steps := maps.Clone(traceHandshakes)
	steps.add(ps.Attribute(cut))
	if ps.Pending() == 0 || ps.Pending() == len(events) {
		t.Fatalf("attributing before the median start left %d of %d acquires pending: the cut did not split them", ps.Pending(), len(events))
	}
	steps.add(ps.Attribute(math.MaxInt64))
	if d := cmp.Diff(want, steps); d != "" {
		t.Fatalf("attributing in two steps differs from the batch analysis (-batch +steps):\n%s", d)
	}
}

// TestDropPairsLeavesAcquiresOut: a stream that drops its acquires (the
// connector's metrics leg beside a forwarding logs leg) neither attributes
// nor hands them out, keeps nothing of them for later groups, and still
// counts the handshakes a forwarding stream counts.
func TestDropPairsLeavesAcquiresOut(t *testing.T) {
	td := tracegen.ProdColdStarts()
	flush := func(mode func(*TraceStream)) TraceOutcome {
		ts, err := NewTraceStream(rulefmt.Config{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		mode(ts)
		ts.Add(td)
		o, err := ts.Flush()
		if err != nil {
			t.Fatal(err)
		}
		if n := ts.agg.pairs.Pending(); n != 0 {
			t.Fatalf("%d acquires left buffered after the flush", n)
		}
		return o
	}
	fwd := flush((*TraceStream).ForwardPairs)
	drop := flush((*TraceStream).DropPairs)
	if len(fwd.Pairs) == 0 {
		t.Fatal("the forwarding stream handed out no acquire: nothing to compare")
	}
	if len(drop.Pairs) != 0 || len(drop.Acquires) != 0 {
		t.Fatalf("the dropping stream handed out %d acquires and attributed %d counts", len(drop.Pairs), len(drop.Acquires))
	}
	if d := cmp.Diff(fwd.Handshakes, drop.Handshakes); d != "" || len(fwd.Executions) != len(drop.Executions) {
		t.Fatalf("dropping changed what else the stream counts (-forward +drop):\n%s", d)
	}
}
