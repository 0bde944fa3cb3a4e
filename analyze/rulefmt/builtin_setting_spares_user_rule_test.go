package rulefmt

import (
	"testing"
)

// TestBuiltinSettingSparesAUserRuleThatReusesItsID pins that a builtin:
// setting applies to the built-in rule of that id only: a rule of the
// user's own under the same id is neither left out by off nor given the
// built-in's severity, and the built-in itself is.
func TestBuiltinSettingSparesAUserRuleThatReusesItsID(t *testing.T) {
	cases := []struct {
		setting     string
		builtinKept bool
		builtinSev  Severity
	}{
		{"off", false, ""},
		{"warning", true, SeverityWarning},
	}
	for _, tc := range cases {
		t.Run(tc.setting, func(t *testing.T) {
			doc := `
rules:
  - id: ` + RuleAcquireHasCacheHit + `
    severity: error
    scope: dump
    expect: {of: hit_rate, op: ">=", than: 0.5}
builtin: {` + RuleAcquireHasCacheHit + `: ` + tc.setting + `}
`
			gc, err := ParseGateConfig("mcptrace.yaml", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			var user, builtin []Rule
			for _, r := range CheckRules(gc, Config{}, false) {
				if r.ID != RuleAcquireHasCacheHit {
					continue
				}
				if r.Builtin {
					builtin = append(builtin, r)
				} else {
					user = append(user, r)
				}
			}
			if len(user) != 1 || user[0].Severity != SeverityError {
				t.Errorf("the user's rule %s with builtin: %s: %+v, want it kept, severity error", RuleAcquireHasCacheHit, tc.setting, user)
			}
			if (len(builtin) == 1) != tc.builtinKept || (tc.builtinKept && builtin[0].Severity != tc.builtinSev) {
				t.Errorf("the built-in %s with builtin: %s: %+v, want kept %v with severity %q", RuleAcquireHasCacheHit, tc.setting, builtin, tc.builtinKept, tc.builtinSev)
			}
		})
	}
}
