package analyze

import (
	"errors"
	"fmt"
	"io"
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
	// see incomplete data.
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
	Inputs []InputReport `json:"inputs"`
	// Spans, Traces and IncompleteTraces size the dump.
	Spans            int `json:"spans"`
	Traces           int `json:"traces"`
	IncompleteTraces int `json:"incomplete_traces"`
	// Baseline is the baseline file compared against; "" without one.
	Baseline string `json:"baseline"`
	// Rules are the verdicts, in rule order.
	Rules []RuleResult `json:"rules"`
	// Regressions are the measures worse than the baseline allows.
	Regressions []Regression `json:"regressions"`
	// Counts sums the rule verdicts.
	Counts CheckCounts `json:"counts"`
}

// CheckCounts sums the verdicts of a check.
type CheckCounts struct {
	Pass        int `json:"pass"`
	Fail        int `json:"fail"`
	Incomplete  int `json:"incomplete"`
	Warnings    int `json:"warnings"` // failed warning-severity rules, in Fail too
	Regressions int `json:"regressions"`
}

// NewCheckReport assembles a check's report from the analysis of the dump,
// the rule verdicts, the regressions (nil without a baseline) and the
// baseline's file name, and derives the verdict and exit code.
func NewCheckReport(r *Report, results []RuleResult, regs []Regression, baseline string) *CheckReport {
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
	}
	if c.Rules == nil {
		c.Rules = []RuleResult{}
	}
	if c.Regressions == nil {
		c.Regressions = []Regression{}
	}
	if c.Inputs == nil {
		c.Inputs = []InputReport{}
	}
	failed, incomplete := len(regs) > 0, false
	for _, res := range results {
		switch res.Status {
		case StatusPass:
			c.Counts.Pass++
		case StatusFail:
			c.Counts.Fail++
			if res.Severity == SeverityError {
				failed = true
			} else {
				c.Counts.Warnings++
			}
		case StatusIncomplete:
			c.Counts.Incomplete++
			incomplete = incomplete || res.Severity == SeverityError
		}
	}
	c.Counts.Regressions = len(regs)
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
	return fmt.Errorf("%w %q: want table, json, markdown or junit", ErrUnknownRenderFormat, format)
}

// errNoWriter guards renderers against a nil writer.
var errNoWriter = errors.New("no writer")
