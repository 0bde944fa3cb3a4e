package engine

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestChooseEngineIsTheOneChoice pins the choice `mcptrace analyze`, check
// and diff, the engine's batch runs and the Collector connector all make:
// each branch, its boundaries (a bound of one trace streams, zero does
// not; a live stream streams without options), and when a stream finalizes
// at the root (not with HoldComplete, a reads measure or a rule's
// complete_when).
func TestChooseEngineIsTheOneChoice(t *testing.T) {
	reads := rulefmt.Config{Measures: []rulefmt.ReadMeasure{{Name: "m", Root: rulefmt.Selector{Name: "r"}, Read: rulefmt.Selector{Name: "q"}}}}
	rule := []rulefmt.Rule{{ID: "a", Scope: rulefmt.Scope{Kind: rulefmt.ScopeTrace}}}
	waits := []rulefmt.Rule{{ID: "a", Scope: rulefmt.Scope{Kind: rulefmt.ScopeTrace}, CompleteWhen: &rulefmt.Selector{Name: "worker.fetch"}}}
	for _, c := range []struct {
		name string
		req  EngineRequest
		want EngineChoice
	}{
		{"files, no rules", EngineRequest{Rereadable: true}, EngineChoice{EngineSpeculative, true}},
		{"stdin, no rules", EngineRequest{}, EngineChoice{EngineBatch, false}},
		{"files, a reads measure", EngineRequest{Config: reads, Rereadable: true}, EngineChoice{EngineBatch, false}},
		{"files, a rule", EngineRequest{Rules: rule, Rereadable: true}, EngineChoice{EngineIndex, false}},
		{"stdin, a rule", EngineRequest{Rules: rule}, EngineChoice{EngineIndex, false}},
		{"files, the report's events", EngineRequest{Events: true, Rereadable: true}, EngineChoice{EngineIndex, false}},
		{"a window", EngineRequest{Options: EngineOptions{Window: time.Nanosecond}, Rereadable: true}, EngineChoice{EngineStream, true}},
		{"a bound of one trace", EngineRequest{Options: EngineOptions{MaxOpenTraces: 1}}, EngineChoice{EngineStream, true}},
		{"a bound of none, shards", EngineRequest{Options: EngineOptions{Shards: 4}, Rereadable: true}, EngineChoice{EngineSpeculative, true}},
		{"a window, hold complete", EngineRequest{Options: EngineOptions{Window: time.Second, HoldComplete: true}}, EngineChoice{EngineStream, false}},
		{"a window, a reads measure", EngineRequest{Config: reads, Options: EngineOptions{Window: time.Second}}, EngineChoice{EngineStream, false}},
		{"live", EngineRequest{Live: true}, EngineChoice{EngineStream, true}},
		{"live, in-stream rules", EngineRequest{Live: true, Rules: rule}, EngineChoice{EngineStream, true}},
		{"live, a rule waiting on complete_when", EngineRequest{Live: true, Rules: waits}, EngineChoice{EngineStream, false}},
		{"live, hold complete", EngineRequest{Live: true, Options: EngineOptions{HoldComplete: true}}, EngineChoice{EngineStream, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ChooseEngine(c.req); got != c.want {
				t.Errorf("ChooseEngine = {%v %v}, want {%v %v}", got.Kind, got.FinalizeAtRoot, c.want.Kind, c.want.FinalizeAtRoot)
			}
		})
	}
}

// TestAnalyzeDumpsRunsTheChosenEngine pins AnalyzeDumps against the choice:
// the same dump through every engine it picks (speculative, batch from a
// stdin-like second read, one index for a rule or the report's events)
// gives the same report; the events come back exactly when asked, equal to
// NewReportEvents of the same dump; only a run with the rule judges it; the
// phases run in order (the engine's read alone, or read, index, measures
// and rules), and AfterRead is told what was read before the measures.
func TestAnalyzeDumpsRunsTheChosenEngine(t *testing.T) {
	path := goldenDumps(t)[0]
	cfg := rulefmt.Config{Profile: rulefmt.ProfileAuto}
	refIdx, ref := loadAndAnalyze(t, path, cfg)
	want := renderString(t, ref, render.FormatJSON)
	wantEvents, err := NewReportEvents(asDump(refIdx), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rule := rulefmt.BuiltinRules(cfg)[:1]
	for _, c := range []struct {
		name      string
		opts      RunOptions
		kind      EngineKind
		phases    []string
		wantRules int
	}{
		{"no rules", RunOptions{}, EngineSpeculative, []string{PhaseRead, "after read"}, 0},
		{"the report's events", RunOptions{Events: true}, EngineIndex, []string{PhaseRead, PhaseIndex, "after read", PhaseMeasures, PhaseRules}, 0},
		{"a rule", RunOptions{Rules: rule}, EngineIndex, []string{PhaseRead, PhaseIndex, "after read", PhaseMeasures, PhaseRules}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var phases []string
			c.opts.Phase = func(name string, fn func() error) error {
				phases = append(phases, name)
				return fn()
			}
			c.opts.AfterRead = func(inputs []Input, err error) {
				if err != nil || len(inputs) != 1 || inputs[0].Spans != ref.Spans {
					t.Errorf("AfterRead told %v, %+v; want no error and one input of %d spans", err, inputs, ref.Spans)
				}
				phases = append(phases, "after read")
			}
			run, err := AnalyzeDumps(context.Background(), ingest.Files{path}, cfg, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if run.Choice.Kind != c.kind {
				t.Errorf("the run took the %v engine, want %v", run.Choice.Kind, c.kind)
			}
			if (run.Events != nil) != c.opts.Events {
				t.Errorf("events returned: %v, want %v", run.Events != nil, c.opts.Events)
			}
			if run.Events != nil && !reflect.DeepEqual(run.Events, wantEvents) {
				t.Errorf("the run's events differ from NewReportEvents of the same dump: %d acquires, %d handshakes, %d calls; want %d, %d, %d",
					run.Events.NumAcquires(), len(run.Events.Handshakes), len(run.Events.Calls),
					wantEvents.NumAcquires(), len(wantEvents.Handshakes), len(wantEvents.Calls))
			}
			if got := renderString(t, run.Analysis.Report, render.FormatJSON); got != want {
				t.Errorf("the %v engine's report differs from Analyze's", run.Choice.Kind)
			}
			if len(run.Analysis.Rules) != c.wantRules {
				t.Errorf("%d rules observed, want %d", len(run.Analysis.Rules), c.wantRules)
			}
			if !slices.Equal(phases, c.phases) {
				t.Errorf("phases %v, want %v", phases, c.phases)
			}
		})
	}
}
