package rulefmt

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// goodConfig is a configuration using every measure key; the analyzer's
// fuzzers seed from the same file.
var goodConfig = func() string {
	data, err := os.ReadFile("testdata/mcptrace.yaml")
	if err != nil {
		panic(err)
	}
	return string(data)
}()

func TestParseConfigReadsMeasures(t *testing.T) {
	cf, err := ParseConfig("mcptrace.yaml", []byte(goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	if len(cf.Measures) != 2 {
		t.Fatalf("measures = %d, want 2", len(cf.Measures))
	}
	m := cf.Measures[0]
	if m.Name != "org_reads" || m.Root.Name != "mcp.request" || m.Read.Name != "db.query" || m.NotUnder == nil ||
		m.CompleteWhen == nil || m.Expect == nil || *m.Expect != 1 || m.Line != 3 || m.Description == "" {
		t.Errorf("first measure parsed as %+v", m)
	}
	if n := cf.Measures[1]; n.Expect != nil || n.NotUnder != nil || n.CompleteWhen != nil || n.Read.Kind != "client" {
		t.Errorf("second measure parsed as %+v", n)
	}
	cfg := Config{Measures: cf.Measures}
	if err := cfg.Validate(); err != nil {
		t.Errorf("a parsed config must validate: %v", err)
	}
	opts := cfg.IndexOptions()
	if !strings.Contains(strings.Join(opts.SpanAttrs, ","), "db.sql.table") {
		t.Errorf("index options %+v must keep db.sql.table", opts)
	}
}

func TestParseConfigErrorsNameFileLineAndColumn(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       string // the error's text, from the file name on
	}{
		{"unknown top-level key", "measure:\n  - name: x\n", "c.yaml:1:1: unknown key \"measure\" (did you mean \"measures\"?): want one of measures, rules, regressions, builtin, vocabulary"},
		{"a mistake in the gate's rules", "rules: {id: a}\n", "c.yaml:1:8: rules must be a list"},
		{"unknown measure key", "measures:\n  - name: x\n    root: a\n    read: b\n    expected: 1\n", "c.yaml:5:5: unknown key \"expected\""},
		{"bad regex", "measures:\n  - name: x\n    root: {name_regex: 'a(('}\n    read: b\n", "c.yaml:3:24: name_regex \"a((\" is not a valid regular expression"},
		{"missing read", "measures:\n  - name: x\n    root: a\n", "c.yaml:2:5: measure \"x\" needs a read selector"},
		{"missing name", "measures:\n  - root: a\n    read: b\n", "c.yaml:2:5: measure needs a name"},
		{"duplicate name", "measures:\n  - {name: x, root: a, read: b}\n  - {name: x, root: a, read: b}\n", "c.yaml:3:12: measure \"x\" already defined at line 2"},
		{"negative expect", "measures:\n  - {name: x, root: a, read: b, expect: -1}\n", "c.yaml:2:41: expect must be a whole number"},
		{"measures not a list", "measures: {name: x}\n", "c.yaml:1:11: measures must be a list"},
		{"yaml syntax", "measures:\n  - name: x\n   root: [\n", "c.yaml:3:4: invalid YAML: did not find expected '-' indicator"},
		{"tab indentation", "measures:\n  - name: x\n\troot: a\n", "c.yaml:3:1: invalid YAML: found a tab character"},
		{"yaml syntax on line 1", "measures: [\n", "c.yaml:1:11: invalid YAML:"},
		{"stray colon mid-line", "measures:\n  - name: x: y\n", "c.yaml:2:12: invalid YAML: mapping values are not allowed"},
		{"quote never closed", "measures:\n  - name: \"x\n    root: a\n", "c.yaml:2:11: invalid YAML: found unexpected end of stream"},
		// A line too long to search character by character (a prefix parse
		// each) keeps its line alone.
		{"a mistake on a line past maxColumnSearch", "measures: " + strings.Repeat("[", maxColumnSearch-10) + "\n", "c.yaml:1: invalid YAML:"},
		{"a mistake on a line of maxColumnSearch bytes", "measures: " + strings.Repeat("[", maxColumnSearch-11) + "\n", "c.yaml:1:11: invalid YAML:"},
		// A file too long to search keeps yaml.v3's line alone.
		{"a mistake in a file of maxLocateBytes", "a: b: c\n" + strings.Repeat("#", maxLocateBytes-9) + "\n", "c.yaml:1:5: invalid YAML: mapping values"},
		{"a mistake in a file past maxLocateBytes", "a: b: c\n" + strings.Repeat("#", maxLocateBytes-8) + "\n", "c.yaml:1: invalid YAML: mapping values"},
		{"multi-byte characters before the mistake", "measures:\n  - name: ééé: y\n", "c.yaml:2:14: invalid YAML: mapping values are not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("c.yaml", []byte(tt.yaml))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v, want a *ConfigError", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error\n  %s\nwant it to start with\n  %s", err, tt.want)
			}
		})
	}
}

// TestParseConfigRefusesAnEmptyFile: a file that says nothing is one
// mistake, the same from both parsers (so from analyze, check, rules and
// the connector), naming the file and wrapping ErrEmptyConfig; a file with
// one key is not empty.
func TestParseConfigRefusesAnEmptyFile(t *testing.T) {
	tests := []struct {
		name, yaml string
		empty      bool
	}{
		{"no bytes", "", true},
		{"only a comment", "# nothing yet\n", true},
		{"only blank lines", "\n  \n\n", true},
		{"an explicit null", "~\n", true},
		{"null spelled out", "null\n", true},
		{"an empty mapping", "{}\n", true},
		{"a document marker alone", "---\n", true},
		{"one key", "regressions: {excess_misses: 1}\n", false},
	}
	const want = "empty.yaml: empty configuration file: it holds none of measures, rules, regressions, builtin, vocabulary (for the built-in rules, give no configuration file)"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("empty.yaml", []byte(tt.yaml))
			_, gerr := ParseGateConfig("empty.yaml", []byte(tt.yaml))
			if !tt.empty {
				if err != nil || gerr != nil {
					t.Fatalf("not empty, refused: %v / %v", err, gerr)
				}
				return
			}
			for _, e := range []error{err, gerr} {
				if !errors.Is(e, ErrEmptyConfig) {
					t.Fatalf("error %v, want ErrEmptyConfig", e)
				}
				if e.Error() != want {
					t.Errorf("error\n  %s\nwant\n  %s", e, want)
				}
			}
		})
	}
}

func TestLoadConfigFileNamesAMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := LoadConfigFile(path)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v, want not-exist naming %s", err, path)
	}
	good := filepath.Join(t.TempDir(), "mcptrace.yaml")
	if err := os.WriteFile(good, []byte(goodConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if cf, err := LoadConfigFile(good); err != nil || cf.Path != good || len(cf.Measures) != 2 {
		t.Errorf("LoadConfigFile = %+v, %v", cf, err)
	}
}

func TestConfigValidate(t *testing.T) {
	root, _ := ParseSelectorString("a")
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"zero value is valid", Config{}, ""},
		{"unknown profile", Config{Profile: "fancy"}, "unknown profile"},
		{"negative TTL", Config{IdleTTL: -time.Second}, "idle TTL"},
		{"duplicate measure", Config{Measures: []ReadMeasure{{Name: "m", Root: root, Read: root}, {Name: "m", Root: root, Read: root}}}, "defined twice"},
		{"measure without selectors", Config{Measures: []ReadMeasure{{Name: "m"}}}, "root and read selectors are required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParseProfile(t *testing.T) {
	for _, s := range []string{"", "default", "acquire-on-miss", "semconv"} {
		if _, err := ParseProfile(s); err != nil {
			t.Errorf("ParseProfile(%q) = %v", s, err)
		}
	}
	if _, err := ParseProfile("Default"); !errors.Is(err, ErrUnknownProfile) {
		t.Errorf("ParseProfile(Default) = %v, want ErrUnknownProfile", err)
	}
}

// TestAnAliasIsNoValue pins that a configuration's values are written in
// place: an alias (*n after &n 3) or a merge key (<<) is refused at its
// line and column with a message naming it, not resolved. yaml.v3 would
// decode the alias to the anchored value; refusing it keeps a
// configuration's values where they are written and every message at the
// place it names. An anchor alone is no alias and reads.
func TestAnAliasIsNoValue(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		err       string // "" when accepted
	}{
		{"a measure's expect", "measures:\n  - {name: x, root: &n a, read: b, expect: 1}\n", ""},
		{"a measure's expect as an alias", "measures:\n  - {name: x, root: a, read: b, description: &n 1}\n  - {name: y, root: a, read: b, expect: *n}\n", "c.yaml:3:41: the alias *n: a configuration reads no YAML aliases or merge keys"},
		{"a selector as an alias", "rules:\n  - {id: a, scope: trace, select: &sel {name: x}, expect: {of: count, op: \">=\", than: 1}}\n  - {id: b, scope: trace, select: *sel, expect: {of: count, op: \">=\", than: 1}}\n", "c.yaml:3:35: the alias *sel: a configuration reads no YAML aliases or merge keys"},
		{"a merge key", "rules:\n  - {id: a, scope: trace, select: &sel {name: x}, expect: {of: count, op: \">=\", than: 1}}\n  - {id: b, scope: trace, select: {<<: *sel}, expect: {of: count, op: \">=\", than: 1}}\n", "c.yaml:3:36: the merge key <<: a configuration reads no YAML aliases or merge keys"},
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
