package main

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"

	"github.com/mcptrace/mcptrace/analyze/gate"
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

Each side is a baseline (the JSON of 'mcptrace analyze --format json') or a
trace dump, analyzed with the analysis flags. Regression tolerances are the
flags or the regressions: key of --config, as for check.

diff only reports: it exits 0 whatever changed (use check to gate), and 2 on
bad input or usage. The diff goes to stdout, or with -o FILE to FILE.`,
		Example: `  # Last release's baseline against this run's dump
  mcptrace diff baseline.json spans.jsonl

  # Two dumps, as JSON (schema mcptrace.diff/v1)
  mcptrace diff --format json before.jsonl after.jsonl

  # A Markdown table for a pull request comment
  mcptrace diff --format markdown -o diff.md baseline.json spans.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageErrorf("diff needs exactly two arguments, BASE and CURRENT (got %d)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runDiff(cmd, f, args[0], args[1]) },
	}
	fl := cmd.Flags()
	addGateFlags(fl, &f.gateFlags)
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
	cur, err := loadSide(cmd, s, curPath)
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
