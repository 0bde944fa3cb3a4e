package rulefmt

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestWithDefaultsFillsOnlyWhatIsZero pins WithDefaults: a zero profile
// becomes default and a zero idle TTL DefaultIdleTTL; a vocabulary block's
// name is the profile whatever Profile said; what is set is kept.
func TestWithDefaultsFillsOnlyWhatIsZero(t *testing.T) {
	if c := (Config{}).WithDefaults(); c.Profile != ProfileDefault || c.IdleTTL != DefaultIdleTTL {
		t.Errorf("zero config with defaults: profile %q, idle TTL %v; want %q, %v", c.Profile, c.IdleTTL, ProfileDefault, DefaultIdleTTL)
	}
	if c := (Config{Profile: ProfileSemconv, IdleTTL: time.Minute}).WithDefaults(); c.Profile != ProfileSemconv || c.IdleTTL != time.Minute {
		t.Errorf("set config with defaults: profile %q, idle TTL %v; want them kept", c.Profile, c.IdleTTL)
	}
	v := &Vocabulary{Name: "team"}
	if c := (Config{Profile: ProfileSemconv, Vocabulary: v}).WithDefaults(); c.Profile != "team" {
		t.Errorf("config with a vocabulary block: profile %q, want the block's name", c.Profile)
	}
	if p, err := ParseProfile(""); err != nil || p != ProfileDefault {
		t.Errorf("ParseProfile(\"\") = %q, %v; want %q", p, err, ProfileDefault)
	}
}

// TestEveryMeasureNeedsANameARootAndARead pins Config.Validate's checks
// of a measure: a name, and both selectors, either one missing alone.
func TestEveryMeasureNeedsANameARootAndARead(t *testing.T) {
	sel := Selector{Name: "a"}
	for _, tc := range []struct {
		name string
		m    ReadMeasure
		want string
	}{
		{"no name", ReadMeasure{Root: sel, Read: sel}, "measure without a name"},
		{"no root", ReadMeasure{Name: "m", Read: sel}, "root and read selectors are required"},
		{"no read", ReadMeasure{Name: "m", Root: sel}, "root and read selectors are required"},
		{"whole", ReadMeasure{Name: "m", Root: sel, Read: sel}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Config{Measures: []ReadMeasure{tc.m}}.Validate()
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestRulePartsReadAsTheRuleLanguage pins how scopes, selections and
// expectations are worded in reports.
func TestRulePartsReadAsTheRuleLanguage(t *testing.T) {
	root := &Selector{Name: "inv"}
	for _, tc := range []struct {
		got, want string
	}{
		{Scope{Kind: ScopeDump}.String(), "dump"},
		{Scope{Kind: ScopeTrace}.String(), "trace"},
		{Scope{Kind: ScopeSubtree, Root: root}.String(), "subtree of " + root.String()},
		{Scope{Kind: ScopeSubtree}.String(), "subtree"},
		{SpanSelector{Selector: Selector{Name: "a"}}.String(), Selector{Name: "a"}.String()},
		{SpanSelector{Selector: Selector{Name: "a"}, Under: root}.String(), Selector{Name: "a"}.String() + " under(" + root.String() + ")"},
		{SpanSelector{Selector: Selector{Name: "a"}, NotUnder: root}.String(), Selector{Name: "a"}.String() + " not_under(" + root.String() + ")"},
		{Expectation{Of: QuantityPoolSessions, Op: OpEq, Than: Operand{Number: 1}}.String(), "pool_sessions(mcp.session.id) == 1"},
		{Expectation{Of: QuantityLostSessions, Op: OpEq, Than: Operand{Number: 0}}.String(), "lost_sessions(mcp.session.id) == 0"},
		{Expectation{Of: QuantityCount, Op: OpLe, Than: Operand{Number: 0.05}}.String(), "count <= 0.05"},
		{Expectation{Of: "hit_rate", Op: OpGe, Than: Operand{Measure: "cold_start_floor"}}.String(), "hit_rate >= cold_start_floor"},
		{Expectation{Of: "hit_rate", Op: OpGe, Than: Operand{Number: 0.5}, Tolerance: 0.25}.String(), "hit_rate >= 0.5 ±0.25"},
	} {
		if tc.got != tc.want {
			t.Errorf("rendered %q, want %q", tc.got, tc.want)
		}
	}
	if root.String() == "" {
		t.Error("a selector renders as nothing")
	}
}

// TestOnlyASpanQuantityIsNoMeasure pins IsMeasure: the four span
// quantities are counted over spans; any other name is a measure.
func TestOnlyASpanQuantityIsNoMeasure(t *testing.T) {
	for _, q := range []string{QuantityCount, QuantityDistinct, QuantityPoolSessions, QuantityLostSessions} {
		if (Expectation{Of: q}).IsMeasure() {
			t.Errorf("%s is a measure, want a span quantity", q)
		}
	}
	if !(Expectation{Of: "hit_rate"}).IsMeasure() {
		t.Error("hit_rate is not a measure")
	}
}

// TestDistinctNamesItsOwnAttribute pins that distinct renders with the
// attribute it counts, not the session id the session quantities read.
func TestDistinctNamesItsOwnAttribute(t *testing.T) {
	e := Expectation{Of: QuantityDistinct, Attribute: "tenant", Op: OpEq, Than: Operand{Number: 1}}
	if got := e.String(); got != "distinct(tenant) == 1" {
		t.Errorf("rendered %q, want distinct(tenant) == 1", got)
	}
}

// TestSpanQuantitiesIsTheCallersOwn pins that the list SpanQuantities
// returns may be changed without changing what a later call returns or
// what IsMeasure decides.
func TestSpanQuantitiesIsTheCallersOwn(t *testing.T) {
	q := SpanQuantities()
	q[0] = "hit_rate"
	if got := SpanQuantities()[0]; got != QuantityCount {
		t.Errorf("after the caller changed its copy, SpanQuantities()[0] = %q, want %q", got, QuantityCount)
	}
	if (Expectation{Of: QuantityCount}).IsMeasure() || !(Expectation{Of: "hit_rate"}).IsMeasure() {
		t.Error("a caller's change to its copy changed IsMeasure")
	}
}

// TestOnlyTheHitRateBesideTheFloorIsWarnedOf pins LintRules's pattern:
// the hit rate compared with the cold-start floor, either way round, is
// warned of; either of them compared with another measure is not.
func TestOnlyTheHitRateBesideTheFloorIsWarnedOf(t *testing.T) {
	for _, tc := range []struct {
		of, than string
		warned   bool
	}{
		{"hit_rate", "cold_start_floor", true},
		{"cold_start_floor", "hit_rate", true},
		{"misses", "cold_start_floor", false},
		{"hit_rate", "misses", false},
		{"misses", "hit_rate", false},
		{"cold_start_floor", "misses", false},
	} {
		rules := []Rule{{ID: "r", Expect: []Expectation{{Of: tc.of, Op: OpGe, Than: Operand{Measure: tc.than}}}}}
		if got := len(LintRules("f.yaml", rules)) == 1; got != tc.warned {
			t.Errorf("%s >= %s warned %v, want %v", tc.of, tc.than, got, tc.warned)
		}
	}
}

// TestABlankSelectorIsAnEmptySelector pins that a selector of only
// blanks on a command line is refused as empty, as "" is, with what to
// give instead.
func TestABlankSelectorIsAnEmptySelector(t *testing.T) {
	for _, s := range []string{"", " ", " \t\n"} {
		if _, err := ParseSelectorString(s); err == nil || !strings.Contains(err.Error(), "empty selector: give a span name or a mapping") {
			t.Errorf("ParseSelectorString(%q) = %v, want the empty selector's error", s, err)
		}
	}
}

// TestABlockOnABaseNamesItsOwnSpans pins that a vocabulary block built on
// a built-in names the spans its own selectors read, not the built-in's
// names: its calls replace the base's, and so does what reports call them.
func TestABlockOnABaseNamesItsOwnSpans(t *testing.T) {
	v, err := ParseVocabulary("v.yaml", []byte("name: gw\nbase: openllmetry\ncalls: my.call\n"))
	if err != nil {
		t.Fatal(err)
	}
	names := v.PoolSpanNames()
	if !slices.Contains(names, "my.call") || slices.Contains(names, "<tool>.tool") {
		t.Errorf("PoolSpanNames() = %v, want the block's my.call and not the base's <tool>.tool", names)
	}
}
