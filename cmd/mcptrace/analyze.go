package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
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
	limits        limitFlags  // limits.go
	source        sourceFlags // source.go: --jaeger and its window, for the commands that read one source
}

// addDumpFlags registers the dump flags on fl; verb ("analyzing",
// "checking") completes the --strict help.
func addDumpFlags(fl *pflag.FlagSet, f *dumpFlags, verb string) {
	fl.StringVar(&f.inputFormat, "input-format", "auto", "force the input format: auto, otlp-json, otlp-proto, jaeger or tempo")
	fl.BoolVar(&f.strict, "strict", false, "fail on a damaged input instead of "+verb+" what was read before the damage")
	fl.StringVar(&f.profile, "profile", string(rulefmt.ProfileAuto), "vocabulary: auto (detected per resource), mcptrace (alias default), acquire-on-miss, semconv, openllmetry, sentry or mastra; a --config's vocabulary: block is used when given")
	fl.StringVar(&f.scopeAttr, "scope-attr", "", "attribute naming the pool scope instead of the default chain")
	fl.DurationVar(&f.idleTTL, "idle-ttl", rulefmt.DefaultIdleTTL, "the pool's idle TTL: a longer idle gap explains a miss as ttl")
	fl.StringVar(&f.executionRoot, "execution-root", "", "selector of an execution's root span (default: each trace is an execution)")
	addLimitFlags(fl, &f.limits)
	addProfileFlags(fl)
}

// analyzeFlags are the flags of `mcptrace analyze`.
type analyzeFlags struct {
	dumpFlags
	htmlFlags
	quiet        bool
	format       string
	config       string
	workers      int
	splitBy      string // --split-by: "" or splitRun (split.go)
	allowPartial bool
	engine       analyze.EngineOptions // --shards, --window, --max-open-traces, --hold-complete
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

PATH is a file, a directory (walked), a glob, or - for standard input; with
--jaeger URL there is no PATH: a window (--since, or --start and --end) of
the --service traces a Jaeger v2 query service holds is read instead, page by
page, and the report says what was fetched. The format is detected from the
content: OTLP JSON (one request or JSON lines, as
the Collector's file exporter writes), OTLP protobuf (length-prefixed
records), either inside gzip or zstd, Jaeger /api/traces JSON, and Grafana
Tempo trace JSON. A damaged input is analyzed up to the damage with a warning
and the report is marked partial, unless --strict. Bad input or usage exits
with status 2; inputs that held not a single span (only files that are not
dumps) exit 3, the all-zero report still written. The report goes to stdout,
or with -o FILE to FILE, in any --format; -q prints nothing but errors.

--profile names the writer's vocabulary (docs/vocabularies.md): auto (the
default) detects it per resource from the spans present and the report says
what it read (settings.vocabulary, recognition); mcptrace, alias default (this
pool's spans: an acquire span on every call), acquire-on-miss (acquire spans
only on misses: a hit is an invoke span without one), semconv (OpenTelemetry
MCP spans "%[2]s <tool>" with %[1]s, and no pool spans), openllmetry
(@traceloop/instrumentation-mcp: "<tool>.tool" calls under a session span),
sentry (@sentry/node's MCP server spans) or mastra (@mastra/mcp's
"execute_tool <tool>" client spans, no session) force one. A --config file's vocabulary: block describes any other writer and
is used instead. Spans of which none is recognised exit with status 3, naming
the most frequent span names and what would read them.

A pool scope is named by %[3]s, else the resource's
%[4]s, else %[5]s; --scope-attr names another attribute
(looked up on the span, its ancestors, then the resource).

--execution-root takes a span name or a YAML selector such as
'{name: executor.execute, resource: {%[5]s: gateway}}'. The JSON output
is the stable contract mcptrace.analysis/v2 (docs/analysis-schema.md).`,
			spans.AttrSessionID, spans.MethodToolsCall, spans.AttrPoolID, spans.ResourceServiceInstanceID, spans.ResourceServiceName),
		Example: `  # Analyze a Collector file-exporter dump
  mcptrace analyze traces.jsonl

  # Every dump in a directory, as JSON for a script
  mcptrace analyze --format json ./dumps | jq .pool.hit_rate

  # The gateway's later vocabulary, a 10 minute idle TTL, one scope per region
  mcptrace analyze --profile acquire-on-miss --idle-ttl 10m --scope-attr cloud.region dump.pb.zst

  # Reads per request from a config file, executions rooted at a span
  mcptrace analyze --config mcptrace.yaml --execution-root executor.execute 'dumps/*.json.gz'

  # The last hour of the gateway's traces in Jaeger
  mcptrace analyze --jaeger http://127.0.0.1:16686 --service gateway --since 1h

  # From standard input, as Markdown for a pull request
  zcat dump.jsonl.gz | mcptrace analyze --format markdown -

  # A self-contained HTML report (timelines, causes, latency), traces linked to Tempo
  mcptrace analyze --format html -o report.html --trace-url 'https://tempo.example/trace/{trace_id}' traces.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && f.source.jaeger == "" {
				return usageErrorf("analyze needs at least one PATH (a file, a directory, a glob or - for stdin), or --jaeger URL")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAnalyze(cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", render.FormatTable, "output format: "+analyzeFormat.list()+" (a self-contained page)")
	addDumpFlags(fl, &f.dumpFlags, "analyzing")
	addSourceFlags(fl, &f.source)
	fl.BoolVar(&f.allowPartial, "allow-partial", false, "exit 0 when a backend's window was cut by the page size or still being written (default: exit 3, the report written and marked partial)")
	fl.StringVar(&f.config, "config", "", "YAML file with reads-per-request measures (key measures:)")
	fl.IntVar(&f.workers, "workers", 0, "decoding goroutines (0: the CPUs the shards leave, at least one)")
	fl.StringVar(&f.splitBy, "split-by", "", "report each run apart: run (inputs whose windows lie "+report.RunGap.String()+" or more apart), reading each run's files again")
	fl.IntVar(&f.engine.Shards, "shards", 0, "analysis shards, traces spread by id (0: half the CPUs, at least one)")
	fl.DurationVar(&f.engine.Window, "window", 0, "stream: finalize a trace once the latest span end read is this far (span time) past its own (0: hold every trace to the end)")
	fl.IntVar(&f.engine.MaxOpenTraces, "max-open-traces", 0, "stream: hold at most N traces open, finalizing the oldest early (0: no bound)")
	fl.BoolVar(&f.engine.HoldComplete, "hold-complete", false, "stream: keep a trace whose root span has arrived open until the window passes it (for spans another process exports after the root)")
	addOutputFlag(fl, &f.output)
	addQuietFlag(fl, &f.quiet)
	addTraceURLFlag(fl, &f.htmlFlags)
	registerEnums(cmd, analyzeFormat, inputFormatEnum, profileEnum, splitByEnum)
	return cmd
}

// analyzeFormat is analyze's --format: the report's formats and the HTML
// page.
var analyzeFormat = enumFlag{"format", slices.Concat(render.Formats, []string{formatHTML})}

// analyzeConfig checks analyze's own flags and resolves the rest as check
// and diff do (resolveSetup). Every mistake is a usage error (exit 2).
func analyzeConfig(fl *pflag.FlagSet, f *analyzeFlags) (runSetup, error) {
	if err := analyzeFormat.check(&f.format); err != nil {
		return runSetup{}, err
	}
	if err := checkHTMLFlags(f.htmlFlags); err != nil {
		return runSetup{}, err
	}
	if err := checkOutput(f.output); err != nil {
		return runSetup{}, err
	}
	if err := checkSplitBy(f); err != nil {
		return runSetup{}, err
	}
	if f.splitBy != "" && f.source.jaeger != "" {
		return runSetup{}, usageErrorf("--split-by reads each run's files again: it does not apply to --jaeger, whose window is one run")
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
	s.events = f.format == formatHTML // only the HTML report draws events (from one index); the others stream through the engine
	return s, err
}

func runAnalyze(cmd *cobra.Command, f analyzeFlags, paths []string) error {
	s, err := analyzeConfig(cmd.Flags(), &f)
	if err != nil {
		return err
	}
	applyQuiet(cmd, f.quiet)
	cfg := s.cfg
	src, err := f.source.source(cmd.Flags(), paths, time.Now())
	if err != nil {
		return err
	}
	ev, a, err := loadDumps(cmd, s, nil, 0, src, analyzedDamaged)
	if err != nil {
		return err
	}
	rep := a.Report
	if rep.PoolSpans == 0 && rep.Spans > 0 && !rep.NothingRecognised() {
		warnf(cmd.ErrOrStderr(), "%s", report.NoPoolSpansText(cfg.Profile))
	}
	if runs := report.Runs(rep.Inputs); f.splitBy == splitRun && len(runs) > 1 {
		return runAnalyzeSplit(cmd, f, s, rep, runs)
	}
	_, _, err = inPhase(cmd.Context(), phaseRender, func() (int, int, error) {
		if rep.Spans == 0 && f.format == render.FormatTable {
			return 0, 0, nil // tables of zeros tell a reader nothing the warnings and the error below do not
		}
		if f.format == formatHTML {
			return 0, 0, writeHTMLReport(cmd, f.output, ev, cfg, rep, nil, f.traceURL)
		}
		return 0, 0, writeOutput(cmd, f.output, func(w io.Writer) error { return render.Write(w, rep, f.format) })
	})
	if err != nil {
		return err
	}
	// The report is written, but for a table of no span (a script reads
	// the JSON's inputs and recognition sections); the status says there
	// was nothing to measure, as check's does.
	switch {
	case rep.Spans == 0:
		return &exitError{code: 3, err: noSpansError(rep)}
	case rep.NothingRecognised():
		return &exitError{code: 3, err: errors.New(rep.UnrecognisedText())}
	case !f.allowPartial && backendPartial(rep):
		return &exitError{code: 3, err: errors.New("the backend's window is partial (see the warnings above): the report covers what was fetched; --allow-partial accepts it")}
	}
	return nil
}

// backendPartial reports whether an input read from a backend is
// partial: its window cut by the page size, or still being written.
func backendPartial(rep *report.Report) bool {
	for _, in := range rep.Inputs {
		if in.Backend != nil && in.Partial {
			return true
		}
	}
	return false
}

// noSpansError says that inputs were read but held not a single span (every
// file skipped as not a dump, or empty requests): nothing was measured, and
// the all-zero report must not pass for a measurement.
func noSpansError(rep *report.Report) error {
	for _, in := range rep.Inputs {
		if b := in.Backend; b != nil {
			return fmt.Errorf("no traces of %s in %s .. %s at %s %s: nothing to analyze (widen the window with --since or --start, or check --service)",
				quoteAll(b.Services), b.Window.Start.Format(time.RFC3339), b.Window.End.Format(time.RFC3339), b.Backend, b.URL)
		}
	}
	return fmt.Errorf("no spans in the %d input(s) read: nothing to analyze (each was skipped as not a trace dump, or held no span)", len(rep.Inputs))
}
