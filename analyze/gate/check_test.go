package gate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/analyzetest"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// perCallCheck is the check of the per-call regression against the pooled
// baseline, with one warning rule added.
func perCallCheck(t *testing.T) *CheckReport {
	t.Helper()
	rules := rulefmt.BuiltinRules(rulefmt.Config{})
	rules = append(rules, rulefmt.Rule{ID: "warn-handshakes", Severity: rulefmt.SeverityWarning, Scope: rulefmt.Scope{Kind: rulefmt.ScopeDump},
		Expect: []rulefmt.Expectation{{Of: "handshakes", Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 1}}}})
	r, res := gateEval(t, rulefmt.Config{}, rules, tracegen.PerCallDial())
	var ordered []RuleResult
	for _, rule := range rules {
		ordered = append(ordered, res[rule.ID])
	}
	base := analyzetest.AnalyzeTD(t, rulefmt.Config{}, tracegen.Pooled())
	tol := rulefmt.DefaultTolerances()
	tol.LatencyRatio = 1e9
	rows := Compare(base, r, tol)
	return NewCheckReportWith(r, ordered, RegressionsOf(rows), "base.json", CheckOptions{Comparison: rows})
}

// TestCheckVerdictAndExitCodes pins the verdict of each mix of statuses.
func TestCheckVerdictAndExitCodes(t *testing.T) {
	res := func(st Status, sev rulefmt.Severity) RuleResult {
		return RuleResult{ID: "r", Status: st, Severity: sev}
	}
	cases := []struct {
		name    string
		results []RuleResult
		regs    []Regression
		want    Status
		code    int
	}{
		{"all pass", []RuleResult{res(StatusPass, rulefmt.SeverityError)}, nil, StatusPass, ExitPass},
		{"error fails", []RuleResult{res(StatusFail, rulefmt.SeverityError), res(StatusIncomplete, rulefmt.SeverityError)}, nil, StatusFail, ExitFail},
		{"warning fails", []RuleResult{res(StatusFail, rulefmt.SeverityWarning)}, nil, StatusPass, ExitPass},
		{"only incomplete", []RuleResult{res(StatusPass, rulefmt.SeverityError), res(StatusIncomplete, rulefmt.SeverityError)}, nil, StatusIncomplete, ExitIncomplete},
		{"incomplete warning", []RuleResult{res(StatusIncomplete, rulefmt.SeverityWarning)}, nil, StatusPass, ExitPass},
		{"regression", []RuleResult{res(StatusPass, rulefmt.SeverityError)}, []Regression{{Measure: "hit_rate"}}, StatusFail, ExitFail},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := NewCheckReport(&report.Report{}, c.results, c.regs, "")
			if ch.Verdict != c.want || ch.ExitCode != c.code {
				t.Errorf("verdict %s exit %d, want %s %d", ch.Verdict, ch.ExitCode, c.want, c.code)
			}
		})
	}
}

// TestCheckJSONIsTheDocumentedContract checks the keys docs/ci.md promises.
func TestCheckJSONIsTheDocumentedContract(t *testing.T) {
	var buf bytes.Buffer
	if err := perCallCheck(t).Render(&buf, CheckJSON); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema   string `json:"schema"`
		Verdict  string `json:"verdict"`
		ExitCode int    `json:"exit_code"`
		Rules    []struct {
			ID, Severity, Status, Expected, Found, TraceQL string
			Examples                                       []map[string]string
		} `json:"rules"`
		Regressions []map[string]any `json:"regressions"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	if doc.Schema != CheckSchema || doc.Verdict != "fail" || doc.ExitCode != 1 || len(doc.Rules) != 7 || len(doc.Regressions) != 3 {
		t.Fatalf("doc = %+v", doc)
	}
	r := doc.Rules[0]
	if r.ID != rulefmt.RuleOneSessionPerExecution || r.Status != "fail" || r.Severity != "error" || r.Expected == "" || r.Found == "" || r.TraceQL == "" {
		t.Errorf("rule 0 = %+v", r)
	}
	if len(r.Examples) != 3 || r.Examples[0]["trace_id"] == "" || r.Examples[0]["span_id"] == "" || !strings.HasPrefix(r.Examples[0]["traceql"], "{ trace:id = ") {
		t.Errorf("examples = %+v", r.Examples)
	}
}

// TestCheckJUnitIsValidXMLWithATestcasePerRule parses the JUnit file back.
func TestCheckJUnitIsValidXMLWithATestcasePerRule(t *testing.T) {
	var buf bytes.Buffer
	if err := perCallCheck(t).WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("suites = %d", len(doc.Suites))
	}
	got := map[string]string{}
	for _, c := range doc.Suites[0].Cases {
		state := "pass"
		switch {
		case c.Failure != nil:
			state = "failure"
		case c.Skipped != nil:
			state = "skipped"
		}
		got[c.Classname+"/"+c.Name] = state
	}
	want := map[string]string{
		"mcptrace.rules/" + rulefmt.RuleOneSessionPerExecution: "failure",
		"mcptrace.rules/" + rulefmt.RuleNoUnexplainedMisses:    "failure",
		"mcptrace.rules/" + rulefmt.RuleAcquireHasCacheHit:     "pass",
		"mcptrace.rules/" + rulefmt.RuleHandshakeOnlyOnMiss:    "pass",
		"mcptrace.rules/" + rulefmt.RuleOneAcquirePerInvoke:    "pass",
		"mcptrace.rules/" + rulefmt.RuleServerKeptSessions:     "pass",
		"mcptrace.rules/warn-handshakes":                       "pass", // a warning never fails the build
		"mcptrace.regressions/hit_rate":                        "failure",
		"mcptrace.regressions/excess_misses":                   "failure",
		"mcptrace.regressions/unexplained_misses":              "failure",
	}
	if len(got) != len(want) {
		t.Errorf("testcases = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if doc.Tests != 10 || doc.Failures != 5 || doc.Suites[0].Failures != 5 {
		t.Errorf("tests %d failures %d, want 10 and 5", doc.Tests, doc.Failures)
	}
}

// TestCheckGitHubAnnotations writes ::error for failures and regressions,
// ::warning for warnings, escaped as the runner expects.
func TestCheckGitHubAnnotations(t *testing.T) {
	var buf bytes.Buffer
	if err := perCallCheck(t).WriteGitHubAnnotations(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var errs, warns int
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "::error title=mcptrace "):
			errs++
		case strings.HasPrefix(l, "::warning title=mcptrace warn-handshakes::"):
			warns++
		default:
			t.Errorf("unexpected line %q", l)
		}
	}
	if errs != 5 || warns != 1 {
		t.Errorf("%d errors and %d warnings, want 5 and 1:\n%s", errs, warns, buf.String())
	}
	if !strings.Contains(buf.String(), "%0Afirst example: { trace:id = ") {
		t.Errorf("newlines not escaped:\n%s", buf.String())
	}
	if got := escapeProperty("a:b,c%\n"); got != "a%3Ab%2Cc%25%0A" {
		t.Errorf("escapeProperty = %q", got)
	}
}

// TestCheckTableAndMarkdownNameTheOffenders: both human renderings carry
// the verdict, each failing rule and its TraceQL.
func TestCheckTableAndMarkdownNameTheOffenders(t *testing.T) {
	c := perCallCheck(t)
	for _, format := range []string{CheckTable, CheckMarkdown} {
		var buf bytes.Buffer
		if err := c.Render(&buf, format); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, want := range []string{rulefmt.RuleOneSessionPerExecution, rulefmt.RuleNoUnexplainedMisses, "{ trace:id = ", "FAIL", "hit_rate"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %q:\n%s", format, want, out)
			}
		}
	}
	if err := c.Render(&bytes.Buffer{}, "yaml"); err == nil {
		t.Error("Render accepted an unknown format")
	}
}
