package tracegen

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/spans"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// committedDir is where go generate writes the dumps.
const committedDir = "../../testdata/traces"

func TestCommittedDumpsMatchTheGenerator(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatalf("Files: %v", err)
	}
	total := 0
	for _, f := range files {
		total += len(f.Data)
		got, err := os.ReadFile(filepath.Join(committedDir, f.Name))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./internal/tracegen)", f.Name, err)
			continue
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("%s differs from what the generator writes (%d bytes committed, %d generated): run go generate ./internal/tracegen, never edit a dump by hand", f.Name, len(got), len(f.Data))
		}
	}
	// The committed dumps stay small enough to review and clone.
	if total > 2<<20 {
		t.Errorf("generated dumps total %d bytes, want under 2 MiB", total)
	}

	// No dump is left over from a renamed or removed scenario or encoding.
	// Files named after a dump (its golden report, "<dump>.golden.json")
	// belong to it.
	entries, err := os.ReadDir(committedDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !generatedOrCompanion(e.Name(), files) {
			t.Errorf("%s is not written by the generator: remove it, or run go generate ./internal/tracegen", e.Name())
		}
	}
}

// generatedOrCompanion reports whether name is a generated dump or a file
// named after one.
func generatedOrCompanion(name string, files []File) bool {
	for _, f := range files {
		if name == f.Name || strings.HasPrefix(name, f.Name+".") {
			return true
		}
	}
	return false
}

func TestFilesAreDeterministic(t *testing.T) {
	a, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("%s: two runs wrote different bytes", a[i].Name)
		}
	}
}

// TestScenarioShapes pins the span and trace counts each scenario's doc
// comment states, and the basic shape of its spans.
func TestScenarioShapes(t *testing.T) {
	want := map[string]struct{ spans, traces, acquires, handshakes int }{
		"prod-cold-starts":     {76, 24, 24, 4},
		"ttl-and-redial":       {20, 5, 6, 3},
		"unexplained-miss":     {17, 5, 5, 2},
		"concurrent":           {14, 4, 4, 2},
		"per-call-dial":        {27, 3, 6, 6},
		"pooled":               {22, 3, 6, 1},
		"cold-init-one-read":   {15, 3, 0, 0},
		"cold-init-two-reads":  {18, 3, 0, 0},
		"cold-init-incomplete": {19, 4, 0, 0},
		"acquire-on-miss":      {24, 10, 2, 2},
		"semconv":              {9, 2, 0, 0},
		"missing-cache-hit":    {10, 3, 3, 1},
		"handshake-on-hit":     {11, 3, 3, 2},
		"double-acquire":       {9, 2, 3, 1},
	}
	scs := Scenarios()
	if len(scs) != len(want) {
		t.Errorf("%d scenarios, the table pins %d", len(scs), len(want))
	}
	for _, sc := range scs {
		t.Run(sc.Name, func(t *testing.T) {
			w, ok := want[sc.Name]
			if !ok {
				t.Fatalf("scenario %s has no pinned shape", sc.Name)
			}
			td := sc.Build()
			traces := map[pcommon.TraceID]bool{}
			ids := map[pcommon.SpanID]bool{}
			names := map[string]int{}
			forEachSpan(td, func(sp ptrace.Span) {
				traces[sp.TraceID()] = true
				if ids[sp.SpanID()] {
					t.Errorf("span id %s used twice", sp.SpanID())
				}
				ids[sp.SpanID()] = true
				names[sp.Name()]++
				if sp.EndTimestamp() < sp.StartTimestamp() {
					t.Errorf("%s ends before it starts", sp.Name())
				}
				if sp.StartTimestamp()%1000 != 0 || sp.EndTimestamp()%1000 != 0 {
					t.Errorf("%s: times must be whole microseconds so Jaeger round-trips them", sp.Name())
				}
			})
			if got := td.SpanCount(); got != w.spans {
				t.Errorf("spans = %d, want %d", got, w.spans)
			}
			if len(traces) != w.traces {
				t.Errorf("traces = %d, want %d", len(traces), w.traces)
			}
			if names[spans.SpanAcquire] != w.acquires {
				t.Errorf("acquire spans = %d, want %d", names[spans.SpanAcquire], w.acquires)
			}
			if names[spans.SpanHandshake] != w.handshakes {
				t.Errorf("handshake spans = %d, want %d", names[spans.SpanHandshake], w.handshakes)
			}
		})
	}
}

// TestColdInitIncompleteLosesTheWorkerPlane checks the two kinds of missing
// data the incomplete story is about.
func TestColdInitIncompleteLosesTheWorkerPlane(t *testing.T) {
	td := ColdInitIncomplete()
	perTrace := map[pcommon.TraceID]map[string]int{}
	present := map[pcommon.SpanID]bool{}
	forEachSpan(td, func(sp ptrace.Span) { present[sp.SpanID()] = true })
	orphans := map[pcommon.TraceID]bool{}
	var order []pcommon.TraceID
	forEachSpan(td, func(sp ptrace.Span) {
		if perTrace[sp.TraceID()] == nil {
			perTrace[sp.TraceID()] = map[string]int{}
			order = append(order, sp.TraceID())
		}
		perTrace[sp.TraceID()][sp.Name()]++
		if !sp.ParentSpanID().IsEmpty() && !present[sp.ParentSpanID()] {
			orphans[sp.TraceID()] = true
		}
	})
	if len(order) != 4 {
		t.Fatalf("%d traces, want 4", len(order))
	}
	// Resources are grouped by service, so trace order follows first
	// appearance: T1..T3 start in the worker, T4 (no worker spans) last.
	wantPlane := map[int]int{0: 1, 1: 1, 2: 0, 3: 0}
	for i, tid := range order {
		if got := perTrace[tid][workerPlaneName]; got != wantPlane[i] {
			t.Errorf("trace %d: %d worker.fetch spans, want %d", i+1, got, wantPlane[i])
		}
	}
	if len(orphans) != 1 || !orphans[order[3]] {
		t.Errorf("orphaned traces = %v, want only the trace with no worker span", orphans)
	}
}

func TestBenchBatchesReachesTheSpanCount(t *testing.T) {
	batches, traces := 0, map[pcommon.TraceID]bool{}
	n, err := BenchBatches(5000, func(td ptrace.Traces) error {
		batches++
		forEachSpan(td, func(sp ptrace.Span) { traces[sp.TraceID()] = true })
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5000 {
		t.Errorf("generated %d spans, want at least 5000", n)
	}
	if batches < 2 {
		t.Errorf("%d batches, want several", batches)
	}
	// 128 executions per batch, one trace each.
	if len(traces) != batches*benchExecsPerBatch {
		t.Errorf("%d traces in %d batches, want %d", len(traces), batches, batches*benchExecsPerBatch)
	}
}

func TestBenchBatchesStopsOnTheCallbackError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	_, err := BenchBatches(1_000_000, func(ptrace.Traces) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Errorf("err = %v after %d calls, want boom after 1", err, calls)
	}
}

func TestWriteBenchRejectsAnUnknownEncoding(t *testing.T) {
	if _, err := WriteBench(&bytes.Buffer{}, "jaeger", 10); err == nil {
		t.Error("WriteBench accepted the jaeger encoding")
	}
	if _, err := EncodingByName("nope"); err == nil {
		t.Error("EncodingByName accepted an unknown name")
	}
}

func forEachSpan(td ptrace.Traces, fn func(ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				fn(ss.At(k))
			}
		}
	}
}
