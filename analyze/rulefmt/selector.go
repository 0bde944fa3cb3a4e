package rulefmt

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"
)

// MatchOp is how an [AttrMatch] compares an attribute.
type MatchOp int

// The attribute comparisons a selector offers.
const (
	// OpEquals holds when the attribute is present with exactly Value.
	OpEquals MatchOp = iota
	// OpNotEquals holds when the attribute is absent or differs from Value.
	OpNotEquals
	// OpRegex holds when the attribute is present and Regex matches it.
	OpRegex
	// OpExists holds when the attribute is present, whatever its value.
	OpExists
	// OpAbsent holds when the attribute is absent (YAML "exists: false").
	OpAbsent
)

// String returns the YAML spelling of the operator.
func (op MatchOp) String() string {
	switch op {
	case OpEquals:
		return "equals"
	case OpNotEquals:
		return "not_equals"
	case OpRegex:
		return "regex"
	case OpExists:
		return "exists"
	case OpAbsent:
		return "absent"
	}
	return "MatchOp(" + strconv.Itoa(int(op)) + ")"
}

// AttrMatch is one condition on a span or resource attribute. Values compare
// as OpenTelemetry's AsString text: a boolean is true or false, an integer
// its decimal digits.
type AttrMatch struct {
	Key   string
	Op    MatchOp
	Value string         // for OpEquals and OpNotEquals
	Regex *regexp.Regexp // for OpRegex
}

// Selector picks spans by name, attributes, resource attributes, kind and
// status; every condition given must hold. It is the one span selector of
// mcptrace's YAML files (reads-per-request measures, the execution root, and
// the CI gate's rules), written as a mapping:
//
//	name: plugin.mcp.invoke          # or name_regex: '^plugin\.mcp\.'
//	kind: client                     # client|server|internal|producer|consumer
//	status: error                    # ok|error|unset
//	attributes:
//	  mcp.tool.name: select_workspace           # equals
//	  error.type: {not_equals: tool_error}
//	  gen_ai.tool.name: {regex: '^get_'}
//	  mcp.session.id: {exists: true}
//	resource:
//	  service.name: worker
//
// The zero Selector matches every span; the parsers refuse it, since a
// selector that matches everything is always a mistake in a file.
type Selector struct {
	// Name, when set, is the exact span name.
	Name string
	// NameRegex, when set, must match the span name.
	NameRegex *regexp.Regexp
	// Attributes are conditions on span attributes, sorted by key.
	Attributes []AttrMatch
	// Resource are conditions on resource attributes, sorted by key.
	Resource []AttrMatch
	// Kind, when set, is the span kind: client, server, internal, producer
	// or consumer.
	Kind string
	// Status, when set, is the status code: ok, error or unset.
	Status string
	// Calls, when set, matches only the spans the analysis's vocabulary
	// reads as tool calls, whoever wrote them: the built-in session rules
	// select calls so, and judge OpenLLMetry's `<tool>.tool` spans or a
	// configured writer's as they judge ours. Only a rule's selectors take
	// it (the vocabulary stage is what knows the calls); the file format
	// has no key for it.
	Calls bool
	// Line and Column locate the selector in its file (0 when built in code).
	Line, Column int
}

// Locate names where s sits in its file in err, an error found only when
// s is compiled against a dump (an attribute the dump did not keep, a
// regular expression out of budget, a cancellation), so a user can find
// the selector to change.
// A selector built in code (line 0) has no place to name: err is returned
// as it is. The wrapped error stays err (errors.Is).
func (s Selector) Locate(err error) error {
	if s.Line > 0 {
		return fmt.Errorf("selector at line %d, column %d: %w", s.Line, s.Column, err)
	}
	return err
}

// SpanKind returns the OTLP span kind s selects and true, false when s
// selects any kind (or a name ParseSelector would have refused).
func (s Selector) SpanKind() (ptrace.SpanKind, bool) {
	k, ok := spanKinds[s.Kind]
	return k, ok
}

// StatusCode returns the OTLP status code s selects and true, false when s
// selects any status.
func (s Selector) StatusCode() (ptrace.StatusCode, bool) {
	c, ok := statusCodes[s.Status]
	return c, ok
}

// spanKinds maps selector kind names to OTLP span kinds.
var spanKinds = map[string]ptrace.SpanKind{
	"internal": ptrace.SpanKindInternal,
	"server":   ptrace.SpanKindServer,
	"client":   ptrace.SpanKindClient,
	"producer": ptrace.SpanKindProducer,
	"consumer": ptrace.SpanKindConsumer,
}

// statusCodes maps selector status names to OTLP status codes.
var statusCodes = map[string]ptrace.StatusCode{
	"unset": ptrace.StatusCodeUnset,
	"ok":    ptrace.StatusCodeOk,
	"error": ptrace.StatusCodeError,
}

// IsZero reports whether s has no condition at all (and so matches every
// span).
func (s Selector) IsZero() bool {
	return s.Name == "" && s.NameRegex == nil && len(s.Attributes) == 0 &&
		len(s.Resource) == 0 && s.Kind == "" && s.Status == "" && !s.Calls
}

// String renders s compactly for reports and messages, for instance
// name=plugin.mcp.invoke kind=client attributes[error.type]!=tool_error.
func (s Selector) String() string {
	var parts []string
	if s.Calls {
		parts = append(parts, "(the vocabulary's tool calls)")
	}
	if s.Name != "" {
		parts = append(parts, "name="+s.Name)
	}
	if s.NameRegex != nil {
		parts = append(parts, "name=~"+s.NameRegex.String())
	}
	for _, group := range []struct {
		label string
		ms    []AttrMatch
	}{{"attributes", s.Attributes}, {"resource", s.Resource}} {
		for _, m := range group.ms {
			p := group.label + "[" + m.Key + "]"
			switch m.Op {
			case OpEquals:
				p += "=" + m.Value
			case OpNotEquals:
				p += "!=" + m.Value
			case OpRegex:
				p += "=~" + m.Regex.String()
			case OpExists:
				p += " exists"
			case OpAbsent:
				p += " absent"
			}
			parts = append(parts, p)
		}
	}
	if s.Kind != "" {
		parts = append(parts, "kind="+s.Kind)
	}
	if s.Status != "" {
		parts = append(parts, "status="+s.Status)
	}
	if len(parts) == 0 {
		return "(any span)"
	}
	return strings.Join(parts, " ")
}

// SpanAttributeKeys returns the span attribute keys s reads, so an analyze.Dump
// can keep them.
func (s Selector) SpanAttributeKeys() []string { return matchKeys(s.Attributes) }

// ResourceAttributeKeys returns the resource attribute keys s reads.
func (s Selector) ResourceAttributeKeys() []string { return matchKeys(s.Resource) }

func matchKeys(ms []AttrMatch) []string {
	keys := make([]string, 0, len(ms))
	for _, m := range ms {
		keys = append(keys, m.Key)
	}
	return keys
}

// UnmarshalYAML decodes a selector mapping, so a Selector can sit in any
// struct decoded by yaml.v3. Errors are *ConfigError with the line and column
// (the caller adds the file name).
func (s *Selector) UnmarshalYAML(n *yaml.Node) error {
	sel, err := ParseSelector(n)
	if err != nil {
		return err
	}
	*s = sel
	return nil
}

// selectorKeys are the keys of a selector mapping; spanSelectorKeys those
// of a rule's selection, which may also say under and not_under.
var (
	selectorKeys     = []string{"name", "name_regex", "attributes", "resource", "kind", "status"}
	spanSelectorKeys = append(slices.Clone(selectorKeys), "under", "not_under")
	kindNames        = []string{"client", "server", "internal", "producer", "consumer"}
	statusNames      = []string{"ok", "error", "unset"}
)

// ParseSelector parses a selector from its YAML node: a mapping as documented
// on [Selector], or a plain scalar, shorthand for an exact span name. Every
// mistake of a mapping is returned, as ConfigErrors naming the line and
// column of each offending node; a node that is no selector at all is one
// *ConfigError.
func ParseSelector(n *yaml.Node) (Selector, error) {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		if n.Value == "" {
			return Selector{}, nodeErrorf(n, "empty selector: give a span name or a mapping")
		}
		return Selector{Name: n.Value, Line: n.Line, Column: n.Column}, nil
	}
	if n.Kind != yaml.MappingNode {
		return Selector{}, nodeErrorf(n, "selector must be a span name or a mapping of %s", nameList(selectorKeys))
	}
	return parseSelector(n, selectorKeys)
}

// parseSelector parses a selector mapping; allowed are the keys an unknown
// key's error lists (a rule's selection takes under and not_under too, read
// before).
func parseSelector(n *yaml.Node, allowed []string) (Selector, error) {
	sel := Selector{Line: n.Line, Column: n.Column}
	var errs ConfigErrors
	note := noter(&errs, n)
	eachKeyAll(n, allowed, note, func(key string, _, v *yaml.Node) { note(sel.key(key, v)) })
	switch {
	case len(errs) > 0:
	case sel.Name != "" && sel.NameRegex != nil:
		note(nodeErrorf(n, "give name or name_regex, not both"))
	case sel.IsZero():
		note(nodeErrorf(n, "empty selector matches every span: give name, name_regex, attributes, resource, kind or status"))
	}
	if len(errs) > 0 {
		return Selector{}, errs
	}
	return sel, nil
}

// key reads one key of a selector mapping into s.
func (s *Selector) key(key string, v *yaml.Node) error {
	switch key {
	case "name":
		name, err := scalarString(v, "name")
		if err == nil && name == "" {
			err = nodeErrorf(v, "name must not be empty")
		}
		s.Name = name
		return err
	case "name_regex":
		re, err := scalarRegex(v, "name_regex")
		s.NameRegex = re
		return err
	case "attributes":
		ms, err := parseAttrMatches(v, key)
		s.Attributes = ms
		return err
	case "resource":
		ms, err := parseAttrMatches(v, key)
		s.Resource = ms
		return err
	case "kind":
		return oneOf(v, "kind", kindNames, &s.Kind)
	case "status":
		return oneOf(v, "status", statusNames, &s.Status)
	}
	return nil
}

// oneOf reads into dst a single value that must be one of valid.
func oneOf(v *yaml.Node, what string, valid []string, dst *string) error {
	s, err := scalarString(v, what)
	if err != nil {
		return err
	}
	if !slices.Contains(valid, s) {
		e := nodeErrorf(v, "%s %q", what, s)
		e.Got, e.Valid = s, valid
		return e
	}
	*dst = s
	return nil
}

// ParseSelectorString parses a selector written on a command line: either a
// span name (plugin.mcp.invoke) or a YAML flow mapping
// ({name_regex: '^exec', resource: {service.name: worker}}).
func ParseSelectorString(s string) (Selector, error) {
	if strings.TrimSpace(s) == "" {
		return Selector{}, &ConfigError{Msg: "empty selector: give a span name or a mapping"}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return Selector{}, yamlError("", []byte(s), err)
	}
	if err := checkConfigDepth("", &doc); err != nil {
		return Selector{}, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return Selector{}, &ConfigError{Line: 1, Column: 1, Msg: "want one span name or one mapping"}
	}
	return ParseSelector(doc.Content[0])
}

// parseAttrMatches parses the attributes or resource mapping of a selector:
// key: scalar (equals) or key: {equals|not_equals|regex|exists: ...}. Every
// mistake is returned.
func parseAttrMatches(n *yaml.Node, what string) ([]AttrMatch, error) {
	if n.Kind != yaml.MappingNode {
		return nil, nodeErrorf(n, "%s must be a mapping of attribute key to value or {equals|not_equals|regex|exists: ...}", what)
	}
	var ms []AttrMatch
	var errs ConfigErrors
	note := noter(&errs, n)
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode || k.Value == "":
			note(nodeErrorf(k, "%s key must be a non-empty attribute name", what))
		case seen[k.Value]:
			note(nodeErrorf(k, "%s key %q given twice", what, k.Value))
		default:
			seen[k.Value] = true
			got, err := parseAttrMatch(k.Value, v, what)
			note(err)
			ms = append(ms, got...)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Key < ms[j].Key })
	return ms, nil
}

// matchOps are the keys of an attribute condition mapping.
var matchOps = []string{"equals", "not_equals", "regex", "exists"}

// parseAttrMatch parses the conditions on one attribute: a scalar (equals)
// or a mapping of matchOps.
func parseAttrMatch(key string, v *yaml.Node, what string) ([]AttrMatch, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return nil, nodeErrorf(v, "%s %q has no value: give a value or {exists: true}", what, key)
		}
		return []AttrMatch{{Key: key, Op: OpEquals, Value: v.Value}}, nil
	case yaml.MappingNode:
	default:
		return nil, nodeErrorf(v, "%s %q: want a value or {equals|not_equals|regex|exists: ...}", what, key)
	}
	var ms []AttrMatch
	err := eachKey(v, matchOps, func(op string, _, ov *yaml.Node) error {
		m, err := parseMatchOp(key, op, ov)
		if err == nil {
			ms = append(ms, m)
		}
		return err
	})
	if err == nil && len(ms) == 0 {
		err = nodeErrorf(v, "%s %q: give one of equals, not_equals, regex, exists", what, key)
	}
	return ms, err
}

// parseMatchOp parses one condition op: ov on the attribute key.
func parseMatchOp(key, op string, ov *yaml.Node) (AttrMatch, error) {
	switch op {
	case "equals", "not_equals":
		s, err := scalarString(ov, op)
		m := AttrMatch{Key: key, Op: OpEquals, Value: s}
		if op == "not_equals" {
			m.Op = OpNotEquals
		}
		return m, err
	case "regex":
		re, err := scalarRegex(ov, "regex")
		return AttrMatch{Key: key, Op: OpRegex, Regex: re}, err
	}
	var b bool
	if ov.Kind != yaml.ScalarNode || ov.Decode(&b) != nil {
		return AttrMatch{}, nodeErrorf(ov, "exists must be true or false")
	}
	m := AttrMatch{Key: key, Op: OpExists}
	if !b {
		m.Op = OpAbsent
	}
	return m, nil
}

// eachKey walks a mapping node and calls f for each pair whose key is one
// of allowed. It goes on past a mistake, so one run reports them all: a key
// outside allowed (with the valid keys and the nearest one), a repeated
// key, and every error f returns are collected and returned together as
// ConfigErrors; nil when there are none. A node that is no mapping is one
// mistake.
func eachKey(n *yaml.Node, allowed []string, f func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return nodeErrorf(n, "want a mapping with keys %s", nameList(allowed))
	}
	var errs ConfigErrors
	note := noter(&errs, n)
	eachKeyAll(n, allowed, note, func(key string, k, v *yaml.Node) { note(f(key, k, v)) })
	return errs.err()
}

// eachKeyAll walks a mapping like eachKey, handing its mistakes to note as
// they are found: an unknown key (with the valid keys and the nearest one)
// or a repeated key is noted and the rest still read. It does nothing with
// a node that is no mapping (the caller says what it wanted).
func eachKeyAll(n *yaml.Node, allowed []string, note func(error), f func(key string, k, v *yaml.Node)) {
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
			note(nodeErrorf(k, "want a key (one of %s)", nameList(allowed)))
		case !slices.Contains(allowed, k.Value):
			note(unknownName(k, "key", k.Value, allowed))
		case seen[k.Value]:
			note(nodeErrorf(k, "key %q given twice", k.Value))
		default:
			seen[k.Value] = true
			f(k.Value, k, v)
		}
	}
}

func scalarString(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", nodeErrorf(n, "%s must be a single value", what)
	}
	return n.Value, nil
}

func scalarRegex(n *yaml.Node, what string) (*regexp.Regexp, error) {
	s, err := scalarString(n, what)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, nodeErrorf(n, "%s %q is not a valid regular expression: %v", what, s, err)
	}
	// Refused where it is written, before any dump is read; the matcher
	// checks again for selectors built in code.
	if err := CheckRegexBudget(re, what); err != nil {
		return nil, &ConfigError{Line: n.Line, Column: n.Column, Msg: err.Error(), Err: ErrRegexTooCostly}
	}
	return re, nil
}

// MaxRegexInsts bounds a selector regex's compiled program. Go's regexp
// matches in time proportional to the program's instructions times the
// text's bytes, so with the program bounded, matching stays linear in the
// dump: at most MaxRegexInsts steps per byte of each distinct name or value,
// matched once. The bound is a property of the rules file alone, not of the
// dump it meets, so a rule accepted on a small dump is accepted on a large
// one. Ordinary regexes compile to tens of instructions; a counted
// repetition such as (?:[a-z]?){3000} compiles to thousands and is refused.
const MaxRegexInsts = 1000

// ErrRegexTooCostly is returned (wrapped) when a selector's regex compiles
// to a program over MaxRegexInsts instructions.
var ErrRegexTooCostly = errors.New("regex too costly")

// CheckRegexBudget fails (wrapping ErrRegexTooCostly) when re's program
// exceeds MaxRegexInsts instructions, before any matching: what names re in
// the error. The matcher calls it when it binds a selector to spans.
func CheckRegexBudget(re *regexp.Regexp, what string) error {
	if insts := RegexInsts(re); insts > MaxRegexInsts {
		return fmt.Errorf("%w: %s %s compiles to %d instructions, over the limit of %d (matching costs up to that many steps per byte of every distinct string): anchor or simplify it, or replace a counted repetition by * or +",
			ErrRegexTooCostly, what, strconv.Quote(clipInput(re.String())), insts, MaxRegexInsts)
	}
	return nil
}

// RegexInsts returns the size of re's compiled program, what Go's regexp
// walks per byte of text at worst: what CheckRegexBudget holds against
// MaxRegexInsts. The analyzer binds its selectors to every group of
// traces it finalizes, so a pattern's size is remembered (regexSizes)
// rather than compiled again each time.
func RegexInsts(re *regexp.Regexp) int {
	return regexSizes.size(re.String())
}

// regexSizes remembers the program sizes of the patterns seen, up to
// maxRememberedRegexes of them: a configuration holds a few dozen, and a
// process that loads configurations without end (a collector reloading)
// must not grow with them; past the bound sizes are computed each time.
var regexSizes = regexSizeMemo{max: maxRememberedRegexes}

const maxRememberedRegexes = 4096

// regexSizeMemo is a bounded memo of regexInsts by pattern.
type regexSizeMemo struct {
	mu    sync.Mutex
	sizes map[string]int
	max   int
}

// size returns pattern's program size, from the memo when it is there.
func (m *regexSizeMemo) size(pattern string) int {
	m.mu.Lock()
	n, ok := m.sizes[pattern]
	m.mu.Unlock()
	if ok {
		return n
	}
	n = regexInsts(pattern)
	m.mu.Lock()
	if m.sizes == nil {
		m.sizes = map[string]int{}
	}
	if len(m.sizes) < m.max {
		m.sizes[pattern] = n
	}
	m.mu.Unlock()
	return n
}

// regexInsts compiles pattern's program and returns its size.
func regexInsts(pattern string) int {
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 1
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return 1
	}
	return len(prog.Inst)
}
