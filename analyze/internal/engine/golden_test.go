package engine

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
)

var update = flag.Bool("update", false, "rewrite the golden reports in testdata/traces")

// tracesDir holds the generated dumps (go generate ./internal/tracegen) and,
// next to each, its expected report <dump>.golden.json.
const tracesDir = "../../../testdata/traces"

const goldenSuffix = ".golden.json"

// TestGoldenReports analyzes every dump in testdata/traces and compares its
// JSON report with the golden file next to it. Each dump's figures are also
// checked against the hand-worked ones of its scenario, and its report,
// inputs aside, must equal the one of the scenario built in memory: the
// same story reads the same in every format.
func TestGoldenReports(t *testing.T) {
	dumps := goldenDumps(t)

	// The in-memory reference report of each scenario.
	reference := map[string]string{}
	for _, sc := range scenarioBuilds() {
		reference[sc.Name] = renderString(t, analyzeTD(t, scenarioConfig(t, sc.Name), sc.Build()), render.FormatJSON)
	}

	for _, path := range dumps {
		name := filepath.Base(path)
		scenario, _, _ := strings.Cut(name, ".")
		t.Run(name, func(t *testing.T) {
			want, ok := scenarioFigures[scenario]
			if !ok {
				t.Fatalf("dump %s belongs to no known scenario", name)
			}
			cfg := scenarioConfig(t, scenario)
			idx, inputs, err := load(context.Background(), ingest.Files{path}, LoadOptions{Index: cfg.IndexOptions(), Read: ReadOptions{Strict: true}})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if len(inputs) != 1 || inputs[0].Partial || len(inputs[0].Warnings) != 0 {
				t.Errorf("inputs = %+v, want one clean input", inputs)
			}
			r, err := Analyze(asDump(idx), cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkFigures(t, r, want)
			nameAsFromAnalyze(r)

			got := renderString(t, r, render.FormatJSON)
			golden := path + goldenSuffix
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wantJSON, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (run go test ./analyze/internal/engine -run TestGoldenReports -update): %v", err)
			}
			if got != string(wantJSON) {
				t.Errorf("report differs from %s (rerun with -update if the change is intended):\n%s", golden, cmp.Diff(string(wantJSON), got))
			}

			r.Inputs = []report.InputReport{}
			if sameFormat := renderString(t, r, render.FormatJSON); sameFormat != reference[scenario] {
				t.Errorf("%s reads differently from the scenario built in memory:\n%s", name, cmp.Diff(reference[scenario], sameFormat))
			}
		})
	}
}

// nameAsFromAnalyze names r's inputs as a run from analyze/ does
// (../testdata/traces/...), where the goldens are read from too: a golden
// is the same bytes whichever package's test writes it.
func nameAsFromAnalyze(r *report.Report) {
	for i := range r.Inputs {
		r.Inputs[i].Path = strings.TrimPrefix(r.Inputs[i].Path, "../../")
	}
}
