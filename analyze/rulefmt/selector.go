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

// SpanAttributeKeys returns the span attribute keys s reads, so an [Index]
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

// ParseSelector parses a selector from its YAML node: a mapping as documented
// on [Selector], or a plain scalar, shorthand for an exact span name. Errors
// are *ConfigError naming the line and column of the offending node.
func ParseSelector(n *yaml.Node) (Selector, error) {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		if n.Value == "" {
			return Selector{}, nodeErrorf(n, "empty selector: give a span name or a mapping")
		}
		return Selector{Name: n.Value, Line: n.Line, Column: n.Column}, nil
	}
	if n.Kind != yaml.MappingNode {
		return Selector{}, nodeErrorf(n, "selector must be a span name or a mapping of name, name_regex, attributes, resource, kind, status")
	}
	sel := Selector{Line: n.Line, Column: n.Column}
	err := eachKey(n, []string{"name", "name_regex", "attributes", "resource", "kind", "status"}, func(key string, k, v *yaml.Node) error {
		switch key {
		case "name":
			s, err := scalarString(v, "name")
			if err != nil {
				return err
			}
			if s == "" {
				return nodeErrorf(v, "name must not be empty")
			}
			sel.Name = s
		case "name_regex":
			re, err := scalarRegex(v, "name_regex")
			if err != nil {
				return err
			}
			sel.NameRegex = re
		case "attributes", "resource":
			ms, err := parseAttrMatches(v, key)
			if err != nil {
				return err
			}
			if key == "attributes" {
				sel.Attributes = ms
			} else {
				sel.Resource = ms
			}
		case "kind":
			s, err := scalarString(v, "kind")
			if err != nil {
				return err
			}
			if _, ok := spanKinds[s]; !ok {
				return nodeErrorf(v, "kind %q: want one of client, server, internal, producer, consumer", s)
			}
			sel.Kind = s
		case "status":
			s, err := scalarString(v, "status")
			if err != nil {
				return err
			}
			if _, ok := statusCodes[s]; !ok {
				return nodeErrorf(v, "status %q: want one of ok, error, unset", s)
			}
			sel.Status = s
		}
		return nil
	})
	if err != nil {
		return Selector{}, err
	}
	if sel.Name != "" && sel.NameRegex != nil {
		return Selector{}, nodeErrorf(n, "give name or name_regex, not both")
	}
	if sel.IsZero() {
		return Selector{}, nodeErrorf(n, "empty selector matches every span: give name, name_regex, attributes, resource, kind or status")
	}
	return sel, nil
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
// key: scalar (equals) or key: {equals|not_equals|regex|exists: ...}.
func parseAttrMatches(n *yaml.Node, what string) ([]AttrMatch, error) {
	if n.Kind != yaml.MappingNode {
		return nil, nodeErrorf(n, "%s must be a mapping of attribute key to value or {equals|not_equals|regex|exists: ...}", what)
	}
	var ms []AttrMatch
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return nil, nodeErrorf(k, "%s key must be a non-empty attribute name", what)
		}
		if seen[k.Value] {
			return nil, nodeErrorf(k, "%s key %q given twice", what, k.Value)
		}
		seen[k.Value] = true
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Tag == "!!null" {
				return nil, nodeErrorf(v, "%s %q has no value: give a value or {exists: true}", what, k.Value)
			}
			ms = append(ms, AttrMatch{Key: k.Value, Op: OpEquals, Value: v.Value})
		case yaml.MappingNode:
			before := len(ms)
			err := eachKey(v, []string{"equals", "not_equals", "regex", "exists"}, func(op string, _, ov *yaml.Node) error {
				switch op {
				case "equals", "not_equals":
					s, err := scalarString(ov, op)
					if err != nil {
						return err
					}
					m := AttrMatch{Key: k.Value, Op: OpEquals, Value: s}
					if op == "not_equals" {
						m.Op = OpNotEquals
					}
					ms = append(ms, m)
				case "regex":
					re, err := scalarRegex(ov, "regex")
					if err != nil {
						return err
					}
					ms = append(ms, AttrMatch{Key: k.Value, Op: OpRegex, Regex: re})
				case "exists":
					var b bool
					if ov.Kind != yaml.ScalarNode || ov.Decode(&b) != nil {
						return nodeErrorf(ov, "exists must be true or false")
					}
					m := AttrMatch{Key: k.Value, Op: OpExists}
					if !b {
						m.Op = OpAbsent
					}
					ms = append(ms, m)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			if len(ms) == before {
				return nil, nodeErrorf(v, "%s %q: give one of equals, not_equals, regex, exists", what, k.Value)
			}
		default:
			return nil, nodeErrorf(v, "%s %q: want a value or {equals|not_equals|regex|exists: ...}", what, k.Value)
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Key < ms[j].Key })
	return ms, nil
}

// eachKey walks a mapping node, refusing keys outside allowed and repeated
// keys with their line and column, and calls f for each pair.
func eachKey(n *yaml.Node, allowed []string, f func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return nodeErrorf(n, "want a mapping with keys %s", strings.Join(allowed, ", "))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nodeErrorf(k, "want a key (one of %s)", strings.Join(allowed, ", "))
		}
		if !slices.Contains(allowed, k.Value) {
			return nodeErrorf(k, "unknown key %q: want one of %s", k.Value, strings.Join(allowed, ", "))
		}
		if seen[k.Value] {
			return nodeErrorf(k, "key %q given twice", k.Value)
		}
		seen[k.Value] = true
		if err := f(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
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
// MaxRegexInsts.
func RegexInsts(re *regexp.Regexp) int {
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return 1
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return 1
	}
	return len(prog.Inst)
}
