package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// goldenDumps lists the dumps of testdata/traces (every scenario in every
// encoding).
func goldenDumps(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(tracesDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var dumps []string
	for _, p := range paths {
		// Directories are not dumps: corpus/ holds the third-party corpus,
		// with goldens of its own (corpus_test.go).
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			continue
		}
		if !strings.HasSuffix(p, goldenSuffix) {
			dumps = append(dumps, p)
		}
	}
	if len(dumps) == 0 {
		t.Fatalf("no dumps in %s: run go generate ./internal/tracegen", tracesDir)
	}
	return dumps
}

// readSpans reads path with pdata and returns each span alone in its own
// ptrace.Traces, with its resource and scope.
func readSpans(t *testing.T, path string) []ptrace.Traces {
	t.Helper()
	var out []ptrace.Traces
	_, err := ingest.Read(context.Background(), []string{path}, ReadOptions{Strict: true}, ingest.SinkFunc(func(_ *Input, td ptrace.Traces) error {
		out = append(out, singleSpans(td)...)
		return nil
	}))
	if err != nil {
		t.Fatalf("Read %s: %v", path, err)
	}
	return out
}

// loadAndAnalyze is the single-index batch analysis of the dump at path:
// the reference the engine's answers are compared with.
func loadAndAnalyze(t *testing.T, path string, cfg rulefmt.Config) (*index.Index, *report.Report) {
	t.Helper()
	idx, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{Index: cfg.IndexOptions(), Read: ReadOptions{Strict: true}})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Analyze(asDump(idx), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return idx, ref
}

// engineReport feeds batches to a new engine and returns its JSON report,
// inputs left out.
func engineReport(t *testing.T, cfg rulefmt.Config, opts EngineOptions, batches []ptrace.Traces) *report.Report {
	t.Helper()
	e, err := NewEngine(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range batches {
		if err := e.Add(td); err != nil {
			e.Close()
			t.Fatal(err)
		}
	}
	r, err := e.Report()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestEngineReportsEqualTheSingleIndexAnalysis pins that the engine gives
// today's answer on every dump in every encoding, however it is fed: by
// the readers (the CLI's path, the fast JSON path included), in one batch,
// or span by span in shuffled orders, over 1, 2 and 8 shards (1 and 8
// under -short).
func TestEngineReportsEqualTheSingleIndexAnalysis(t *testing.T) {
	for _, path := range goldenDumps(t) {
		name := filepath.Base(path)
		scenario, _, _ := strings.Cut(name, ".")
		t.Run(name, func(t *testing.T) {
			cfg := scenarioConfig(t, scenario)
			idx, ref := loadAndAnalyze(t, path, cfg)
			want := renderString(t, ref, render.FormatJSON)
			ref.Inputs = []report.InputReport{}
			wantNoInputs := renderString(t, ref, render.FormatJSON)

			spans := readSpans(t, path)
			one := ptrace.NewTraces()
			for _, td := range spans {
				td.ResourceSpans().MoveAndAppendTo(one.ResourceSpans())
			}
			spans = readSpans(t, path) // MoveAndAppendTo emptied them
			if one.SpanCount() != ref.Spans+ref.DuplicateSpans {
				t.Fatalf("one batch holds %d spans, the reference %d distinct + %d duplicates", one.SpanCount(), ref.Spans, ref.DuplicateSpans)
			}

			shardCounts := []int{1, 2, 8}
			if testing.Short() {
				shardCounts = []int{1, 8} // one shard, and more shards than traces in some dumps
			}
			for _, shards := range shardCounts {
				// The CLI's path: the readers into the engine.
				e, err := NewEngine(cfg, EngineOptions{Shards: shards})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := Feed(context.Background(), ingest.Files{path}, LoadOptions{Read: ReadOptions{Strict: true}}, e); err != nil {
					e.Close()
					t.Fatal(err)
				}
				if idx.FastBatches > 0 && e.fastBatches != idx.FastBatches {
					t.Errorf("%d shards: the engine took %d fast batches, Load %d: the fast path is off", shards, e.fastBatches, idx.FastBatches)
				}
				if strings.Contains(name, ".otlp.jsonl") && e.fastBatches == 0 {
					t.Errorf("%d shards: no fast batch for a JSON lines dump: the fast path is off", shards)
				}
				r, err := e.Report()
				if err != nil {
					t.Fatal(err)
				}
				if got := renderString(t, r, render.FormatJSON); got != want {
					t.Errorf("%d shards, fed by the readers: report differs from Analyze's:\n%s", shards, cmp.Diff(want, got))
				}

				r = engineReport(t, cfg, EngineOptions{Shards: shards}, []ptrace.Traces{one})
				if got := renderString(t, r, render.FormatJSON); got != wantNoInputs {
					t.Errorf("%d shards, one batch: report differs from Analyze's:\n%s", shards, cmp.Diff(wantNoInputs, got))
				}

				for seed := range uint64(2) {
					shuffled := append([]ptrace.Traces(nil), spans...)
					rand.New(rand.NewPCG(seed, uint64(shards))).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
					r = engineReport(t, cfg, EngineOptions{Shards: shards}, shuffled)
					if got := renderString(t, r, render.FormatJSON); got != wantNoInputs {
						t.Errorf("%d shards, span by span (shuffle %d): report differs from Analyze's:\n%s", shards, seed, cmp.Diff(wantNoInputs, got))
					}
				}
			}
		})
	}
}

// TestFeedStopsAtTheMemoryBudgetAcrossShards pins that the budget Load
// keeps holds for the open traces of every shard together.
func TestFeedStopsAtTheMemoryBudgetAcrossShards(t *testing.T) {
	path := writeShape(t, "invoke-chain", 50_000)
	for _, shards := range []int{1, 2, 8} {
		r, _, err := AnalyzeStream(context.Background(), ingest.Files{path}, rulefmt.Config{}, LoadOptions{Read: ReadOptions{MaxMemory: 4 << 20}}, EngineOptions{Shards: shards})
		var re *ReadError
		if r != nil || !errors.Is(err, ErrMemoryLimit) || !errors.As(err, &re) || re.Path != path {
			t.Errorf("%d shards, 4 MiB budget: %v, want a *ReadError for the file wrapping ErrMemoryLimit", shards, err)
		}
		r, _, err = AnalyzeStream(context.Background(), ingest.Files{path}, rulefmt.Config{}, LoadOptions{Read: ReadOptions{MaxMemory: 64 << 20}}, EngineOptions{Shards: shards})
		if err != nil || r.Spans != 50_000 {
			t.Errorf("%d shards, 64 MiB budget: %v", shards, err)
		}
	}
}

// TestEngineLifecycle pins the verbs' promises: Report is repeatable, Add
// after it fails, and a closed engine reports nothing rather than a report
// of what it happened to hold.
func TestEngineLifecycle(t *testing.T) {
	td := arrival{trace: 1, id: 1, start: 0, end: 1}.traces()
	e, err := NewEngine(rulefmt.Config{}, EngineOptions{Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Add(td); err != nil {
		t.Fatal(err)
	}
	r1, err1 := e.Report()
	r2, err2 := e.Report()
	if err1 != nil || err2 != nil || r1 != r2 || r1.Spans != 1 {
		t.Errorf("Report twice: %v, %v, same report %v, spans %d", err1, err2, r1 == r2, r1.Spans)
	}
	if err := e.Add(td); !errors.Is(err, ErrEngineFlushed) {
		t.Errorf("Add after Report = %v, want ErrEngineFlushed", err)
	}
	e.Close() // harmless after Report

	e, err = NewEngine(rulefmt.Config{}, EngineOptions{Shards: 2, Window: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Add(td); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e.Close()
	if err := e.Add(td); !errors.Is(err, ErrEngineFlushed) {
		t.Errorf("Add after Close = %v, want ErrEngineFlushed", err)
	}
	if r, err := e.Report(); r != nil || !errors.Is(err, ErrEngineClosed) {
		t.Errorf("Report after Close = %v, %v; want ErrEngineClosed", r, err)
	}
	if _, err := NewEngine(rulefmt.Config{}, EngineOptions{Shards: -1}); err == nil {
		t.Error("NewEngine with -1 shards: no error")
	}
}

// TestDefaultSplitGivesShardsAndDecodersHalfTheCPUs pins the engine's
// default split of the CPUs: half to the shards (at least one), the rest
// to Feed's decoding workers (at least one), so no more goroutines are busy
// than there are CPUs to run them.
func TestDefaultSplitGivesShardsAndDecodersHalfTheCPUs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct{ procs, shards, workers int }{{1, 1, 1}, {2, 1, 1}, {3, 2, 1}, {4, 2, 2}, {8, 4, 4}} {
		runtime.GOMAXPROCS(c.procs)
		e, err := NewEngine(rulefmt.Config{}, EngineOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, w := len(e.shards), feedWorkers(e); got != c.shards || w != c.workers {
			t.Errorf("GOMAXPROCS %d: %d shards and %d decoding workers, want %d and %d", c.procs, got, w, c.shards, c.workers)
		}
		e.Close()
	}
}
