// Package analyzetest runs the analyzer as its tests above analyze need
// it (analyze/gate, analyze/htmlreport, analyze/whatif): a hand-built dump
// analyzed ([AnalyzeTD]), a dump file analyzed with the HTML report's
// events as the CLI builds them ([Analyzed]).
//
// It is test support, imported only by _test.go files (internal/archtest
// holds that). It imports analyze, so analyze's own in-package tests
// cannot use it; dump builders that need no analyzer live in
// internal/dumptest.
package analyzetest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// AnalyzeTD builds a dump of tds and analyzes it with cfg, failing t on
// error.
func AnalyzeTD(t testing.TB, cfg rulefmt.Config, tds ...ptrace.Traces) *report.Report {
	t.Helper()
	d := analyze.NewDump(cfg.IndexOptions())
	for _, td := range tds {
		d.Add(td)
	}
	r, err := analyze.Analyze(d, cfg)
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	return r
}

// Analyzed reads the dump at path with ropts and returns its report and
// its HTML report events, as the CLI builds them for the HTML report
// (analyze.AnalyzeDumps with RunOptions.Events), failing t on error.
func Analyzed(t testing.TB, path string, cfg rulefmt.Config, ropts ingest.ReadOptions) (*report.Report, *analyze.ReportEvents) {
	t.Helper()
	run, err := analyze.AnalyzeDumps(context.Background(), ingest.Files{path}, cfg, analyze.RunOptions{
		Load:   analyze.LoadOptions{Read: ropts},
		Events: true,
	})
	if err != nil {
		t.Fatalf("AnalyzeDumps %s: %v", path, err)
	}
	return run.Analysis.Report, run.Events
}

// MatchJSONGolden compares data, a page's embedded JSON, indented, with
// the golden file, rewriting it first when update is set; rerun is the
// command that regenerates it, named when the golden is missing. The HTML
// report's and the check page's golden tests share it.
func MatchJSONGolden(t testing.TB, data []byte, golden string, update bool, rerun string) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, data, "", "  "); err != nil {
		t.Fatalf("embedded data is not JSON: %v", err)
	}
	pretty.WriteByte('\n')
	if update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden (run %s): %v", rerun, err)
	}
	if got := pretty.String(); got != string(want) {
		t.Errorf("report data differs from %s (rerun with -update if intended):\n%s", golden, cmp.Diff(string(want), got))
	}
}
