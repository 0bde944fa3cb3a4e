package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"github.com/mcptrace/mcptrace/internal/demo"
)

func init() { subcommands = append(subcommands, newDemoCmd) }

// demoFlags are the flags of `mcptrace demo`.
type demoFlags struct {
	out        string
	format     string
	mode       string
	scopes     int
	executions int
	latency    time.Duration
}

func newDemoCmd() *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a pooled and a per-call workload against an embedded MCP fixture",
		Long: `demo starts a session-stateful MCP fixture on 127.0.0.1, then runs the same
workload twice through the instrumented pool: once pooled, once dialing a fresh
session per call (the regression). Each execution selects a workspace and then
reads it back, the smallest journey that needs one downstream session.

It writes every span to an OTLP JSON-lines dump (what the OpenTelemetry
Collector's file exporter writes) and prints, per mode: executions, calls,
sessions opened, pool hit rate, executions that saw more than one session,
executions that lost their state, and wall time.

Nothing needs installing: the fixture is embedded.`,
		Example: `  # Both modes, dump to mcptrace-demo.jsonl, print a table
  mcptrace demo

  # Only the pooled workload, as JSON, with 20ms emulated network latency
  mcptrace demo --mode pooled --latency 20ms --format json --out pooled.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "out", "o", "mcptrace-demo.jsonl", `OTLP JSON-lines dump to write ("" for none)`)
	fl.StringVar(&f.format, "format", "table", "output format: table or json")
	fl.StringVar(&f.mode, "mode", "both", "workload mode: pooled, per-call or both")
	fl.IntVar(&f.scopes, "scopes", 3, "pool scopes (pool instances) per mode")
	fl.IntVar(&f.executions, "executions", 4, "executions per scope, each two dependent calls")
	fl.DurationVar(&f.latency, "latency", 0, "latency the fixture adds to every request (e.g. 20ms)")
	return cmd
}

func runDemo(cmd *cobra.Command, f demoFlags) error {
	modes, err := demo.ParseMode(f.mode)
	if err != nil {
		return usageErrorf("--mode: %v", err)
	}
	if f.format != "table" && f.format != "json" {
		return usageErrorf("--format %q: expected table or json", f.format)
	}
	if f.scopes < 1 || f.executions < 1 {
		return usageErrorf("--scopes and --executions must be at least 1")
	}
	if f.latency < 0 {
		return usageErrorf("--latency %s: expected a duration of 0 or more", f.latency)
	}
	cfg := demo.Config{Modes: modes, Scopes: f.scopes, Executions: f.executions, Latency: f.latency}
	var dump *os.File
	if f.out != "" {
		dump, err = os.Create(f.out)
		if err != nil {
			return usageErrorf("create dump: %v", err)
		}
		defer dump.Close()
		cfg.Dump = dump
	}
	stderr := cmd.ErrOrStderr()
	if isTerminal(stderr) {
		cfg.Progress = func(m demo.Mode, done, total int) {
			fmt.Fprintf(stderr, "\r%-8s %d/%d executions", m, done, total)
			if done == total {
				fmt.Fprintln(stderr)
			}
		}
	}
	results, err := demo.Run(cmd.Context(), cfg)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if dump != nil {
		if err := dump.Close(); err != nil {
			return fmt.Errorf("write dump %s: %w", f.out, err)
		}
	}
	out := cmd.OutOrStdout()
	if f.format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"schema": "mcptrace.demo/v1", "dump": f.out, "modes": results})
	}
	if err := renderDemoTable(out, results); err != nil {
		return err
	}
	if f.out != "" {
		fmt.Fprintf(out, "\nSpans written to %s (OTLP JSON lines).\n", f.out)
	}
	return nil
}

func renderDemoTable(w io.Writer, results []demo.Result) error {
	t := tablewriter.NewWriter(w)
	t.Header("mode", "executions", "calls", "sessions opened", "hit rate", "execs on several sessions", "state lost", "errors", "wall")
	for _, r := range results {
		if err := t.Append(string(r.Mode), r.Executions, r.Calls, r.SessionsOpened,
			fmt.Sprintf("%.1f%%", 100*r.HitRate), r.MultiSession, r.StateLost, r.Errors,
			r.Wall.Round(time.Millisecond).String()); err != nil {
			return err
		}
	}
	return t.Render()
}

// isTerminal reports whether w is a character device, where progress
// output belongs.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
