package rulefmt

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Vocabulary describes one writer of MCP traces: which of its spans are
// executions, tool calls, acquires, invocations (leases) and handshakes, and
// which attributes hold the facts the measures need. The vocabulary stage
// (analyze/internal/engine) turns a writer's spans into the same MCP events through it, so
// the measures (hit rate, cold-start floor, miss causes, sessions per
// execution) never depend on who wrote the spans: a new writer is a new
// Vocabulary value, built in (vocabulary_builtin.go) or from a YAML
// `vocabulary:` block (ParseConfig), never an edit to a measure.
//
// Role selectors are lists: a span plays a role when any of them matches it.
// A span is tried as a handshake first, then as an acquire, then as an
// invocation; it may also be a call. The zero Vocabulary reads nothing.
type Vocabulary struct {
	// Name identifies the vocabulary in reports (settings.profile) and on
	// the command line (--profile).
	Name string
	// Executions, when set, selects the root span of an execution, as
	// Config.ExecutionRoot does (which, when set, wins); nil means every
	// trace is one execution.
	Executions *Selector
	// Calls select the tool-call spans: the spans whose sessions the
	// executions measure counts, whose failures fail a lease, and from which
	// acquires are inferred when Acquires is empty.
	Calls []Selector
	// Invocations select the span of one pooled invocation (a lease): the
	// parent of its acquires and, under AcquireOnMiss, the hit an absent
	// acquire implies.
	Invocations []Selector
	// Acquires select explicit acquire spans. Empty means the writer has no
	// pool spans: every call with a session identity is an acquire, and the
	// first call of each session is the miss that opened it (its handshake).
	Acquires []Selector
	// AcquireOnMiss says acquire spans appear only on a miss: an invocation
	// without a first-attempt acquire child reused an idle session.
	AcquireOnMiss bool
	// Handshakes select the spans that open a session. With explicit
	// acquires they are the handshake count and, where an acquire lacks a
	// hit attribute, what makes it a miss; with inferred acquires the count
	// is the sessions' first calls and these spans give the latency only.
	Handshakes []Selector
	// Attributes name the attribute keys that hold each fact.
	Attributes VocabularyAttributes
	// Session says where a call's session identity comes from.
	Session SessionSource
	// Detect selects the spans whose presence marks this writer in a dump:
	// what detection of the vocabulary reads.
	Detect []Selector
	// Capabilities declare what the writer shows beyond what the roles and
	// attribute keys above say (its side, what it parents request spans
	// to): Shows derives the whole set (capabilities.go).
	Capabilities Capabilities
	// Names are how a report names the spans this vocabulary reads when a
	// dump holds none of them (a regular expression reads worse than
	// "tools/call <tool>"); spans with one of these exact names also count
	// as recognised pool spans. Nil: derived from the role selectors.
	Names []string
}

// VocabularyAttributes names the span attribute keys a vocabulary reads; an
// empty key means the writer never records that fact.
type VocabularyAttributes struct {
	// Hit holds a boolean on an acquire: true when it reused a session.
	Hit string
	// Key holds the pool key (a hash of the identity), on the acquire or an
	// ancestor.
	Key string
	// Attempt holds the attempt number of an acquire: 2 or more is the
	// transparent redial.
	Attempt string
	// MissReason holds the pool's own reason for a miss (only
	// health_check is taken from it: the rest the dump can show).
	MissReason string
	// PoolID names the pool scope, on the span or an ancestor (before the
	// resource's service.instance.id and service.name).
	PoolID string
	// Tool holds the tool's name on a call.
	Tool string
	// Revision holds the MCP protocol revision (mcp.protocol.version).
	Revision string
	// ErrorType holds the error type of a failed span; ToolError is its
	// value for a tool's own isError answer, which releases the session
	// cleanly and so is no failure of the lease.
	ErrorType, ToolError string
	// ServerAddress and ServerPort, when acquires are inferred from calls,
	// make up the pool key (the server a session belongs to).
	ServerAddress, ServerPort string
	// ClientAddress holds the caller's address on a server-side span: a
	// call carrying it was written by the server (Shows, for a vocabulary
	// whose side is unknown).
	ClientAddress string
}

// SessionSource says where a call's session identity comes from: an
// attribute of the call (mcp.session.id), or the nearest enclosing span that
// matches a selector (an instrumentation that parents every call to one
// long-lived session span). Both empty: calls carry no session identity.
type SessionSource struct {
	// Attribute is the span attribute holding the session id.
	Attribute string
	// Enclosing selects the session span: a call's session is its nearest
	// ancestor that matches.
	Enclosing *Selector
}

// selectors returns every selector of v, whatever its role, for validation
// and for the index options.
func (v *Vocabulary) selectors() []*Selector {
	var out []*Selector
	if v.Executions != nil {
		out = append(out, v.Executions)
	}
	for _, list := range [][]Selector{v.Calls, v.Invocations, v.Acquires, v.Handshakes, v.Detect} {
		for i := range list {
			out = append(out, &list[i])
		}
	}
	if v.Session.Enclosing != nil {
		out = append(out, v.Session.Enclosing)
	}
	return out
}

// IndexOptions returns the attributes an analyze.Dump must keep for v: every
// attribute key it names and every key its selectors read.
func (v *Vocabulary) IndexOptions() IndexOptions {
	var o IndexOptions
	a := v.Attributes
	for _, k := range []string{a.Hit, a.Key, a.Attempt, a.MissReason, a.PoolID, a.Tool, a.Revision, a.ErrorType, a.ServerAddress, a.ServerPort, a.ClientAddress, v.Session.Attribute} {
		if k != "" {
			o.SpanAttrs = append(o.SpanAttrs, k)
		}
	}
	for _, s := range v.selectors() {
		o.SpanAttrs = append(o.SpanAttrs, s.SpanAttributeKeys()...)
		o.ResourceAttrs = append(o.ResourceAttrs, s.ResourceAttributeKeys()...)
	}
	return o
}

// ErrUnreadableVocabulary is wrapped by Vocabulary.Validate: the vocabulary
// cannot find a single tool call, so every figure would be an empty zero.
var ErrUnreadableVocabulary = errors.New("vocabulary reads no tool calls")

// Validate reports a vocabulary the analyzer cannot use.
func (v *Vocabulary) Validate() error {
	switch {
	case v.Name == "":
		return errors.New("vocabulary without a name")
	case len(v.Calls) == 0:
		return fmt.Errorf("vocabulary %q: %w: give calls", v.Name, ErrUnreadableVocabulary)
	case v.AcquireOnMiss && (len(v.Acquires) == 0 || len(v.Invocations) == 0):
		return fmt.Errorf("vocabulary %q: acquire_on_miss needs acquires and invocations (a hit is an invocation without an acquire)", v.Name)
	}
	for _, list := range [][]Selector{v.Calls, v.Invocations, v.Acquires, v.Handshakes, v.Detect} {
		if len(list) > maxRoleSelectors {
			return fmt.Errorf("vocabulary %q: %d selectors for one role, more than %d (every span is tried against each)", v.Name, len(list), maxRoleSelectors)
		}
	}
	for _, s := range v.selectors() {
		if s.IsZero() {
			return fmt.Errorf("vocabulary %q: an empty selector matches every span", v.Name)
		}
	}
	return nil
}

// PoolSpanNames lists how v names the spans it reads: Names, or the names
// of its role selectors (a regular expression as ~regex).
func (v *Vocabulary) PoolSpanNames() []string {
	if v.Names != nil {
		return slices.Clone(v.Names)
	}
	var out []string
	for _, list := range [][]Selector{v.Invocations, v.Acquires, v.Handshakes, v.Calls} {
		for _, s := range list {
			n := s.Name
			switch {
			case n != "":
			case s.NameRegex != nil:
				n = "~" + s.NameRegex.String()
			default:
				n = s.String()
			}
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// String names v.
func (v *Vocabulary) String() string { return v.Name }

// vocabularyNames lists the built-in names for a message.
func vocabularyNames() string {
	names := make([]string, 0, len(builtinVocabularies)+1)
	for _, p := range Profiles {
		names = append(names, string(p))
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
