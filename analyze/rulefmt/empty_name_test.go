package rulefmt

import (
	"strings"
	"testing"
)

// TestAnEmptyNameGetsNoSuggestion pins ConfigError.DidYouMean on empty
// input: an empty operator is one edit from "<" and ">", yet nothing was
// typed to be near, so the message suggests nothing.
func TestAnEmptyNameGetsNoSuggestion(t *testing.T) {
	doc := "rules:\n  - id: r\n    scope: trace\n    select: {name: x}\n    expect: {of: count, op: \"\", than: 0}\n"
	_, err := ParseGateConfig("rules.yaml", []byte(doc))
	if err == nil || !strings.Contains(err.Error(), "empty operator") || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("error %v, want the empty operator's with no suggestion", err)
	}
}
