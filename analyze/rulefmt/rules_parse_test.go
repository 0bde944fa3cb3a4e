package rulefmt

import (
	"errors"
	"strings"
	"testing"
)

// TestOnlyAPlainKeyNamesUnderOrNotUnder pins that a select's under and
// not_under are keys written as plain scalars: a YAML alias whose anchor
// happens to be called under (its node's value is the anchor's name) is no
// key at all, and the configuration is refused at the alias, not read as
// an under selector.
func TestOnlyAPlainKeyNamesUnderOrNotUnder(t *testing.T) {
	doc := func(sel string) string {
		return "rules:\n  - id: a\n    scope: trace\n    select:\n" + sel + "    expect: {of: count, op: \">=\", than: 1}\n"
	}
	for _, tc := range []struct {
		name string
		sel  string
		err  string // "" when accepted
	}{
		{"a plain under", "      name: db.query\n      under: {name: tools/call}\n", ""},
		{"a plain not_under", "      name: db.query\n      not_under: {name: tools/call}\n", ""},
		{"an alias spelled under", "      name: &under db.query\n      *under : {name: tools/call}\n", "f.yaml:6:7: the alias *under: a configuration reads no YAML aliases"},
		{"an alias spelled not_under", "      name: &not_under db.query\n      *not_under : {name: tools/call}\n", "f.yaml:6:7: the alias *not_under: a configuration reads no YAML aliases"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gc, err := ParseGateConfig("f.yaml", []byte(doc(tc.sel)))
			if tc.err == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if s := gc.Rules[0].Select; s == nil || (s.Under == nil) == (s.NotUnder == nil) {
					t.Errorf("select = %+v, want exactly one of under and not_under", s)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

// TestOnlyADocumentThatSaysNothingIsEmpty pins ErrEmptyConfig's edge from
// the other side than TestParseConfigRefusesAnEmptyFile: a document that
// says something, though nothing a configuration holds (a word, a list, an
// empty list, a tagged null holding a list), is refused for what it is,
// never as an empty file the caller may treat as "use the built-ins".
func TestOnlyADocumentThatSaysNothingIsEmpty(t *testing.T) {
	for _, tc := range []struct{ name, doc, err string }{
		{"a word", "hello\n", "c.yaml:1:1: want a mapping with keys"},
		{"a number", "0\n", "c.yaml:1:1: want a mapping with keys"},
		{"an empty string", "''\n", "c.yaml:1:1: want a mapping with keys"},
		{"an empty list", "[]\n", "c.yaml:1:1: want a mapping with keys"},
		{"a list", "- rules\n", "c.yaml:1:1: want a mapping with keys"},
		{"a list tagged null", "!!null [rules]\n", "c.yaml:1:1: want a mapping with keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, parse := range []func(string, []byte) error{
				func(p string, d []byte) error { _, err := ParseConfig(p, d); return err },
				func(p string, d []byte) error { _, err := ParseGateConfig(p, d); return err },
			} {
				err := parse("c.yaml", []byte(tc.doc))
				if errors.Is(err, ErrEmptyConfig) || err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want one containing %q and not ErrEmptyConfig", err, tc.err)
				}
			}
		})
	}
}

// TestThanIsAFiniteNumberOrAMeasureOfTheFile pins what than: accepts: a
// finite number, or a measure; a quantity counted over spans (count,
// distinct, ...) is what of: names, never a value to compare with, and
// NaN or an infinity (which strconv reads as numbers) bounds nothing.
func TestThanIsAFiniteNumberOrAMeasureOfTheFile(t *testing.T) {
	rule := func(than string) string {
		return "rules:\n  - id: a\n    scope: trace\n    select: db.query\n    expect: {of: count, op: \"<=\", than: " + than + "}\n"
	}
	cases := []struct{ name, than, err string }{
		{"a number", "3", ""},
		{"a measure", "excess_misses", ""},
		{"nan", "nan", "f.yaml:5:41: than must be a finite number"},
		{"NaN", "NaN", "f.yaml:5:41: than must be a finite number"},
		{"inf", "inf", "f.yaml:5:41: than must be a finite number"},
		{"-Inf", "-Inf", "f.yaml:5:41: than must be a finite number"},
	}
	for _, q := range SpanQuantities() {
		cases = append(cases, struct{ name, than, err string }{"the quantity " + q, q, "f.yaml:5:41: unknown measure \"" + q + "\" in than"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseGateConfig("f.yaml", []byte(rule(tc.than)))
			if tc.err == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

// TestACountNeedsASelectionOnTheRuleOrItsExpectation pins when a rule's
// count is told it "needs a selection": only when neither the rule nor the
// expectation selects, and not when the rule's select was given but could
// not be read (that mistake is reported alone, not twice).
func TestACountNeedsASelectionOnTheRuleOrItsExpectation(t *testing.T) {
	rule := func(sel, expect string) string {
		return "rules:\n  - id: a\n    scope: trace\n" + sel + "    expect: " + expect + "\n"
	}
	for _, tc := range []struct {
		name, doc string
		errs      []string // each error's start, in order; none when accepted
	}{
		{"the rule selects", rule("    select: db.query\n", `{of: count, op: ">=", than: 1}`), nil},
		{"the expectation selects", rule("", `{of: count, op: ">=", than: 1, select: db.query}`), nil},
		{"neither selects", rule("", `{of: count, op: ">=", than: 1}`), []string{`f.yaml:4:13: rule "a": count needs a selection`}},
		{"the rule's select is bad", rule("    select: {nmae: db.query}\n", `{of: count, op: ">=", than: 1}`), []string{`f.yaml:4:14: unknown key "nmae"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseGateConfig("f.yaml", []byte(tc.doc))
			if tc.errs == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var errs ConfigErrors
			if !errors.As(err, &errs) || len(errs) != len(tc.errs) {
				t.Fatalf("error %v, want %d mistakes: %q", err, len(tc.errs), tc.errs)
			}
			for i, want := range tc.errs {
				if !strings.HasPrefix(errs[i].Error(), want) {
					t.Errorf("mistake %d: %v, want one starting %q", i, errs[i], want)
				}
			}
		})
	}
}
