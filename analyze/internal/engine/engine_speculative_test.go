package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/measure"
	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestSpeculativeRunsEqualTheBatchAnalysis pins the speculative batch run
// (AnalyzeStream's default over files) to the batch answer on every dump
// in every encoding, over 1, 2 and 8 shards, finalizing at every root
// (rootedBatch 1, the most eager), with the scenario's profile alone (what
// `mcptrace analyze` runs by default) and with its cold-init measure too
// (which may wait on spans after the root: no speculation), and detected
// (ProfileAuto, the CLI's default): the engine
// alone either reports exactly the batch report, having finalized traces
// early, or says it is spoiled; AnalyzeStream always reports the batch
// report. Both outcomes must occur over the dumps, or the test pins
// nothing.
func TestSpeculativeRunsEqualTheBatchAnalysis(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: every corpus dump analyzed speculatively and held (about 25 s)")
	}
	defer func(n, m int) { rootedBatch, earlyPairBatch = n, m }(rootedBatch, earlyPairBatch)
	rootedBatch, earlyPairBatch = 1, 1
	var early, spoiled, earlyPairs int
	for _, path := range goldenDumps(t) {
		name := filepath.Base(path)
		scenario, _, _ := strings.Cut(name, ".")
		t.Run(name, func(t *testing.T) {
			measured := scenarioConfig(t, scenario)
			for _, cfg := range []rulefmt.Config{{Profile: measured.Profile}, measured, {Profile: rulefmt.ProfileAuto}} {
				speculativeEqualsBatch(t, path, cfg, &early, &spoiled, &earlyPairs)
			}
		})
	}
	t.Logf("%d early, %d spoiled, %d attributed acquires early", early, spoiled, earlyPairs)
	if early == 0 || spoiled == 0 || earlyPairs == 0 {
		t.Errorf("over every dump: %d speculative runs finalized traces early and held, %d were spoiled, %d attributed acquires before the end; want all three", early, spoiled, earlyPairs)
	}
}

// speculativeEqualsBatch runs the speculative engine and AnalyzeStream over
// path with cfg against the batch analysis, counting the engine's runs
// that finalized early and held, those spoiled, and those that attributed
// acquires before the end (advanceEarly) and held.
func speculativeEqualsBatch(t *testing.T, path string, cfg rulefmt.Config, early, spoiled, earlyPairs *int) {
	t.Helper()
	ctx := context.Background()
	strict := ReadOptions{Strict: true}
	_, ref := loadAndAnalyze(t, path, cfg)
	want := renderString(t, ref, render.FormatJSON)
	for _, shards := range []int{1, 2, 8} {
		e, err := newSpeculativeEngine(cfg, EngineOptions{Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := analyzeWith(ctx, e, ingest.Files{path}, LoadOptions{Read: strict})
		switch {
		case errors.Is(err, errSpoiled):
			*spoiled++
		case err != nil:
			t.Fatalf("%d shards: %v", shards, err)
		default:
			if got := renderString(t, r, render.FormatJSON); got != want {
				t.Errorf("%d shards, speculative engine: report differs from Analyze's:\n%s", shards, cmp.Diff(want, got))
			}
			if e.early.Load() > 0 {
				*early++
			}
			if e.earlyAcquires > 0 {
				*earlyPairs++
			}
		}

		var reread error
		r, _, err = AnalyzeStream(ctx, ingest.Files{path}, cfg, LoadOptions{Read: strict, Reread: func(err error) { reread = err }}, EngineOptions{Shards: shards})
		if err != nil {
			t.Fatalf("%d shards: AnalyzeStream: %v", shards, err)
		}
		if got := renderString(t, r, render.FormatJSON); got != want {
			t.Errorf("%d shards, AnalyzeStream (read again: %v): report differs from Analyze's:\n%s", shards, reread, cmp.Diff(want, got))
		}
	}
}

// TestSpeculativeRunReadsAgainOnASpanAfterItsRoot pins the give-up: a span
// arriving after its trace's root was measured spoils the speculative run,
// which says so (LoadOptions.Reread) and reads the file again holding
// every trace, so the late child is counted as a batch run counts it.
func TestSpeculativeRunReadsAgainOnASpanAfterItsRoot(t *testing.T) {
	defer func(n int) { rootedBatch = n }(rootedBatch)
	rootedBatch = 1
	path := writeJSONLines(t, "late-child.jsonl",
		arrival{trace: 1, id: 1, start: 0, end: 3}.traces(),
		arrival{trace: 2, id: 5, start: 1, end: 2}.traces(),
		arrival{trace: 1, id: 2, parent: 1, start: 1, end: 2}.traces(), // after its root: late
	)
	_, ref := loadAndAnalyze(t, path, rulefmt.Config{})
	want := renderString(t, ref, render.FormatJSON)
	if ref.Spans != 3 {
		t.Fatalf("the batch analysis holds %d spans, want 3", ref.Spans)
	}
	for _, shards := range []int{1, 2} {
		var reread error
		r, _, err := AnalyzeStream(context.Background(), ingest.Files{path}, rulefmt.Config{}, LoadOptions{Reread: func(err error) { reread = err }}, EngineOptions{Shards: shards})
		if err != nil {
			t.Fatalf("%d shards: %v", shards, err)
		}
		if !errors.Is(reread, errSpoiled) {
			t.Errorf("%d shards: Reread told %v, want errSpoiled", shards, reread)
		}
		if got := renderString(t, r, render.FormatJSON); got != want {
			t.Errorf("%d shards: report differs from Analyze's:\n%s", shards, cmp.Diff(want, got))
		}
	}
	// Stdin cannot be read twice: no speculation, no second read.
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	called := false
	r, _, err := AnalyzeStream(context.Background(), ingest.Files{"-"}, rulefmt.Config{}, LoadOptions{Read: ReadOptions{Stdin: in}, Reread: func(error) { called = true }}, EngineOptions{})
	if err != nil || called || r.Spans != 3 {
		t.Errorf("stdin: %v, read again %v, %d spans; want no error, no second read, 3 spans", err, called, r.Spans)
	}
}

// TestSpeculativeRunAttributesAcquiresAtFlush pins that a speculative run's
// pair stage waits for the whole input, as a batch run's does: a trace
// measured early must not have its acquires' causes judged before an
// earlier acquire of its pair that arrives later in the file (here the
// later line's cold miss would be taken for the first one's).
func TestSpeculativeRunAttributesAcquiresAtFlush(t *testing.T) {
	defer func(n int) { rootedBatch = n }(rootedBatch)
	rootedBatch = 1
	var lines []ptrace.Traces
	for _, l := range []lease{
		{trace: 1, start: 8 * time.Minute, end: 8*time.Minute + time.Second, key: "k", hit: false, handshake: true, session: "s2"},
		{trace: 2, start: 0, end: time.Second, key: "k", hit: false, handshake: true, session: "s1"},
	} {
		d := newDump()
		d.invocation(d.resource(spans.ResourceServiceInstanceID, "gw-1"), l)
		lines = append(lines, d.td)
	}
	path := writeJSONLines(t, "pair-out-of-order.jsonl", lines...)
	_, ref := loadAndAnalyze(t, path, rulefmt.Config{})
	if ref.Pool.MissReasons[spans.MissCold] != 1 || ref.Pool.MissReasons[spans.MissTTL] != 1 {
		t.Fatalf("the batch analysis gives causes %v, want one cold and one ttl", ref.Pool.MissReasons)
	}
	want := renderString(t, ref, render.FormatJSON)
	for _, shards := range []int{1, 2} {
		e, err := newSpeculativeEngine(rulefmt.Config{}, EngineOptions{Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := analyzeWith(context.Background(), e, ingest.Files{path}, LoadOptions{})
		if err != nil {
			t.Fatalf("%d shards: %v", shards, err)
		}
		if e.early.Load() == 0 {
			t.Errorf("%d shards: no trace finalized early: the test pins nothing", shards)
		}
		if got := renderString(t, r, render.FormatJSON); got != want {
			t.Errorf("%d shards: report differs from Analyze's:\n%s", shards, cmp.Diff(want, got))
		}
	}
}

// TestSpeculativeRunCountsHeldAcquiresInItsMemory pins what the memory
// budget sees of a speculative run once its spans are freed: the acquires
// held for the pair stage, every one of them until the end, with the
// state of each pool scope and pair and the texts naming them.
func TestSpeculativeRunCountsHeldAcquiresInItsMemory(t *testing.T) {
	defer func(n int) { rootedBatch = n }(rootedBatch)
	rootedBatch = 1
	path := filepath.Join(tracesDir, "prod-cold-starts.otlp.jsonl")
	_, ref := loadAndAnalyze(t, path, rulefmt.Config{})
	e, err := newSpeculativeEngine(rulefmt.Config{}, EngineOptions{Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Feed(context.Background(), ingest.Files{path}, LoadOptions{}, e); err != nil {
		t.Fatal(err)
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	if e.early.Load() == 0 {
		t.Fatal("no trace finalized early: the test pins nothing")
	}
	least := int64(ref.Pool.Acquires)*int64(unsafe.Sizeof(record.Acquire{})) +
		int64(ref.Pool.Scopes)*measure.ScopeBytes + int64(ref.Pool.Keys)*measure.PairBytes
	if got := e.MemBytes(); ref.Pool.Acquires == 0 || got < least || got != e.agg.stateBytes() {
		t.Errorf("after Flush the engine holds %d bytes, want the aggregate's %d, at least %d acquires of %d bytes, %d scopes and %d pairs",
			got, e.agg.stateBytes(), ref.Pool.Acquires, unsafe.Sizeof(record.Acquire{}), ref.Pool.Scopes, ref.Pool.Keys)
	}
}

// writeJSONLines writes each of lines as one line of OTLP JSON into a file
// of a test directory and returns its path.
func writeJSONLines(t *testing.T, name string, lines ...ptrace.Traces) string {
	t.Helper()
	var b []byte
	for _, td := range lines {
		line, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// leaseAt is one execution: an invocation (the root) and its acquire of key
// at start, a hit or not, both lasting dur (a second when 0).
type leaseAt struct {
	trace uint64
	key   string
	start time.Duration
	hit   bool
	dur   time.Duration
}

func (l leaseAt) traces() ptrace.Traces {
	if l.dur == 0 {
		l.dur = time.Second
	}
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, "gw-1")
	inv := d.add(ss, sp{trace: l.trace, id: 10 * l.trace, name: spans.SpanInvoke, start: l.start, end: l.start + l.dur})
	d.add(ss, sp{trace: l.trace, id: 10*l.trace + 1, parent: inv, name: spans.SpanAcquire, start: l.start, end: l.start + l.dur,
		attrs: []any{spans.AttrCacheHit, l.hit, spans.AttrCacheKey, l.key}})
	return d.td
}

// TestSpeculativeRunAttributesPairsEarlyOrReadsAgain pins the early pair
// stage of a speculative run (advanceEarly, one trace a line, attributing
// after every trace): acquires in time order are attributed before the
// end; an acquire arriving behind what its pair already had attributed
// (before its frontier, or tied with it) spoils the run, which reads again
// holding every trace; one arriving late for a pair with nothing after it
// attributed does not. AnalyzeStream reports the batch answer every time.
func TestSpeculativeRunAttributesPairsEarlyOrReadsAgain(t *testing.T) {
	defer func(n, m int) { rootedBatch, earlyPairBatch = n, m }(rootedBatch, earlyPairBatch)
	rootedBatch, earlyPairBatch = 1, 1
	inOrder := []leaseAt{{1, "k-a", 0, false, 0}, {2, "k-a", 10 * time.Second, true, 0}, {3, "k-a", 20 * time.Second, false, 0}, {4, "k-a", 30 * time.Second, true, 0}}
	cases := []struct {
		name    string
		late    leaseAt // arrives after the in-order ones
		spoiled bool
		// early is how many acquires were attributed before the end:
		// while they come in time order the early mark is the newest
		// start, so every acquire but the newest; a late one widens the
		// lag, and nothing more goes early.
		early int
	}{
		{"late acquire before its pair's frontier: read again", leaseAt{9, "k-a", 5 * time.Second, false, 0}, true, 3},
		// Tied at 20s with trace 3's miss, its shorter lease sorts it first.
		{"late acquire tied with its pair's frontier: read again", leaseAt{9, "k-a", 20 * time.Second, true, time.Millisecond}, true, 3},
		{"late acquire of a pair with nothing attributed: held", leaseAt{9, "k-b", 5 * time.Second, false, 0}, false, 3},
		{"acquire after everything: held", leaseAt{9, "k-a", 40 * time.Second, false, 0}, false, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var lines []ptrace.Traces
			for _, l := range append(slices.Clone(inOrder), c.late) {
				lines = append(lines, l.traces())
			}
			path := writeJSONLines(t, "leases.jsonl", lines...)
			_, ref := loadAndAnalyze(t, path, rulefmt.Config{})
			want := renderString(t, ref, render.FormatJSON)
			e, err := newSpeculativeEngine(rulefmt.Config{}, EngineOptions{Shards: 1})
			if err != nil {
				t.Fatal(err)
			}
			r, _, err := analyzeWith(context.Background(), e, ingest.Files{path}, LoadOptions{Read: ReadOptions{Strict: true}})
			switch {
			case c.spoiled && !errors.Is(err, errSpoiled):
				t.Fatalf("speculative engine: %v, want errSpoiled", err)
			case !c.spoiled && err != nil:
				t.Fatalf("speculative engine: %v", err)
			case !c.spoiled:
				if got := renderString(t, r, render.FormatJSON); got != want {
					t.Errorf("speculative engine: report differs from Analyze's:\n%s", cmp.Diff(want, got))
				}
			}
			if e.earlyAcquires != c.early {
				t.Errorf("%d acquires attributed before the end, want %d", e.earlyAcquires, c.early)
			}
			var reread error
			r, _, err = AnalyzeStream(context.Background(), ingest.Files{path}, rulefmt.Config{}, LoadOptions{Reread: func(err error) { reread = err }}, EngineOptions{Shards: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := errors.Is(reread, errSpoiled); got != c.spoiled {
				t.Errorf("read again: %v, want %v", got, c.spoiled)
			}
			if got := renderString(t, r, render.FormatJSON); got != want {
				t.Errorf("AnalyzeStream: report differs from Analyze's:\n%s", cmp.Diff(want, got))
			}
		})
	}
}

// TestSpeculativeRunReadsAgainOnASpanOfATraceLongForgotten pins the give-up
// when the late span's trace is no longer in the run's memory of finalized
// traces (traceLog keeps only the latest; the rest are spilled): the
// shard opens the trace again and measures it a second time, and only the
// check at the end finds the trace finalized twice. The engine alone must
// say it is spoiled, and AnalyzeStream must report what a batch run does.
func TestSpeculativeRunReadsAgainOnASpanOfATraceLongForgotten(t *testing.T) {
	defer func(n, m int) { rootedBatch, logBatch = n, m }(rootedBatch, logBatch)
	rootedBatch, logBatch = 1, 2
	t.Setenv("TMPDIR", t.TempDir())
	lines := []ptrace.Traces{arrival{trace: 1, id: 1, start: 0, end: 3}.traces()}
	for _, f := range fillers(2, 40, time.Second, time.Second) {
		lines = append(lines, f.traces())
	}
	lines = append(lines, arrival{trace: 1, id: 2, parent: 1, start: 1, end: 2}.traces()) // long after its root
	path := writeJSONLines(t, "late-child-long-after.jsonl", lines...)
	_, ref := loadAndAnalyze(t, path, rulefmt.Config{})
	want := renderString(t, ref, render.FormatJSON)
	for _, shards := range []int{1, 2} {
		e, err := newSpeculativeEngine(rulefmt.Config{}, EngineOptions{Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := analyzeWith(context.Background(), e, ingest.Files{path}, LoadOptions{}); !errors.Is(err, errSpoiled) {
			t.Errorf("%d shards: the speculative engine says %v, want errSpoiled", shards, err)
		}
		spilled := false
		for _, s := range e.shards {
			spilled = spilled || len(s.allFinalized.runs) > 0
		}
		if !spilled {
			t.Errorf("%d shards: no shard spilled its finalized traces: the test pins nothing", shards)
		}
		r, _, err := AnalyzeStream(context.Background(), ingest.Files{path}, rulefmt.Config{}, LoadOptions{}, EngineOptions{Shards: shards})
		if err != nil {
			t.Fatalf("%d shards: %v", shards, err)
		}
		if got := renderString(t, r, render.FormatJSON); got != want {
			t.Errorf("%d shards: report differs from Analyze's:\n%s", shards, cmp.Diff(want, got))
		}
	}
}

// TestSpeculativeRunFinalizesRootedTracesOnlyInBatches pins when a
// speculative run measures the traces whose root has arrived: once
// rootedBatch of them are open, not after every batch. A child arriving
// just after its root, before the batch is full, joins its trace and the
// run is not spoiled (no second read); once the batch has filled and been
// measured, the same child spoils it.
func TestSpeculativeRunFinalizesRootedTracesOnlyInBatches(t *testing.T) {
	defer func(n int) { rootedBatch = n }(rootedBatch)
	root1 := arrival{trace: 1, id: 1, start: 0, end: 3}.traces()
	root2 := arrival{trace: 2, id: 5, start: 1, end: 2}.traces()
	child1 := arrival{trace: 1, id: 2, parent: 1, start: 1, end: 2}.traces()
	for _, tc := range []struct {
		name    string
		batch   int
		lines   []ptrace.Traces
		spoiled bool
	}{
		{"a root then its child, the batch of 2 not full", 2, []ptrace.Traces{root1, child1}, false},
		{"a root, its child, another root", 2, []ptrace.Traces{root1, child1, root2}, false},
		{"two roots fill the batch of 2, then the first's child", 2, []ptrace.Traces{root1, root2, child1}, true},
		{"a batch of 1: a root then its child", 1, []ptrace.Traces{root1, child1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rootedBatch = tc.batch
			path := writeJSONLines(t, "dump.jsonl", tc.lines...)
			var reread error
			r, _, err := AnalyzeStream(context.Background(), ingest.Files{path}, rulefmt.Config{}, LoadOptions{Reread: func(err error) { reread = err }}, EngineOptions{Shards: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := errors.Is(reread, errSpoiled); got != tc.spoiled {
				t.Errorf("spoiled (read again): %v (Reread told %v), want %v", got, reread, tc.spoiled)
			}
			if r.Spans != len(tc.lines) {
				t.Errorf("the report holds %d spans, want %d", r.Spans, len(tc.lines))
			}
		})
	}
}

// TestAnOpenTraceHoldsBackTheEarlyAdvance pins the shards' low marks in
// the early pair stage: a trace whose acquire arrived long before its root
// is still open, so no acquire of the dump may be attributed past that
// acquire's start while it is. The acquires after it, in time order, wait;
// the run is not spoiled and reads once. Advancing by the lag alone would
// attribute them, then meet the open trace's acquire behind its pair's
// frontier and read the whole input again.
func TestAnOpenTraceHoldsBackTheEarlyAdvance(t *testing.T) {
	defer func(n, m int) { rootedBatch, earlyPairBatch = n, m }(rootedBatch, earlyPairBatch)
	rootedBatch, earlyPairBatch = 1, 1
	open := newDump()
	ss := open.resource(spans.ResourceServiceInstanceID, "gw-1")
	open.add(ss, sp{trace: 7, id: 71, parent: 70, name: spans.SpanAcquire, start: 0, end: time.Second,
		attrs: []any{spans.AttrCacheHit, false, spans.AttrCacheKey, "k-a"}})
	root := newDump()
	root.add(root.resource(spans.ResourceServiceInstanceID, "gw-1"), sp{trace: 7, id: 70, name: spans.SpanInvoke, start: 0, end: 50 * time.Second})
	lines := []ptrace.Traces{open.td}
	for i, at := range []time.Duration{10, 20, 30, 40} {
		lines = append(lines, leaseAt{uint64(i + 1), "k-a", at * time.Second, i%2 == 1, 0}.traces())
	}
	speculativeOnce(t, writeJSONLines(t, "open.jsonl", append(lines, root.td)...))
}

// speculativeOnce analyzes the dump at path with a one-shard speculative
// engine, which must read it once, and checks its report against
// Analyze's; it returns the engine for what its shard counted.
func speculativeOnce(t *testing.T, path string) *Engine {
	t.Helper()
	_, ref := loadAndAnalyze(t, path, rulefmt.Config{})
	e, err := newSpeculativeEngine(rulefmt.Config{}, EngineOptions{Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := analyzeWith(context.Background(), e, ingest.Files{path}, LoadOptions{Read: ReadOptions{Strict: true}})
	if err != nil {
		t.Fatalf("speculative engine: %v, want one read", err)
	}
	if want, got := renderString(t, ref, render.FormatJSON), renderString(t, r, render.FormatJSON); got != want {
		t.Errorf("speculative engine: report differs from Analyze's:\n%s", cmp.Diff(want, got))
	}
	return e
}
