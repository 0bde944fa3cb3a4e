package rulefmt

import (
	"cmp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The vocabulary: block of mcptrace.yaml: a user's own writer, described in
// the rule language's span selectors (selector.go). Every mistake of the
// block is reported at once, each at its line and column, an unknown key
// with the nearest known one.
//
//	vocabulary:
//	  name: my-gateway
//	  base: semconv                  # optional: start from a built-in
//	  executions: agent.run          # a selector: a span name or a mapping
//	  calls: {name_regex: '^mcp\.tool\.'}
//	  handshakes: [mcp.connect]      # or a list of selectors
//	  session: {attribute: mcp.session.id}   # or {enclosing: mcp.session}
//	  attributes: {tool: mcp.tool}
//	  capabilities: {side: server, parenting: caller, target_identity: false}

// vocabularyKeys are the keys of the vocabulary: block.
var vocabularyKeys = []string{"name", "base", "executions", "calls", "invocations", "acquires", "acquire_on_miss",
	"handshakes", "session", "attributes", "detect", "capabilities"}

// vocabularyAttributeKeys are the keys of its attributes: mapping, each
// with the field it sets.
var vocabularyAttributeKeys = []struct {
	key string
	set func(a *VocabularyAttributes) *string
}{
	{"hit", func(a *VocabularyAttributes) *string { return &a.Hit }},
	{"key", func(a *VocabularyAttributes) *string { return &a.Key }},
	{"attempt", func(a *VocabularyAttributes) *string { return &a.Attempt }},
	{"miss_reason", func(a *VocabularyAttributes) *string { return &a.MissReason }},
	{"pool_id", func(a *VocabularyAttributes) *string { return &a.PoolID }},
	{"tool", func(a *VocabularyAttributes) *string { return &a.Tool }},
	{"revision", func(a *VocabularyAttributes) *string { return &a.Revision }},
	{"error_type", func(a *VocabularyAttributes) *string { return &a.ErrorType }},
	{"tool_error", func(a *VocabularyAttributes) *string { return &a.ToolError }},
	{"server_address", func(a *VocabularyAttributes) *string { return &a.ServerAddress }},
	{"server_port", func(a *VocabularyAttributes) *string { return &a.ServerPort }},
	{"client_address", func(a *VocabularyAttributes) *string { return &a.ClientAddress }},
}

// parseVocabulary reads the vocabulary: block. It returns every mistake, as
// ConfigErrors, in file order.
func parseVocabulary(n *yaml.Node) (*Vocabulary, error) {
	var errs ConfigErrors
	note := noter(&errs, n)
	if n.Kind != yaml.MappingNode {
		return nil, nodeErrorf(n, "vocabulary must be a mapping with keys %s", strings.Join(vocabularyKeys, ", "))
	}
	v := &Vocabulary{}
	values := map[string]*yaml.Node{}
	eachKeyAll(n, vocabularyKeys, note, func(key string, _, val *yaml.Node) { values[key] = val })
	if b := values["base"]; b != nil {
		name, err := scalarString(b, "base")
		note(err)
		if err == nil {
			base, ok := BuiltinVocabulary(Profile(name))
			if !ok {
				note(nodeErrorf(b, "base %q: want a built-in vocabulary: %s%s", name, vocabularyNames(), didYouMean(name, profileNames())))
			} else {
				*v = base.clone()
			}
		}
	}
	v.Names = nil // the block's own selectors name its spans
	if nn := values["name"]; nn != nil {
		v.Name = vocabularyName(nn, note)
	} else {
		note(nodeErrorf(n, "vocabulary needs a name (what reports call it)"))
	}
	parseVocabularyRoles(values, v, note)
	if s := values["session"]; s != nil {
		note(parseSessionSource(s, &v.Session))
	}
	if a := values["attributes"]; a != nil {
		note(parseVocabularyAttributes(a, &v.Attributes))
	}
	if c := values["capabilities"]; c != nil {
		note(parseCapabilities(c, &v.Capabilities))
	}
	switch {
	case len(v.Calls) == 0 && values["calls"] == nil:
		note(nodeErrorf(n, "vocabulary needs calls: a selector of the tool-call spans (without them there is nothing to measure)"))
	case v.AcquireOnMiss && (len(v.Acquires) == 0 || len(v.Invocations) == 0):
		note(nodeErrorf(values["acquire_on_miss"], "acquire_on_miss needs acquires and invocations: a hit is an invocation without an acquire"))
	}
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b *ConfigError) int {
			return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
		})
		return nil, errs
	}
	return v, nil
}

// parseVocabularyRoles reads the role keys of a vocabulary block
// (executions, calls, invocations, acquires, handshakes, detect,
// acquire_on_miss) from values into v, noting each mistake.
func parseVocabularyRoles(values map[string]*yaml.Node, v *Vocabulary, note func(error)) {
	if ex := values["executions"]; ex != nil {
		sel, err := ParseSelector(ex)
		note(err)
		if err == nil {
			v.Executions = &sel
		}
	}
	for _, role := range []struct {
		key string
		dst *[]Selector
	}{{"calls", &v.Calls}, {"invocations", &v.Invocations}, {"acquires", &v.Acquires}, {"handshakes", &v.Handshakes}, {"detect", &v.Detect}} {
		if val := values[role.key]; val != nil {
			sels, err := parseSelectorList(val, role.key)
			note(err)
			*role.dst = sels
		}
	}
	if aom := values["acquire_on_miss"]; aom != nil {
		if aom.Kind != yaml.ScalarNode || aom.Decode(&v.AcquireOnMiss) != nil {
			note(nodeErrorf(aom, "acquire_on_miss must be true or false"))
		}
	}
}

// vocabularyName reads a vocabulary block's name, "" (and a note) for a
// bad one or a built-in's.
func vocabularyName(nn *yaml.Node, note func(error)) string {
	name, err := scalarString(nn, "name")
	switch {
	case err != nil:
		note(err)
	case !measureName.MatchString(name):
		note(nodeErrorf(nn, "vocabulary name %q: use letters, digits, '_', '.' or '-'", name))
	case slices.Contains(profileNames(), name):
		note(nodeErrorf(nn, "vocabulary name %q is a built-in's: give yours another (base: %s starts from it)", name, name))
	default:
		return name
	}
	return ""
}

// maxRoleSelectors bounds the selectors of one role: the stage tries every
// span against each, so the list's length multiplies the work per span. A
// real writer needs one or two; a regular expression covers any more.
const maxRoleSelectors = 16

// parseSelectorList reads one selector or a list of them.
func parseSelectorList(n *yaml.Node, what string) ([]Selector, error) {
	if n.Kind != yaml.SequenceNode {
		s, err := ParseSelector(n)
		if err != nil {
			return nil, err
		}
		return []Selector{s}, nil
	}
	if len(n.Content) == 0 {
		return nil, nodeErrorf(n, "%s: an empty list selects nothing: give a selector or leave the key out", what)
	}
	if len(n.Content) > maxRoleSelectors {
		return nil, nodeErrorf(n, "%s: %d selectors, more than %d: every span is tried against each, so fold them into a name_regex", what, len(n.Content), maxRoleSelectors)
	}
	var out []Selector
	var errs ConfigErrors
	note := noter(&errs, n)
	for _, item := range n.Content {
		s, err := ParseSelector(item)
		note(err)
		if err == nil {
			out = append(out, s)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// parseSessionSource reads session: {attribute: KEY} or {enclosing: SELECTOR}.
func parseSessionSource(n *yaml.Node, dst *SessionSource) error {
	if n.Kind != yaml.MappingNode {
		return nodeErrorf(n, "session must be {attribute: KEY} or {enclosing: SELECTOR}")
	}
	var errs ConfigErrors
	note := noter(&errs, n)
	var src SessionSource
	eachKeyAll(n, []string{"attribute", "enclosing"}, note, func(key string, _, v *yaml.Node) {
		switch key {
		case "attribute":
			s, err := scalarString(v, "session attribute")
			if err == nil && s == "" {
				err = nodeErrorf(v, "session attribute must not be empty")
			}
			note(err)
			src.Attribute = s
		case "enclosing":
			sel, err := ParseSelector(v)
			note(err)
			if err == nil {
				src.Enclosing = &sel
			}
		}
	})
	if len(errs) == 0 && (src.Attribute == "") == (src.Enclosing == nil) {
		errs = append(errs, nodeErrorf(n, "session takes one of attribute or enclosing"))
	}
	if len(errs) > 0 {
		return errs
	}
	*dst = src
	return nil
}

// parseVocabularyAttributes reads attributes: {hit: KEY, key: KEY, ...}
// over what dst holds (a base's keys).
func parseVocabularyAttributes(n *yaml.Node, dst *VocabularyAttributes) error {
	if n.Kind != yaml.MappingNode {
		return nodeErrorf(n, "attributes must be a mapping of fact to attribute key")
	}
	keys := make([]string, len(vocabularyAttributeKeys))
	for i, k := range vocabularyAttributeKeys {
		keys[i] = k.key
	}
	var errs ConfigErrors
	note := noter(&errs, n)
	eachKeyAll(n, keys, note, func(key string, _, v *yaml.Node) {
		s, err := scalarString(v, key)
		if err != nil {
			note(err)
			return
		}
		for _, k := range vocabularyAttributeKeys {
			if k.key == key {
				*k.set(dst) = s
			}
		}
	})
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// clone returns a copy of v that shares no slice with it.
func (v Vocabulary) clone() Vocabulary {
	v.Calls = slices.Clone(v.Calls)
	v.Invocations = slices.Clone(v.Invocations)
	v.Acquires = slices.Clone(v.Acquires)
	v.Handshakes = slices.Clone(v.Handshakes)
	v.Detect = slices.Clone(v.Detect)
	v.Names = slices.Clone(v.Names)
	return v
}

// profileNames lists the built-in names.
func profileNames() []string {
	out := make([]string, len(Profiles))
	for i, p := range Profiles {
		out[i] = string(p)
	}
	return out
}

// ParseVocabulary parses data holding one vocabulary block on its own (the
// mapping under mcptrace.yaml's vocabulary: key): for a driver whose
// configuration carries the block apart from a file, such as the Collector
// connector's. path names it in errors; every mistake is reported at once,
// as ConfigErrors, with line and column.
func ParseVocabulary(path string, data []byte) (*Vocabulary, error) {
	doc, err := decodeOne(path, data)
	if err != nil {
		return nil, err
	}
	if err := checkConfigDepth(path, doc); err != nil {
		return nil, inFile(path, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, ConfigErrors{{File: path, Line: 1, Column: 1, Msg: "want one vocabulary mapping"}}
	}
	v, err := parseVocabulary(doc.Content[0])
	if err == nil {
		err = checkRegexBudget(&GateConfig{Vocabulary: v})
	}
	if err != nil {
		return nil, inFile(path, err)
	}
	return v, nil
}
