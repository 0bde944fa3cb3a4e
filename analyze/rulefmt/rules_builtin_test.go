package rulefmt

import (
	"slices"
	"testing"
)

// CheckRules is the one choice of the rules a check judges (the CLI's check
// and the connector): the built-ins alone without a file, a file's rules
// alone, the built-ins besides them on --builtin, with a builtin: block or
// when the file has none, and a builtin set to off left out.
func TestCheckRulesChoosesTheBuiltinsOnce(t *testing.T) {
	builtin := func() []string {
		var ids []string
		for _, r := range BuiltinRules(Config{}) {
			ids = append(ids, r.ID)
		}
		return ids
	}()
	own := Rule{ID: "own", Severity: SeverityError}
	tests := []struct {
		name        string
		gc          *GateConfig
		withBuiltin bool
		want        []string
	}{
		{name: "no file: the built-ins", want: builtin},
		{name: "a file with rules: its rules only", gc: &GateConfig{Rules: []Rule{own}}, want: []string{"own"}},
		{name: "a file without rules: the built-ins", gc: &GateConfig{}, want: builtin},
		{name: "--builtin: the file's rules, then the built-ins", gc: &GateConfig{Rules: []Rule{own}}, withBuiltin: true, want: append([]string{"own"}, builtin...)},
		{name: "a builtin: block adds the built-ins and turns one off", gc: &GateConfig{Rules: []Rule{own}, Builtin: map[string]Severity{RuleAcquireHasCacheHit: SeverityOff}},
			want: append([]string{"own"}, slices.DeleteFunc(slices.Clone(builtin), func(id string) bool { return id == RuleAcquireHasCacheHit })...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range CheckRules(tt.gc, Config{}, tt.withBuiltin) {
				got = append(got, r.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("CheckRules: %q, want %q", got, tt.want)
			}
		})
	}
}

// TestBuiltinRulesKeepTheirDeclaredSeverity pins the built-ins' severity:
// a rule that declares none is an error, one that declares warning (the
// server forgetting a session is not the pool's fault) stays a warning.
func TestBuiltinRulesKeepTheirDeclaredSeverity(t *testing.T) {
	rules := BuiltinRules(Config{})
	if len(rules) == 0 {
		t.Fatal("no built-in rules")
	}
	for _, r := range rules {
		want := SeverityError
		if r.ID == RuleServerKeptSessions {
			want = SeverityWarning
		}
		if r.Severity != want || !r.Builtin {
			t.Errorf("%s: severity %q builtin %v, want %q and builtin", r.ID, r.Severity, r.Builtin, want)
		}
	}
}
