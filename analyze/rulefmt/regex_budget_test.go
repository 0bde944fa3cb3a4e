package rulefmt

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// costing returns a regex whose program is exactly n instructions (n >= 4).
func costing(t *testing.T, n int) string {
	t.Helper()
	re := fmt.Sprintf("(?:a?){%d}", (n-2)/2)
	if n%2 == 1 {
		re = fmt.Sprintf("(?:a?){%d}b", (n-3)/2)
	}
	if got := RegexInsts(regexp.MustCompile(re)); got != n {
		t.Fatalf("%s compiles to %d instructions, want %d", re, got, n)
	}
	return re
}

// budgetFile is a rules file of one rule per regex, rule i selecting
// by name_regex regexes[i] (an attribute regex when attr is set), each rule
// 4 lines from line 2.
func budgetFile(regexes []string, attr bool) string {
	var b strings.Builder
	b.WriteString("rules:\n")
	for i, re := range regexes {
		sel := fmt.Sprintf("{name_regex: %q}", re)
		if attr {
			sel = fmt.Sprintf("{attributes: {db.table: {regex: %q}}}", re)
		}
		fmt.Fprintf(&b, "  - id: r%d\n    scope: trace\n    select: %s\n    expect: {of: count, op: \">=\", than: 0}\n", i, sel)
	}
	return b.String()
}

// TestRegexBudgetIsOneForTheWholeFile pins MaxRegexInstsPerFile: cheap
// regexes, each far under MaxRegexInsts, that together come to exactly the
// budget are accepted; one instruction more is refused at the selector
// that went over, naming the file, its rule and the budget, whether the
// regexes are on names or attribute values. A single regex over
// MaxRegexInsts is refused where it is written, naming the file.
func TestRegexBudgetIsOneForTheWholeFile(t *testing.T) {
	ten := make([]string, 10) // 10 × 400 = MaxRegexInstsPerFile
	for i := range ten {
		ten[i] = costing(t, MaxRegexInstsPerFile/10)
	}
	over := append(append([]string{}, ten[:9]...), costing(t, MaxRegexInstsPerFile/10+1))
	for _, tc := range []struct {
		name string
		doc  string
		want string // "" accepted
		is   error
	}{
		{"exactly the budget on names", budgetFile(ten, false), "", nil},
		{"exactly the budget on attribute values", budgetFile(ten, true), "", nil},
		{"one instruction over on names", budgetFile(over, false),
			`rules.yaml:40:13: regex budget of the file exceeded: rule "r9": this selector's regexes (401 instructions) bring the file's regexes to 4001 instructions, over the budget of 4000`, ErrRegexBudget},
		{"one instruction over on attribute values", budgetFile(over, true),
			`rules.yaml:40:13: regex budget of the file exceeded: rule "r9": this selector's regexes (401 instructions) bring the file's regexes to 4001 instructions, over the budget of 4000`, ErrRegexBudget},
		{"one regex over the single limit", budgetFile([]string{costing(t, MaxRegexInsts+1)}, false),
			`rules.yaml:4:26: regex too costly: name_regex "(?:a?){499}b" compiles to 1001 instructions, over the limit of 1000`, ErrRegexTooCostly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseGateConfig("rules.yaml", []byte(tc.doc))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, tc.is) {
				t.Errorf("error %v\nwant %v starting %q", err, tc.is, tc.want)
			}
		})
	}
}

// TestBuiltinRegexesAreSmallBesideTheFileBudget: the built-in
// vocabularies (all of them, as profile auto matches) and rules run their
// regexes beside a file's, so they must stay a small part of the file's
// budget: at most a sixteenth of MaxRegexInstsPerFile.
func TestBuiltinRegexesAreSmallBesideTheFileBudget(t *testing.T) {
	gc := &GateConfig{Rules: BuiltinRules(Config{})}
	n := 0
	for _, s := range gc.regexSites() {
		n += s.sel.regexInsts()
	}
	for _, v := range BuiltinVocabularies() {
		for _, s := range v.selectors() {
			n += s.regexInsts()
		}
	}
	if n == 0 || n > MaxRegexInstsPerFile/16 {
		t.Errorf("the built-ins' regexes compile to %d instructions, want 1 to %d", n, MaxRegexInstsPerFile/16)
	}
}
