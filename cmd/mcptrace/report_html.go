package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/htmlreport"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/analyze/whatif"
)

// formatHTML is analyze's --format for the self-contained HTML report.
const formatHTML = "html"

// htmlFlags are the HTML report's flags, shared by analyze and check.
type htmlFlags struct {
	output   string // analyze's -o FILE, check's --html FILE ("" or "-": stdout)
	traceURL string
}

// addTraceURLFlag registers --trace-url.
func addTraceURLFlag(fl *pflag.FlagSet, f *htmlFlags) {
	fl.StringVar(&f.traceURL, "trace-url", "", "link template for a trace in the HTML report, with {trace_id} (e.g. a Grafana Explore or Tempo URL)")
}

// checkHTMLFlags validates the HTML flags before any work: a bad template is
// a usage error (exit 2).
func checkHTMLFlags(f htmlFlags) error {
	if err := htmlreport.ValidateTraceURL(f.traceURL); err != nil {
		return usageErrorf("--trace-url: %v", err)
	}
	return nil
}

// writeHTMLReport writes the HTML report of an analysis and its events ev
// (analyze.RunOptions.Events), with check's verdict on top when check is
// not nil, to path ("" or "-": the command's standard output). A failure
// to compute or write it is exit 2.
func writeHTMLReport(cmd *cobra.Command, path string, ev *analyze.ReportEvents, cfg rulefmt.Config, report *report.Report, check *report.HTMLCheck, traceURL string) error {
	h, err := newHTMLReport(ev, cfg, report, htmlreport.Options{TraceURL: traceURL, Check: check})
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("html report: %w", err)}
	}
	if path == "" || path == "-" {
		if err := h.Render(cmd.OutOrStdout()); err != nil {
			return &exitError{code: 2, err: err}
		}
		return nil
	}
	if err := writeFile(path, h.Render); err != nil {
		return &exitError{code: 2, err: fmt.Errorf("html report: %w", err)}
	}
	return nil
}

// newHTMLReport wires the HTML report of an analysis: analyze built the
// events ev (analyze.RunOptions.Events), htmlreport draws them with the
// report r, and whatif replays their acquires for the what-if section
// under it (assuming the analysis's idle TTL where the dump records no
// settings; its figures not measurable where r's writer cannot tell the
// keys apart).
func newHTMLReport(ev *analyze.ReportEvents, cfg rulefmt.Config, r *report.Report, opts htmlreport.Options) (*htmlreport.Report, error) {
	assume := whatif.DefaultAssumed
	assume.IdleTTL = cfg.WithDefaults().IdleTTL
	opts.WhatIf = func(w io.Writer) error {
		return whatif.WriteReportSection(w, ev, assume, whatif.KeysMergedWhy(r.Writer))
	}
	return htmlreport.New(r, ev, opts)
}

// demoHTMLPath is where the demo writes its report: beside the dump, with
// the dump's extension replaced by .html.
func demoHTMLPath(dump string) string {
	for _, ext := range []string{".jsonl", ".json", ".gz", ".zst"} {
		dump = strings.TrimSuffix(dump, ext)
	}
	return dump + ".html"
}

// writeDemoHTMLReport reads the demo's dump back and writes its HTML report
// beside it, returning the report's path.
func writeDemoHTMLReport(ctx context.Context, dump string) (string, error) {
	cfg := rulefmt.Config{}
	run, err := analyze.AnalyzeDumps(ctx, ingest.Files{dump}, cfg, analyze.RunOptions{Events: true})
	if err != nil {
		return "", fmt.Errorf("html report of %s: %w", dump, err)
	}
	h, err := newHTMLReport(run.Events, cfg, run.Analysis.Report, htmlreport.Options{})
	if err != nil {
		return "", fmt.Errorf("html report of %s: %w", dump, err)
	}
	path := demoHTMLPath(dump)
	if err := writeFile(path, h.Render); err != nil {
		return "", fmt.Errorf("html report: %w", err)
	}
	return path, nil
}
