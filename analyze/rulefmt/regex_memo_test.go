package rulefmt

import (
	"regexp"
	"testing"
)

func TestRegexSizeMemoAnswersAsCompilingAndStaysWithinItsBound(t *testing.T) {
	patterns := []string{`^a$`, `a{1,50}b`, `(x|y|z)+`, `[a-z]{3,9}\.[0-9]+`, `^a$`, `a{1,50}b`}
	for _, tc := range []struct {
		name string
		max  int
	}{
		{"room for every pattern", 100},
		{"room for two", 2},
		{"no room", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := regexSizeMemo{max: tc.max}
			for round := range 2 {
				for _, p := range patterns {
					want := regexInsts(p)
					if got := m.size(p); got != want {
						t.Fatalf("round %d: %q has %d instructions from the memo, %d compiled", round, p, got, want)
					}
				}
			}
			distinct := 4
			if want := min(tc.max, distinct); len(m.sizes) != want {
				t.Errorf("the memo holds %d patterns, want %d", len(m.sizes), want)
			}
		})
	}
}

func TestRegexInstsDependsOnThePatternOnly(t *testing.T) {
	for _, p := range []string{`a{1,200}`, `^b$`} {
		first, second := regexp.MustCompile(p), regexp.MustCompile(p)
		if a, b := RegexInsts(first), RegexInsts(second); a != b || a != regexInsts(p) {
			t.Errorf("%q: %d and %d instructions from two compilations, %d from the pattern", p, a, b, regexInsts(p))
		}
	}
	if a, b := RegexInsts(regexp.MustCompile(`a{1,200}`)), RegexInsts(regexp.MustCompile(`a{1,20}`)); a <= b {
		t.Errorf("a{1,200} compiles to %d instructions, a{1,20} to %d: the memo mixed them up", a, b)
	}
}
