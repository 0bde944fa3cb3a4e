package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

func init() { subcommands = append(subcommands, newAnalyzeCmd) }

// dumpFlags say how dumps are read and analyzed; analyze, check and diff
// share them.
type dumpFlags struct {
	inputFormat   string
	strict        bool
	profile       string
	scopeAttr     string
	idleTTL       time.Duration
	executionRoot string
	limits        limitFlags // limits.go
}

// addDumpFlags registers the dump flags on fl; verb ("analyzing",
// "checking") completes the --strict help.
func addDumpFlags(fl *pflag.FlagSet, f *dumpFlags, verb string) {
	fl.StringVar(&f.inputFormat, "input-format", "auto", "force the input format: auto, otlp-json, otlp-proto, jaeger or tempo")
	fl.BoolVar(&f.strict, "strict", false, "fail on a damaged input instead of "+verb+" what was read before the damage")
	fl.StringVar(&f.profile, "profile", string(rulefmt.ProfileAuto), "vocabulary: auto (detected per resource), mcptrace (alias default), acquire-on-miss, semconv or openllmetry; a --config's vocabulary: block is used when given")
	fl.StringVar(&f.scopeAttr, "scope-attr", "", "attribute naming the pool scope instead of the default chain")
	fl.DurationVar(&f.idleTTL, "idle-ttl", rulefmt.DefaultIdleTTL, "the pool's idle TTL: a longer idle gap explains a miss as ttl")
	fl.StringVar(&f.executionRoot, "execution-root", "", "selector of an execution's root span (default: each trace is an execution)")
	addLimitFlags(fl, &f.limits)
}

// analyzeFlags are the flags of `mcptrace analyze`.
type analyzeFlags struct {
	dumpFlags
	htmlFlags
	format  string
	config  string
	workers int
	engine  analyze.EngineOptions // --shards, --window, --max-open-traces, --hold-complete
}

// newAnalyzeCmd is `mcptrace analyze`: read trace dumps and report the
// pool's measures.
func newAnalyzeCmd() *cobra.Command {
	var f analyzeFlags
	cmd := &cobra.Command{
		Use:   "analyze [flags] PATH...",
		Short: "Read trace dumps and report whether the pool hits, and why it misses",
		Long: fmt.Sprintf(`analyze reads exported traces and reports the MCP pool's measures:

  pool        acquires, hits, misses and the hit rate; the cold-start floor
              (distinct pool scope and key pairs / acquires) and the misses
              above it, each miss attributed to cold, concurrent, ttl, redial,
              after_failure, health_check or unexplained (the one to chase);
              latency percentiles of acquire (hit and miss), handshake, call
  executions  how many executions spread their tool calls over more than one
              downstream %[1]s (a stateful server loses its state)
  measures    reads per request, from the measures: list of --config

PATH is a file, a directory (walked), a glob, or - for standard input. The
format is detected from the content: OTLP JSON (one request or JSON lines, as
the Collector's file exporter writes), OTLP protobuf (length-prefixed
records), either inside gzip or zstd, Jaeger /api/traces JSON, and Grafana
Tempo trace JSON. A damaged input is analyzed up to the damage with a warning
and the report is marked partial, unless --strict. Bad input or usage exits
with status 2.

--profile names the writer's vocabulary (docs/vocabularies.md): auto (the
default) detects it per resource from the spans present and the report says
what it read (settings.vocabulary, recognition); mcptrace, alias default (this
pool's spans: an acquire span on every call), acquire-on-miss (acquire spans
only on misses: a hit is an invoke span without one), semconv (OpenTelemetry
MCP spans "%[2]s <tool>" with %[1]s, and no pool spans) or openllmetry
(@traceloop/instrumentation-mcp: "<tool>.tool" calls under a session span)
force one. A --config file's vocabulary: block describes any other writer and
is used instead. Spans of which none is recognised exit with status 3, naming
the most frequent span names and what would read them.

A pool scope is named by %[3]s, else the resource's
%[4]s, else %[5]s; --scope-attr names another attribute
(looked up on the span, its ancestors, then the resource).

--execution-root takes a span name or a YAML selector such as
'{name: executor.execute, resource: {%[5]s: gateway}}'. The JSON output
is the stable contract mcptrace.analysis/v1 (docs/analysis-schema.md).`,
			spans.AttrSessionID, spans.MethodToolsCall, spans.AttrPoolID, spans.ResourceServiceInstanceID, spans.ResourceServiceName),
		Example: `  # Analyze a Collector file-exporter dump
  mcptrace analyze traces.jsonl

  # Every dump in a directory, as JSON for a script
  mcptrace analyze --format json ./dumps | jq .pool.hit_rate

  # The gateway's later vocabulary, a 10 minute idle TTL, one scope per region
  mcptrace analyze --profile acquire-on-miss --idle-ttl 10m --scope-attr cloud.region dump.pb.zst

  # Reads per request from a config file, executions rooted at a span
  mcptrace analyze --config mcptrace.yaml --execution-root executor.execute 'dumps/*.json.gz'

  # From standard input, as Markdown for a pull request
  zcat dump.jsonl.gz | mcptrace analyze --format markdown -

  # A self-contained HTML report (timelines, causes, latency), traces linked to Tempo
  mcptrace analyze --format html -o report.html --trace-url 'https://tempo.example/trace/{trace_id}' traces.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("analyze needs at least one PATH (a file, a directory, a glob or - for stdin)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAnalyze(cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", report.RenderTable, "output format: table, json, markdown or html (a self-contained page; with -o FILE)")
	addDumpFlags(fl, &f.dumpFlags, "analyzing")
	fl.StringVar(&f.config, "config", "", "YAML file with reads-per-request measures (key measures:)")
	fl.IntVar(&f.workers, "workers", 0, "decoding goroutines (0: the CPUs the shards leave, at least one)")
	fl.IntVar(&f.engine.Shards, "shards", 0, "analysis shards, traces spread by id (0: half the CPUs, at least one)")
	fl.DurationVar(&f.engine.Window, "window", 0, "stream: finalize a trace once the latest span end read is this far (span time) past its own (0: hold every trace to the end)")
	fl.IntVar(&f.engine.MaxOpenTraces, "max-open-traces", 0, "stream: hold at most N traces open, finalizing the oldest early (0: no bound)")
	fl.BoolVar(&f.engine.HoldComplete, "hold-complete", false, "stream: keep a trace whose root span has arrived open until the window passes it (for spans another process exports after the root)")
	fl.StringVarP(&f.output, "output", "o", "", "write the report to FILE instead of standard output (for --format html)")
	addTraceURLFlag(fl, &f.htmlFlags)
	return cmd
}

// analyzeConfig checks analyze's own flags and resolves the rest as check
// and diff do (resolveSetup). Every mistake is a usage error (exit 2).
func analyzeConfig(fl *pflag.FlagSet, f analyzeFlags) (runSetup, error) {
	if !validRenderFormat(f.format) && f.format != formatHTML {
		return runSetup{}, usageErrorf("--format %q: want table, json, markdown or html", f.format)
	}
	if err := checkHTMLFlags(f.htmlFlags, f.format); err != nil {
		return runSetup{}, err
	}
	if f.output != "-" {
		if err := checkWritable(f.output); err != nil {
			return runSetup{}, usageErrorf("--output: %w", err)
		}
	}
	if f.workers < 0 {
		return runSetup{}, usageErrorf("--workers %d: want 0 (one per CPU) or more", f.workers)
	}
	if f.engine.Shards < 0 || f.engine.Window < 0 || f.engine.MaxOpenTraces < 0 {
		return runSetup{}, usageErrorf("--shards, --window and --max-open-traces: want 0 or more")
	}
	if f.format == formatHTML && (f.engine.Window > 0 || f.engine.MaxOpenTraces > 0) {
		return runSetup{}, usageErrorf("--window and --max-open-traces do not apply to --format html, which holds every span")
	}
	s, err := resolveSetup(fl, f.dumpFlags, f.config, nil)
	s.ropts.Workers = f.workers
	s.engine = f.engine
	s.needIndex = f.format == formatHTML // only the HTML report reads the index; the others stream through the engine
	return s, err
}

func validRenderFormat(s string) bool {
	for _, f := range report.RenderFormats {
		if s == f {
			return true
		}
	}
	return false
}

func runAnalyze(cmd *cobra.Command, f analyzeFlags, paths []string) error {
	s, err := analyzeConfig(cmd.Flags(), f)
	if err != nil {
		return err
	}
	cfg := s.cfg
	idx, a, err := loadDumps(cmd, s, nil, 0, paths, analyzedDamaged)
	if err != nil {
		return err
	}
	rep := a.Report
	stderr := cmd.ErrOrStderr()
	if rep.PoolSpans == 0 && !rep.NothingRecognised() {
		fmt.Fprintf(stderr, "mcptrace: warning: %s\n", report.NoPoolSpansText(cfg.Profile))
	}
	_, _, err = inPhase(cmd.Context(), phaseRender, func() (int, int, error) {
		if f.format == formatHTML {
			return 0, 0, writeHTMLReport(cmd, f.output, idx, cfg, rep, nil, f.traceURL)
		}
		if err := rep.Render(cmd.OutOrStdout(), f.format); err != nil {
			return 0, 0, &exitError{code: 1, err: fmt.Errorf("write report: %w", err)}
		}
		return 0, 0, nil
	})
	if err == nil && rep.NothingRecognised() {
		// The report is written (a script reads its recognition section);
		// the status says there was nothing to measure.
		return &exitError{code: 3, err: errors.New(rep.UnrecognisedText())}
	}
	return err
}

// largeInput is the total size from which reading shows progress: below
// it, reading is over before a person would look.
const largeInput = 64 << 20

// progress shows on a terminal's stderr how far reading has got: the spans
// read and, for a file, the percentage of its bytes; for standard input,
// whose size is unknown, the bytes read. It shows for large inputs and for
// stdin only, and never when stderr is not a terminal (a CI log, a pipe).
type progress struct {
	w    io.Writer
	on   bool
	last time.Time
	// again marks a second read (analyze.LoadOptions.Reread): the counts
	// start from zero again, and the line says why.
	again bool
}

// reread notes that the inputs are being read again from the start.
func (p *progress) reread(error) {
	p.again = true
	p.last = time.Time{}
}

// newProgress returns the progress display for paths on w.
func newProgress(w io.Writer, paths []string) *progress {
	f, ok := w.(*os.File)
	return newProgressIf(w, paths, ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())))
}

// newProgressIf is newProgress with the terminal test given.
func newProgressIf(w io.Writer, paths []string, terminal bool) *progress {
	p := &progress{w: w}
	if !terminal {
		return p
	}
	p.on = slices.Contains(paths, "-") || inputSize(paths) >= largeInput
	return p
}

// update redraws the progress line at most a few times a second.
func (p *progress) update(in *analyze.Input, spansRead int) {
	if !p.on {
		return
	}
	if now := time.Now(); now.Sub(p.last) >= 200*time.Millisecond {
		p.last = now
		line := progressLine(in, spansRead)
		if p.again {
			line = "second read, holding every trace (a span came after its trace's root): " + line
		}
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	}
}

// progressLine is one progress report: "reading dump.jsonl: 1.2M spans
// (43%)", or for stdin "reading -: 1.2M spans, 310.5 MB read".
func progressLine(in *analyze.Input, spansRead int) string {
	line := fmt.Sprintf("reading %s: %s spans", filepath.Base(in.Path), humanCount(spansRead))
	switch read := in.BytesRead(); {
	case in.Size > 0:
		line += fmt.Sprintf(" (%d%%)", min(100, read*100/in.Size))
	case read > 0:
		line += ", " + humanBytes(read) + " read"
	}
	return line
}

// humanBytes renders n bytes as 512 B, 12.3 KB, 45.6 MB or 7.8 GB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// done clears the progress line.
func (p *progress) done() {
	if p.on && !p.last.IsZero() {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// inputSize adds up the sizes of the files paths name (walking directories
// and expanding globs); stdin counts as nothing, since its size is unknown.
func inputSize(paths []string) int64 {
	var total int64
	for _, p := range paths {
		if p == "-" {
			continue
		}
		matches, err := filepath.Glob(p)
		if err != nil || len(matches) == 0 {
			matches = []string{p}
		}
		for _, m := range matches {
			_ = filepath.WalkDir(m, func(_ string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil // the reader reports unreadable paths
				}
				if !d.IsDir() {
					if info, err := d.Info(); err == nil {
						total += info.Size()
					}
				}
				return nil
			})
		}
	}
	return total
}

// humanCount renders n as 1234, 12.3k or 1.2M.
func humanCount(n int) string {
	switch {
	case n >= 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
	case n >= 10_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e3), ".0") + "k"
	}
	return fmt.Sprint(n)
}
