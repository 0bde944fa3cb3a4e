package rulefmt

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
)

// ErrEmptyConfig is wrapped by the error for a configuration file that
// holds nothing: no bytes, only comments, or an empty mapping. Every reader
// of the file format refuses it the same way (mcptrace analyze, check and
// rules with --config or a FILE, and the Collector connector's rules:),
// since an empty file is a failed write or a wrong path far more often than
// a wish for the built-in rules, and a gate that then silently judged the
// built-ins would pass for the wrong reason. The built-in rules are what
// a check applies when no file is given at all.
var ErrEmptyConfig = errors.New("empty configuration file")

// ConfigError is a configuration mistake at a place in a file: a YAML syntax
// error, an unknown key or name, a bad value or regular expression. Column
// is 0 when the place is not known that precisely (a YAML syntax error in a
// file too long to locate it, see locateBudget); Line is 0 for a mistake of
// the whole file.
type ConfigError struct {
	// File names the file; "" for a selector given on the command line.
	File string
	// Line and Column, 1-based, locate the mistake.
	Line, Column int
	// Msg says what is wrong, without the place, the suggestion or the
	// valid names.
	Msg string
	// Got, for an unknown name, is the name the file gave; Valid lists
	// every name the place takes, in full (the message lists them, and
	// suggests the nearest to Got when one is near: see DidYouMean).
	// Valid is shared with the parser's tables: callers must not modify it.
	Got   string
	Valid []string
	// Err, when set, is the sentinel the mistake is an instance of
	// (ErrEmptyConfig), for errors.Is.
	Err error
}

// Error renders the error as file:line:column: message, every byte that came
// from the file escaped (textfmt.SafeText), so nothing in a file reaches a
// terminal as a control sequence and one mistake stays on one line.
func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(textfmt.SafeText(e.File))
		b.WriteByte(':')
	}
	if e.Line > 0 {
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteByte(':')
		if e.Column > 0 {
			b.WriteString(strconv.Itoa(e.Column))
			b.WriteByte(':')
		}
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(textfmt.SafeText(e.Msg))
	if s := e.DidYouMean(); s != "" {
		fmt.Fprintf(&b, " (did you mean %s?)", textfmt.QuoteInput(s))
	}
	if len(e.Valid) > 0 {
		b.WriteString(": want one of ")
		b.WriteString(textfmt.SafeText(listNames(e.Valid)))
	}
	return b.String()
}

// Unwrap returns the sentinel the mistake is an instance of, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// DidYouMean returns the valid name nearest to Got when it is a near miss
// (see NearestName), "" otherwise. It is computed when asked, so a file
// with thousands of mistakes pays for the suggestions it shows only.
func (e *ConfigError) DidYouMean() string {
	if e.Got == "" || len(e.Valid) == 0 {
		return ""
	}
	return NearestName(e.Got, e.Valid)
}

// maxListedNames bounds the valid names one message lists: every fixed list
// of the format is far shorter (the measures a rule may name are the
// longest, 26 plus four per reads-per-request measure of the file), so the
// list is whole for any real file, while a file defining thousands of
// measures does not make each message a megabyte.
const maxListedNames = 200

// listNames joins names with commas, up to maxListedNames of them.
func listNames(names []string) string {
	if len(names) <= maxListedNames {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxListedNames], ", ") + fmt.Sprintf(" and %d more", len(names)-maxListedNames)
}

// ConfigErrors are every mistake found in one configuration file, in file
// order (line, then column), each with its file:line:column: what the
// parsers return, so one run reports them all, as Prometheus's rulefmt
// does. Callers branch with errors.As on ConfigErrors, or on *ConfigError
// for the first mistake.
type ConfigErrors []*ConfigError

// maxShownErrors bounds the mistakes Error renders: the first ones, then a
// count of the rest, so a file of ten thousand mistakes is a screenful.
// The list itself keeps them all.
const maxShownErrors = 20

// Error renders one mistake per line, the first maxShownErrors of them and
// then how many more there are.
func (es ConfigErrors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i == maxShownErrors {
			fmt.Fprintf(&b, "\n… and %d more mistakes", len(es)-maxShownErrors)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the mistakes, so errors.As finds the first *ConfigError
// and errors.Is any sentinel among them.
func (es ConfigErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// err returns es as an error, nil (untyped) when it holds none.
func (es ConfigErrors) err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// inFile returns err's mistakes placed in file and sorted in file order, as
// ConfigErrors; nil for nil. An error that is no *ConfigError is kept as a
// mistake of the whole file.
func inFile(file string, err error) error {
	if err == nil {
		return nil
	}
	var es ConfigErrors
	noter(&es, nil)(err)
	for _, e := range es {
		e.File = file
	}
	slices.SortStableFunc(es, func(a, b *ConfigError) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return es
}

// noter returns a function that adds an error's mistakes to errs: every
// *ConfigError of it (a ConfigErrors is flattened), or the error's text
// placed at n (the whole file when n is nil).
func noter(errs *ConfigErrors, n *yaml.Node) func(error) {
	return func(err error) {
		var ces ConfigErrors
		var ce *ConfigError
		switch {
		case err == nil:
		case errors.As(err, &ces):
			*errs = append(*errs, ces...)
		case errors.As(err, &ce):
			*errs = append(*errs, ce)
		case n != nil:
			*errs = append(*errs, nodeErrorf(n, "%s", err.Error()))
		default:
			*errs = append(*errs, &ConfigError{Msg: err.Error()})
		}
	}
}

// nodeErrorf is a mistake at n. String arguments are input from the file
// and are clipped (textfmt.ClipInput); the message is escaped when it is
// rendered.
func nodeErrorf(n *yaml.Node, format string, args ...any) *ConfigError {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = clipInput(s)
		}
	}
	return &ConfigError{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
}

// unknownName is the mistake of a name outside valid at n: what is what
// the name names ("key", "measure", "operator"), valid every name the
// place takes (listed in full, and searched for a suggestion).
func unknownName(n *yaml.Node, what, got string, valid []string) *ConfigError {
	e := nodeErrorf(n, "unknown %s %q", what, got)
	e.Got, e.Valid = got, valid
	return e
}

// clipInput shortens user input for an error message (textfmt.ClipInput).
func clipInput(s string) string { return textfmt.ClipInput(s) }

// maxSuggestInput bounds the names compared for a suggestion: a near miss
// of a name of the format is as short as the name, so longer input is
// never near, and the comparison's cost (the product of the lengths) stays
// bounded however long a key in the file is.
const maxSuggestInput = 64

// NearestName returns the name in options nearest to s by edit distance
// (optimal string alignment: insertions, deletions, substitutions and
// transpositions of neighbours, the typos people make), when it is within
// a third of s's length (at least one edit, at most two); "" when none is
// that near. Of options equally near, one with the same letters as s (a
// transposition, "=<" for "<=") goes before one with another letter ("=="),
// then the first. It is the one notion of a near name: the configuration's
// and rules' errors suggest through it, and so do the CLI's flags and
// their values.
func NearestName(s string, options []string) string {
	if len(s) > maxSuggestInput {
		return ""
	}
	limit := min(2, max(1, utf8.RuneCountInString(s)/3))
	best, bestD, bestSame := "", limit+1, false
	for _, o := range options {
		if o == s {
			continue
		}
		d := editDistance(s, o, bestD+1)
		if d > limit {
			continue
		}
		same := sameLetters(s, o)
		if d < bestD || (d == bestD && same && !bestSame) {
			best, bestD, bestSame = o, d, same
		}
	}
	return best
}

// sameLetters reports whether a and b hold the same runes, in any order.
func sameLetters(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	slices.Sort(ra)
	slices.Sort(rb)
	return slices.Equal(ra, rb)
}

// editDistance is the optimal string alignment distance of a and b in
// runes, or limit when it is at least limit. A pair whose lengths differ by
// limit or more is never compared, nor a name past maxSuggestInput bytes,
// so the cost is bounded by the names' lengths. Hand-written rather than
// a library: agnivade/levenshtein, the well-kept one, has no
// transpositions (a swapped pair, "sevreity", is two edits there) and no
// cap, and the function is twenty lines.
func editDistance(a, b string, limit int) int {
	if len(a) > maxSuggestInput || len(b) > maxSuggestInput {
		return limit
	}
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d >= limit || -d >= limit {
		return limit
	}
	// rows i-2, i-1 and i of the dynamic programme.
	prev2, prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(rb)], limit)
}

// nameList formats as the names joined by commas (listNames): a list of the
// format's own names in a message, which nodeErrorf does not clip as it
// clips input.
type nameList []string

// String joins the names.
func (l nameList) String() string { return listNames(l) }

// didYouMean returns ` (did you mean "x"?)` for the option nearest to s
// (NearestName), "" when none is near: for messages that are no
// *ConfigError, such as an unknown --profile.
func didYouMean(s string, options []string) string {
	if best := NearestName(s, options); best != "" {
		return fmt.Sprintf(" (did you mean %s?)", textfmt.QuoteInput(best))
	}
	return ""
}
