package engine

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestASelectorThatCannotBeCompiledIsNamedByItsPlace pins the error of a
// rule whose selector reads an attribute the index did not keep (it was
// built without the rules' index options): the error names the rule and
// the selector's line and column in its file, so a user finds what to
// change.
func TestASelectorThatCannotBeCompiledIsNamedByItsPlace(t *testing.T) {
	gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(`rules:
  - id: tenants
    scope: trace
    select: {name: `+spans.SpanCallTool+`, attributes: {tenant.id: acme}}
    expect: {of: count, op: "<=", than: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	err = observeUnkept(t, rulefmt.Config{}, gc.Rules)
	if err == nil || !strings.Contains(err.Error(), `rule "tenants"`) || !strings.Contains(err.Error(), "selector at line 4, column 13") || !strings.Contains(err.Error(), "tenant.id") {
		t.Errorf("err %v; want the rule, the selector's place (line 4, column 13) and the attribute", err)
	}
}

// TestASessionRuleUnderAVocabularyThatCannotCompileFails pins a session
// rule observed under a vocabulary the index cannot serve (its calls read
// an attribute the index did not keep): the observation fails with the
// vocabulary stage's error, naming the attribute, rather than reading
// sessions off calls the stage never found.
func TestASessionRuleUnderAVocabularyThatCannotCompileFails(t *testing.T) {
	voc := &rulefmt.Vocabulary{Name: "tenanted",
		Calls:   []rulefmt.Selector{{Name: spans.SpanCallTool, Attributes: []rulefmt.AttrMatch{{Key: "tenant.id", Op: rulefmt.OpEquals, Value: "acme"}}}},
		Session: rulefmt.SessionSource{Attribute: spans.AttrSessionID}}
	cfg := rulefmt.Config{Vocabulary: voc}
	rule := rulefmt.Rule{ID: "sessions", Scope: rulefmt.Scope{Kind: rulefmt.ScopeTrace}, Severity: rulefmt.SeverityError,
		Select: &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: spans.SpanCallTool}},
		Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityPoolSessions, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 1}}}}
	if err := observeUnkept(t, cfg, []rulefmt.Rule{rule}); err == nil || !strings.Contains(err.Error(), "tenant.id") {
		t.Errorf("err %v; want the vocabulary's error naming tenant.id", err)
	}
}
