package rulefmt

import (
	"strings"
	"testing"
)

// TestANullIsNoValue pins YAML's null (written null, ~ or nothing) where
// the format wants a value: an attribute condition's value and an
// expectation's than are refused as missing, not read as the text "null"
// or "" (a condition matching an empty attribute, a measure named null).
func TestANullIsNoValue(t *testing.T) {
	rule := func(sel, than string) string {
		return "rules:\n  - id: r\n    scope: trace\n    select: " + sel + "\n    expect: {of: count, op: \">=\", than: " + than + "}\n"
	}
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"attribute value null", rule("{attributes: {db.table: null}}", "0"), `attributes "db.table" has no value`},
		{"attribute value ~", rule("{attributes: {db.table: ~}}", "0"), `attributes "db.table" has no value`},
		{"attribute value empty", rule("{attributes: {db.table: }}", "0"), `attributes "db.table" has no value`},
		{"than null", rule("{name: x}", "null"), "than must be a number or a measure name"},
		{"than ~", rule("{name: x}", "~"), "than must be a number or a measure name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseGateConfig("rules.yaml", []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
