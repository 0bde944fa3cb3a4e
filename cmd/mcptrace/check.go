package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/gate"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

func init() { subcommands = append(subcommands, newCheckCmd) }

// gateFlags are the flags check and diff share: how dumps are read and
// analyzed, and the regression tolerances.
type gateFlags struct {
	dumpFlags
	config string
	tol    rulefmt.Tolerances
}

// addGateFlags registers the shared flags on fl.
func addGateFlags(fl *pflag.FlagSet, f *gateFlags) {
	def := rulefmt.DefaultTolerances()
	fl.StringVar(&f.config, "config", "", "YAML file with measures:, rules: and regressions: (default: the built-in rules)")
	addDumpFlags(fl, &f.dumpFlags, "checking")
	fl.Float64Var(&f.tol.HitRateDrop, "max-hit-rate-drop", def.HitRateDrop, "regression: how far the hit rate may fall below the baseline (0.02 = 2 points)")
	fl.Float64Var(&f.tol.LatencyRatio, "max-latency-ratio", def.LatencyRatio, "regression: how many times its baseline a latency percentile may grow to")
	fl.Float64Var(&f.tol.LatencyMinDeltaMS, "latency-min-delta-ms", def.LatencyMinDeltaMS, "regression: latency growth below this many ms is noise")
	fl.IntVar(&f.tol.ExcessMisses, "allow-excess-misses", def.ExcessMisses, "regression: how many more misses above the floor than the baseline are allowed")
	fl.IntVar(&f.tol.UnexplainedMisses, "allow-unexplained-misses", def.UnexplainedMisses, "regression: how many more unexplained misses than the baseline are allowed")
	fl.IntVar(&f.tol.Unexpected, "allow-unexpected", def.Unexpected, "regression: how many more unexpected requests per reads measure are allowed")
}

// checkFlags are the flags of `mcptrace check`.
type checkFlags struct {
	gateFlags
	htmlFlags
	baseline     string
	format       string
	report       string // -o/--output FILE: the report, in --format
	quiet        bool
	junit        string
	summary      string
	maxExamples  int
	builtin      bool
	allowPartial bool
}

// newCheckCmd is `mcptrace check`: the CI gate.
func newCheckCmd() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check [flags] PATH...",
		Short: "Gate CI on span invariants and on regressions against a baseline",
		Long: `check reads trace dumps (as analyze does), judges every rule on them and,
with --baseline, compares their measures with a baseline.

Rules come from the rules: list of --config (docs/ci.md,
docs/mcptrace-rules.schema.json); without one, the built-in rules apply
(mcptrace rules --builtin lists them; --builtin adds them to a file's rules).
Each rule gets a verdict: pass, fail, incomplete when every scope it
needed was incomplete (a trace still missing spans, a complete_when span that
never landed), or not applicable when it needs what the writer's spans cannot
show (a session id, a server address, calls tied to executions, pool spans;
the analysis's writer section), with the reason. A failing rule names up to --max-examples offending traces and
spans, each with a TraceQL query that finds it in Grafana Tempo.

--baseline takes the JSON of 'mcptrace analyze --format json' (or a dump,
analyzed the same way). A regression is: the hit rate lower by more than
--max-hit-rate-drop, more excess or unexplained misses, a latency percentile
above --max-latency-ratio times its baseline, executions spread over several
sessions where the baseline had none, more unexpected requests of a reads
measure; and in each case a change the data can tell from noise, as
benchstat judges benchmarks: a Mann-Whitney U test at alpha 0.05 on the
latency samples, or on the acquires' (executions', requests') outcomes for a
rate or count. Otherwise the measure is ~, shown with the test's p-value and
sample sizes: three samples against three can never regress. A measure with
no figure on a side (no acquires, executions not measurable) is shown as not
measurable with the reason, never a failure. The regressions: key of
--config sets the same tolerances; flags win.

Exit status: 0 every error-severity rule that applied passed, at least one
applied, and nothing regressed; 1 a rule failed or a measure regressed; 2 bad
input or usage; 3 nothing failed but the verdict is incomplete: no
error-severity rule could apply to the spans, one had only incomplete data or
nothing to judge (a dump without pool spans: the message names the span names
looked for; a rule with allow_empty: true passes instead), or an input was
damaged and read only up to the damage (--allow-partial accepts that).

Outputs: --format table (default), json (schema mcptrace.check/v1) or
markdown on stdout, or with -o FILE in FILE (-q prints nothing but the
error line); --junit FILE writes JUnit XML (a testcase per rule; on
bad input an errored testcase naming the file and place); with
GITHUB_ACTIONS=true, ::error and ::warning annotations go to stderr, each
with the file= it is about (the config, the dump or the baseline); a
Markdown summary is appended to $GITHUB_STEP_SUMMARY when set, and written to
--summary FILE; --html FILE writes the self-contained HTML report, verdict on
top, offending traces linked through --trace-url.`,
		Example: `  # Gate a test run's span dump with the built-in rules
  mcptrace check spans.jsonl

  # Gate the last day of the gateway's traces in Jaeger, nightly
  mcptrace check --jaeger http://127.0.0.1:16686 --service gateway --since 24h

  # Your own rules, a baseline, JUnit for the CI system
  mcptrace check --config mcptrace.yaml --baseline baseline.json --junit check.xml spans.jsonl

  # Make a baseline from a good run
  mcptrace analyze --format json spans.jsonl > baseline.json

  # Machine-readable verdict
  mcptrace check --format json dumps/ | jq .verdict

  # The HTML report with the verdict on top, for a CI artifact
  mcptrace check --html report.html --trace-url 'https://tempo.example/trace/{trace_id}' spans.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && f.source.jaeger == "" {
				return usageErrorf("check needs at least one PATH (a file, a directory, a glob or - for stdin), or --jaeger URL")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runCheck(cmd, f, args) },
	}
	fl := cmd.Flags()
	addGateFlags(fl, &f.gateFlags)
	fl.StringVar(&f.baseline, "baseline", "", "baseline to compare with: the JSON of 'mcptrace analyze --format json', or a dump")
	fl.StringVar(&f.format, "format", gate.CheckTable, "output format: "+checkFormat.list())
	addOutputFlag(fl, &f.report)
	addQuietFlag(fl, &f.quiet)
	fl.StringVar(&f.output, "html", "", "also write the self-contained HTML report, verdict on top, to FILE")
	addTraceURLFlag(fl, &f.htmlFlags)
	fl.StringVar(&f.junit, "junit", "", "also write JUnit XML to FILE")
	fl.StringVar(&f.summary, "summary", "", "also write the Markdown summary to FILE")
	fl.IntVar(&f.maxExamples, "max-examples", analyze.DefaultMaxExamples, "offending traces and spans named per failing rule")
	fl.BoolVar(&f.builtin, "builtin", false, "apply the built-in rules besides the rules of --config")
	fl.BoolVar(&f.allowPartial, "allow-partial", false, "let a damaged input read up to the damage, or a backend's window cut or still being written, pass (default: the verdict is at best incomplete)")
	addSourceFlags(fl, &f.source)
	registerEnums(cmd, checkFormat, inputFormatEnum, profileEnum)
	return cmd
}

// checkFormat is check's --format.
var checkFormat = enumFlag{"format", []string{gate.CheckTable, gate.CheckJSON, gate.CheckMarkdown}}

func runCheck(cmd *cobra.Command, f checkFlags, paths []string) error {
	// Output paths are tried before any work, so a typo does not cost a
	// whole analysis; from then on the JUnit file is written on every
	// outcome, an error included.
	for _, out := range []struct{ flag, path string }{{"--junit", f.junit}, {"--summary", f.summary}, {"--html", f.output}} {
		if out.path == "-" && out.flag != "--html" {
			// Standard output carries the report: "-" would be a file of that name.
			return usageErrorf("%s -: standard output carries the check's report; name a file (or /dev/stdout with -o FILE for the report)", out.flag)
		}
		if err := checkWritable(out.path); err != nil {
			return usageErrorf("%s: %w", out.flag, err)
		}
	}
	if err := checkOutput(f.report); err != nil {
		return err
	}
	var junitDone atomic.Bool // the JUnit file holds the verdict: a later failure (stdout) does not replace it
	err := runCheckJudged(cmd, f, paths, &junitDone)
	if f.junit != "" && !junitDone.Load() {
		var ee *exitError
		if err != nil && (!errors.As(err, &ee) || ee.code != gate.ExitFail && ee.code != gate.ExitIncomplete) {
			if jerr := writeFile(f.junit, func(w io.Writer) error { return gate.WriteJUnitError(w, err) }); jerr != nil {
				return &exitError{code: 2, err: fmt.Errorf("%w (and --junit: %v)", err, jerr)}
			}
		}
	}
	return err
}

// checkWritable fails when path ("" for none) cannot be written: a missing
// directory, a directory in its place, no permission. It leaves no file
// behind that was not there.
func checkWritable(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		if !fi.Mode().IsRegular() {
			return nil // a device or a FIFO: opening it to try would block on a FIFO with no reader
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(path)
}

// runCheckJudged is check after its output paths were found writable.
func runCheckJudged(cmd *cobra.Command, f checkFlags, paths []string, junitDone *atomic.Bool) error {
	if err := checkFormat.check(&f.format); err != nil {
		return err
	}
	if err := checkHTMLFlags(f.htmlFlags); err != nil {
		return err
	}
	if f.maxExamples < 0 {
		return usageErrorf("--max-examples %d: want 0 or more", f.maxExamples)
	}
	s, err := resolveSetup(cmd.Flags(), f.dumpFlags, f.config, &f.tol)
	if err != nil {
		return err
	}
	annotations := applyQuiet(cmd, f.quiet)
	warnRules(cmd.ErrOrStderr(), s.gate)
	rules := rulefmt.CheckRules(s.gate, s.cfg, f.builtin)
	var base *report.Report
	if f.baseline != "" {
		if base, err = loadSide(cmd, s, f.baseline); err != nil {
			return fmt.Errorf("--baseline: %w", err)
		}
	}
	maxEx := f.maxExamples
	if maxEx == 0 {
		maxEx = -1 // none
	}
	s.events = f.output != "" // --html draws the events; the baseline above never needs them
	src, err := f.source.source(cmd.Flags(), paths, time.Now())
	if err != nil {
		return err
	}
	ev, a, err := loadDumps(cmd, s, rules, maxEx, src, checkedDamaged)
	if err != nil {
		return err
	}
	rep := a.Report
	results, err := gate.Evaluate(a, rules)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	var rows []gate.Row
	if base != nil {
		rows = gate.Compare(base, rep, s.tol)
	}
	check := gate.NewCheckReportWith(rep, results, gate.RegressionsOf(rows), f.baseline, gate.CheckOptions{AllowPartial: f.allowPartial, IncompleteReasons: []string{gate.MeasuresDiffer(base, rep)}, Comparison: rows})
	nothingRecognised(cmd.ErrOrStderr(), rep, check)

	_, _, err = inPhase(cmd.Context(), phaseRender, func() (int, int, error) {
		return 0, 0, renderCheck(cmd, f, ev, s, rep, check, annotationsTo(annotations, f, paths), junitDone)
	})
	if err != nil {
		return err
	}
	if check.ExitCode != gate.ExitPass {
		msg, why := "check "+string(check.Verdict), check.IncompleteReasons
		if check.ExitCode == gate.ExitIncomplete {
			why = check.IncompleteWhy()
		}
		if len(why) > 0 {
			msg += ": " + strings.Join(why, "; ")
		}
		return &exitError{code: check.ExitCode, err: errors.New(msg)}
	}
	return nil
}

// nothingRecognised says, for a dump whose spans no vocabulary recognised,
// what was seen and what would read it, as a warning on w when every rule
// passed anyway, which only rules with allow_empty: true do, their author
// having said an empty dump is fine (an incomplete check's reasons say it
// already, where a rule had nothing to judge).
func nothingRecognised(w io.Writer, r *report.Report, c *gate.CheckReport) {
	if r.NothingRecognised() && c.ExitCode == gate.ExitPass {
		warnf(w, "%s", r.UnrecognisedLine())
	}
}

// renderCheck writes every output of a check: the files asked for
// first (-o FILE, HTML, JUnit, summaries), then the annotations and the
// report on stdout, so a closed standard output costs no file; ev are the
// HTML report's events (nil without --html). junitDone is set once the
// JUnit file holds the verdict.
func renderCheck(cmd *cobra.Command, f checkFlags, ev *analyze.ReportEvents, s runSetup, rep *report.Report, check *gate.CheckReport, ann annotations, junitDone *atomic.Bool) error {
	toStdout := f.report == "" || f.report == "-"
	render := func(w io.Writer) error { return check.Render(w, f.format) }
	if !toStdout {
		if err := writeOutput(cmd, f.report, render); err != nil {
			return err
		}
	}
	if f.output != "" {
		if err := writeHTMLReport(cmd, f.output, ev, s.cfg, rep, check.HTML(), f.traceURL); err != nil {
			return err
		}
	}
	if f.junit != "" {
		if err := writeFile(f.junit, check.WriteJUnit); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--junit: %w", err)}
		}
		junitDone.Store(true)
	}
	if p := os.Getenv("GITHUB_STEP_SUMMARY"); p != "" {
		if err := appendFile(p, check.RenderMarkdown); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)}
		}
	}
	if f.summary != "" {
		if err := writeFile(f.summary, check.RenderMarkdown); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--summary: %w", err)}
		}
	}
	if ann.w != nil {
		if err := check.WriteGitHubAnnotationsFor(ann.w, ann.files); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("write annotations: %w", err)}
		}
	}
	if toStdout {
		return writeOutput(cmd, f.report, render)
	}
	return nil
}

// annotations is where check's GitHub annotations go (w nil: none, outside
// GitHub Actions) and the files they point at.
type annotations struct {
	w     io.Writer
	files gate.AnnotationFiles
}

// annotationsTo returns the annotations of a check of paths: written to
// stderr when GITHUB_ACTIONS=true (--quiet or not: they are asked for by
// the environment, not chatter), pointing at the dump (the one path given,
// else the first that is not standard input), the --config file and the
// --baseline.
func annotationsTo(stderr io.Writer, f checkFlags, paths []string) annotations {
	if os.Getenv("GITHUB_ACTIONS") != "true" {
		return annotations{}
	}
	files := gate.AnnotationFiles{Config: f.config, Baseline: f.baseline}
	for _, p := range paths {
		if p != "-" {
			files.Input = p
			break
		}
	}
	return annotations{w: stderr, files: files}
}
