package rulefmt

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/spans"

	"go.yaml.in/yaml/v3"
)

// DefaultIdleTTL is the pool's idle TTL the analyzer assumes when attributing
// misses: an idle gap longer than this explains a miss as ttl.
const DefaultIdleTTL = 5 * time.Minute

// Profile names a built-in vocabulary (see [Vocabulary]): the writer a dump
// was written by. --profile and the connector's profile: take these names.
type Profile string

// The built-in vocabularies' names (vocabulary_builtin.go).
const (
	// ProfileDefault is the old name of ProfileMcptrace, still accepted
	// (flags, connector configs and scripts pass it) and still what an
	// unconfigured analysis echoes in settings.profile.
	ProfileDefault Profile = "default"
	// ProfileMcptrace: this pool's spans, an acquire span on every call,
	// hit or miss, with plugin.mcp.cache_hit (or a handshake child on a
	// miss).
	ProfileMcptrace Profile = "mcptrace"
	// ProfileAcquireOnMiss: the production gateway's later generation emits
	// the acquire span only on a miss, so a hit is an invoke span without an
	// acquire child.
	ProfileAcquireOnMiss Profile = "acquire-on-miss"
	// ProfileSemconv: OpenTelemetry MCP spans (tools/call <tool>) with
	// mcp.session.id and no pool spans; a call on a session not seen before
	// is a miss.
	ProfileSemconv Profile = "semconv"
	// ProfileOpenLLMetry: @traceloop/instrumentation-mcp's spans, calls
	// named {tool}.tool under a long-lived mcp.client.session span.
	ProfileOpenLLMetry Profile = "openllmetry"
	// ProfileAuto: the vocabulary is detected per resource from the spans
	// present (analyze/internal/vocab); the report says what was read. The CLI's
	// default. It names no vocabulary of its own: an analysis resolves it
	// to a built-in before the vocabulary stage runs.
	ProfileAuto Profile = "auto"
)

// Profiles lists the profiles in documentation order (default, the alias
// of mcptrace, first: it is what an unconfigured analysis reads; auto, the
// CLI's default, last: it picks one of the others).
var Profiles = []Profile{ProfileDefault, ProfileMcptrace, ProfileAcquireOnMiss, ProfileSemconv, ProfileOpenLLMetry, ProfileSentry, ProfileMastra, ProfileAuto}

// ErrUnknownProfile is returned by ParseProfile for a name it does not know.
var ErrUnknownProfile = errors.New("unknown profile")

// ParseProfile returns the profile named s; "" is the default profile.
func ParseProfile(s string) (Profile, error) {
	if s == "" {
		return ProfileDefault, nil
	}
	if _, ok := builtinVocabularies[Profile(s)]; ok || Profile(s) == ProfileAuto {
		return Profile(s), nil
	}
	return "", fmt.Errorf("%w %s%s: want %s", ErrUnknownProfile, textfmt.QuoteInput(s), didYouMean(s, profileNames()), vocabularyNames())
}

// Config is what an analysis measures and how. The zero value is the default
// profile, scopes named by the vocabulary, a 5 minute idle TTL, every trace
// an execution and no reads-per-request measures.
type Config struct {
	// Profile names the built-in vocabulary; zero means ProfileDefault.
	Profile Profile
	// Vocabulary, when set, is used instead of Profile's (a config file's
	// vocabulary: block); Profile is then ignored and the report echoes
	// its name.
	Vocabulary *Vocabulary
	// ScopeAttr, when set, names the pool scope instead of the default chain
	// (plugin.mcp.pool.id, then resource service.instance.id, then
	// service.name). It is looked up on the acquire span, its ancestors, then
	// the resource; spans without it share the empty scope.
	ScopeAttr string
	// IdleTTL is the pool's idle TTL; zero means DefaultIdleTTL.
	IdleTTL time.Duration
	// ExecutionRoot, when set, selects the root span of an execution; nil
	// means every trace is one execution.
	ExecutionRoot *Selector
	// Measures are the reads-per-request measures, usually from a config
	// file's measures: key.
	Measures []ReadMeasure
}

// ReadMeasure counts, for each request (a span matching Root), the spans
// matching Read beneath it, leaving out those beneath a span matching
// NotUnder; the count is trusted only when the request's trace is complete
// and, if CompleteWhen is set, holds a span matching it.
type ReadMeasure struct {
	// Name identifies the measure in reports; unique within a config.
	Name string
	// Description is free text carried into the report.
	Description string
	// Root selects the request span.
	Root Selector
	// Read selects the spans counted.
	Read Selector
	// NotUnder, when set, leaves out reads beneath a matching span (below the
	// request).
	NotUnder *Selector
	// CompleteWhen, when set, must match a span of the request's trace
	// before its count is trusted (a process that exports separately has
	// landed).
	CompleteWhen *Selector
	// Expect, when set, is the count every complete request should have;
	// others are reported as unexpected.
	Expect *int
	// Line and Column locate the measure in its file.
	Line, Column int
}

// WithDefaults returns c with zero fields replaced by their defaults (the
// profile, the idle TTL, a vocabulary block's name as the profile): what
// every stage of an analysis reads, so each sees the same configuration.
func (c Config) WithDefaults() Config {
	if c.Profile == "" {
		c.Profile = ProfileDefault
	}
	if c.Vocabulary != nil {
		c.Profile = Profile(c.Vocabulary.Name)
	}
	if c.IdleTTL == 0 {
		c.IdleTTL = DefaultIdleTTL
	}
	return c
}

// Validate reports a configuration the analyzer cannot honour.
func (c Config) Validate() error {
	if c.Vocabulary != nil {
		if err := c.Vocabulary.Validate(); err != nil {
			return err
		}
	} else if _, err := ParseProfile(string(c.Profile)); err != nil {
		return err
	}
	if c.IdleTTL < 0 {
		return fmt.Errorf("idle TTL %v: want a positive duration", c.IdleTTL)
	}
	seen := map[string]bool{}
	for _, m := range c.Measures {
		if m.Name == "" {
			return errors.New("measure without a name")
		}
		if seen[m.Name] {
			return fmt.Errorf("measure %q defined twice", m.Name)
		}
		seen[m.Name] = true
		if m.Root.IsZero() || m.Read.IsZero() {
			return fmt.Errorf("measure %q: root and read selectors are required", m.Name)
		}
	}
	return nil
}

// ActiveVocabulary returns the vocabulary c reads: Vocabulary, or the
// built-in Profile names (mcptrace for an unknown name, which Validate
// refuses; ProfileAuto must be resolved first, as an analysis does). The
// value is shared: callers must not modify it.
func (c Config) ActiveVocabulary() *Vocabulary {
	if c.Vocabulary != nil {
		return c.Vocabulary
	}
	p := c.Profile
	if p == "" {
		p = ProfileDefault
	}
	if v, ok := builtinVocabularies[p]; ok {
		return v
	}
	return &vocabularyMcptrace
}

// EffectiveExecutionRoot returns the selector of an execution's root span
// that an analysis under c uses: ExecutionRoot when set, else the active
// vocabulary's Executions; nil when every trace is one execution. The
// executions are found, measured and named in reports by this one choice.
func (c Config) EffectiveExecutionRoot() *Selector {
	if c.ExecutionRoot != nil {
		return c.ExecutionRoot
	}
	return c.ActiveVocabulary().Executions
}

// IndexOptions returns the attributes an analyze.Dump must keep for c: the scope
// attribute and every key the selectors read.
func (c Config) IndexOptions() IndexOptions {
	var o IndexOptions
	add := func(s *Selector) {
		if s == nil {
			return
		}
		o.SpanAttrs = append(o.SpanAttrs, s.SpanAttributeKeys()...)
		o.ResourceAttrs = append(o.ResourceAttrs, s.ResourceAttributeKeys()...)
	}
	if c.ScopeAttr != "" {
		o.SpanAttrs = append(o.SpanAttrs, c.ScopeAttr)
		o.ResourceAttrs = append(o.ResourceAttrs, c.ScopeAttr)
	}
	// The protocol revision tells sessionless executions apart (the session
	// rules skip them) and groups the headline figures.
	o.SpanAttrs = append(o.SpanAttrs, spans.AttrProtocolVersion)
	// A pre-warm handshake is a session opened that no caller waited for:
	// no sample of the cold start (the vocabulary stage).
	o.SpanAttrs = append(o.SpanAttrs, spans.AttrPrewarm)
	// The settings the pool recorded on its acquire spans label the
	// replay of a dump at them "as recorded" (ReadAcquires, mcptrace whatif).
	o.SpanAttrs = append(o.SpanAttrs, spans.PoolSettingsAttrs[:]...)
	add(c.ExecutionRoot)
	// Under auto every built-in may be the one detected, so the index keeps
	// what any of them reads.
	vocs := []Vocabulary{*c.ActiveVocabulary()}
	if c.Vocabulary == nil && c.Profile == ProfileAuto {
		vocs = BuiltinVocabularies()
	}
	for _, v := range vocs {
		vo := v.IndexOptions()
		o.SpanAttrs = append(o.SpanAttrs, vo.SpanAttrs...)
		o.ResourceAttrs = append(o.ResourceAttrs, vo.ResourceAttrs...)
	}
	for i := range c.Measures {
		m := &c.Measures[i]
		add(&m.Root)
		add(&m.Read)
		add(m.NotUnder)
		add(m.CompleteWhen)
	}
	return o
}

// ConfigFile is the parsed mcptrace.yaml as analyze uses it: the
// reads-per-request measures. The CI gate's rules: and regressions: of the
// same file are read by [ParseGateConfig].
type ConfigFile struct {
	// Path is the file the configuration came from.
	Path string
	// Measures are the file's measures: entries, in file order.
	Measures []ReadMeasure
	// Vocabulary is the file's vocabulary: block; nil without one.
	Vocabulary *Vocabulary
}

// maxConfigDepth is how deep a configuration file (or a selector given on
// the command line) may nest mappings and lists: the deepest the rule
// language goes is about eight (rules, a rule, select, under, attributes, an
// operator), so 32 is room for any real file, while a file nested
// thousands deep (which yaml.v3 parses, up to its own limit of 10000) is
// refused before anything walks it.
const maxConfigDepth = 32

// checkConfigDepth refuses a YAML tree nested deeper than maxConfigDepth,
// or holding an alias (*name) or a merge key (<<), naming the line and
// column of the first such node (in file order). A configuration's values
// are read where they are written, so every message names the place of
// the value it is about; an alias would be read as no value at all, with
// a message about the value wanted instead of the alias. It walks with
// its own stack, never through aliases, so it neither recurses nor loops.
func checkConfigDepth(file string, root *yaml.Node) error {
	type item struct {
		n     *yaml.Node
		depth int
	}
	stack := []item{{root, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.depth > maxConfigDepth {
			return &ConfigError{File: file, Line: it.n.Line, Column: it.n.Column,
				Msg: fmt.Sprintf("nested more than %d levels deep (a configuration is a few levels of mappings and lists)", maxConfigDepth)}
		}
		if err := refuseAlias(file, it.n); err != nil {
			return err
		}
		for i := len(it.n.Content) - 1; i >= 0; i-- { // reversed: popped in file order
			stack = append(stack, item{it.n.Content[i], it.depth + 1})
		}
	}
	return nil
}

// refuseAlias refuses a YAML alias node or a merge key (<<), which a
// configuration does not read: the message says so and how to write the
// value instead.
func refuseAlias(file string, n *yaml.Node) error {
	what := ""
	switch {
	case n.Kind == yaml.AliasNode:
		what = "the alias *" + textfmt.ClipTo(n.Value, 64)
	case n.Kind == yaml.ScalarNode && n.Tag == "!!merge":
		what = "the merge key <<"
	default:
		return nil
	}
	return &ConfigError{File: file, Line: n.Line, Column: n.Column,
		Msg: what + ": a configuration reads no YAML aliases or merge keys; write the value out where it is used"}
}

// LoadConfigFile reads and parses the configuration file at path.
func LoadConfigFile(path string) (*ConfigFile, error) {
	data, err := readConfig(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(path, data)
}

var measureName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// ParseConfig parses configuration file data; path names it in errors. It
// reports every mistake of the file at once, as ParseGateConfig does (the
// two read the same file): ConfigErrors, each with file, line and column.
func ParseConfig(path string, data []byte) (*ConfigFile, error) {
	// The same file's rules: and regressions: belong to the CI gate; parsing
	// the whole file here reports a mistake in them whichever command reads it.
	gc, err := ParseGateConfig(path, data)
	if err != nil {
		return nil, err
	}
	return &ConfigFile{Path: path, Measures: gc.Measures, Vocabulary: gc.Vocabulary}, nil
}

// measureKeys are the keys of a reads-per-request measure.
var measureKeys = []string{"name", "description", "root", "read", "not_under", "complete_when", "expect"}

// parseMeasures reads the measures: list: every measure, and every mistake
// of each. A measure with a mistake but a good name is still returned, so
// the rules naming it do not report a second mistake.
func parseMeasures(n *yaml.Node) ([]ReadMeasure, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, nodeErrorf(n, "measures must be a list of {%s}", nameList(measureKeys))
	}
	var out []ReadMeasure
	var errs ConfigErrors
	note := noter(&errs, n)
	where := map[string]*yaml.Node{}
	for _, item := range n.Content {
		m, err := parseMeasure(item, where)
		note(err)
		if m.Name != "" {
			out = append(out, m)
		}
	}
	return out, errs.err()
}

// parseMeasure reads one measure; where holds the names already defined.
func parseMeasure(item *yaml.Node, where map[string]*yaml.Node) (ReadMeasure, error) {
	m := ReadMeasure{Line: item.Line, Column: item.Column}
	var rootSet, readSet, nameSet bool
	var errs ConfigErrors
	note := noter(&errs, item)
	note(eachKey(item, measureKeys, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "name":
			nameSet = true
			err = measureNameValue(v, where, &m.Name)
		case "description":
			m.Description, err = scalarString(v, "description")
		case "root":
			m.Root, err = ParseSelector(v)
			rootSet = true
		case "read":
			m.Read, err = ParseSelector(v)
			readSet = true
		case "not_under":
			m.NotUnder, err = optionalSelector(v)
		case "complete_when":
			m.CompleteWhen, err = optionalSelector(v)
		case "expect":
			var e int
			if v.Kind != yaml.ScalarNode || v.Decode(&e) != nil || e < 0 {
				return nodeErrorf(v, "expect must be a whole number of reads, 0 or more")
			}
			m.Expect = &e
		}
		return err
	}))
	if item.Kind != yaml.MappingNode {
		return m, errs.err()
	}
	if !nameSet {
		note(nodeErrorf(item, "measure needs a name"))
	}
	if !rootSet {
		note(nodeErrorf(item, "measure %q needs a root selector (the request span)", m.Name))
	}
	if !readSet {
		note(nodeErrorf(item, "measure %q needs a read selector (the spans to count)", m.Name))
	}
	return m, errs.err()
}

// measureNameValue reads a measure's name into dst, refusing a bad or
// repeated one.
func measureNameValue(v *yaml.Node, where map[string]*yaml.Node, dst *string) error {
	name, err := scalarString(v, "name")
	if err != nil {
		return err
	}
	if !measureName.MatchString(name) {
		return nodeErrorf(v, "measure name %q: use letters, digits, '_', '.' or '-'", name)
	}
	if prev, dup := where[name]; dup {
		return nodeErrorf(v, "measure %q already defined at line %d", name, prev.Line)
	}
	where[name] = v
	*dst = name
	return nil
}

// optionalSelector parses a selector given under an optional key.
func optionalSelector(v *yaml.Node) (*Selector, error) {
	s, err := ParseSelector(v)
	if err != nil {
		return nil, err
	}
	return &s, nil
}
