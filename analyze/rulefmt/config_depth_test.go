package rulefmt

import (
	"errors"
	"strings"
	"testing"
)

// TestConfigNestedPastTheLimitIsRefusedWithItsPlace pins the one depth
// limit of the rule language: a configuration or a command-line selector
// nested deeper than maxConfigDepth is a *ConfigError naming the line and
// column of the first node past it, whatever key it hides under; one at
// the limit is judged on its content, as before.
func TestConfigNestedPastTheLimitIsRefusedWithItsPlace(t *testing.T) {
	// Block style: each level one line deeper, so the place is a line.
	block := func(levels int) string {
		var b strings.Builder
		b.WriteString("rules:\n")
		for i := 0; i < levels; i++ {
			b.WriteString(strings.Repeat("  ", i+1) + "- \n")
		}
		return b.String()
	}
	flow := func(levels int) string {
		return "{name: " + strings.Repeat("[", levels) + strings.Repeat("]", levels) + "}"
	}
	for _, tc := range []struct {
		name     string
		parse    func() error
		tooDeep  bool
		wantLine int
		wantCol  int
	}{
		{"rules 300 lists deep", func() error { _, err := ParseGateConfig("deep.yaml", []byte(block(300))); return err }, true, maxConfigDepth + 1, 2*maxConfigDepth + 1},
		{"measures under a flow mapping", func() error {
			_, err := ParseConfig("deep.yaml", []byte("measures: "+flow(5000)+"\n"))
			return err
		}, true, 1, 0},
		{"a selector on the command line", func() error { _, err := ParseSelectorString(flow(5000)); return err }, true, 1, 8 + maxConfigDepth - 1},
		{"a selector at the limit", func() error { _, err := ParseSelectorString(flow(maxConfigDepth - 2)); return err }, false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.parse()
			ce, ok := errors.AsType[*ConfigError](err)
			deep := ok && strings.Contains(ce.Msg, "nested more than 32 levels deep")
			if deep != tc.tooDeep {
				t.Fatalf("err %v; too deep %v, want %v", err, deep, tc.tooDeep)
			}
			if !tc.tooDeep {
				return
			}
			if tc.wantLine > 0 && ce.Line != tc.wantLine || tc.wantCol > 0 && ce.Column != tc.wantCol || ce.Line == 0 || ce.Column == 0 {
				t.Errorf("error at %d:%d, want line %d column %d (0: any)", ce.Line, ce.Column, tc.wantLine, tc.wantCol)
			}
		})
	}
}
