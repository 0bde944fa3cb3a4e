package gate

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// CheckSchema identifies the JSON contract of a CheckReport (docs/ci.md). It
// changes only when a key changes meaning or disappears.
const CheckSchema = "mcptrace.check/v1"

// Exit codes of the CI gate.
const (
	// ExitPass: every error-severity rule passed and nothing regressed.
	ExitPass = 0
	// ExitFail: an error-severity rule failed, or a measure regressed.
	ExitFail = 1
	// ExitUsage: bad input or usage (set by the command, never by a report).
	ExitUsage = 2
	// ExitIncomplete: nothing failed, but an error-severity rule could only
	// see incomplete data, or no error-severity rule could apply to the
	// writer's spans at all.
	ExitIncomplete = 3
)

// CheckReport is the outcome of `mcptrace check`: a verdict per rule, the
// regressions against a baseline, and the overall verdict and exit code. Its
// JSON form is the documented mcptrace.check/v1 contract.
type CheckReport struct {
	// Schema is always CheckSchema.
	Schema string `json:"schema"`
	// Verdict is fail when an error-severity rule failed or a measure
	// regressed, incomplete when nothing failed but an error-severity rule
	// had only incomplete data, else pass.
	Verdict Status `json:"verdict"`
	// ExitCode is the exit status the verdict maps to (0, 1 or 3).
	ExitCode int `json:"exit_code"`
	// Partial is true when an input was damaged and read up to the damage.
	Partial bool `json:"partial"`
	// Inputs lists what was read.
	Inputs []report.InputReport `json:"inputs"`
	// Spans, Traces and IncompleteTraces size the dump.
	Spans            int `json:"spans"`
	Traces           int `json:"traces"`
	IncompleteTraces int `json:"incomplete_traces"`
	// Baseline is the baseline file compared against; "" without one.
	Baseline string `json:"baseline"`
	// Rules are the verdicts, in rule order.
	Rules []RuleResult `json:"rules"`
	// Regressions are the measures worse than the baseline allows: the
	// rows of Comparison whose verdict is regression.
	Regressions []Regression `json:"regressions"`
	// Comparison is every measure against the baseline with its verdict,
	// the rows `mcptrace diff` prints; empty without a baseline.
	Comparison []Row `json:"comparison"`
	// Counts sums the rule verdicts.
	Counts CheckCounts `json:"counts"`
	// PoolSpans counts the spans of the profile's pool vocabulary; 0 makes
	// the verdict incomplete unless every rule allows an empty dump.
	PoolSpans int `json:"pool_spans"`
	// IncompleteReasons say why the verdict is at best incomplete whatever
	// the rules found: no pool spans in the dump, a damaged input read only
	// up to the damage. Empty when there is no such reason.
	IncompleteReasons []string `json:"incomplete_reasons"`
}

// CheckOptions tunes how NewCheckReportWith derives the verdict.
type CheckOptions struct {
	// AllowPartial lets a check over a damaged input (read up to the
	// damage) pass; by default a partial input makes the verdict at best
	// incomplete, since the rules did not see the whole run.
	AllowPartial bool
	// IncompleteReasons are reasons the caller found that the verdict is
	// at best incomplete, said with the check's own: a baseline made under
	// another configuration (MeasuresDiffer).
	IncompleteReasons []string
	// Comparison is Compare's rows against the baseline, for the report
	// to show every measure's verdict, not only the regressions.
	Comparison []Row
}

// CheckCounts sums the verdicts of a check.
type CheckCounts struct {
	Pass       int `json:"pass"`
	Fail       int `json:"fail"`
	Incomplete int `json:"incomplete"`
	// NotApplicable counts the rules that need what the writer's spans
	// cannot show.
	NotApplicable int `json:"not_applicable"`
	Warnings      int `json:"warnings"` // failed warning-severity rules, in Fail too
	Regressions   int `json:"regressions"`
}

// NewCheckReport assembles a check's report from the analysis of the dump,
// the rule verdicts, the regressions (nil without a baseline) and the
// baseline's file name, and derives the verdict and exit code.
func NewCheckReport(r *report.Report, results []RuleResult, regs []Regression, baseline string) *CheckReport {
	return NewCheckReportWith(r, results, regs, baseline, CheckOptions{})
}

// NewCheckReportWith is NewCheckReport with options. The verdict is fail
// when an error-severity rule failed or a measure regressed; else incomplete
// when an error-severity rule was incomplete, the dump holds no pool spans
// (unless every rule allows an empty dump), no error-severity rule could
// apply to the writer's spans (every one not applicable), or an input was
// partial (unless opts.AllowPartial); else pass: every error-severity rule
// that applied held, and one did.
func NewCheckReportWith(r *report.Report, results []RuleResult, regs []Regression, baseline string, opts CheckOptions) *CheckReport {
	c := &CheckReport{
		Schema:           CheckSchema,
		Partial:          r.Partial,
		Inputs:           r.Inputs,
		Spans:            r.Spans,
		Traces:           r.Traces,
		IncompleteTraces: r.IncompleteTraces,
		Baseline:         baseline,
		Rules:            results,
		Regressions:      regs,
		Comparison:       opts.Comparison,
		PoolSpans:        r.PoolSpans,

		IncompleteReasons: []string{},
	}
	c.emptyNotNull()
	failedRule, incomplete, notApplicable := c.count(results)
	failed := failedRule || len(regs) > 0
	c.Counts.Regressions = len(regs)
	c.addIncompleteReasons(r, opts, notApplicable)
	incomplete = incomplete || len(c.IncompleteReasons) > 0
	switch {
	case failed:
		c.Verdict, c.ExitCode = StatusFail, ExitFail
	case incomplete:
		c.Verdict, c.ExitCode = StatusIncomplete, ExitIncomplete
	default:
		c.Verdict, c.ExitCode = StatusPass, ExitPass
	}
	return c
}

// addIncompleteReasons says why the verdict is at best incomplete whatever
// the rules found: for an error-severity rule with nothing to judge in a
// dump without pool spans, that, and what was seen when no vocabulary read
// the spans (a rule whose scopes wait for spans says so in its own
// verdict); a partial input (unless opts.AllowPartial), no
// error-severity rule that could apply (noneApplied), and the caller's own.
func (c *CheckReport) addIncompleteReasons(r *report.Report, opts CheckOptions, noneApplied string) {
	noData := false
	for _, res := range c.Rules {
		if res.Status != StatusIncomplete || res.Severity != rulefmt.SeverityError {
			continue
		}
		noData = noData || res.NoPoolSpans
	}
	if noData && r.PoolSpans == 0 {
		// A rule with nothing to judge in a dump without pool spans: the
		// rules that allow it passed, the others are incomplete. Say why
		// once, and what was seen when no vocabulary read the spans.
		if r.NothingRecognised() {
			c.IncompleteReasons = append(c.IncompleteReasons, r.UnrecognisedLine())
		}
		c.IncompleteReasons = append(c.IncompleteReasons, report.NoPoolSpansText(r.Settings.Profile))
	}
	if c.Partial && !opts.AllowPartial {
		for _, in := range c.Inputs {
			if in.Partial {
				c.IncompleteReasons = append(c.IncompleteReasons, fmt.Sprintf("%s is partial: %d spans were read, the rest is damaged or reported missing (--allow-partial accepts that)", textfmt.SafeText(in.Path), in.Spans))
			}
		}
	}
	if noneApplied != "" {
		// Green on rules that could not apply would be green on nothing.
		c.IncompleteReasons = append(c.IncompleteReasons, noneApplied)
	}
	for _, why := range opts.IncompleteReasons {
		if why != "" {
			c.IncompleteReasons = append(c.IncompleteReasons, why)
		}
	}
}

// count sums the verdicts of results into c.Counts and says whether an
// error-severity rule failed, was incomplete, and, when none applied but
// some could not, why none could ("" otherwise).
func (c *CheckReport) count(results []RuleResult) (failed, incomplete bool, noneApplied string) {
	applied, notApplicable := 0, []string{}
	for _, res := range results {
		isError := res.Severity == rulefmt.SeverityError
		switch res.Status {
		case StatusNotApplicable:
			c.Counts.NotApplicable++
			if isError {
				notApplicable = append(notApplicable, res.ID+": "+res.Found)
			}
		case StatusPass:
			c.Counts.Pass++
		case StatusFail:
			c.Counts.Fail++
			failed = failed || isError
			if !isError {
				c.Counts.Warnings++
			}
		case StatusIncomplete:
			c.Counts.Incomplete++
			incomplete = incomplete || isError
		}
		if isError && res.Status != StatusNotApplicable {
			applied++
		}
	}
	if applied == 0 && len(notApplicable) > 0 {
		noneApplied = "no error-severity rule could apply to these spans: " + strings.Join(notApplicable, "; ")
	}
	return failed, incomplete, noneApplied
}

// emptyNotNull makes the report's absent lists empty, so its JSON holds
// [] where a reader looks for an array, never null.
func (c *CheckReport) emptyNotNull() {
	if c.Rules == nil {
		c.Rules = []RuleResult{}
	}
	if c.Regressions == nil {
		c.Regressions = []Regression{}
	}
	if c.Comparison == nil {
		c.Comparison = []Row{}
	}
	if c.Inputs == nil {
		c.Inputs = []report.InputReport{}
	}
}

// Check output formats.
const (
	CheckTable    = "table"
	CheckJSON     = "json"
	CheckMarkdown = "markdown"
	CheckJUnit    = "junit"
)

// CheckFormats lists the formats CheckReport.Render accepts, the default
// first.
var CheckFormats = []string{CheckTable, CheckJSON, CheckMarkdown, CheckJUnit}

// Render writes the check report as a table (default), the mcptrace.check/v1
// JSON, Markdown or JUnit XML.
func (c *CheckReport) Render(w io.Writer, format string) error {
	switch format {
	case CheckTable, "":
		return c.renderTable(w)
	case CheckJSON:
		return c.renderJSON(w)
	case CheckMarkdown:
		return c.RenderMarkdown(w)
	case CheckJUnit:
		return c.WriteJUnit(w)
	}
	return fmt.Errorf("%w %q: want table, json, markdown or junit", render.ErrUnknownFormat, format)
}

// errNoWriter guards renderers against a nil writer.
var errNoWriter = errors.New("no writer")

// HTML returns what the HTML report draws of the check (see
// the HTML report's options): the verdict, every rule for the rule table,
// and the rules that did not pass and the regressions as offenders, in
// report order.
func (c *CheckReport) HTML() *report.HTMLCheck {
	h := &report.HTMLCheck{
		Verdict: report.HTMLVerdict{Verdict: string(c.Verdict), ExitCode: c.ExitCode, Counts: report.HTMLCounts(c.Counts)},
		Partial: c.Partial,
	}
	h.Rules = c.Rules
	for _, rr := range c.Rules {
		if rr.Status == StatusPass {
			continue
		}
		o := report.HTMLOffender{ID: rr.ID, Severity: string(rr.Severity), Status: string(rr.Status), Expected: rr.Expected, Found: rr.Found, TraceQL: rr.TraceQL, Examples: []report.HTMLExample{}}
		for _, ex := range rr.Examples {
			o.Examples = append(o.Examples, report.HTMLExample{TraceID: ex.TraceID, SpanID: ex.SpanID, TraceQL: ex.TraceQL})
		}
		h.Offenders = append(h.Offenders, o)
	}
	for _, reg := range c.Regressions {
		h.Offenders = append(h.Offenders, report.HTMLOffender{ID: "regression: " + reg.Measure, Severity: "error", Status: string(StatusFail), Found: reg.Message, Examples: []report.HTMLExample{}})
	}
	return h
}

// IncompleteWhy says, for an incomplete check, everything that kept it
// from a verdict in one list: each incomplete error-severity rule with
// its finding (what its scopes waited for, or why it had nothing to
// judge), but for the rules that lacked pool spans, which
// IncompleteReasons then explains once. The one-line summary a command exits with reads it, so an
// incomplete verdict names what it waited for.
func (c *CheckReport) IncompleteWhy() []string {
	var why []string
	for _, res := range c.Rules {
		if res.Status != StatusIncomplete || res.Severity != rulefmt.SeverityError {
			continue
		}
		if !res.NoPoolSpans {
			why = append(why, res.ID+": "+res.Found)
		}
	}
	return append(why, c.IncompleteReasons...)
}
