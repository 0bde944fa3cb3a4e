package rulefmt

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestEachSelectorOfAMeasureCountsInTheRegexBudget pins the selectors of a
// measure the file's regex budget adds up: root, read, not_under and
// complete_when, each in turn holding the regex that takes the file from
// exactly the budget (accepted) to one instruction over (refused).
func TestEachSelectorOfAMeasureCountsInTheRegexBudget(t *testing.T) {
	re := func(n int) string { return fmt.Sprintf("{name_regex: %q}", costing(t, n)) }
	big := costing(t, MaxRegexInsts)
	full := fmt.Sprintf("{name_regex: %q, attributes: {a: {regex: %q}, b: {regex: %q}}}", big, big, big)
	keys := []string{"root", "read", "not_under", "complete_when"}
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			for _, over := range []int{0, 1} {
				// 3 × MaxRegexInsts + 4 + 4 + the key's: the budget, plus over.
				sels := map[string]string{"root": full, "read": re(4), "not_under": re(4), "complete_when": re(4)}
				if key == "root" {
					sels["read"] = full
				}
				sels[key] = re(MaxRegexInstsPerFile - 3*MaxRegexInsts - 8 + over)
				var doc strings.Builder
				doc.WriteString("measures:\n  - name: m\n")
				for _, k := range keys {
					fmt.Fprintf(&doc, "    %s: %s\n", k, sels[k])
				}
				doc.WriteString("    expect: 1\n")
				_, err := ParseGateConfig("rules.yaml", []byte(doc.String()))
				if (over == 1) != errors.Is(err, ErrRegexBudget) {
					t.Errorf("%d over the budget: error %v\n%s", over, err, doc.String())
				}
			}
		})
	}
}
