package gate

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// junitSuites is the JUnit XML document most CI systems read: one suite,
// one testcase per rule and per regression.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the check as JUnit XML: a testcase per rule (classname
// mcptrace.rules; an error-severity failure is a failure, an incomplete rule
// is skipped, a failed warning passes with its finding in system-out) and a
// testcase per regression (classname mcptrace.regressions), or one passing
// "no-regressions" testcase when a baseline was compared.
func (c *CheckReport) WriteJUnit(w io.Writer) error {
	if w == nil {
		return errNoWriter
	}
	suite := junitSuite{Name: "mcptrace check"}
	for _, r := range c.Rules {
		tc := junitCase{Name: r.ID, Classname: "mcptrace.rules"}
		detail := ruleDetail(r)
		switch {
		case r.Status == StatusFail && r.Severity == rulefmt.SeverityError:
			tc.Failure = &junitMessage{Message: r.Found, Type: "rule", Text: detail}
			suite.Failures++
		case r.Status == StatusFail:
			tc.SystemOut = "warning: " + detail
		case r.Status == StatusIncomplete:
			tc.Skipped = &junitMessage{Message: "incomplete: " + r.Found}
			suite.Skipped++
		case r.Status == StatusNotApplicable:
			tc.Skipped = &junitMessage{Message: r.Found}
			suite.Skipped++
		default:
			tc.SystemOut = detail
		}
		suite.Cases = append(suite.Cases, tc)
	}
	for _, why := range c.IncompleteReasons {
		suite.Cases = append(suite.Cases, junitCase{Name: "complete-input", Classname: "mcptrace.input",
			Skipped: &junitMessage{Message: "incomplete: " + why}})
		suite.Skipped++
	}
	for _, g := range c.Regressions {
		suite.Cases = append(suite.Cases, junitCase{Name: g.Measure, Classname: "mcptrace.regressions",
			Failure: &junitMessage{Message: g.Message, Type: "regression", Text: fmt.Sprintf("baseline %s, current %s, allowed %s", textfmt.Figure(g.Baseline), textfmt.Figure(g.Current), g.Allowed)}})
		suite.Failures++
	}
	if c.Baseline != "" && len(c.Regressions) == 0 {
		suite.Cases = append(suite.Cases, junitCase{Name: "no-regressions", Classname: "mcptrace.regressions", SystemOut: "no regression against " + c.Baseline})
	}
	return writeJUnitSuite(w, suite)
}

// WriteJUnitError writes the JUnit XML of a check that could not run: one
// errored testcase (classname mcptrace.input) naming the file and place of a
// bad input ([ingest.ReadError]) or, for any other error, what went wrong. A CI
// system that reads the JUnit file then shows why the gate stopped instead
// of finding no file at all.
func WriteJUnitError(w io.Writer, cause error) error {
	if w == nil {
		return errNoWriter
	}
	if cause == nil {
		cause = errors.New("unknown error")
	}
	tc := junitCase{Name: "read-input", Classname: "mcptrace.input",
		Error: &junitMessage{Message: cause.Error(), Type: "input", Text: cause.Error()}}
	var re *ingest.ReadError
	if errors.As(cause, &re) {
		tc.Name = "read " + re.Path
		tc.File, tc.Line = re.Path, re.Line
	}
	return writeJUnitSuite(w, junitSuite{Name: "mcptrace check", Errors: 1, Cases: []junitCase{tc}})
}

// writeJUnitSuite writes one suite as a JUnit document.
func writeJUnitSuite(w io.Writer, suite junitSuite) error {
	suite.Tests = len(suite.Cases)
	for i := range suite.Cases {
		tc := &suite.Cases[i]
		tc.Name, tc.File, tc.SystemOut = textfmt.TermSafe(tc.Name), textfmt.TermSafe(tc.File), xmlText(tc.SystemOut)
		for _, m := range []*junitMessage{tc.Error, tc.Failure, tc.Skipped} {
			if m != nil {
				m.Message, m.Text = textfmt.TermSafe(textfmt.ClipTo(m.Message, maxJUnitMessage)), xmlText(m.Text)
			}
		}
	}
	doc := junitSuites{Name: "mcptrace", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Skipped: suite.Skipped, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	return nil
}

// ruleDetail is a rule's verdict in a few lines of plain text.
func ruleDetail(r RuleResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "expected: %s\nfound: %s\n", r.Expected, r.Found)
	for _, ex := range r.Examples {
		fmt.Fprintf(&b, "example: %s\n", ex.TraceQL)
	}
	if r.TraceQL != "" {
		fmt.Fprintf(&b, "tempo: %s\n", r.TraceQL)
	}
	return b.String()
}

// WriteGitHubAnnotations writes a GitHub Actions workflow command per failed
// or incomplete rule and per regression: ::error for an error-severity
// failure or a regression, ::warning for a warning or an incomplete rule.
// Passing rules write nothing. The annotations name no file; see
// WriteGitHubAnnotationsFor.
func (c *CheckReport) WriteGitHubAnnotations(w io.Writer) error {
	return c.WriteGitHubAnnotationsFor(w, AnnotationFiles{})
}

// AnnotationFiles are the files GitHub annotations point at (their file=
// property), so that each shows against a file in the run's summary and in
// a pull request rather than floating: "" leaves file= out.
type AnnotationFiles struct {
	// Input is the dump judged: the file of a failed built-in rule and of
	// an incomplete verdict's reasons.
	Input string
	// Config is the rules file: the file of a failed rule it defines.
	Config string
	// Baseline is the baseline compared with: the file of a regression.
	Baseline string
}

// WriteGitHubAnnotationsFor is WriteGitHubAnnotations with each annotation
// pointing at the file it is about (files): a rule of the config file at
// files.Config, a built-in rule and an incomplete reason at files.Input, a
// regression at files.Baseline.
func (c *CheckReport) WriteGitHubAnnotationsFor(w io.Writer, files AnnotationFiles) error {
	if w == nil {
		return errNoWriter
	}
	bw := &textfmt.ErrWriter{W: w}
	for _, r := range c.Rules {
		level := ""
		switch {
		case r.Status == StatusFail && r.Severity == rulefmt.SeverityError:
			level = "error"
		case r.Status == StatusFail, r.Status == StatusIncomplete && r.Severity == rulefmt.SeverityError:
			level = "warning"
		default:
			continue
		}
		title := "mcptrace " + r.ID
		if r.Status == StatusIncomplete {
			title += " (incomplete)"
		}
		msg := fmt.Sprintf("expected %s; found %s", r.Expected, r.Found)
		if len(r.Examples) > 0 {
			msg += "\nfirst example: " + r.Examples[0].TraceQL
		}
		file := files.Config
		if r.Builtin || file == "" {
			file = files.Input
		}
		fmt.Fprintf(bw, "::%s %stitle=%s::%s\n", level, fileProperty(file), escapeProperty(title), escapeData(msg))
	}
	for _, why := range c.IncompleteReasons {
		fmt.Fprintf(bw, "::warning %stitle=%s::%s\n", fileProperty(files.Input), escapeProperty("mcptrace check incomplete"), escapeData(why))
	}
	for _, g := range c.Regressions {
		fmt.Fprintf(bw, "::error %stitle=%s::%s\n", fileProperty(files.Baseline), escapeProperty("mcptrace regression "+g.Measure), escapeData(g.Message+" (allowed "+g.Allowed+")"))
	}
	return bw.Err
}

// fileProperty is the annotation's "file=PATH," property, escaped, or ""
// for no file.
func fileProperty(path string) string {
	if path == "" {
		return ""
	}
	return "file=" + escapeProperty(path) + ","
}

// escapeData escapes a workflow command's message as the Actions runner
// expects, after showing control, bidi, zero-width and separator
// characters as visible escapes (textfmt.TermSafeLines: the message's own
// line breaks stay, as %0A) and clipping it to maxAnnotation runes.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(textfmt.TermSafeLines(textfmt.ClipTo(s, maxAnnotation)))
}

// escapeProperty escapes a workflow command's property value (a title),
// with the same visible escapes as escapeData, clipped to
// maxAnnotationTitle runes.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(textfmt.TermSafeLines(textfmt.ClipTo(s, maxAnnotationTitle)))
}

// Size budgets of the CI formats: an annotation's title and message, a
// Markdown cell, and a JUnit message attribute (its body keeps the whole
// text). Like the analysis report's, a clipped value ends in an ellipsis.
const (
	maxAnnotationTitle = 200
	maxAnnotation      = 4000
	maxMDCell          = 300
	maxJUnitMessage    = 500
)

// xmlText makes text safe and honest in JUnit XML: control, bidi,
// zero-width and separator characters shown as visible escapes, line
// breaks kept (encoding/xml escapes markup and would turn C0 controls,
// which XML 1.0 forbids, into U+FFFD).
func xmlText(s string) string { return textfmt.TermSafeLines(s) }

// RenderMarkdown writes the check as a GitHub-flavoured Markdown summary
// (for $GITHUB_STEP_SUMMARY or a pull request comment): the verdict, a
// table of rules, the failing rules' examples with their TraceQL, and the
// regressions. Cells go through mdCell (escaped, links inert, at most
// maxMDCell runes) and code spans through textfmt.MDCode; rows are written
// unpadded, so the summary grows linearly with the rules.
func (c *CheckReport) RenderMarkdown(w io.Writer) error {
	if w == nil {
		return errNoWriter
	}
	bw := &textfmt.ErrWriter{W: w}
	icon := map[Status]string{StatusPass: "✅", StatusFail: "❌", StatusIncomplete: "⏳", StatusNotApplicable: "➖"}
	fmt.Fprintf(bw, "## mcptrace check: %s %s\n\n", icon[c.Verdict], strings.ToUpper(string(c.Verdict)))
	fmt.Fprintf(bw, "%d spans in %d traces (%d incomplete). %s.\n\n", c.Spans, c.Traces, c.IncompleteTraces, c.verdictLine())
	for _, why := range c.IncompleteReasons {
		fmt.Fprintf(bw, "> ⏳ **Incomplete:** %s\n\n", textfmt.MDText(why))
	}
	fmt.Fprintln(bw, "| status | severity | rule | expected | found |")
	fmt.Fprintln(bw, "|---|---|---|---|---|")
	for _, r := range c.Rules {
		st := icon[r.Status] + " " + string(r.Status)
		if r.Status == StatusFail && r.Severity == rulefmt.SeverityWarning {
			st = "⚠️ warning"
		}
		fmt.Fprintf(bw, "| %s | %s | `%s` | %s | %s |\n", st, r.Severity, textfmt.MDCode(r.ID), mdCell(r.Expected), mdCell(r.Found))
	}
	for _, r := range c.Rules {
		if r.Status != StatusFail || len(r.Examples) == 0 {
			continue
		}
		fmt.Fprintf(bw, "\n<details><summary><code>%s</code>: %d example(s)</summary>\n\n", textfmt.MDText(r.ID), len(r.Examples))
		for _, ex := range r.Examples {
			fmt.Fprintf(bw, "- `%s`\n", textfmt.MDCode(ex.TraceQL))
		}
		if r.TraceQL != "" {
			fmt.Fprintf(bw, "\nFind them all in Tempo: `%s`\n", textfmt.MDCode(r.TraceQL))
		}
		fmt.Fprintln(bw, "\n</details>")
	}
	if c.Baseline != "" {
		fmt.Fprintf(bw, "\n### Against the baseline `%s`\n\n", textfmt.MDCode(c.Baseline))
		switch {
		case len(c.Comparison) > 0:
			renderRowsMarkdown(bw, c.Comparison)
		case len(c.Regressions) == 0:
			fmt.Fprintln(bw, "No regression.")
		default:
			for _, g := range c.Regressions {
				fmt.Fprintf(bw, "- `%s`: %s (allowed %s)\n", textfmt.MDCode(g.Measure), mdCell(g.Message), mdCell(g.Allowed))
			}
		}
	}
	return bw.Err
}

// mdCell makes text safe inside a Markdown table cell (textfmt.MDText),
// clipped to maxMDCell runes.
func mdCell(s string) string {
	return textfmt.MDText(textfmt.ClipTo(s, maxMDCell))
}
