package analyze

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/spans"
)

// executionsDump indexes n executions, each one invocation on a session of
// its own (so the value table grows with n), finished as `check` sees it.
func executionsDump(t testing.TB, n int) *Index {
	t.Helper()
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "gateway")
	for i := range n {
		d.invocation(ss, lease{trace: uint64(i + 1), end: time.Millisecond, key: "k1", hit: false, reason: spans.MissCold,
			handshake: true, session: fmt.Sprintf("sess-%d", i)})
	}
	cfg := Config{}.withDefaults()
	idx := NewIndex(MergeIndexOptions(cfg.IndexOptions(), RulesIndexOptions(BuiltinRules(cfg))))
	idx.Add(d.td)
	idx.finish()
	return idx
}

// The rules look values up a bounded number of times per rule, never once
// per scope, and a finished index sorts its value table for that at most
// once: a lookup per scope that scanned the table made `check` quadratic in
// executions (issue 24). Operation counts, not times.
func TestRulesLookValuesUpPerRuleNotPerScope(t *testing.T) {
	for _, n := range []int{100, 2000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			idx := executionsDump(t, n)
			if idx.valIdx != nil {
				t.Fatal("a finished index kept its value map: the test would not exercise the lookup")
			}
			cfg := Config{}.withDefaults()
			rules := BuiltinRules(cfg)
			if _, err := ObserveRules(idx, cfg, rules, ObserveOptions{}); err != nil {
				t.Fatal(err)
			}
			l := idx.valLookup
			if max := int64(4 * len(rules)); l.lookups > max {
				t.Errorf("%d value lookups for %d rules over %d executions: more than %d, a lookup per scope", l.lookups, len(rules), n, max)
			}
			if l.sorted > int64(len(idx.vals)) {
				t.Errorf("the value table (%d values) was sorted %d entries' worth: rebuilt per lookup", len(idx.vals), l.sorted)
			}
			// The lookup answers what the table holds.
			for _, v := range []string{"sess-0", fmt.Sprintf("sess-%d", n-1), spans.MissCold, "true"} {
				if id := idx.lookupValue(v); id < 0 || idx.vals[id] != v {
					t.Errorf("lookupValue(%q) = %d, want the id of %q", v, id, v)
				}
			}
			if id := idx.lookupValue("no span carries this"); id != -1 {
				t.Errorf("lookupValue of a value no span carries = %d, want -1", id)
			}
		})
	}
}

// A regex is matched once per distinct span name, whatever the number of
// spans carrying it, and a regex whose program times the bytes of the
// names it would be matched against exceeds maxRegexWork is refused before
// any matching, naming the regex and the sizes (issue 24: a legal
// 3000-state regex over 80 long names ran for minutes).
func TestSelectorRegexWorkIsBoundedBeforeMatching(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "w")
	long := strings.Repeat("ab", 10_000)
	for i := range 80 {
		d.add(ss, sp{trace: 1, name: fmt.Sprintf("call.%s.%d", long, i), end: time.Millisecond,
			attrs: []any{"db.sql.table", long + fmt.Sprint(i)}})
	}
	idx := NewIndex(IndexOptions{SpanAttrs: []string{"db.sql.table"}})
	idx.Add(d.td)
	heavy := `(?:[a-z]?){1000}(?:[a-z]?){1000}(?:[a-z]?){1000}Q`
	tests := []struct {
		name string
		sel  Selector
		ok   bool
	}{
		{"a light name regex", Selector{NameRegex: regexp.MustCompile(`^call\.`)}, true},
		{"a heavy name regex", Selector{NameRegex: regexp.MustCompile(heavy)}, false},
		{"a heavy attribute regex", Selector{Attributes: []AttrMatch{{Key: "db.sql.table", Op: OpRegex, Regex: regexp.MustCompile(heavy)}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := idx.compile(tt.sel)
			if tt.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				var n int
				for _, i := range idx.order {
					if m.match(i) {
						n++
					}
				}
				if n != 80 {
					t.Errorf("matched %d spans, want 80", n)
				}
				return
			}
			if !errors.Is(err, ErrRegexTooCostly) {
				t.Fatalf("err = %v, want ErrRegexTooCostly", err)
			}
			for _, want := range []string{"instructions", "80", "steps"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not say %q: %v", want, err)
				}
			}
		})
	}
}
