package engine

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/selector"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// executionsDump indexes n executions, each one invocation on a session of
// its own (so the value table grows with n), finished as `check` sees it.
func executionsDump(t testing.TB, n int) *index.Index {
	t.Helper()
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "gateway")
	for i := range n {
		d.invocation(ss, lease{trace: uint64(i + 1), end: time.Millisecond, key: "k1", hit: false, reason: spans.MissCold,
			handshake: true, session: fmt.Sprintf("sess-%d", i)})
	}
	cfg := rulefmt.Config{}.WithDefaults()
	idx := index.New(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rulefmt.BuiltinRules(cfg))))
	idx.Add(d.td)
	idx.Finish()
	return idx
}

// The rules look values up a bounded number of times per rule, never once
// per scope, and a finished index sorts its value table for that at most
// once: a lookup per scope that scanned the table would make `check`
// quadratic in executions. Operation counts, not times.
func TestRulesLookValuesUpPerRuleNotPerScope(t *testing.T) {
	for _, n := range []int{100, 2000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			idx := executionsDump(t, n)
			if idx.ValIdx != nil {
				t.Fatal("a finished index kept its value map: the test would not exercise the lookup")
			}
			cfg := rulefmt.Config{}.WithDefaults()
			rules := rulefmt.BuiltinRules(cfg)
			if _, err := ObserveRules(asDump(idx), cfg, rules, ObserveOptions{}); err != nil {
				t.Fatal(err)
			}
			l := idx.ValLookup
			if max := int64(4 * len(rules)); l.Lookups > max {
				t.Errorf("%d value lookups for %d rules over %d executions: more than %d, a lookup per scope", l.Lookups, len(rules), n, max)
			}
			if l.Sorted > int64(len(idx.Vals)) {
				t.Errorf("the value table (%d values) was sorted %d entries' worth: rebuilt per lookup", len(idx.Vals), l.Sorted)
			}
			// The lookup answers what the table holds.
			for _, v := range []string{"sess-0", fmt.Sprintf("sess-%d", n-1), spans.MissCold, "true"} {
				if id := idx.LookupValue(v); id < 0 || idx.Vals[id] != v {
					t.Errorf("lookupValue(%q) = %d, want the id of %q", v, id, v)
				}
			}
			if id := idx.LookupValue("no span carries this"); id != -1 {
				t.Errorf("lookupValue of a value no span carries = %d, want -1", id)
			}
		})
	}
}

// A regex is matched once per distinct span name, whatever the number of
// spans carrying it, and a regex whose program exceeds rulefmt.MaxRegexInsts is
// refused before any matching, naming the regex and its size (a legal
// 3000-state regex over 80 long names would run for minutes).
func TestSelectorRegexWorkIsBoundedBeforeMatching(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "w")
	long := strings.Repeat("ab", 10_000)
	for i := range 80 {
		d.add(ss, sp{trace: 1, name: fmt.Sprintf("call.%s.%d", long, i), end: time.Millisecond,
			attrs: []any{"db.sql.table", long + fmt.Sprint(i)}})
	}
	idx := index.New(rulefmt.IndexOptions{SpanAttrs: []string{"db.sql.table"}})
	idx.Add(d.td)
	heavy := `(?:[a-z]?){1000}(?:[a-z]?){1000}(?:[a-z]?){1000}Q`
	tests := []struct {
		name string
		sel  rulefmt.Selector
		ok   bool
	}{
		{"a light name regex", rulefmt.Selector{NameRegex: regexp.MustCompile(`^call\.`)}, true},
		{"a heavy name regex", rulefmt.Selector{NameRegex: regexp.MustCompile(heavy)}, false},
		{"a heavy attribute regex", rulefmt.Selector{Attributes: []rulefmt.AttrMatch{{Key: "db.sql.table", Op: rulefmt.OpRegex, Regex: regexp.MustCompile(heavy)}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := selector.Compile(idx, tt.sel)
			if tt.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				var n int
				for _, i := range idx.Order {
					if m.Match(i) {
						n++
					}
				}
				if n != 80 {
					t.Errorf("matched %d spans, want 80", n)
				}
				return
			}
			if !errors.Is(err, rulefmt.ErrRegexTooCostly) {
				t.Fatalf("err = %v, want ErrRegexTooCostly", err)
			}
			for _, want := range []string{"instructions", "limit of 1000"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not say %q: %v", want, err)
				}
			}
		})
	}
}

// The regex bound is a property of the program alone, pinned at its edge: a
// program of exactly rulefmt.MaxRegexInsts instructions is accepted, one more is
// refused, and the dump's size plays no part (a light regex is never refused
// however many distinct strings it meets).
func TestRegexBudgetIsTheProgramSizeAtItsEdge(t *testing.T) {
	// Find the repetition count n whose program first passes the limit.
	n := 1
	for rulefmt.RegexInsts(regexp.MustCompile(fmt.Sprintf(`(?:a?){%d}`, n))) <= rulefmt.MaxRegexInsts {
		n++
	}
	over := regexp.MustCompile(fmt.Sprintf(`(?:a?){%d}`, n))
	under := regexp.MustCompile(fmt.Sprintf(`(?:a?){%d}`, n-1))
	// Pad the program that is just under to exactly the limit when the
	// repetition steps by more than one instruction.
	for pad := ""; ; pad += "b" {
		re := regexp.MustCompile(fmt.Sprintf(`(?:a?){%d}%s`, n-1, pad))
		if rulefmt.RegexInsts(re) > rulefmt.MaxRegexInsts {
			break
		}
		under = re
	}
	if got := rulefmt.RegexInsts(under); got != rulefmt.MaxRegexInsts {
		t.Fatalf("could not build a program of exactly %d instructions (got %d)", rulefmt.MaxRegexInsts, got)
	}
	if err := rulefmt.CheckRegexBudget(under, "name_regex"); err != nil {
		t.Errorf("a program of exactly the limit was refused: %v", err)
	}
	if err := rulefmt.CheckRegexBudget(over, "name_regex"); !errors.Is(err, rulefmt.ErrRegexTooCostly) {
		t.Errorf("a program over the limit (%d instructions) was accepted: %v", rulefmt.RegexInsts(over), err)
	}
	// A regex within the limit, over distinct names whose bytes times its
	// program far exceed what any per-dump budget would allow (the earlier
	// rule refused instructions x bytes > 2^29): accepted, and matched.
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "w")
	long := strings.Repeat("x", 1<<16)
	for i := range 16 {
		d.add(ss, sp{trace: 1, name: fmt.Sprintf("call.%d.%s", i, long), end: time.Millisecond})
	}
	idx := index.New(rulefmt.IndexOptions{})
	idx.Add(d.td)
	anchored := regexp.MustCompile(fmt.Sprintf(`^nomatch(?:a?){%d}`, (n-1)*2/3))
	if insts, bytes := rulefmt.RegexInsts(anchored), 16*(1<<16); int64(insts)*int64(bytes) <= 1<<29 {
		t.Fatalf("the case is too small to pin size independence: %d instructions x %d bytes", insts, bytes)
	}
	if _, err := selector.Compile(idx, rulefmt.Selector{NameRegex: anchored}); err != nil {
		t.Errorf("a regex within the limit over 1 MiB of names was refused: %v", err)
	}
}
