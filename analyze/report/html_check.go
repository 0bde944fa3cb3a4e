package report

// HTMLCheck is what the HTML report draws of a check: its verdict, whether
// an input was partial, every rule with its status (the rule table), and
// the failing or incomplete rules and the regressions as offenders (their
// examples' URLs are filled in from HTMLOptions.TraceURL).
type HTMLCheck struct {
	Verdict HTMLVerdict
	Partial bool
	// Rules are every rule's verdict, passing ones too, in rule order:
	// the rule table.
	Rules     []RuleVerdict
	Offenders []HTMLOffender
}

// HTMLVerdict is a check's verdict, drawn on top of the page.
type HTMLVerdict struct {
	// Verdict is pass, fail or incomplete.
	Verdict  string     `json:"verdict"`
	ExitCode int        `json:"exit_code"`
	Counts   HTMLCounts `json:"counts"`
}

// HTMLCounts sums a check's verdicts, as the check's JSON does.
type HTMLCounts struct {
	Pass       int `json:"pass"`
	Fail       int `json:"fail"`
	Incomplete int `json:"incomplete"`
	// NotApplicable counts the rules the writer's spans cannot serve.
	NotApplicable int `json:"not_applicable"`
	Warnings      int `json:"warnings"`
	Regressions   int `json:"regressions"`
}

// HTMLOffender is a failing rule, or a finding, with its traces.
type HTMLOffender struct {
	ID       string        `json:"id"`
	Severity string        `json:"severity"`
	Status   string        `json:"status"`
	Expected string        `json:"expected"`
	Found    string        `json:"found"`
	TraceQL  string        `json:"traceql"`
	Examples []HTMLExample `json:"examples"`
}

// HTMLExample is one offending trace with its link.
type HTMLExample struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id,omitempty"`
	TraceQL string `json:"traceql"`
	// URL is the --trace-url template filled in; "" without a template.
	URL string `json:"url"`
}
