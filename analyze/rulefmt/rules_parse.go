package rulefmt

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/mcptrace/mcptrace/spans"
)

// The keys of the configuration file's mappings, in documentation order:
// what an unknown key's error lists in full.
var (
	configKeys      = []string{"measures", "rules", "regressions", "builtin", "vocabulary"}
	ruleKeys        = []string{"id", "description", "severity", "scope", "select", "expect", "complete_when", "skip_empty", "allow_empty", "skip_sessionless"}
	expectationKeys = []string{"of", "attribute", "select", "op", "than", "tolerance"}
	severityNames   = []string{string(SeverityError), string(SeverityWarning)}
	scopeNames      = []string{string(ScopeDump), string(ScopeTrace), "{subtree: SELECTOR}"}
	opNames         = []string{string(OpEq), string(OpNe), string(OpLt), string(OpLe), string(OpGt), string(OpGe)}
)

// LoadGateConfig reads the configuration file at path: measures, rules and
// regression tolerances.
func LoadGateConfig(path string) (*GateConfig, error) {
	data, err := readConfig(path)
	if err != nil {
		return nil, err
	}
	return ParseGateConfig(path, data)
}

// ParseGateConfig parses configuration file data (path names it in errors):
// the measures: list as [ParseConfig] does, the rules: list and the
// regressions: tolerances. Every mistake of the file is reported at once,
// as [ConfigErrors] in file order, each with file, line and column: YAML
// syntax, unknown keys, measures and operators (with the valid names and
// the nearest one), bad selectors and repeated ids. An empty file is a
// mistake too ([ErrEmptyConfig]). The work is linear in the file: each node
// is read once and each name looked up in a set.
func ParseGateConfig(path string, data []byte) (*GateConfig, error) {
	root, err := parseDocument(path, data)
	if err != nil {
		return nil, err
	}
	gc := &GateConfig{Path: path, Tolerances: DefaultTolerances()}
	var errs ConfigErrors
	note := noter(&errs, root)
	var rulesNode, tolNode *yaml.Node
	note(eachKey(root, configKeys, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "measures":
			gc.Measures, err = parseMeasures(v)
		case "rules":
			rulesNode = v
		case "regressions":
			tolNode = v
		case "builtin":
			gc.Builtin, err = parseBuiltin(v)
		case "vocabulary":
			gc.Vocabulary, err = parseVocabulary(v)
		}
		return err
	}))
	// The rules may name the measures, so they are read once every
	// measure's name is known.
	if rulesNode != nil {
		var err error
		gc.Rules, err = parseRules(rulesNode, gc.Measures)
		note(err)
	}
	if tolNode != nil {
		note(parseTolerances(tolNode, &gc.Tolerances))
	}
	if len(errs) == 0 {
		note(checkRegexBudget(gc))
	}
	if err := inFile(path, errs.err()); err != nil {
		return nil, err
	}
	gc.Warnings = LintRules(path, gc.Rules)
	return gc, nil
}

// parseDocument parses data as a YAML document and returns its root node,
// refusing a syntax error (with its line and column), a second document
// (ErrSeveralDocuments, at its line), a tree nested past
// maxConfigDepth and an empty file (ErrEmptyConfig), each as ConfigErrors
// naming path.
func parseDocument(path string, data []byte) (*yaml.Node, error) {
	doc, err := decodeOne(path, data)
	if err != nil {
		return nil, err
	}
	if err := checkConfigDepth(path, doc); err != nil {
		return nil, inFile(path, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || isEmptyNode(doc.Content[0]) {
		return nil, ConfigErrors{{File: path, Err: ErrEmptyConfig,
			Msg: fmt.Sprintf("%v: it holds none of %s (for the built-in rules, give no configuration file)", ErrEmptyConfig, listNames(configKeys))}}
	}
	return doc.Content[0], nil
}

// isEmptyNode reports whether n says nothing: null or an empty mapping.
func isEmptyNode(n *yaml.Node) bool {
	return (n.Kind == yaml.ScalarNode && n.Tag == "!!null") || (n.Kind == yaml.MappingNode && len(n.Content) == 0)
}

// parseBuiltin reads builtin: {RULE-ID: error|warning|off, ...}.
func parseBuiltin(n *yaml.Node) (map[string]Severity, error) {
	ids := make([]string, 0, 8)
	for _, r := range BuiltinRules(Config{}) {
		ids = append(ids, r.ID)
	}
	out := map[string]Severity{}
	err := eachKey(n, ids, func(key string, _, v *yaml.Node) error {
		s, err := scalarString(v, key)
		if err != nil {
			return err
		}
		switch Severity(s) {
		case SeverityError, SeverityWarning, SeverityOff:
			out[key] = Severity(s)
			return nil
		}
		e := nodeErrorf(v, "builtin %s: severity %q", key, s)
		e.Got, e.Valid = s, []string{string(SeverityError), string(SeverityWarning), string(SeverityOff)}
		return e
	})
	return out, err
}

// measureNames are the names an expectation may compare in one file,
// computed once for all its rules.
type measureNames struct {
	// measures are MeasureNames of the file: what than: may name.
	measures []string
	// of are the span quantities, then measures: what of: may name.
	of []string
	// set holds of, for the lookups.
	set map[string]bool
}

func newMeasureNames(readMeasures []ReadMeasure) *measureNames {
	ms := &measureNames{measures: MeasureNames(readMeasures)}
	ms.of = append(slices.Clone(spanQuantities), ms.measures...)
	ms.set = make(map[string]bool, len(ms.of))
	for _, n := range ms.of {
		ms.set[n] = true
	}
	return ms
}

// isMeasure reports whether name is a dump-level measure of the file.
func (ms *measureNames) isMeasure(name string) bool {
	return ms.set[name] && !slices.Contains(spanQuantities, name)
}

// parseRules reads the rules: list: every rule, and every mistake of each.
func parseRules(n *yaml.Node, measures []ReadMeasure) ([]Rule, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, nodeErrorf(n, "rules must be a list of {%s}", nameList(ruleKeys))
	}
	if len(n.Content) == 0 {
		return nil, nodeErrorf(n, "rules is an empty list: give at least one rule, or leave rules: out for the built-in rules")
	}
	ms := newMeasureNames(measures)
	var out []Rule
	var errs ConfigErrors
	note := noter(&errs, n)
	where := map[string]int{}
	for _, item := range n.Content {
		r, err := parseRule(item, ms)
		note(err)
		if r.ID != "" {
			if line, dup := where[r.ID]; dup {
				note(&ConfigError{Line: r.Line, Column: r.Column, Msg: fmt.Sprintf("rule %q already defined at line %d", clipInput(r.ID), line)})
				continue
			}
			where[r.ID] = r.Line
		}
		if err == nil {
			out = append(out, r)
		}
	}
	return out, errs.err()
}

// ruleParser reads one rule mapping, key by key.
type ruleParser struct {
	r      Rule
	idSeen bool
	expect *yaml.Node
	// scopeBad and selectBad are set when the scope or the selection was
	// refused, so the checks that read them do not report a mistake the
	// file did not make.
	scopeBad, selectBad bool
}

// parseRule reads one rule and returns every mistake of it. The rule is
// returned even then, with what could be read (its id names it in the
// check for repeated ids).
func parseRule(item *yaml.Node, ms *measureNames) (Rule, error) {
	p := ruleParser{r: Rule{Severity: SeverityError, Scope: Scope{Kind: ScopeTrace}, Line: item.Line, Column: item.Column}}
	var errs ConfigErrors
	note := noter(&errs, item)
	note(eachKey(item, ruleKeys, p.key))
	if item.Kind != yaml.MappingNode {
		return p.r, errs.err()
	}
	if !p.idSeen {
		note(nodeErrorf(item, "rule needs an id"))
	}
	if p.expect == nil {
		what := "rule"
		if p.r.ID != "" {
			what = fmt.Sprintf("rule %q", clipInput(p.r.ID))
		}
		note(&ConfigError{Line: item.Line, Column: item.Column, Msg: what + ` needs expect: a comparison such as {of: count, op: "==", than: 1}`})
		return p.r, errs.err()
	}
	exps, err := parseExpectations(p.expect, ms)
	note(err)
	p.r.Expect = exps
	for _, e := range exps {
		switch {
		case e.IsMeasure() && p.r.Scope.Kind != ScopeDump && !p.scopeBad:
			note(&ConfigError{Line: e.Line, Column: e.Column, Msg: fmt.Sprintf("rule %q: measure %s is a dump-wide figure: use scope: dump", clipInput(p.r.ID), e.Of)})
		case !e.IsMeasure() && e.Select == nil && p.r.Select == nil && !p.selectBad:
			note(&ConfigError{Line: e.Line, Column: e.Column, Msg: fmt.Sprintf("rule %q: %s needs a selection: give select: on the rule or the expectation", clipInput(p.r.ID), e.Of)})
		}
	}
	return p.r, errs.err()
}

// key reads one key of a rule mapping.
func (p *ruleParser) key(key string, _, v *yaml.Node) error {
	var err error
	switch key {
	case "id":
		p.idSeen = true
		err = p.id(v)
	case "description":
		p.r.Description, err = scalarString(v, "description")
	case "severity":
		err = p.severity(v)
	case "scope":
		if p.r.Scope, err = parseScope(v); err != nil {
			p.r.Scope, p.scopeBad = Scope{Kind: ScopeTrace}, true
		}
	case "select":
		var s SpanSelector
		if s, err = parseSpanSelector(v); err == nil {
			p.r.Select = &s
		} else {
			p.selectBad = true
		}
	case "expect":
		p.expect = v
	case "complete_when":
		var s Selector
		if s, err = ParseSelector(v); err == nil {
			p.r.CompleteWhen = &s
		}
	case "skip_empty":
		err = boolValue(v, key, &p.r.SkipEmpty)
	case "allow_empty":
		err = boolValue(v, key, &p.r.AllowEmpty)
	case "skip_sessionless":
		err = boolValue(v, key, &p.r.SkipSessionless)
	}
	return err
}

func (p *ruleParser) id(v *yaml.Node) error {
	id, err := scalarString(v, "id")
	if err != nil {
		return err
	}
	if !ruleID.MatchString(id) {
		return nodeErrorf(v, "rule id %q: use letters, digits, '_', '.' or '-'", id)
	}
	p.r.ID = id
	return nil
}

func (p *ruleParser) severity(v *yaml.Node) error {
	s, err := scalarString(v, "severity")
	if err != nil {
		return err
	}
	if !slices.Contains(severityNames, s) {
		e := nodeErrorf(v, "severity %q", s)
		e.Got, e.Valid = s, severityNames
		return e
	}
	p.r.Severity = Severity(s)
	return nil
}

// boolValue reads a true or false into dst.
func boolValue(v *yaml.Node, key string, dst *bool) error {
	if v.Kind != yaml.ScalarNode || v.Decode(dst) != nil {
		return nodeErrorf(v, "%s must be true or false", key)
	}
	return nil
}

// parseScope reads dump, trace, or {subtree: SELECTOR}.
func parseScope(v *yaml.Node) (Scope, error) {
	if v.Kind == yaml.ScalarNode {
		switch v.Value {
		case string(ScopeDump), string(ScopeTrace):
			return Scope{Kind: ScopeKind(v.Value)}, nil
		}
		e := nodeErrorf(v, "scope %q", v.Value)
		e.Got, e.Valid = v.Value, scopeNames
		return Scope{}, e
	}
	var sc Scope
	err := eachKey(v, []string{"subtree"}, func(_ string, _, sv *yaml.Node) error {
		sel, err := ParseSelector(sv)
		if err == nil {
			sc = Scope{Kind: ScopeSubtree, Root: &sel}
		}
		return err
	})
	if err == nil && sc.Root == nil {
		err = nodeErrorf(v, "scope: want dump, trace or {subtree: SELECTOR}")
	}
	return sc, err
}

// parseSpanSelector reads a selector mapping that may also hold under and
// not_under (each a selector), or a plain span name. Every mistake of the
// mapping and of its under and not_under selectors is returned.
func parseSpanSelector(v *yaml.Node) (SpanSelector, error) {
	var out SpanSelector
	if v.Kind != yaml.MappingNode {
		sel, err := ParseSelector(v)
		out.Selector = sel
		return out, err
	}
	var errs ConfigErrors
	note := noter(&errs, v)
	own := &yaml.Node{Kind: yaml.MappingNode, Tag: v.Tag, Line: v.Line, Column: v.Column, Style: v.Style}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if k.Kind != yaml.ScalarNode || (k.Value != "under" && k.Value != "not_under") {
			own.Content = append(own.Content, k, val)
			continue
		}
		dst := &out.Under
		if k.Value == "not_under" {
			dst = &out.NotUnder
		}
		if *dst != nil {
			note(nodeErrorf(k, "key %q given twice", k.Value))
			continue
		}
		sel, err := ParseSelector(val)
		note(err)
		*dst = &sel
	}
	if len(own.Content) == 0 {
		note(nodeErrorf(v, "select needs a condition on the span itself (name, name_regex, attributes, resource, kind or status) besides under/not_under"))
	} else {
		sel, err := parseSelector(own, spanSelectorKeys)
		note(err)
		out.Selector = sel
	}
	return out, errs.err()
}

// parseExpectations reads one expectation mapping or a list of them. It
// returns the expectations read without a mistake, and every mistake.
func parseExpectations(v *yaml.Node, ms *measureNames) ([]Expectation, error) {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
		if len(items) == 0 {
			return nil, nodeErrorf(v, "expect: give at least one comparison")
		}
	}
	var out []Expectation
	var errs ConfigErrors
	note := noter(&errs, v)
	for _, it := range items {
		e, err := parseExpectation(it, ms)
		note(err)
		if err == nil {
			out = append(out, e)
		}
	}
	return out, errs.err()
}

// expectationParser reads one expectation mapping, key by key.
type expectationParser struct {
	e  Expectation
	ms *measureNames
	// opSet and thanSet are set when the key is given, right or wrong.
	opSet, thanSet bool
	// ofBad is set when of: was refused, so the checks that read it do not
	// report a mistake the file did not make.
	ofBad bool
}

// parseExpectation reads one expectation and returns every mistake of it.
func parseExpectation(n *yaml.Node, ms *measureNames) (Expectation, error) {
	p := expectationParser{e: Expectation{Line: n.Line, Column: n.Column}, ms: ms}
	var errs ConfigErrors
	note := noter(&errs, n)
	note(eachKey(n, expectationKeys, p.key))
	if n.Kind != yaml.MappingNode {
		return p.e, errs.err()
	}
	e := &p.e
	if e.Of == "" && !p.ofBad {
		note(nodeErrorf(n, "expectation needs of: count, distinct or a measure"))
	}
	if !p.opSet {
		note(nodeErrorf(n, "expectation needs op: one of == != < <= > >="))
	}
	if !p.thanSet {
		note(nodeErrorf(n, "expectation needs than: a number or a measure"))
	}
	if e.Of != "" {
		note(p.checkOf(n))
	}
	return p.e, errs.err()
}

// checkOf checks what goes with the quantity of: names.
func (p *expectationParser) checkOf(n *yaml.Node) error {
	e := &p.e
	switch {
	case (e.Of == QuantityPoolSessions || e.Of == QuantityLostSessions) && e.Attribute != "":
		return nodeErrorf(n, "%s counts %s; attribute goes with of: distinct only", e.Of, spans.AttrSessionID)
	case e.Of == QuantityDistinct && e.Attribute == "":
		return nodeErrorf(n, "distinct needs attribute: the attribute whose values are counted")
	case e.Of != QuantityDistinct && e.Attribute != "":
		return nodeErrorf(n, "attribute goes with of: distinct only")
	case e.IsMeasure() && e.Select != nil:
		return nodeErrorf(n, "select goes with count and distinct, not with measure %s", e.Of)
	}
	return nil
}

// key reads one key of an expectation mapping.
func (p *expectationParser) key(key string, _, v *yaml.Node) error {
	var err error
	switch key {
	case "of":
		err = p.of(v)
	case "attribute":
		p.e.Attribute, err = scalarString(v, "attribute")
	case "select":
		var s SpanSelector
		if s, err = parseSpanSelector(v); err == nil {
			p.e.Select = &s
		}
	case "op":
		p.opSet = true
		err = p.op(v)
	case "than":
		p.thanSet = true
		err = p.than(v)
	case "tolerance":
		t := &p.e.Tolerance
		if v.Kind != yaml.ScalarNode || v.Decode(t) != nil || *t < 0 || math.IsInf(*t, 0) || math.IsNaN(*t) {
			err = nodeErrorf(v, "tolerance must be a number, 0 or more")
		}
	}
	return err
}

func (p *expectationParser) of(v *yaml.Node) error {
	s, err := scalarString(v, "of")
	if err != nil {
		p.ofBad = true
		return err
	}
	if !p.ms.set[s] {
		p.ofBad = true
		return unknownName(v, "measure", s, p.ms.of)
	}
	p.e.Of = s
	return nil
}

func (p *expectationParser) op(v *yaml.Node) error {
	s, err := scalarString(v, "op")
	if err != nil {
		return err
	}
	if !slices.Contains(Ops, Op(s)) {
		e := unknownName(v, "operator", s, opNames)
		if s == "" {
			e.Msg = "empty operator: quote it in YAML (op: \">=\"), or > and < start a block of text"
		}
		return e
	}
	p.e.Op = Op(s)
	return nil
}

func (p *expectationParser) than(v *yaml.Node) error {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return nodeErrorf(v, "than must be a number or a measure name")
	}
	var yf float64
	if v.ShortTag() == "!!float" && v.Decode(&yf) == nil && (math.IsNaN(yf) || math.IsInf(yf, 0)) {
		return nodeErrorf(v, "than must be a finite number, not %s", v.Value) // YAML's .nan, .inf
	}
	if f, perr := strconv.ParseFloat(v.Value, 64); perr == nil && v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nodeErrorf(v, "than must be a finite number")
		}
		p.e.Than = Operand{Number: f}
		return nil
	}
	if !p.ms.isMeasure(v.Value) {
		e := nodeErrorf(v, "unknown measure %q in than (a number or a measure)", v.Value)
		e.Got, e.Valid = v.Value, p.ms.measures
		return e
	}
	p.e.Than = Operand{Measure: v.Value}
	return nil
}
