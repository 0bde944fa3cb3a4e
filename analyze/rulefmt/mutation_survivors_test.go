package rulefmt

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// holdsNoise is Holds's allowance for float noise (rules.go's eps): each
// operator's bound, loosened by the tolerance, moves by it once more.
const holdsNoise = 1e-9

// TestHoldsIsExactAtTheLoosenedBound pins each operator's edge: the bound
// loosened by the tolerance and the float noise is inclusive for ==, <=
// and >= and exclusive for !=, < and >, and the next float past it is on
// the other side. The edge is computed as Holds computes it (bound, then
// tolerance, then noise, in float64 at run time), so the comparison meets
// exactly the value the operator is about.
func TestHoldsIsExactAtTheLoosenedBound(t *testing.T) {
	up, down := math.Inf(1), math.Inf(-1)
	for _, tc := range []struct {
		name       string
		op         Op
		tol, bound float64
		edge       func(bound, tol float64) float64
		// past is the direction of the first float on the other side.
		past        float64
		atEdge, off bool
	}{
		{"<= holds at bound+tolerance+noise", OpLe, 0.25, 1, func(b, t float64) float64 { return b + t + holdsNoise }, up, true, false},
		{"<= with no tolerance", OpLe, 0, 3, func(b, t float64) float64 { return b + t + holdsNoise }, up, true, false},
		{"< fails at bound+tolerance-noise", OpLt, 0.25, 1, func(b, t float64) float64 { return b + t - holdsNoise }, down, false, true},
		{">= holds at bound-tolerance-noise", OpGe, 0.25, 1, func(b, t float64) float64 { return b - t - holdsNoise }, down, true, false},
		{"> fails at bound-tolerance+noise", OpGt, 0.25, 1, func(b, t float64) float64 { return b - t + holdsNoise }, up, false, true},
		{"== holds at tolerance+noise above", OpEq, 0.25, 0, func(_, t float64) float64 { return t + holdsNoise }, up, true, false},
		{"== holds at tolerance+noise below", OpEq, 0.25, 0, func(_, t float64) float64 { return -(t + holdsNoise) }, down, true, false},
		{"!= fails at tolerance+noise above", OpNe, 0.25, 0, func(_, t float64) float64 { return t + holdsNoise }, up, false, true},
		{"!= fails at tolerance+noise below", OpNe, 0.25, 0, func(_, t float64) float64 { return -(t + holdsNoise) }, down, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Expectation{Op: tc.op, Tolerance: tc.tol}
			edge := tc.edge(tc.bound, tc.tol)
			if got := e.Holds(edge, tc.bound); got != tc.atEdge {
				t.Errorf("%v %s %v ±%v = %v at the edge, want %v", edge, tc.op, tc.bound, tc.tol, got, tc.atEdge)
			}
			next := math.Nextafter(edge, tc.past)
			if got := e.Holds(next, tc.bound); got != tc.off {
				t.Errorf("%v %s %v ±%v = %v one float past the edge, want %v", next, tc.op, tc.bound, tc.tol, got, tc.off)
			}
		})
	}
}

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
		{"an alias spelled under", "      name: &under db.query\n      *under : {name: tools/call}\n", "f.yaml:6:7: want a key"},
		{"an alias spelled not_under", "      name: &not_under db.query\n      *not_under : {name: tools/call}\n", "f.yaml:6:7: want a key"},
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

// TestAnAliasIsNoValue pins that a value rulefmt reads as a scalar is a
// scalar written in place: an alias to one (*n after &n 3) is refused where
// the value is read, not resolved. yaml.v3 would decode the alias to the
// anchored value; refusing it keeps a configuration's values where they
// are written and every message at the place it names.
func TestAnAliasIsNoValue(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		err       string // "" when accepted
	}{
		{"a measure's expect", "measures:\n  - {name: x, root: &n a, read: b, expect: 1}\n", ""},
		{"a measure's expect as an alias", "measures:\n  - {name: x, root: a, read: b, description: &n 1}\n  - {name: y, root: a, read: b, expect: *n}\n", "c.yaml:3:41: expect must be a whole number of reads, 0 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig("c.yaml", []byte(tc.doc))
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

// TestIndexKeepsWhatTheVocabularyInUseReads pins which vocabularies'
// attributes IndexOptions keeps: under auto without a vocabulary of the
// file's, every built-in's (any of them may be the one detected); under a
// named profile only that profile's; with the file's own vocabulary only
// its, whatever the profile. Each set is compared whole, beside the
// attributes every configuration keeps.
func TestIndexKeepsWhatTheVocabularyInUseReads(t *testing.T) {
	base := Config{Vocabulary: &Vocabulary{}}.IndexOptions()
	want := func(vocs ...Vocabulary) (span, res map[string]bool) {
		span, res = keySet(base.SpanAttrs), keySet(base.ResourceAttrs)
		for _, v := range vocs {
			o := v.IndexOptions()
			for _, k := range o.SpanAttrs {
				span[k] = true
			}
			for _, k := range o.ResourceAttrs {
				res[k] = true
			}
		}
		return span, res
	}
	builtins := BuiltinVocabularies()
	own := builtins[len(builtins)-1]
	cases := []struct {
		name string
		cfg  Config
		vocs []Vocabulary
	}{
		{"auto reads every built-in", Config{Profile: ProfileAuto}, builtins},
		{"auto with the file's vocabulary reads that one", Config{Profile: ProfileAuto, Vocabulary: &own}, []Vocabulary{own}},
	}
	for _, p := range Profiles {
		if p == ProfileAuto {
			continue
		}
		cases = append(cases, struct {
			name string
			cfg  Config
			vocs []Vocabulary
		}{"profile " + string(p), Config{Profile: p}, []Vocabulary{*Config{Profile: p}.ActiveVocabulary()}})
	}
	all, _ := want(builtins...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.cfg.IndexOptions()
			span, res := want(tc.vocs...)
			if got := keySet(o.SpanAttrs); !maps.Equal(got, span) {
				t.Errorf("span attributes %v, want %v", keysOf(got), keysOf(span))
			}
			if got := keySet(o.ResourceAttrs); !maps.Equal(got, res) {
				t.Errorf("resource attributes %v, want %v", keysOf(got), keysOf(res))
			}
			if len(tc.vocs) == 1 && len(span) >= len(all) {
				t.Errorf("one vocabulary keeps %d span attributes, all of them %d: the case cannot tell them apart", len(span), len(all))
			}
		})
	}
}

// keySet is keys as a set.
func keySet(keys []string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// keysOf lists m's keys, sorted, for a message.
func keysOf(m map[string]bool) string { return sortedKeys(slices.Collect(maps.Keys(m))) }

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

// TestASelectorIsZeroOnlyWithoutAnyCondition pins IsZero: any one
// condition (each key of a selector, and the calls shorthand) makes a
// selector match less than every span.
func TestASelectorIsZeroOnlyWithoutAnyCondition(t *testing.T) {
	if !(Selector{}).IsZero() {
		t.Error("the empty selector is not zero")
	}
	for _, s := range []string{
		"db.query",
		"{name_regex: '^db'}",
		"{attributes: {db.sql.table: orgs}}",
		"{resource: {service.name: worker}}",
		"{kind: client}",
		"{status: error}",
	} {
		sel, err := ParseSelectorString(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if sel.IsZero() {
			t.Errorf("%s: read as matching every span", s)
		}
	}
	if (Selector{Calls: true}).IsZero() {
		t.Error("the calls selector is read as matching every span")
	}
}

// TestASelectorNameIsOneNonEmptyValue pins the name key's two mistakes,
// each with its own message: an empty name (which would match no span) and
// a name that is not one value.
func TestASelectorNameIsOneNonEmptyValue(t *testing.T) {
	for _, tc := range []struct{ sel, err string }{
		{"{name: db.query}", ""},
		{"{name: ''}", "1:8: name must not be empty"},
		{"{name: [a]}", "1:8: name must be a single value"},
		{"{name: ~}", "1:8: name must be a single value"},
	} {
		_, err := ParseSelectorString(tc.sel)
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.sel, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one containing %q", tc.sel, err, tc.err)
		}
	}
}

// TestRegressionTolerancesAcceptedAtTheirEdge pins the edges of the
// fractional tolerances: a latency ratio of exactly 1 (no slowdown
// allowed), a minimum delta of 0 and a hit-rate drop of 0 or 1 are
// accepted; just past each is refused.
func TestRegressionTolerancesAcceptedAtTheirEdge(t *testing.T) {
	for _, tc := range []struct {
		doc string
		ok  bool
	}{
		{"regressions: {latency_ratio: 1}\n", true},
		{"regressions: {latency_ratio: 0.999}\n", false},
		{"regressions: {latency_min_delta_ms: 0}\n", true},
		{"regressions: {latency_min_delta_ms: -0.001}\n", false},
		{"regressions: {hit_rate_drop: 0}\n", true},
		{"regressions: {hit_rate_drop: -0.001}\n", false},
		{"regressions: {hit_rate_drop: 1}\n", true},
		{"regressions: {hit_rate_drop: 1.001}\n", false},
	} {
		gc, err := ParseGateConfig("f.yaml", []byte(tc.doc))
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want accepted %v", strings.TrimSpace(tc.doc), err, tc.ok)
		}
		if tc.doc == "regressions: {latency_ratio: 1}\n" && err == nil && gc.Tolerances.LatencyRatio != 1 {
			t.Errorf("latency_ratio: 1 read as %v", gc.Tolerances.LatencyRatio)
		}
	}
}

// TestAYAMLErrorIsPlacedWhereItsOwnProblemBegins pins locateYAMLError's
// test of a prefix: it fails with the same problem as the file, not merely
// fails. Every prefix cut inside the open flow list fails too (did not
// find expected node content, at its end); the file's own mistake is the
// ':' after the list is closed, on line 4.
func TestAYAMLErrorIsPlacedWhereItsOwnProblemBegins(t *testing.T) {
	doc := "rules: [a,\n  b,\n  c,\n  d]: x\n"
	_, err := ParseGateConfig("f.yaml", []byte(doc))
	const want = "f.yaml:4:5: invalid YAML: mapping values are not allowed in this context"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestListNamesListsExactlyMaxListedNamesWhole pins listNames' bound: a
// list of exactly maxListedNames names is listed whole, one more is cut
// with the count of the rest.
func TestListNamesListsExactlyMaxListedNamesWhole(t *testing.T) {
	names := make([]string, maxListedNames+1)
	for i := range names {
		names[i] = "m" + strconv.Itoa(i)
	}
	if got := listNames(names[:maxListedNames]); strings.Contains(got, "more") || !strings.HasSuffix(got, ", m199") {
		t.Errorf("%d names listed as …%s, want them all", maxListedNames, got[max(0, len(got)-30):])
	}
	if got := listNames(names); !strings.HasSuffix(got, ", m199 and 1 more") {
		t.Errorf("%d names listed as …%s, want the first %d and 1 more", len(names), got[max(0, len(got)-30):], maxListedNames)
	}
}

// TestBuiltinRulesKeepTheirDeclaredSeverity pins the built-ins' severity:
// a rule that declares none is an error, one that declares warning (the
// server forgetting a session is not the pool's fault) stays a warning.
func TestBuiltinRulesKeepTheirDeclaredSeverity(t *testing.T) {
	rules := BuiltinRules(Config{})
	if len(rules) == 0 {
		t.Fatal("no built-in rules")
	}
	for _, r := range rules {
		want := SeverityError
		if r.ID == RuleServerKeptSessions {
			want = SeverityWarning
		}
		if r.Severity != want || !r.Builtin {
			t.Errorf("%s: severity %q builtin %v, want %q and builtin", r.ID, r.Severity, r.Builtin, want)
		}
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

// TestAYAMLErrorAfterBlankLinesIsPlacedOnItsLine pins the line ends
// locateYAMLError splits at: a blank line is a line of its own (a newline
// at the very start of what is left), so the mistake after two of them is
// on line 3.
func TestAYAMLErrorAfterBlankLinesIsPlacedOnItsLine(t *testing.T) {
	_, err := ParseGateConfig("f.yaml", []byte("\n\nregressions: hit_rate_drop: 1\n"))
	const want = "f.yaml:3:27: invalid YAML: mapping values are not allowed in this context"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestAYAMLErrorIsPlacedInAFileOfExactlyTheSearchBound pins
// maxLocateBytes' edge: a file of exactly that size still has its mistake
// placed at a line and column; one byte more keeps yaml.v3's own line,
// without a column.
func TestAYAMLErrorIsPlacedInAFileOfExactlyTheSearchBound(t *testing.T) {
	const bad = "regressions: hit_rate_drop: 1\n"
	for _, tc := range []struct {
		size int
		col  int
	}{
		{maxLocateBytes, 27},
		{maxLocateBytes + 1, 0},
	} {
		pad := tc.size - len(bad)
		line := "# " + strings.Repeat("x", 61) + "\n" // 64 bytes
		doc := strings.Repeat(line, pad/len(line)) + "#" + strings.Repeat("y", pad%len(line)-2) + "\n" + bad
		if len(doc) != tc.size {
			t.Fatalf("built %d bytes, want %d", len(doc), tc.size)
		}
		_, err := ParseGateConfig("f.yaml", []byte(doc))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Column != tc.col || ce.Line != strings.Count(doc, "\n") {
			t.Errorf("%d bytes: error %v, want line %d column %d", tc.size, err, strings.Count(doc, "\n"), tc.col)
		}
	}
}
