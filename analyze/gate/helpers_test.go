package gate

import (
	"context"
	"flag"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestMain fails the package's tests if a goroutine outlives them: loading
// dumps decodes in parallel.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var update = flag.Bool("update", false, "rewrite the golden files the gate's tests compare with")

// tracesDir holds the generated scenario dumps and their golden reports.
const tracesDir = "../../testdata/traces"

// gateEval analyzes tds with cfg and judges rules on them, by rule id.
func gateEval(t testing.TB, cfg rulefmt.Config, rules []rulefmt.Rule, tds ...ptrace.Traces) (*report.Report, map[string]RuleResult) {
	t.Helper()
	d := analyze.NewDump(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
	for _, td := range tds {
		d.Add(td)
	}
	return gateJudge(t, d, cfg, rules)
}

// gateEvalFile loads a dump with cfg and judges rules on it, by rule id.
func gateEvalFile(t testing.TB, cfg rulefmt.Config, rules []rulefmt.Rule, path string) (*report.Report, map[string]RuleResult) {
	t.Helper()
	d, _, err := analyze.Load(context.Background(), []string{path}, analyze.LoadOptions{Index: rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules))})
	if err != nil {
		t.Fatalf("Load %s: %v", path, err)
	}
	return gateJudge(t, d, cfg, rules)
}

// gateJudge analyzes d, observes the rules on it and judges them, as
// `mcptrace check` does, naming up to 20 examples per rule.
func gateJudge(t testing.TB, d *analyze.Dump, cfg rulefmt.Config, rules []rulefmt.Rule) (*report.Report, map[string]RuleResult) {
	t.Helper()
	r, res := evaluate(t, d, cfg, rules, 20)
	byID := map[string]RuleResult{}
	for _, x := range res {
		byID[x.ID] = x
	}
	return r, byID
}

// evaluate analyzes d and judges rules on it, in rule order.
func evaluate(t testing.TB, d *analyze.Dump, cfg rulefmt.Config, rules []rulefmt.Rule, maxExamples int) (*report.Report, []RuleResult) {
	t.Helper()
	a, err := analyze.AnalyzeRules(d, cfg, rules, analyze.ObserveOptions{MaxExamples: maxExamples})
	if err != nil {
		t.Fatalf("AnalyzeRules: %v", err)
	}
	res, err := Evaluate(a, rules)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	return a.Report, res
}

func ptr[T any](v T) *T { return &v }

// shiftedSample is a latency sample of n distinct durations from at up,
// a thousandth of a millisecond apart: two of them at levels further apart
// than that differ as significantly as n samples can.
func shiftedSample(n int, at float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = at + float64(i)*1e-3
	}
	return out
}
