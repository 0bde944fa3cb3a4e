package main

import (
	"encoding/json"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcptrace/mcptrace/analyze/backend"
	"github.com/mcptrace/mcptrace/analyze/gate"
	"github.com/mcptrace/mcptrace/analyze/report"
)

func init() { subcommands = append(subcommands, newDiffCmd) }

// diffFlags are the flags of `mcptrace diff`.
type diffFlags struct {
	gateFlags
	format string
	output string // -o/--output FILE
	quiet  bool
}

// diffFormat is diff's --format.
var diffFormat = enumFlag{"format", []string{"table", "json", "markdown"}}

// newDiffCmd is `mcptrace diff`: two analyses side by side.
func newDiffCmd() *cobra.Command {
	var f diffFlags
	cmd := &cobra.Command{
		Use:   "diff [flags] BASE CURRENT",
		Short: "Compare two runs' measures side by side, marking regressions",
		Long: `diff lines up the measures of two runs: hit rate, cold-start floor (a miss
rate), excess and unexplained misses, sessions per execution, latency
percentiles and the reads-per-request measures of --config, each with the
verdict 'mcptrace check --baseline BASE CURRENT' gives it, the same rows:
regression (only this fails check), improvement, ~ (no change the data can
tell from noise: the Mann-Whitney U test's p is above 0.05, or the change is
within the tolerance; the p-value and sample sizes are shown), or not
measurable (a side has no figure; the reason is shown).

A figure that is only a bound of the truth is marked as analyze marks it
("≥ 0.25": the truth is at least that; "≤ 8": at most), and so is the
change between the two sides ("≥ +6"; "—" when the sides bound it from
opposite ends, so it may be off either way); a note under the table says
why. The JSON rows say it as baseline_figure, current_figure and
change_figure.

Each side is a baseline (the JSON of 'mcptrace analyze --format json') or a
trace dump, analyzed with the analysis flags; with --jaeger URL the current
side is that backend's window (--service, --since or --start/--end) and only
BASE is given. Regression tolerances are the
flags or the regressions: key of --config, as for check.

diff only reports: it exits 0 whatever changed (use check to gate), and 2 on
bad input or usage. The diff goes to stdout, or with -o FILE to FILE.`,
		Example: `  # Last release's baseline against this run's dump
  mcptrace diff baseline.json spans.jsonl

  # Two dumps, as JSON (schema mcptrace.diff/v1)
  mcptrace diff --format json before.jsonl after.jsonl

  # A Markdown table for a pull request comment
  mcptrace diff --format markdown -o diff.md baseline.json spans.jsonl

  # Last release's baseline against the last day of production, from Jaeger
  mcptrace diff --jaeger http://127.0.0.1:16686 --service gateway --since 24h baseline.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case f.source.jaeger != "" && len(args) != 1:
				return usageErrorf("diff --jaeger needs exactly one argument, BASE: the backend's window is the current side (got %d)", len(args))
			case f.source.jaeger == "" && len(args) != 2:
				return usageErrorf("diff needs exactly two arguments, BASE and CURRENT (got %d)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cur := ""
			if len(args) == 2 {
				cur = args[1]
			}
			return runDiff(cmd, f, args[0], cur)
		},
	}
	fl := cmd.Flags()
	addGateFlags(fl, &f.gateFlags)
	addSourceFlags(fl, &f.source)
	fl.StringVar(&f.format, "format", "table", "output format: "+diffFormat.list()+" (json: schema mcptrace.diff/v1)")
	addOutputFlag(fl, &f.output)
	addQuietFlag(fl, &f.quiet)
	registerEnums(cmd, diffFormat, inputFormatEnum, profileEnum)
	return cmd
}

func runDiff(cmd *cobra.Command, f diffFlags, basePath, curPath string) error {
	if err := diffFormat.check(&f.format); err != nil {
		return err
	}
	if err := checkOutput(f.output); err != nil {
		return err
	}
	s, err := resolveSetup(cmd.Flags(), f.dumpFlags, f.config, &f.tol)
	if err != nil {
		return err
	}
	applyQuiet(cmd, f.quiet)
	base, err := loadSide(cmd, s, basePath)
	if err != nil {
		return err
	}
	cur, curPath, err := loadCurrent(cmd, f, s, curPath)
	if err != nil {
		return err
	}
	rows := gate.Compare(base, cur, s.tol)
	regs := gate.RegressionsOf(rows)
	return writeOutput(cmd, f.output, func(w io.Writer) error {
		switch f.format {
		case "json":
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(struct {
				Schema      string            `json:"schema"`
				Base        string            `json:"base"`
				Current     string            `json:"current"`
				Rows        []gate.Row        `json:"rows"`
				Regressions []gate.Regression `json:"regressions"`
			}{gate.DiffSchema, basePath, curPath, rows, regs})
		case "markdown":
			return gate.RenderDiffMarkdown(w, rows, basePath, curPath)
		}
		return gate.RenderDiff(w, rows, basePath, curPath)
	})
}

// loadCurrent is diff's current side: the dump or baseline at path, or
// with --jaeger the backend's window, named by its URL.
func loadCurrent(cmd *cobra.Command, f diffFlags, s runSetup, path string) (*report.Report, string, error) {
	if f.source.jaeger == "" {
		rep, err := loadSide(cmd, s, path)
		return rep, path, err
	}
	src, err := f.source.source(cmd.Flags(), nil, time.Now())
	if err != nil {
		return nil, "", err
	}
	_, a, err := loadDumps(cmd, s, nil, 0, src, checkedDamaged)
	if err != nil {
		return nil, "", err
	}
	return a.Report, backend.Redact(f.source.jaeger), nil
}
