package rulefmt

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestRegexBudgetErrorClipsALongOwnerName pins the owner named by the
// budget error: a rule id or measure name of 300 bytes is quoted clipped
// to 80 bytes with its length, not whole (an error message stays bounded
// however long a name in the file is).
func TestRegexBudgetErrorClipsALongOwnerName(t *testing.T) {
	over := make([]string, 10)
	for i := range over {
		over[i] = costing(t, MaxRegexInstsPerFile/10)
	}
	over[9] = costing(t, MaxRegexInstsPerFile/10+1)
	longID := strings.Repeat("r", 300)
	longMeasure := strings.Repeat("m", 300)
	re := func(n int) string { return fmt.Sprintf("%q", costing(t, n)) }
	measureDoc := "measures:\n  - name: " + longMeasure + "\n" +
		"    root: {name_regex: " + re(MaxRegexInsts) + "}\n" +
		"    read: {name_regex: " + re(MaxRegexInsts) + ", attributes: {a: {regex: " + re(MaxRegexInsts) + "}, b: {regex: " + re(MaxRegexInsts) + "}}}\n" +
		"    not_under: {name_regex: " + re(4) + "}\n" +
		"    expect: 1\n"
	for _, tc := range []struct {
		name, doc, want, whole string
	}{
		{"rule id", strings.Replace(budgetFile(over, false), "id: r9\n", "id: "+longID+"\n", 1),
			`rule "` + longID[:80] + `… (300 bytes)"`, longID},
		{"measure name", measureDoc, `measure "` + longMeasure[:80] + `… (300 bytes)"`, longMeasure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseGateConfig("rules.yaml", []byte(tc.doc))
			if !errors.Is(err, ErrRegexBudget) {
				t.Fatalf("error %v, want %v", err, ErrRegexBudget)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.whole) {
				t.Errorf("error %q\nwant the owner clipped: %s", err, tc.want)
			}
		})
	}
}
