package gate

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// oneOfEach is a check holding a rule of every verdict (a failed warning
// too), a reason the verdict is incomplete and a regression.
func oneOfEach() *CheckReport {
	rule := func(id string, st Status, sev rulefmt.Severity) RuleResult {
		return RuleResult{ID: id, Severity: sev, Status: st, Expected: "want-" + id, Found: "got-" + id, TraceQL: "{ tempo-" + id + " }",
			Examples: []Example{{TraceID: "t-" + id, TraceQL: "{ ex-" + id + " }"}}}
	}
	rules := []RuleResult{
		rule("passes", StatusPass, rulefmt.SeverityError),
		rule("fails", StatusFail, rulefmt.SeverityError),
		rule("warns", StatusFail, rulefmt.SeverityWarning),
		rule("incomplete", StatusIncomplete, rulefmt.SeverityError),
		rule("incomplete-warning", StatusIncomplete, rulefmt.SeverityWarning),
		rule("not-applicable", StatusNotApplicable, rulefmt.SeverityError),
	}
	rules[0].Builtin = true
	regs := []Regression{{Measure: "hit_rate", Baseline: 0.9, Current: 0.5, Allowed: ">= 0.88", Message: "hit rate fell"}}
	return NewCheckReportWith(&report.Report{PoolSpans: 1}, rules, regs, "base.json", CheckOptions{IncompleteReasons: []string{"why-incomplete"}})
}

// TestCheckJSONHoldsEmptyListsNeverNull pins that a check of no rules,
// no baseline and no inputs still writes every list of mcptrace.check/v1
// as [], which a reader iterates without a null check.
func TestCheckJSONHoldsEmptyListsNeverNull(t *testing.T) {
	c := NewCheckReport(&report.Report{PoolSpans: 1}, nil, nil, "")
	out := renderCheck(t, c, CheckJSON)
	for _, key := range []string{"inputs", "rules", "regressions", "comparison", "incomplete_reasons"} {
		if !strings.Contains(out, `"`+key+`": []`) {
			t.Errorf("%s is not [] in:\n%s", key, out)
		}
	}
	if strings.Contains(out, "null") {
		t.Errorf("the JSON holds a null:\n%s", out)
	}
}

// TestJUnitSaysEachVerdictItsOwnWay pins WriteJUnit case by case: an
// error-severity failure is a failure, its detail the expectation, the
// finding, the examples and the Tempo query; a failed warning passes,
// saying so in system-out; an incomplete or not-applicable rule is
// skipped (only the incomplete one says "incomplete:"); a passing rule
// keeps its detail in system-out; each reason the verdict is incomplete
// is a skipped complete-input case, and each regression a failure.
func TestJUnitSaysEachVerdictItsOwnWay(t *testing.T) {
	var buf bytes.Buffer
	if err := oneOfEach().WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	s := doc.Suites[0]
	if doc.Tests != 8 || doc.Failures != 2 || doc.Skipped != 4 || doc.Errors != 0 || s.Tests != 8 || s.Failures != 2 || s.Skipped != 4 {
		t.Errorf("counts: doc %d tests %d failures %d skipped %d errors, suite %d/%d/%d; want 8 tests, 2 failures, 4 skipped",
			doc.Tests, doc.Failures, doc.Skipped, doc.Errors, s.Tests, s.Failures, s.Skipped)
	}
	cases := map[string]junitCase{}
	for _, tc := range s.Cases {
		cases[tc.Name] = tc
	}
	detail := func(id string) string {
		return "expected: want-" + id + "\nfound: got-" + id + "\nexample: { ex-" + id + " }\ntempo: { tempo-" + id + " }\n"
	}
	if c := cases["fails"]; c.Failure == nil || c.Failure.Message != "got-fails" || c.Failure.Type != "rule" || c.Failure.Text != detail("fails") || c.Skipped != nil {
		t.Errorf("failed rule: %+v, failure %+v; want a failure with its detail %q", c, c.Failure, detail("fails"))
	}
	if c := cases["warns"]; c.Failure != nil || c.Skipped != nil || c.SystemOut != "warning: "+detail("warns") {
		t.Errorf("failed warning: %+v; want it passing, system-out %q", c, "warning: "+detail("warns"))
	}
	for id, msg := range map[string]string{"incomplete": "incomplete: got-incomplete", "incomplete-warning": "incomplete: got-incomplete-warning", "not-applicable": "got-not-applicable"} {
		if c := cases[id]; c.Skipped == nil || c.Skipped.Message != msg || c.Failure != nil {
			t.Errorf("%s: %+v; want skipped saying %q", id, c, msg)
		}
	}
	if c := cases["passes"]; c.Failure != nil || c.Skipped != nil || c.SystemOut != detail("passes") {
		t.Errorf("passing rule: %+v; want system-out %q", c, detail("passes"))
	}
	if c := cases["complete-input"]; c.Classname != "mcptrace.input" || c.Skipped == nil || c.Skipped.Message != "incomplete: why-incomplete" {
		t.Errorf("incomplete reason: %+v", c)
	}
	if c := cases["hit_rate"]; c.Classname != "mcptrace.regressions" || c.Failure == nil || c.Failure.Message != "hit rate fell" ||
		c.Failure.Text != "baseline 0.9, current 0.5, allowed >= 0.88" {
		t.Errorf("regression: %+v, failure %+v", c, c.Failure)
	}
	if _, ok := cases["no-regressions"]; ok {
		t.Error("a no-regressions case beside a regression")
	}
	for _, baseline := range []string{"", "base.json"} {
		buf.Reset()
		if err := NewCheckReport(&report.Report{PoolSpans: 1}, nil, nil, baseline).WriteJUnit(&buf); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(buf.String(), `name="no-regressions"`); got != (baseline != "") {
			t.Errorf("baseline %q: a no-regressions case %v, want %v:\n%s", baseline, got, baseline != "", buf.String())
		}
	}
}

// TestAnnotationsPointAtTheFileTheyAreAbout pins WriteGitHubAnnotationsFor:
// an error for a failed error-severity rule, a warning for a failed
// warning and for an incomplete error-severity rule (titled incomplete),
// nothing for the rest; a rule of the config at the config file, a
// built-in rule and the incomplete reasons at the input, a regression at
// the baseline; each file escaped as a property.
func TestAnnotationsPointAtTheFileTheyAreAbout(t *testing.T) {
	c := oneOfEach()
	c.Rules[0].Status = StatusFail // the built-in rule fails too
	var buf bytes.Buffer
	files := AnnotationFiles{Input: "in,put:1.json", Config: "mcp%trace.yaml", Baseline: "base.json"}
	if err := c.WriteGitHubAnnotationsFor(&buf, files); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"::error file=in%2Cput%3A1.json,title=mcptrace passes::expected want-passes; found got-passes%0Afirst example: { ex-passes }",
		"::error file=mcp%25trace.yaml,title=mcptrace fails::expected want-fails; found got-fails%0Afirst example: { ex-fails }",
		"::warning file=mcp%25trace.yaml,title=mcptrace warns::expected want-warns; found got-warns%0Afirst example: { ex-warns }",
		"::warning file=mcp%25trace.yaml,title=mcptrace incomplete (incomplete)::expected want-incomplete; found got-incomplete%0Afirst example: { ex-incomplete }",
		"::warning file=in%2Cput%3A1.json,title=mcptrace check incomplete::why-incomplete",
		"::error file=base.json,title=mcptrace regression hit_rate::hit rate fell (allowed >= 0.88)",
	}
	if got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("annotations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	buf.Reset()
	if err := c.WriteGitHubAnnotationsFor(&buf, AnnotationFiles{Input: "in.json"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "::error file=in.json,title=mcptrace fails::") || strings.Contains(buf.String(), "::error title=mcptrace fails") {
		t.Errorf("without a config file a rule's annotation is not at the input:\n%s", buf.String())
	}
}

// TestMarkdownKeepsARuleIDInItsCell pins the Markdown rule table's id
// cell: a '|' is escaped and a backtick turned into a quote, so a rule id
// neither splits its row nor ends its code span.
func TestMarkdownKeepsARuleIDInItsCell(t *testing.T) {
	c := NewCheckReport(&report.Report{PoolSpans: 1}, []RuleResult{{ID: "a|b`c", Severity: rulefmt.SeverityError, Status: StatusPass, Expected: "e", Found: "f"}}, nil, "")
	out := renderCheck(t, c, CheckMarkdown)
	if !strings.Contains(out, "| `a\\|b'c` | e | f |") {
		t.Errorf("rule row not one code span in its cell:\n%s", out)
	}
}

// TestTheDiffTableShowsEachSideInItsColumn pins the text table's figure
// columns: the baseline's figure under base, the current one under
// current, then the change.
func TestTheDiffTableShowsEachSideInItsColumn(t *testing.T) {
	rows := []Row{{Measure: "call.p99", Baseline: ptr(12.0), Current: ptr(30.0), Verdict: VerdictSame, Why: "p=0.400"}}
	var buf strings.Builder
	if err := RenderDiff(&buf, rows, "a.json", "b.json"); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if !strings.Contains(line, "call.p99") {
			continue
		}
		var cells []string
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == '|' || r == '│' }) {
			cells = append(cells, strings.TrimSpace(f))
		}
		if len(cells) < 4 || cells[1] != "12" || cells[2] != "30" || cells[3] != "+18" {
			t.Errorf("row cells %q, want base 12, current 30, change +18", cells)
		}
		return
	}
	t.Fatalf("no call.p99 row in:\n%s", buf.String())
}
