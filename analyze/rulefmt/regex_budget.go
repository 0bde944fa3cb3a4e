package rulefmt

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// MaxRegexInstsPerFile bounds the compiled programs of every regex of one
// configuration file together, as MaxRegexInsts bounds one. Each selector
// matches its regex once per distinct span name or attribute value it
// meets (and the streaming engine once per batch), in steps of at most its
// program's instructions per byte: so the file's regexes together cost at
// most their summed instructions per byte of every string they run on,
// whatever the number of rules. Per-regex alone, 24 regexes just under
// MaxRegexInsts cost 24 times one (over 20 s on 80 span names of 1 KiB).
// 4000 is four regexes at the single limit, or a hundred ordinary ones of
// 40 instructions; the built-in vocabularies' and rules' regexes, which
// run beside a file's (148 instructions all together), are held under a
// sixteenth of it by a test.
const MaxRegexInstsPerFile = 4000

// ErrRegexBudget is wrapped by the error for a configuration file whose
// regexes together compile past MaxRegexInstsPerFile.
var ErrRegexBudget = errors.New("regex budget of the file exceeded")

// regexSite is one selector of a file that may hold regexes, with what
// owns it (a rule, a measure, the vocabulary) for the error.
type regexSite struct {
	owner string
	sel   *Selector
}

// checkRegexBudget adds up the programs of every regex of the file's
// selectors in file order and fails, at the selector where the sum first
// passes MaxRegexInstsPerFile, naming its owner, the sum and the budget.
func checkRegexBudget(gc *GateConfig) error {
	sites := gc.regexSites()
	slices.SortStableFunc(sites, func(a, b regexSite) int {
		return cmp.Or(cmp.Compare(a.sel.Line, b.sel.Line), cmp.Compare(a.sel.Column, b.sel.Column))
	})
	total := 0
	for _, s := range sites {
		n := s.sel.regexInsts()
		total += n
		if total > MaxRegexInstsPerFile {
			return &ConfigError{Line: s.sel.Line, Column: s.sel.Column, Err: ErrRegexBudget,
				Msg: fmt.Sprintf("%v: %s: this selector's regexes (%d instructions) bring the file's regexes to %d instructions, over the budget of %d for all the regexes of one file (matching costs up to that many steps per byte of every distinct span name or value): simplify or anchor them, or replace counted repetitions by * or +",
					ErrRegexBudget, s.owner, n, total, MaxRegexInstsPerFile)}
		}
	}
	return nil
}

// regexInsts is the summed program size of s's regexes, 0 without any.
func (s *Selector) regexInsts() int {
	n := 0
	if s.NameRegex != nil {
		n += RegexInsts(s.NameRegex)
	}
	for _, list := range [][]AttrMatch{s.Attributes, s.Resource} {
		for _, m := range list {
			if m.Op == OpRegex && m.Regex != nil {
				n += RegexInsts(m.Regex)
			}
		}
	}
	return n
}

// regexSites returns every selector of the file: its measures', its
// rules' (scope, selection, expectations, complete_when) and its
// vocabulary's.
func (gc *GateConfig) regexSites() []regexSite {
	var out []regexSite
	add := func(owner string, s *Selector) {
		if s != nil {
			out = append(out, regexSite{owner, s})
		}
	}
	addSpan := func(owner string, s *SpanSelector) {
		if s != nil {
			add(owner, &s.Selector)
			add(owner, s.Under)
			add(owner, s.NotUnder)
		}
	}
	for i := range gc.Measures {
		m := &gc.Measures[i]
		owner := "measure " + strconv.Quote(clipInput(m.Name))
		add(owner, &m.Root)
		add(owner, &m.Read)
		add(owner, m.NotUnder)
		add(owner, m.CompleteWhen)
	}
	for i := range gc.Rules {
		r := &gc.Rules[i]
		owner := "rule " + strconv.Quote(clipInput(r.ID))
		add(owner, r.Scope.Root)
		addSpan(owner, r.Select)
		add(owner, r.CompleteWhen)
		for j := range r.Expect {
			addSpan(owner, r.Expect[j].Select)
		}
	}
	if gc.Vocabulary != nil {
		for _, s := range gc.Vocabulary.selectors() {
			add("vocabulary", s)
		}
	}
	return out
}
