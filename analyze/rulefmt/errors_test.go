package rulefmt

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// fiveTyposPath is a rule file with five typos, one per kind of name: a
// rule key, a scope, a measure, an operator and a selector key. Each
// rule's other parts are right, so each typo is exactly one mistake. The
// CLI's test of `mcptrace rules` reads the same file.
const fiveTyposPath = "testdata/five-typos.yaml"

// TestFileWithFiveTyposReportsAllFiveInOneRun: every typo of a file of
// five is reported in one run, in file order, each with
// file:line:column, the nearest valid name and the full list of valid
// names, and none reports a mistake the file did not make.
func TestFileWithFiveTyposReportsAllFiveInOneRun(t *testing.T) {
	fiveTypos, err := os.ReadFile(fiveTyposPath)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParseGateConfig("typos.yaml", fiveTypos)
	ces, ok := errors.AsType[ConfigErrors](err)
	if !ok {
		t.Fatalf("err = %v (%T), want ConfigErrors", err, err)
	}
	want := []string{
		`typos.yaml:3:5: unknown key "severty" (did you mean "severity"?): want one of id, description, severity, scope, select, expect, complete_when, skip_empty, allow_empty, skip_sessionless`,
		`typos.yaml:4:12: scope "dmp" (did you mean "dump"?): want one of dump, trace, {subtree: SELECTOR}`,
		`typos.yaml:5:18: unknown measure "hit_rat" (did you mean "hit_rate"?): want one of count, distinct, pool_sessions, lost_sessions, ` + strings.Join(MeasureNames(nil), ", "),
		`typos.yaml:5:31: unknown operator "=<" (did you mean "<="?): want one of ==, !=, <, <=, >, >=`,
		`typos.yaml:7:14: unknown key "nmae" (did you mean "name"?): want one of name, name_regex, attributes, resource, kind, status, under, not_under`,
	}
	if len(ces) != len(want) {
		t.Fatalf("%d mistakes, want %d:\n%v", len(ces), len(want), err)
	}
	for i, w := range want {
		if got := ces[i].Error(); got != w {
			t.Errorf("mistake %d:\n got %s\nwant %s", i+1, got, w)
		}
	}
	if got := strings.Join(strings.Split(err.Error(), "\n"), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("the list renders as\n%s", got)
	}
}

// TestEveryKindOfMistakeIsCollected: each parser goes on past a mistake,
// so two mistakes in the same place (two keys of one selector, two
// expectations, two measures, two attribute conditions, a regressions
// key and a builtin severity) are both reported.
func TestEveryKindOfMistakeIsCollected(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // prefixes, in order
	}{
		{"two bad keys of one selector", "measures:\n  - {name: m, root: {nam: a, kin: client}, read: b}\n",
			[]string{`f.yaml:2:22: unknown key "nam" (did you mean "name"?)`, `f.yaml:2:30: unknown key "kin" (did you mean "kind"?)`}},
		{"a bad kind and a bad status", "measures:\n  - {name: m, root: {kind: clent, status: eror}, read: b}\n",
			[]string{`f.yaml:2:28: kind "clent" (did you mean "client"?): want one of client, server, internal, producer, consumer`, `f.yaml:2:43: status "eror" (did you mean "error"?): want one of ok, error, unset`}},
		{"two measures, each with a mistake", "measures:\n  - {name: a, root: r}\n  - {name: b, read: x, expct: 1}\n",
			[]string{`f.yaml:2:5: measure "a" needs a read selector`, `f.yaml:3:5: measure "b" needs a root selector`, `f.yaml:3:24: unknown key "expct" (did you mean "expect"?)`}},
		{"two bad attribute conditions", "measures:\n  - name: m\n    read: b\n    root: {attributes: {k: {equal: v}, j: {regex: '(('}}}\n",
			[]string{`f.yaml:4:29: unknown key "equal" (did you mean "equals"?)`, `f.yaml:4:51: regex "((" is not a valid regular expression`}},
		{"two expectations of one rule", "rules:\n  - id: a\n    select: x\n    expect:\n      - {of: cont, op: \"==\", than: 1}\n      - {of: count, op: \"==\", than: 1, tolerence: 1}\n",
			[]string{`f.yaml:5:14: unknown measure "cont" (did you mean "count"?)`, `f.yaml:6:40: unknown key "tolerence" (did you mean "tolerance"?)`}},
		{"an expectation missing op and than", "rules:\n  - {id: a, select: x, expect: {of: count}}\n",
			[]string{`f.yaml:2:32: expectation needs op`, `f.yaml:2:32: expectation needs than`}},
		{"regressions and builtin", "regressions: {hit_rate_drop: 2, latency_ration: 2}\nbuiltin: {no-unexplained-misses: of}\n",
			[]string{`f.yaml:1:30: hit_rate_drop must be between 0 and 1`, `f.yaml:1:33: unknown key "latency_ration" (did you mean "latency_ratio"?)`, `f.yaml:2:34: builtin no-unexplained-misses: severity "of" (did you mean "off"?): want one of error, warning, off`}},
		{"a mistake in every section", "measures: {}\nrules: x\nregressions: [1]\nvocabulary: 1\n",
			[]string{`f.yaml:1:11: measures must be a list`, `f.yaml:2:8: rules must be a list`, `f.yaml:3:14: want a mapping`, `f.yaml:4:13: vocabulary must be a mapping`}},
		{"an empty rules list", "rules: []\n", []string{`f.yaml:1:8: rules is an empty list`}},
		{"a refused scope is not judged again", "rules:\n  - {id: a, scope: dmp, expect: {of: hit_rate, op: \">=\", than: 1}}\n",
			[]string{`f.yaml:2:20: scope "dmp" (did you mean "dump"?)`}},
		{"a refused selection is not judged again", "rules:\n  - {id: a, select: {nmae: x}, expect: {of: count, op: \">=\", than: 1}}\n",
			[]string{`f.yaml:2:22: unknown key "nmae" (did you mean "name"?)`}},
		{"a refused of: is not judged again", "rules:\n  - {id: a, select: x, expect: {of: [count], attribute: k, op: \">=\", than: 1}}\n",
			[]string{`f.yaml:2:37: of must be a single value`}},
		{"a bad id and a missing expect", "rules:\n  - {id: 'a b'}\n", []string{`f.yaml:2:5: rule needs expect`, `f.yaml:2:10: rule id "a b"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseGateConfig("f.yaml", []byte(tt.yaml))
			ces, ok := errors.AsType[ConfigErrors](err)
			if !ok {
				t.Fatalf("err = %v (%T), want ConfigErrors", err, err)
			}
			if len(ces) != len(tt.want) {
				t.Fatalf("%d mistakes, want %d:\n%v", len(ces), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(ces[i].Error(), w) {
					t.Errorf("mistake %d:\n got %s\nwant %s…", i+1, ces[i], w)
				}
			}
		})
	}
}

// TestValidNamesAreListedInFull: the list of measures is never clipped as
// if it were input ("…hits, m… (331 bytes)"). The list is whole; a
// file's own reads-per-request measures are in it; only a list past
// maxListedNames is cut, and it says how many it left out.
func TestValidNamesAreListedInFull(t *testing.T) {
	measures := func(n int) string {
		var b strings.Builder
		if n > 0 {
			b.WriteString("measures:\n")
		}
		for i := range n {
			fmt.Fprintf(&b, "  - {name: m%d, root: r, read: x}\n", i)
		}
		return b.String()
	}
	const rule = "rules:\n  - {id: a, scope: dump, expect: {of: nope, op: \"==\", than: 1}}\n"
	for _, n := range []int{0, 2, 100} {
		t.Run(fmt.Sprintf("%d measures", n), func(t *testing.T) {
			var rms []ReadMeasure
			for i := range n {
				rms = append(rms, ReadMeasure{Name: fmt.Sprintf("m%d", i)})
			}
			valid := append(SpanQuantities(), MeasureNames(rms)...)
			_, err := ParseGateConfig("f.yaml", []byte(measures(n)+rule))
			ce, ok := errors.AsType[*ConfigError](err)
			if !ok || len(ce.Valid) != len(valid) {
				t.Fatalf("err = %v, want a *ConfigError with %d valid names", err, len(valid))
			}
			shown := min(len(valid), maxListedNames)
			tail := ""
			if len(valid) > maxListedNames {
				tail = fmt.Sprintf(" and %d more", len(valid)-maxListedNames)
			}
			if want := "want one of " + strings.Join(valid[:shown], ", ") + tail; !strings.HasSuffix(err.Error(), want) {
				t.Errorf("err = %.600s…\nwant it to end %.300s…", err, want)
			}
			if strings.Contains(err.Error(), "bytes)") {
				t.Errorf("the list is clipped: %.600s", err)
			}
		})
	}
}

// TestThousandsOfMistakesPrintABoundedList: a file of 10,000 mistakes keeps
// them all in the list (callers can count and walk them) but renders the
// first maxShownErrors and how many more: a screenful, not a flood.
func TestThousandsOfMistakesPrintABoundedList(t *testing.T) {
	tests := []struct {
		mistakes  int
		wantLines int
		wantTail  string
	}{
		{maxShownErrors, maxShownErrors, ""},
		{maxShownErrors + 1, maxShownErrors + 1, "… and 1 more mistakes"},
		{10000, maxShownErrors + 1, "… and 9980 more mistakes"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.mistakes), func(t *testing.T) {
			var b strings.Builder
			b.WriteString("regressions:\n")
			for i := range tt.mistakes {
				fmt.Fprintf(&b, "  k%d: 1\n", i)
			}
			_, err := ParseGateConfig("many.yaml", []byte(b.String()))
			ces, ok := errors.AsType[ConfigErrors](err)
			if !ok || len(ces) != tt.mistakes {
				t.Fatalf("%d mistakes kept, want %d", len(ces), tt.mistakes)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != tt.wantLines {
				t.Fatalf("%d lines rendered, want %d", len(lines), tt.wantLines)
			}
			if last := lines[len(lines)-1]; tt.wantTail != "" && last != tt.wantTail {
				t.Errorf("last line %q, want %q", last, tt.wantTail)
			}
			if !strings.HasPrefix(lines[0], `many.yaml:2:3: unknown key "k0"`) {
				t.Errorf("first line %q", lines[0])
			}
		})
	}
}

// TestMistakesRenderNoControlCharacters: bytes from the file (in a key, a
// value, a regex, the file's name) never reach the output as control or
// format characters, and each mistake is one line however many newlines
// its input held.
func TestMistakesRenderNoControlCharacters(t *testing.T) {
	doc := "rules:\n" +
		"  - id: a\n    \"sev\\e]0;pwned\\a\": x\n" + // OSC retitle in a key
		"    scope: \"du\\u202emp\"\n" + // bidi override in a value
		"    select: {name_regex: \"\\e]0;x\\a((\"}\n" + // OSC in a bad regex, which the regexp error repeats raw
		"    expect: {of: \"hit\\nrate\", op: \"==\", than: 1}\n" // newline in a name
	_, err := ParseGateConfig("f\x1b[2J.yaml", []byte(doc))
	ces, ok := errors.AsType[ConfigErrors](err)
	if !ok || len(ces) != 4 {
		t.Fatalf("err = %q, want 4 mistakes", err)
	}
	out := err.Error()
	if n := strings.Count(out, "\n") + 1; n != len(ces) {
		t.Errorf("%d lines for %d mistakes:\n%s", n, len(ces), out)
	}
	for _, r := range strings.ReplaceAll(out, "\n", "") {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			t.Fatalf("control or format character %U in\n%q", r, out)
		}
	}
	for _, w := range []string{`f\x1b[2J.yaml:3:5:`, `\x1b]0;pwned\a`, `\u202e`, "`\\x1b]0;x\\x07((`", `hit\nrate`} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks the escape %s:\n%s", w, out)
		}
	}
}

// TestNearestName pins the "did you mean" boundaries: within a third of
// the name's length (at least one edit, at most two), a swap of
// neighbours counts one edit and wins a tie, an exact name or a long input
// suggests nothing.
func TestNearestName(t *testing.T) {
	ops := []string{"==", "!=", "<", "<=", ">", ">="}
	tests := []struct {
		s       string
		options []string
		want    string
	}{
		{"sevreity", ruleKeys, "severity"}, // a swap is one edit
		{"severty", ruleKeys, "severity"},  // a deletion
		{"sverty", ruleKeys, "severity"},   // two edits in six runes: the most
		{"svrty", ruleKeys, ""},            // three edits: too far
		{"=<", ops, "<="},                  // a swap beats "==" at the same distance
		{"=>", ops, ">="},                  // likewise beats "=="
		{"fo", expectationKeys, "of"},      // two runes: one edit
		{"ab", expectationKeys, ""},        // two runes, two edits from "of": too far
		{"id", ruleKeys, ""},               // exact: nothing to suggest
		{"hitt", []string{"hit", "key"}, "hit"},
		{strings.Repeat("severity", 9), ruleKeys, ""}, // past maxSuggestInput
		{"ménage", []string{"manège", "menage"}, "menage"},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			if got := NearestName(tt.s, tt.options); got != tt.want {
				t.Errorf("NearestName(%q) = %q, want %q", tt.s, got, tt.want)
			}
		})
	}
}

// TestEditDistance pins the optimal string alignment distance and its cap.
func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b  string
		limit int
		want  int
	}{
		{"", "", 5, 0},
		{"abc", "abc", 5, 0},
		{"abc", "acb", 5, 1},  // transposition
		{"abc", "ab", 5, 1},   // deletion
		{"abc", "abcd", 5, 1}, // insertion
		{"abc", "abd", 5, 1},  // substitution
		{"ca", "abc", 5, 3},   // OSA, not full Damerau (which says 2)
		{"kitten", "sitting", 5, 3},
		{"kitten", "sitting", 3, 3}, // capped at the limit
		{"a", "abcd", 3, 3},         // lengths differ by the limit: not compared
		{"é", "e", 5, 1},            // runes, not bytes
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b, tt.limit); got != tt.want {
			t.Errorf("editDistance(%q, %q, %d) = %d, want %d", tt.a, tt.b, tt.limit, got, tt.want)
		}
	}
}

// BenchmarkParseMistakes parses files of 1,000 and 10,000 mistakes (unknown
// keys with suggestions, unknown measures): ns/op per mistake should stay
// flat from one to the other, the collection being linear.
func BenchmarkParseMistakes(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		var sb strings.Builder
		sb.WriteString("rules:\n")
		for i := range n / 2 {
			fmt.Fprintf(&sb, "  - {id: r%d, selct: x, scope: dump, expect: {of: hit_rat, op: \"==\", than: 1}}\n", i)
		}
		data := []byte(sb.String())
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				_, err := ParseGateConfig("f.yaml", data)
				if ces, _ := errors.AsType[ConfigErrors](err); len(ces) != n {
					b.Fatalf("%d mistakes, want %d", len(ces), n)
				}
				_ = err.Error()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/mistake")
		})
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
