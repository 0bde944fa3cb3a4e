package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
)

// splitRun is --split-by's one value: inputs whose windows lie
// report.RunGap or more apart are reported apart.
const splitRun = "run"

// splitByEnum is analyze's --split-by.
var splitByEnum = enumFlag{"split-by", []string{splitRun}}

// checkSplitBy refuses --split-by where it cannot apply: the HTML page is
// one dump's.
func checkSplitBy(f *analyzeFlags) error {
	if f.splitBy == "" {
		return nil
	}
	if err := splitByEnum.check(&f.splitBy); err != nil {
		return err
	}
	if f.format == formatHTML {
		return usageErrorf("--split-by run does not apply to --format html, one page per dump: run mcptrace analyze --format html on each run's files")
	}
	return nil
}

// runReport is one run's analysis, with the run's place among the others.
type runReport struct {
	n, of int
	rep   *report.Report
}

// analyzeRuns analyzes each of runs (report.Runs of rep's inputs) on its own,
// reading each run's files again, and returns the reports in run order.
// Their read warnings were given when rep was read, so the second reading
// is silent. An input read from standard input cannot be read again.
func analyzeRuns(cmd *cobra.Command, s runSetup, rep *report.Report, runs [][]int) ([]runReport, error) {
	for _, in := range rep.Inputs {
		if in.Path == "-" {
			return nil, usageErrorf("--split-by run reads each run's files again: standard input cannot be; give the dump as a file")
		}
	}
	stderr := cmd.ErrOrStderr()
	cmd.SetErr(io.Discard)
	defer cmd.SetErr(stderr)
	out := make([]runReport, 0, len(runs))
	for k, run := range runs {
		paths := make([]string, len(run))
		for j, i := range run {
			paths[j] = rep.Inputs[i].Path
		}
		_, a, err := loadDumps(cmd, s, nil, 0, ingest.Files(paths), analyzedDamaged)
		if err != nil {
			return nil, fmt.Errorf("run %d of %d (%s): %w", k+1, len(runs), strings.Join(paths, ", "), err)
		}
		out = append(out, runReport{n: k + 1, of: len(runs), rep: a.Report})
	}
	return out, nil
}

// writeRuns writes each run's report in format, under a heading naming
// the run's inputs and window (JSON: one document per run, each naming
// its own).
func writeRuns(w io.Writer, runs []runReport, format string) error {
	for k, r := range runs {
		if h := render.Heading(runHeading(r), format); h != "" {
			if k > 0 {
				h = "\n" + h
			}
			if _, err := io.WriteString(w, h+"\n\n"); err != nil {
				return err
			}
		}
		if err := render.Write(w, r.rep, format); err != nil {
			return err
		}
	}
	return nil
}

// runHeading names a run for people: its place, its first few inputs and
// its window.
func runHeading(r runReport) string {
	const shown = 3
	var names []string
	for i, in := range r.rep.Inputs {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(r.rep.Inputs)-shown))
			break
		}
		names = append(names, in.Path)
	}
	window := ""
	if w := r.rep.Window.Text(); w != "" {
		window = " (" + w + ")"
	}
	return fmt.Sprintf("Run %d of %d: %s%s", r.n, r.of, strings.Join(names, ", "), window)
}

// runAnalyzeSplit is analyze --split-by run over inputs holding several
// runs: each run analyzed and reported on its own, in one output. The exit
// status is the worst of the runs': 3 when one recognises no span.
func runAnalyzeSplit(cmd *cobra.Command, f analyzeFlags, s runSetup, rep *report.Report, runs [][]int) error {
	reports, err := analyzeRuns(cmd, s, rep, runs)
	if err != nil {
		return err
	}
	_, _, err = inPhase(cmd.Context(), phaseRender, func() (int, int, error) {
		return 0, 0, writeOutput(cmd, f.output, func(w io.Writer) error { return writeRuns(w, reports, f.format) })
	})
	if err != nil {
		return err
	}
	for _, r := range reports {
		if r.rep.NothingRecognised() {
			return &exitError{code: 3, err: fmt.Errorf("run %d of %d: %s", r.n, r.of, r.rep.UnrecognisedText())}
		}
	}
	return nil
}
