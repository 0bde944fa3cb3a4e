package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/dashboards"
	"github.com/mcptrace/mcptrace/internal/demo"
	"github.com/mcptrace/mcptrace/internal/outfile"
	"github.com/mcptrace/mcptrace/internal/profiling"
	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

func init() { subcommands = append(subcommands, newDemoCmd) }

// demoFlags are the flags of `mcptrace demo`.
type demoFlags struct {
	out        string
	dir        string
	format     string
	mode       string
	scopes     int
	executions int
	latency    time.Duration

	// The live workload and profiling.
	metricsAddr  string
	duration     time.Duration
	pyroscopeURL string
	profileDir   string
	outSet       bool // --dump (or its old name --out) given explicitly (live mode writes no dump by default)

	// OTLP: spans also go to a receiver while the demo runs.
	otlpEndpoint string
	otlpProtocol string

	semconvCallSpans bool // pool.Options.SemconvCallSpans

	// The seeded workload (--mode seeded) and its pools' settings.
	seed       uint64
	idleTTL    time.Duration
	idlePerKey string
	prewarm    string
	gap        time.Duration
	seeded     demo.Seeded // the above, parsed by checkDemoFlags
	modes      []demo.Mode // --mode, parsed by checkDemoFlags
}

// seededFlags are the flags of the seeded workload only; any of them
// implies --mode seeded.
var seededFlags = []string{"seed", "idle-ttl", "idle-per-key", "prewarm", "gap"}

// modeLive selects the long-running workload; --metrics-addr or --duration
// imply it.
const modeLive = "live"

func newDemoCmd() *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a pooled and a per-call workload against an embedded MCP fixture",
		Long: `demo starts a session-stateful MCP fixture on 127.0.0.1, then runs the same
workload twice through the instrumented pool: once pooled, once dialing a fresh
session per call (the regression). Each execution selects a workspace and then
reads it back, the smallest journey that needs one downstream session.

It writes each mode's spans to a dump of its own in --dir (default: the
current directory): pooled.jsonl and per-call.jsonl, OTLP JSON lines (what the
OpenTelemetry Collector's file exporter writes), each with its HTML report
beside it (pooled.html, per-call.html). --dump FILE writes every mode's spans
into that one file instead (its report beside it), --dump "" writes none. It
prints, per mode: executions, calls, sessions opened, pool hit rate,
executions that saw more than one session, executions that lost their state,
and wall time.

Nothing needs installing: the fixture is embedded. On a terminal a progress
line says how far each workload has got (never in a pipe or a CI log).

OTLP, in either mode: --otlp-endpoint (or the standard
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT variables)
also sends every span, as the demo runs, to an OTLP receiver such as an
OpenTelemetry Collector running the mcptrace connector, so the chain demo ->
collector -> Prometheus can be watched live. The endpoint is the receiver's
base URL with scheme and port: http/protobuf (the default) posts to its
/v1/traces; --otlp-protocol grpc (or OTEL_EXPORTER_OTLP_PROTOCOL=grpc) uses
gRPC. Headers, TLS and the export timeout come from the other
OTEL_EXPORTER_OTLP_* variables. The dump is still written. The demo reports
how many spans the receiver accepted; a malformed endpoint, or one that
refuses or fails the spans, stops the demo with exit code 2 (retries give up
after 5s).

Live mode (--mode live, implied by --metrics-addr or --duration) instead keeps
a workload running through four pools until --duration has passed or until
SIGINT: hits, misses of every reason (cold, concurrent, ttl, redial,
after_failure, health_check, evicted), injected failures (HTTP 500, connection
resets, forgotten sessions) and evictions, so Grafana dashboards have live
data. --metrics-addr serves the pool's metrics for Prometheus at /metrics
(loopback unless the address names another interface). It writes spans only
when --dump is given explicitly, and prints the pools' counters at the end.

Seeded mode (--mode seeded, implied by --seed, --idle-ttl, --idle-per-key,
--prewarm or --gap) runs --scopes pool scopes one after the other, each a new
pool over the same fixture and service (a restart), each of --executions
steps (default 10) drawn from --seed: a single call or a burst of up to 3
leases of one of 4 keys, after no idle gap, one --gap or two. A burst's
leases are all acquired before any is used or released, so its concurrent
misses do not depend on the scheduler; the same seed makes the same calls
(keys, order, burst widths, gaps) at any settings, so two runs at two
settings are two dumps of one workload (mcptrace whatif predicts one from the
other). The pools take --idle-ttl (default 240ms), --idle-per-key (peak, the
pool's default: a key keeps its recent in-use peak idle, at least one; or N:
at most N whatever the bursts) and --prewarm (none, or recent:N: each scope
after the first dials the N keys the previous scopes called most recently
before its first acquire). Steps run on a planned clock (a 160ms slot each,
its leases released at its end), so how long a session idles is a whole
number of slots, planned, not the sum of the calls' durations: the outcome
repeats run after run as long as no step starts or releases more than half a
slot late (the table says so when one did; the JSON's late_ms says how late the run was) and the TTL stays
half a slot off the planned grid (the defaults: 320ms gaps, a 240ms TTL); its
dump is seeded.jsonl in --dir.

Profiling, in either mode: --pyroscope-url pushes CPU and memory profiles to a
Pyroscope server as service mcptrace-demo; --profile-dir writes the same
profiles as pprof files (cpu.pprof, heap.pprof, goroutine.pprof). The pool's
pprof labels (phase=handshake or call, and the key hash) split them.`,
		Example: `  # Both modes: pooled.jsonl and per-call.jsonl (and their HTML reports), a table
  mcptrace demo

  # The same into the directory spans/
  mcptrace demo --dir spans

  # Only the pooled workload, as JSON, with 20ms emulated network latency
  mcptrace demo --mode pooled --latency 20ms --format json --dump pooled.jsonl

  # Live data for Grafana: metrics on 127.0.0.1:9464 for two minutes
  mcptrace demo --metrics-addr 127.0.0.1:9464 --duration 2m

  # Also send the spans to a local Collector (collector/config.yaml) over OTLP
  mcptrace demo --otlp-endpoint http://127.0.0.1:4318
  mcptrace demo --duration 5m --otlp-endpoint http://127.0.0.1:4317 --otlp-protocol grpc

  # One seeded workload at two settings: the same calls, two dumps
  mcptrace demo --seed 7 --idle-ttl 240ms --idle-per-key 1 --dump a.jsonl
  mcptrace demo --seed 7 --idle-ttl 400ms --idle-per-key peak --prewarm recent:1 --dump b.jsonl

  # Profile the pool under load into ./profiles, then split by phase
  mcptrace demo --duration 30s --profile-dir profiles
  go tool pprof -tagfocus phase=handshake profiles/cpu.pprof`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.outSet = cmd.Flags().Changed("dump") || cmd.Flags().Changed("out")
			return runDemo(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.out, "dump", "", `one OTLP JSON-lines `+"`FILE`"+` for every mode's spans, instead of one per mode in --dir ("" for none)`)
	// --out and -o were the dump's first names; -o names a report file in
	// every other command, so they remain only as deprecated aliases.
	addDeprecatedAlias(fl, &f.out, "out", "o", "use --dump FILE (-o/--output names a report file in the other commands)")
	fl.StringVar(&f.dir, "dir", ".", "directory `DIR` (created if missing) for one dump per mode: pooled.jsonl and per-call.jsonl, each with its HTML report beside")
	fl.StringVar(&f.format, "format", "table", "output format: "+demoFormat.list())
	fl.StringVar(&f.mode, "mode", "both", "workload mode: "+demoMode.list())
	fl.IntVar(&f.scopes, "scopes", 3, "pool scopes (pool instances) per mode")
	fl.IntVar(&f.executions, "executions", 4, fmt.Sprintf("executions per scope, each two dependent calls; seeded mode: steps per scope (default %d there)", demo.DefaultSeededSteps))
	fl.DurationVar(&f.latency, "latency", 0, "latency the fixture adds to every request (e.g. 20ms)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics and run the live workload (e.g. 127.0.0.1:9464)")
	fl.DurationVar(&f.duration, "duration", 0, "run the live workload this long (0: until interrupted)")
	fl.StringVar(&f.pyroscopeURL, "pyroscope-url", "", "push CPU and memory profiles to this Pyroscope server (e.g. http://localhost:4040)")
	fl.StringVar(&f.profileDir, "profile-dir", "", "write CPU, heap and goroutine pprof files into this directory")
	fl.StringVar(&f.otlpEndpoint, "otlp-endpoint", "", "also send spans over OTLP to this receiver's base `URL`, e.g. http://127.0.0.1:4318 (default: $"+
		telemetry.EnvOTLPTracesEndpoint+" used as is, else $"+telemetry.EnvOTLPEndpoint+")")
	fl.StringVar(&f.otlpProtocol, "otlp-protocol", "", "OTLP `protocol`: "+telemetry.ProtocolHTTPProtobuf+" or "+telemetry.ProtocolGRPC+
		" (default: $OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	fl.Uint64Var(&f.seed, "seed", 1, "seeded mode: the `SEED` the workload's calls are drawn from (the same seed, the same calls)")
	fl.DurationVar(&f.idleTTL, "idle-ttl", demo.DefaultSeededIdleTTL, "seeded mode: the pools' idle TTL (pool.Options.IdleTTL)")
	fl.StringVar(&f.idlePerKey, "idle-per-key", "peak", "seeded mode: idle sessions per key, `peak` (a key keeps its recent in-use peak, at least 1) or N (at most N: FixedIdlePerKey)")
	fl.StringVar(&f.prewarm, "prewarm", "none", "seeded mode: pre-warm at each scope restart, `none` or recent:N (the N keys the previous scopes called most recently)")
	fl.DurationVar(&f.gap, "gap", demo.DefaultSeededGap, "seeded mode: the idle gap between steps (a step waits none, one or two)")
	fl.BoolVar(&f.semconvCallSpans, "semconv-call-spans", false, `write call spans as the OpenTelemetry MCP conventions name them ("tools/call <tool>", and each handshake's initialize or server/discover request), beside the pool's acquire and handshake spans`)
	registerEnums(cmd, demoFormat, demoMode, otlpProtocol)
	return cmd
}

// The demo's enums: --format, --mode (internal/demo's modes and the live
// workload) and --otlp-protocol.
var (
	demoFormat   = enumFlag{"format", []string{"table", "json"}}
	demoMode     = enumFlag{"mode", slices.Concat(demo.ModeNames, []string{modeLive})}
	otlpProtocol = enumFlag{"otlp-protocol", []string{telemetry.ProtocolHTTPProtobuf, telemetry.ProtocolGRPC}}
)

func runDemo(cmd *cobra.Command, f demoFlags) (err error) {
	if err := checkDemoFlags(cmd, &f); err != nil {
		return err // before any work
	}
	// An OTLP failure cancels the workload at once rather than at exit.
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	otlp, err := startDemoOTLP(ctx, f, cancel)
	if err != nil {
		return err
	}
	if otlp != nil {
		defer func() {
			sctx, scancel := context.WithTimeout(context.Background(), otlpShutdownTimeout)
			defer scancel()
			if serr := otlp.Shutdown(sctx); serr != nil && err == nil {
				err = serr
			}
		}()
		fmt.Fprintf(cmd.ErrOrStderr(), "Sending spans over OTLP (%s) to %s\n", otlp.Protocol(), otlp.URL())
	}
	stopProfiling, err := startProfiling(cmd, f)
	if err != nil {
		return err
	}
	defer func() {
		if perr := stopProfiling(); perr != nil && err == nil {
			err = perr
		}
	}()
	if f.mode == modeLive {
		return runLiveDemo(ctx, cmd, f, otlp)
	}
	return runWorkloadDemo(ctx, cmd, f, otlp)
}

// checkDemoFlags checks the flags before any work and resolves what they
// imply: --metrics-addr or --duration the live workload, a seeded flag the
// seeded one. It fills f.mode (for live), f.modes and f.seeded.
func checkDemoFlags(cmd *cobra.Command, f *demoFlags) error {
	if err := demoFormat.check(&f.format); err != nil {
		return err
	}
	if err := demoMode.check(&f.mode); err != nil {
		return err
	}
	if f.duration < 0 {
		return usageErrorf("--duration %s: expected a duration of 0 or more", f.duration)
	}
	if f.outSet && cmd.Flags().Changed("dir") {
		return usageErrorf("--dump and --dir: --dump names one dump for every mode, --dir the directory of one dump per mode; give one")
	}
	if err := checkWritable(f.out); err != nil {
		return usageErrorf("--dump: %w", err)
	}
	changed := cmd.Flags().Changed
	if live := f.metricsAddr != "" || f.duration > 0; f.mode == modeLive || live {
		switch {
		case changed("mode") && f.mode != modeLive:
			return usageErrorf("--mode %s: --metrics-addr and --duration run the live workload; use --mode live or leave --mode out", f.mode)
		case changed("dir"):
			return usageErrorf("--dir: the live workload writes one dump, to --dump FILE, and only when given")
		case f.semconvCallSpans:
			return usageErrorf("--semconv-call-spans: applies to the pooled and per-call workloads, not the live one")
		}
		f.mode = modeLive
	}
	for _, name := range seededFlags {
		if !changed(name) {
			continue
		}
		if changed("mode") && f.mode != string(demo.ModeSeeded) || f.mode == modeLive {
			return usageErrorf("--%s: applies to the seeded workload (--mode seeded), not --mode %s", name, f.mode)
		}
		f.mode = string(demo.ModeSeeded)
	}
	if f.mode == modeLive {
		return nil
	}
	modes, err := demo.ParseMode(f.mode)
	if err != nil {
		return usageErrorf("--mode: %v", err)
	}
	f.modes = modes
	if f.scopes < 1 || f.executions < 1 {
		return usageErrorf("--scopes and --executions must be at least 1")
	}
	if f.latency < 0 {
		return usageErrorf("--latency %s: expected a duration of 0 or more", f.latency)
	}
	return checkSeededFlags(cmd, f)
}

// checkSeededFlags parses the seeded workload's flags into f.seeded.
func checkSeededFlags(cmd *cobra.Command, f *demoFlags) error {
	if f.idleTTL <= 0 {
		return usageErrorf("--idle-ttl %s: expected a positive duration", f.idleTTL)
	}
	if f.gap <= 0 {
		return usageErrorf("--gap %s: expected a positive duration", f.gap)
	}
	perKey, fixed, err := demo.ParseIdlePerKey(f.idlePerKey)
	if err != nil {
		return usageErrorf("--idle-per-key %v", err)
	}
	recent, err := demo.ParsePrewarm(f.prewarm)
	if err != nil {
		return usageErrorf("--prewarm %v", err)
	}
	f.seeded = demo.Seeded{Seed: f.seed, IdleTTL: f.idleTTL, Gap: f.gap, MaxIdlePerKey: perKey, FixedIdlePerKey: fixed, PrewarmRecent: recent}
	if cmd.Flags().Changed("executions") {
		f.seeded.Steps = f.executions
	}
	return nil
}

// runWorkloadDemo runs the pooled, per-call or seeded workload into its
// dumps, reads them back with the analyzer and prints the results.
func runWorkloadDemo(ctx context.Context, cmd *cobra.Command, f demoFlags, otlp *telemetry.OTLPTraceExporter) error {
	cfg := demo.Config{Modes: f.modes, Scopes: f.scopes, Executions: f.executions, Latency: f.latency, SemconvCallSpans: f.semconvCallSpans, Seeded: f.seeded}
	if otlp != nil {
		cfg.Exporter = otlp
	}
	dumps := planDemoDumps(f, f.modes)
	if !f.outSet { // --dump was checked before
		if err := os.MkdirAll(f.dir, 0o755); err != nil {
			return usageErrorf("--dir: %w", err)
		}
		for _, d := range dumps {
			if err := checkWritable(d.Path); err != nil {
				return usageErrorf("--dir: %w", err)
			}
		}
	}
	files, err := createDemoDumps(dumps, &cfg)
	if err != nil {
		return err
	}
	defer func() {
		for _, file := range files {
			file.Abort() // after the Commit below, nothing: a dump is replaced only once whole
		}
	}()
	status := newStatusLine(cmd.ErrOrStderr())
	if status.on {
		cfg.Progress = func(m demo.Mode, done, total int) { status.show(done == 1, workloadProgressLine(m, done, total)) }
	}
	results, err := demo.Run(ctx, cfg)
	status.clear()
	if oerr := otlpFailure(otlp); oerr != nil {
		return oerr // the cause of a cancelled run, and a usage error even when the run finished
	}
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	for _, file := range files {
		if err := file.Commit(); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("dump: %w", err)}
		}
	}
	// The demo reads its own dumps back with the analyzer, as a user would.
	acfg := rulefmt.Config{}
	if slices.Contains(f.modes, demo.ModeSeeded) {
		acfg.IdleTTL = f.seeded.IdleTTL // the seeded pools' TTL, as `mcptrace analyze --idle-ttl` would be told
	}
	if err := readDemoDumps(cmd.Context(), dumps, acfg, status); err != nil {
		return err
	}
	return printDemo(cmd.OutOrStdout(), f, results, dumps, otlp)
}

// demoDump is one dump the demo writes: the spans of Modes, in Path, and
// once read back its analysis and the HTML report beside it.
type demoDump struct {
	Modes      []demo.Mode    `json:"modes"`
	Path       string         `json:"dump"`
	HTMLReport string         `json:"html_report"`
	Analysis   *report.Report `json:"analysis"`
}

// planDemoDumps lists the dumps the flags ask for: with --dump one for every
// mode (none for --dump ""), else one per mode in --dir, named for the mode.
func planDemoDumps(f demoFlags, modes []demo.Mode) []*demoDump {
	if f.outSet {
		if f.out == "" {
			return nil
		}
		return []*demoDump{{Modes: modes, Path: f.out}}
	}
	dumps := make([]*demoDump, 0, len(modes))
	for _, m := range modes {
		dumps = append(dumps, &demoDump{Modes: []demo.Mode{m}, Path: filepath.Join(f.dir, string(m)+".jsonl")})
	}
	return dumps
}

// createDemoDumps starts the dumps' files (each written whole or not at
// all: outfile) and points cfg at them.
func createDemoDumps(dumps []*demoDump, cfg *demo.Config) ([]*outfile.File, error) {
	files := make([]*outfile.File, 0, len(dumps))
	for _, d := range dumps {
		file, err := outfile.Create(d.Path)
		if err != nil {
			for _, f := range files {
				f.Abort()
			}
			return nil, usageErrorf("create dump: %v", err)
		}
		files = append(files, file)
		if len(d.Modes) == 1 && len(dumps) > 1 {
			if cfg.Dumps == nil {
				cfg.Dumps = map[demo.Mode]io.Writer{}
			}
			cfg.Dumps[d.Modes[0]] = file
		} else {
			cfg.Dump = file
		}
	}
	return files, nil
}

// workloadProgressLine is the demo's progress: "per-call: 1234/6000
// executions (20%)".
func workloadProgressLine(m demo.Mode, done, total int) string {
	return fmt.Sprintf("%s: %d/%d executions (%d%%)", m, done, total, done*100/max(total, 1))
}

// liveProgressLine is the live demo's progress: the rounds so far and, for
// a run of a set duration, how much of it has passed.
func liveProgressLine(rounds int, elapsed, duration time.Duration) string {
	line := fmt.Sprintf("live: %d rounds, %s", rounds, elapsed.Round(time.Second))
	if duration > 0 {
		line += fmt.Sprintf(" of %s", duration)
	}
	return line
}

// readDemoDumps analyzes each dump and writes its HTML report beside it,
// saying on status which one it is at (on a large run this takes a while).
func readDemoDumps(ctx context.Context, dumps []*demoDump, cfg rulefmt.Config, status *statusLine) error {
	defer status.clear()
	for _, d := range dumps {
		status.show(true, "analyzing "+d.Path+" and writing its HTML report")
		report, err := analyze.AnalyzeFiles(ctx, []string{d.Path}, cfg, ingest.ReadOptions{})
		if err != nil {
			return fmt.Errorf("analyze the demo dump %s: %w", d.Path, err)
		}
		d.Analysis = report
		if d.HTMLReport, err = writeDemoHTMLReport(ctx, d.Path); err != nil {
			return err
		}
	}
	return nil
}

// printDemo writes the demo's results: as JSON (mcptrace.demo/v1: "dumps"
// lists every dump; with a single dump its "dump", "analysis" and
// "html_report" are also at the top, as before dumps were per mode), or as
// a table followed by where each dump went and, for a single dump, what
// `mcptrace analyze` reads in it.
func printDemo(out io.Writer, f demoFlags, results []demo.Result, dumps []*demoDump, otlp *telemetry.OTLPTraceExporter) error {
	if f.format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		doc := map[string]any{"schema": "mcptrace.demo/v1", "modes": results, "dumps": dumps}
		if otlp != nil {
			doc["otlp"] = otlpSummary(otlp)
		}
		if len(dumps) == 1 {
			doc["dump"], doc["analysis"], doc["html_report"] = dumps[0].Path, dumps[0].Analysis, dumps[0].HTMLReport
		}
		return enc.Encode(doc)
	}
	if err := renderDemoTable(out, results); err != nil {
		return err
	}
	if otlp != nil {
		fmt.Fprintf(out, "\n%d spans sent over OTLP (%s) to %s.\n", otlp.Sent(), otlp.Protocol(), otlp.URL())
	}
	if len(dumps) == 1 {
		fmt.Fprintf(out, "\nSpans written to %s (OTLP JSON lines), its HTML report to %s; what `mcptrace analyze` reads in it:\n\n", dumps[0].Path, dumps[0].HTMLReport)
		return render.Table(out, dumps[0].Analysis)
	}
	if len(dumps) > 0 {
		fmt.Fprintln(out)
	}
	for _, d := range dumps {
		p := d.Analysis.Pool
		fmt.Fprintf(out, "%s spans written to %s (OTLP JSON lines), its HTML report to %s: hit rate %s, cold-start floor %s, %d unexplained misses\n",
			d.Modes[0], d.Path, d.HTMLReport, demoPercent(p.HitRate), demoPercent(p.ColdStartFloor), p.UnexplainedMisses)
	}
	if len(dumps) > 1 {
		self := invokedAs(os.Args[0])
		fmt.Fprintf(out, "Next: %s analyze %s; %s check %s\n", self, dumps[0].Path, self, dumps[len(dumps)-1].Path)
	}
	return nil
}

// invokedAs is how to run this command again, for a "Next:" hint: "go run
// ./cmd/mcptrace" when exe is a binary go run built (in a go-build
// temporary directory: the README's first command, before anything is
// installed), else "mcptrace".
func invokedAs(exe string) string {
	if strings.Contains(filepath.ToSlash(exe), "/go-build") {
		return "go run ./cmd/mcptrace"
	}
	return "mcptrace"
}

// demoPercent formats a ratio the analysis may leave null.
func demoPercent(r *float64) string {
	if r == nil {
		return "n/a"
	}
	return render.Percent(*r)
}

// renderDemoTable prints one row per mode.
func renderDemoTable(w io.Writer, results []demo.Result) error {
	t := tablewriter.NewWriter(w)
	t.Header("mode", "executions", "calls", "sessions opened", "hit rate", "execs on several sessions", "state lost", "errors", "wall")
	for _, r := range results {
		var multi, lost any = r.MultiSession, r.StateLost
		if r.Seed != nil {
			multi, lost = "-", "-" // the seeded workload's calls keep no state
		}
		if err := t.Append(string(r.Mode), r.Executions, r.Calls, r.SessionsOpened,
			render.Percent(r.HitRate), multi, lost, r.Errors,
			r.Wall.Round(time.Millisecond).String()); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, r := range results {
		if r.Seed != nil {
			fmt.Fprintf(w, "\nseeded: seed %d; pools: %s; %d acquires, %d hits, misses %s, %d pre-warm dials\n",
				*r.Seed, seededSettings(r.Settings), r.Acquires, r.Hits, missCounts(r.MissReasons), r.PrewarmDials)
			if note := lateNote(r); note != "" {
				fmt.Fprintln(w, note)
			}
		}
	}
	return nil
}

// lateNote says, for a seeded run whose steps ran more than half a slot
// behind their planned clock (Result.LateMS), that the machine's load, not
// the settings alone, may have decided hits and ttl misses: the table then
// differs from a quiet run's, and the JSON alone used to say why. "" for
// a run on time.
func lateNote(r demo.Result) string {
	half := r.Settings.Slot / 2
	late := time.Duration(r.LateMS * float64(time.Millisecond))
	if half <= 0 || late <= half {
		return ""
	}
	return fmt.Sprintf("seeded: LATE: a step ran %s behind its planned clock, more than half a slot (%s): the machine's load, "+
		"not the settings alone, may have decided hits and ttl misses; rerun on a quieter machine to compare", late.Round(time.Millisecond), half)
}

// seededSettings spells the seeded pools' settings as the flags do.
func seededSettings(s demo.Seeded) string {
	perKey, prewarm := spans.IdleSizingPeak, "none"
	if s.FixedIdlePerKey {
		perKey = fmt.Sprint(s.MaxIdlePerKey)
	}
	if s.PrewarmRecent > 0 {
		prewarm = fmt.Sprintf("recent:%d", s.PrewarmRecent)
	}
	return fmt.Sprintf("--idle-ttl %s --idle-per-key %s --prewarm %s --gap %s", s.IdleTTL, perKey, prewarm, s.Gap)
}

// missCounts spells misses by reason in the report order, zeros left out.
func missCounts(m map[string]int64) string {
	var parts []string
	for _, r := range spans.MissReasons {
		if m[r] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, m[r]))
		}
	}
	if m[spans.MissEvicted] > 0 {
		parts = append(parts, fmt.Sprintf("%s %d", spans.MissEvicted, m[spans.MissEvicted]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// startProfiling starts the profiler the flags ask for and returns its stop
// function (a no-op without profiling flags).
func startProfiling(cmd *cobra.Command, f demoFlags) (func() error, error) {
	if f.pyroscopeURL == "" && f.profileDir == "" {
		return func() error { return nil }, nil
	}
	p, err := profiling.Start(profiling.Config{
		PyroscopeURL:    f.pyroscopeURL,
		Dir:             f.profileDir,
		ApplicationName: dashboards.DefaultPyroscopeService,
	})
	if errors.Is(err, profiling.ErrInvalidConfig) {
		return nil, usageErrorf("--pyroscope-url / --profile-dir: %v", err)
	}
	if err != nil {
		return nil, err
	}
	return func() error {
		if err := p.Stop(); err != nil {
			return fmt.Errorf("profiling: %w", err)
		}
		if files := p.Files(); len(files) > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "Profiles written: %v\n", files)
		}
		return nil
	}, nil
}

// runLiveDemo runs the long-lived workload, serving metrics and sending
// spans over OTLP if asked, until --duration passes or ctx is cancelled
// (SIGINT, or the OTLP endpoint failing).
func runLiveDemo(ctx context.Context, cmd *cobra.Command, f demoFlags, otlp *telemetry.OTLPTraceExporter) (err error) {
	stderr := cmd.ErrOrStderr()
	cfg := telemetry.Config{ServiceName: dashboards.DefaultPyroscopeService}
	if otlp != nil {
		// Shutting the telemetry down flushes the batch into the exporter
		// and shuts it down. Blocking: a demo waits for a slow receiver
		// rather than drop spans (a dead one fails fast, see
		// telemetry.OTLPTraceExporter), so its count equals the dump's.
		cfg.SpanProcessors = []sdktrace.SpanProcessor{sdktrace.NewBatchSpanProcessor(otlp, sdktrace.WithBlocking())}
	}
	if f.outSet && f.out != "" {
		cfg.Exporter, cfg.FilePath = telemetry.ExporterFile, f.out
	}
	var exp *telemetry.PrometheusExporter
	if f.metricsAddr != "" {
		if exp, err = telemetry.NewPrometheusExporter(); err != nil {
			return err
		}
		cfg.MetricReaders = []sdkmetric.Reader{exp.Reader}
	}
	tel, err := telemetry.Setup(ctx, cfg)
	if err != nil {
		if errors.Is(err, telemetry.ErrInvalidConfig) {
			return usageErrorf("%v", err)
		}
		return err
	}
	shutdown := func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if serr := tel.Shutdown(sctx); serr != nil {
			return fmt.Errorf("flush telemetry: %w", serr)
		}
		return nil
	}
	defer func() {
		if serr := shutdown(); serr != nil && err == nil { // idempotent: a no-op after the flush below
			err = serr
		}
	}()
	if exp != nil {
		srv, err := telemetry.ServeMetrics(f.metricsAddr, exp.Handler)
		if errors.Is(err, telemetry.ErrMetricsAddr) {
			return usageErrorf("--metrics-addr: %v", err)
		}
		if err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--metrics-addr: %w", err)}
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if cerr := srv.Close(ctx); cerr != nil && err == nil {
				err = cerr
			}
		}()
		fmt.Fprintf(stderr, "Serving metrics at %s\n", srv.URL())
	}
	until := "until interrupted (Ctrl-C)"
	if f.duration > 0 {
		until = "for " + f.duration.String()
	}
	fmt.Fprintf(stderr, "Running the live workload %s.\n", until)

	lcfg := demo.LiveConfig{
		Duration:       f.duration,
		MeterProvider:  tel.MeterProvider,
		TracerProvider: tel.TracerProvider,
		Latency:        f.latency,
	}
	status := newStatusLine(stderr)
	if status.on {
		start := time.Now()
		lcfg.Progress = func(rounds int) { status.show(false, liveProgressLine(rounds, time.Since(start), f.duration)) }
	}
	res, err := demo.RunLive(ctx, lcfg)
	status.clear()
	if oerr := otlpFailure(otlp); oerr != nil {
		return oerr
	}
	if err != nil {
		return fmt.Errorf("live demo: %w", err)
	}
	if otlp != nil {
		// Flush now, so the count below is every span of the run.
		if err := shutdown(); err != nil {
			return err
		}
		if oerr := otlpFailure(otlp); oerr != nil {
			return oerr
		}
	}
	out := cmd.OutOrStdout()
	if f.format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		dump := ""
		if cfg.FilePath != "" {
			dump = cfg.FilePath
		}
		doc := map[string]any{"schema": "mcptrace.demo.live/v1", "dump": dump, "live": res}
		if otlp != nil {
			doc["otlp"] = otlpSummary(otlp)
		}
		return enc.Encode(doc)
	}
	if err := renderLiveTable(out, res); err != nil {
		return err
	}
	if otlp != nil {
		fmt.Fprintf(out, "\n%d spans sent over OTLP (%s) to %s.\n", otlp.Sent(), otlp.Protocol(), otlp.URL())
	}
	return nil
}

// otlpShutdownTimeout bounds closing the OTLP exporter at exit.
const otlpShutdownTimeout = 5 * time.Second

// startDemoOTLP starts the OTLP exporter the flags or the environment ask
// for, or returns nil when neither names an endpoint. Its first export
// failure calls cancel, stopping the workload. A bad endpoint or protocol is
// a usage error, detected before any work.
func startDemoOTLP(ctx context.Context, f demoFlags, cancel context.CancelFunc) (*telemetry.OTLPTraceExporter, error) {
	if f.otlpProtocol != "" {
		if err := otlpProtocol.check(&f.otlpProtocol); err != nil {
			return nil, err
		}
	}
	cfg := telemetry.OTLPTraceConfig{
		Endpoint:     f.otlpEndpoint,
		EndpointName: "--otlp-endpoint",
		Protocol:     f.otlpProtocol,
		OnError:      func(error) { cancel() },
	}
	if !telemetry.OTLPTraceConfigured(cfg) {
		if f.otlpProtocol != "" {
			return nil, usageErrorf("--otlp-protocol needs --otlp-endpoint or %s", telemetry.EnvOTLPEndpoint)
		}
		return nil, nil
	}
	exp, err := telemetry.NewOTLPTraceExporter(ctx, cfg)
	if errors.Is(err, telemetry.ErrInvalidConfig) {
		return nil, usageErrorf("%v", err)
	}
	if err != nil {
		return nil, err
	}
	return exp, nil
}

// otlpFailure is the OTLP exporter's first export failure as a usage error
// (exit 2: the endpoint given is wrong or down), or nil.
func otlpFailure(otlp *telemetry.OTLPTraceExporter) error {
	if otlp == nil {
		return nil
	}
	if err := otlp.Err(); err != nil {
		return &exitError{code: 2, err: fmt.Errorf("send spans over OTLP (check --otlp-endpoint / %s and that the receiver is up): %w", telemetry.EnvOTLPEndpoint, err)}
	}
	return nil
}

// otlpSummary is the "otlp" object of the demo's JSON output.
func otlpSummary(otlp *telemetry.OTLPTraceExporter) map[string]any {
	return map[string]any{"endpoint": otlp.URL(), "protocol": otlp.Protocol(), "spans_sent": otlp.Sent()}
}

// renderLiveTable prints the live workload's summary: one row per counter.
func renderLiveTable(w io.Writer, r demo.LiveResult) error {
	t := tablewriter.NewWriter(w)
	t.Header("measure", "value")
	hitRate := 0.0
	if r.Acquires > 0 {
		hitRate = float64(r.Hits) / float64(r.Acquires)
	}
	rows := [][]any{
		{"wall", r.Wall.Round(time.Millisecond).String()},
		{"rounds", r.Rounds},
		{"calls", r.Calls},
		{"injected errors", r.InjectedErrors},
		{"unexpected errors", r.UnexpectedErrors},
		{"acquires", r.Acquires},
		{"hit rate", render.Percent(hitRate)},
		{"redials", r.Redials},
	}
	for _, group := range []struct {
		name   string
		counts map[string]int64
	}{{"miss", r.MissReasons}, {"eviction", r.Evictions}, {"failure", r.Failures}} {
		keys := make([]string, 0, len(group.counts))
		for k := range group.counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			rows = append(rows, []any{group.name + " " + k, group.counts[k]})
		}
	}
	for _, row := range rows {
		if err := t.Append(row...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if r.UnexpectedErrors > 0 {
		fmt.Fprintf(w, "\nLast unexpected error: %s\n", r.LastError)
	}
	return nil
}
