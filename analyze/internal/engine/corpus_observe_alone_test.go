package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestObservingAloneJudgesTheCorpusAsTheReportDoes pins the rules'
// observation without a report (ObserveRules measures the executions
// itself) against the one handed the report (AnalyzeRules), over traces
// written by instrumentation we did not write: every rule is observed
// alike, a server-side writer's session rules not measurable in both.
func TestObservingAloneJudgesTheCorpusAsTheReportDoes(t *testing.T) {
	cfg := rulefmt.Config{Profile: rulefmt.ProfileAuto}
	rules := rulefmt.BuiltinRules(cfg)
	unmeasurable := 0
	for _, c := range corpusCases(t) {
		t.Run(c.name, func(t *testing.T) {
			d, _, err := Load(context.Background(), []string{c.dump}, LoadOptions{Index: rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules))})
			if err != nil {
				t.Fatal(err)
			}
			alone, err := ObserveRules(d, cfg, rules, ObserveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			a, err := AnalyzeRules(d, cfg, rules, ObserveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range rules {
				// Printed, an empty list and none read alike, as in
				// every report.
				if fmt.Sprintf("%+v", alone[i]) != fmt.Sprintf("%+v", a.Rules[i]) {
					t.Errorf("%s observed alone:\n%+v\nwith the report:\n%+v", rules[i].ID, alone[i], a.Rules[i])
				}
				if alone[i].Unmeasurable != "" {
					unmeasurable++
				}
			}
		})
	}
	if unmeasurable == 0 {
		t.Errorf("no rule of the corpus was found not measurable: the comparison never met a server-side writer")
	}
}
