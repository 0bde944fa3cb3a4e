package rulefmt

import "testing"

// TestEffectiveExecutionRootPrefersTheUsersThenTheVocabularys pins the one
// choice of an execution's root: the configured selector wins over the
// vocabulary's, a vocabulary's (Sentry's invoke_agent) applies without
// one, and a vocabulary with none leaves every trace one execution.
func TestEffectiveExecutionRootPrefersTheUsersThenTheVocabularys(t *testing.T) {
	mine := Selector{Name: "agent.run"}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" for nil
	}{
		{"the user's over the vocabulary's", Config{Profile: ProfileSentry, ExecutionRoot: &mine}, mine.String()},
		{"the user's under a vocabulary without one", Config{ExecutionRoot: &mine}, mine.String()},
		{"the vocabulary's without the user's", Config{Profile: ProfileSentry}, invokeAgentRoot.String()},
		{"a user's vocabulary's", Config{Vocabulary: &Vocabulary{Name: "mine", Executions: &mine}}, mine.String()},
		{"neither: every trace is one", Config{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if r := tc.cfg.EffectiveExecutionRoot(); r != nil {
				got = r.String()
			}
			if got != tc.want {
				t.Errorf("EffectiveExecutionRoot = %q, want %q", got, tc.want)
			}
		})
	}
}
