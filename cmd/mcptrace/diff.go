package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcptrace/mcptrace/analyze/gate"
)

func init() { subcommands = append(subcommands, newDiffCmd) }

// diffFlags are the flags of `mcptrace diff`.
type diffFlags struct {
	gateFlags
	format string
}

// newDiffCmd is `mcptrace diff`: two analyses side by side.
func newDiffCmd() *cobra.Command {
	var f diffFlags
	cmd := &cobra.Command{
		Use:   "diff [flags] BASE CURRENT",
		Short: "Compare two runs' measures side by side, marking regressions",
		Long: `diff lines up the measures of two runs: hit rate, cold-start floor, excess
and unexplained misses, sessions per execution, latency percentiles and the
reads-per-request measures of --config, with the change and REGRESSED where
'mcptrace check --baseline BASE CURRENT' would fail.

Each side is a baseline (the JSON of 'mcptrace analyze --format json') or a
trace dump, analyzed with the analysis flags. Regression tolerances are the
flags or the regressions: key of --config, as for check.

diff only reports: it exits 0 whatever changed (use check to gate), and 2 on
bad input or usage.`,
		Example: `  # Last release's baseline against this run's dump
  mcptrace diff baseline.json spans.jsonl

  # Two dumps, as JSON (schema mcptrace.diff/v1)
  mcptrace diff --format json before.jsonl after.jsonl

  # A Markdown table for a pull request comment
  mcptrace diff --format markdown baseline.json spans.jsonl > diff.md`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageErrorf("diff needs exactly two arguments, BASE and CURRENT (got %d)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runDiff(cmd, f, args[0], args[1]) },
	}
	addGateFlags(cmd.Flags(), &f.gateFlags)
	cmd.Flags().StringVar(&f.format, "format", "table", "output format: table, json (schema mcptrace.diff/v1) or markdown")
	return cmd
}

func runDiff(cmd *cobra.Command, f diffFlags, basePath, curPath string) error {
	if f.format != "table" && f.format != "json" && f.format != "markdown" {
		return usageErrorf("--format %q: want table, json or markdown", clipQuoted(f.format))
	}
	s, err := resolveSetup(cmd.Flags(), f.dumpFlags, f.config, &f.tol)
	if err != nil {
		return err
	}
	base, err := loadSide(cmd, s, basePath)
	if err != nil {
		return err
	}
	cur, err := loadSide(cmd, s, curPath)
	if err != nil {
		return err
	}
	rows := gate.Diff(base, cur, s.tol)
	out := cmd.OutOrStdout()
	if f.format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		regs := gate.Regressions(base, cur, s.tol)
		if regs == nil {
			regs = []gate.Regression{}
		}
		doc := struct {
			Schema      string            `json:"schema"`
			Base        string            `json:"base"`
			Current     string            `json:"current"`
			Rows        []gate.DiffRow    `json:"rows"`
			Regressions []gate.Regression `json:"regressions"`
		}{gate.DiffSchema, basePath, curPath, rows, regs}
		if err := enc.Encode(doc); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("write diff: %w", err)}
		}
		return nil
	}
	if f.format == "markdown" {
		if err := gate.RenderDiffMarkdown(out, rows, gate.Regressions(base, cur, s.tol), basePath, curPath); err != nil {
			return &exitError{code: 2, err: err}
		}
		return nil
	}
	if err := gate.RenderDiff(out, rows, basePath, curPath); err != nil {
		return &exitError{code: 2, err: err}
	}
	return nil
}
