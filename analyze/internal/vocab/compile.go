package vocab

import (
	"fmt"
	"slices"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/poll"
	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/internal/selector"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// Compiled is a Vocabulary compiled against one finished index: its role
// selectors as matchers, the ids of the attribute keys it names and of the
// values the stage compares with. The vocabulary stage (stage.go) is its
// only reader: the measures read the events it produces, never a span name.
type Compiled struct {
	x   *index.Index
	voc *rulefmt.Vocabulary
	// poll stops the stage's long loops when the context of
	// [AnalyzeContext] is done; nil never stops.
	poll *poll.Poll

	calls, Invocations, acquires, handshakes role
	session                                  *selector.Matcher // Session.Enclosing, nil when unset
	// clock ties each call to its execution (measurable.go).
	clock rootClock
	// inferred says the vocabulary has no acquire spans: acquires are
	// inferred from calls, a session's first call the miss.
	inferred bool

	kHit, kKey, kAttempt, kReason, kPoolID, KSession, kErrType, kAddr, kPort, kRevision uint16
	kClient                                                                             uint16 // Attributes.ClientAddress: a server-side call
	rInstance, rService                                                                 uint16
	kPrewarm                                                                            uint16 // spans.AttrPrewarm: the pool's own, whatever the vocabulary
	kScope                                                                              int32  // --scope-attr key id, -1 when unset

	// settingOf gives, per key id, the key's place in
	// spans.PoolSettingsAttrs (the pool's own, whatever the vocabulary),
	// -1 for any other key; nil when the index holds none of them. An
	// acquire's attributes are read once for all the settings, where
	// looking each setting up among them cost 0.4% of a run's
	// instructions.
	settingOf []int8

	valTrue, valToolError, valHealthCheck int32 // value ids, -1 when absent

	// nameKinds holds, per name id, what a span's name alone says of it:
	// kindPool, and the bit of each role a name-only selector of which
	// matches it. The roles share it, and the stage reads it once per
	// span where each role read a table of its own (0.4% of a run's
	// instructions).
	nameKinds []uint8

	// inh holds, per key asked, inherited's values per span index,
	// computed on first use: a handful of keys at most, so a list is
	// searched faster than a map is hashed, once per call span.
	inh []inheritedKey
}

// inheritedKey answers the values of key per span index
// (index.InheritedValues).
type inheritedKey struct {
	key  uint16
	vals *index.UpValues
}

// noKey is the id of an attribute key the index does not hold: no span
// carries it, so a lookup finds nothing.
const noKey = ^uint16(0)

// Compile compiles the vocabulary cfg resolves to for x (detect.go)
// against x: its roles' selectors, and its attribute keys and values as
// x's ids, looked up once so the stage compares ids span by span.
func Compile(x *index.Index, cfg rulefmt.Config) (*Compiled, error) {
	x.Finish()
	voc := Resolve(cfg, x).ActiveVocabulary() // detect.go
	v := &Compiled{x: x, voc: voc, kScope: -1, inferred: len(voc.Acquires) == 0}
	v.nameKinds = make([]uint8, len(x.Names))
	for i, n := range x.Names {
		if slices.Contains(voc.Names, n) {
			v.nameKinds[i] = kindPool
		}
	}
	if err := v.compileRoles(); err != nil {
		return nil, err
	}
	v.clock = rootClock{x: x, session: v.session}
	v.resolveKeys()
	if cfg.ScopeAttr != "" {
		if id, ok := x.LookupKey(cfg.ScopeAttr); ok {
			v.kScope = int32(id)
		}
	}
	v.valTrue = 1 // newIndex interns "false" and "true" first
	v.valToolError = -1
	if voc.Attributes.ToolError != "" {
		v.valToolError = x.ValueID(voc.Attributes.ToolError)
	}
	v.valHealthCheck = x.ValueID(spans.MissHealthCheck)
	return v, nil
}

// The bits of Compiled.nameKinds: the name is one of Vocabulary.Names (a
// recognised pool span), and which roles' name-only selectors match it.
const (
	kindPool uint8 = 1 << iota
	kindHandshake
	kindAcquire
	kindInvocation
	kindCall
)

// compileRoles compiles the vocabulary's role selectors and its enclosing
// session selector against the index. It compiles them all and returns
// the first error, naming the vocabulary.
func (v *Compiled) compileRoles() error {
	x, voc := v.x, v.voc
	var err error
	compile := func(sels []rulefmt.Selector) []*selector.Matcher {
		out := make([]*selector.Matcher, 0, len(sels))
		for _, sel := range sels {
			m, cerr := selector.Compile(x, sel)
			if cerr != nil {
				if err == nil {
					err = fmt.Errorf("vocabulary %q: %w", voc.Name, cerr)
				}
				continue
			}
			out = append(out, m)
		}
		return out
	}
	v.calls = v.newRole(compile(voc.Calls), kindCall)
	v.Invocations = v.newRole(compile(voc.Invocations), kindInvocation)
	v.acquires = v.newRole(compile(voc.Acquires), kindAcquire)
	v.handshakes = v.newRole(compile(voc.Handshakes), kindHandshake)
	if voc.Session.Enclosing != nil {
		if ms := compile([]rulefmt.Selector{*voc.Session.Enclosing}); len(ms) == 1 {
			v.session = ms[0]
		}
	}
	return err
}

// resolveKeys looks up the index's id of every attribute key the
// vocabulary names (noKey for an empty name or one no span carries).
func (v *Compiled) resolveKeys() {
	key := func(k string) uint16 {
		if id, ok := v.x.LookupKey(k); ok && k != "" {
			return id
		}
		return noKey
	}
	a := v.voc.Attributes
	v.kHit, v.kKey, v.kAttempt = key(a.Hit), key(a.Key), key(a.Attempt)
	v.kReason, v.kPoolID, v.KSession = key(a.MissReason), key(a.PoolID), key(v.voc.Session.Attribute)
	v.kErrType, v.kRevision = key(a.ErrorType), key(a.Revision)
	v.kAddr, v.kPort, v.kClient = key(a.ServerAddress), key(a.ServerPort), key(a.ClientAddress)
	v.rInstance, v.rService = key(spans.ResourceServiceInstanceID), key(spans.ResourceServiceName)
	v.kPrewarm = key(spans.AttrPrewarm)
	for i, k := range spans.PoolSettingsAttrs {
		id := key(k)
		if id == noKey {
			continue
		}
		if v.settingOf == nil {
			v.settingOf = make([]int8, len(v.x.Keys))
			for j := range v.settingOf {
				v.settingOf[j] = -1
			}
		}
		v.settingOf[id] = int8(i)
	}
}

// role is one role's selectors compiled against an index: those that read
// nothing but the span name folded into its bit of the shared name table
// (Compiled.nameKinds: a span of the stage then costs one lookup for
// every role, as a switch on the name did), the others matched span by
// span.
type role struct {
	x      *index.Index
	kinds  []uint8 // Compiled.nameKinds
	bit    uint8   // the role's bit in kinds
	others []*selector.Matcher
}

// newRole folds ms into a role whose bit in nameKinds is bit.
func (v *Compiled) newRole(ms []*selector.Matcher, bit uint8) role {
	r := role{x: v.x, kinds: v.nameKinds, bit: bit}
	for _, m := range ms {
		if m.AnyName || m.Kind > 0 || m.Status >= 0 || len(m.Attrs) > 0 || len(m.Res) > 0 {
			r.others = append(r.others, m)
			continue
		}
		for id, ok := range m.NameOK {
			if ok {
				r.kinds[id] |= bit
			}
		}
	}
	return r
}

// bound returns how many spans may play the role at most: the spans of the
// names its selectors can match (perName counts spans by name id), or all
// n spans when a selector matches any name. The stage sizes its event
// slices with it, so building them leaves no garbage of regrown copies (a
// 200k-scope dump: 180 MB of it).
func (r *role) bound(perName []int32, n int) int {
	total := 0
	for id, c := range perName {
		can := r.kinds[id]&r.bit != 0
		for _, m := range r.others {
			if m.AnyName {
				return n
			}
			can = can || (id < len(m.NameOK) && m.NameOK[id])
		}
		if can {
			total += int(c)
		}
	}
	return total
}

// Match reports whether span i plays the role.
func (r *role) Match(i int32) bool { return r.plays(i, r.kinds[r.x.Span(i).Name]) }

// plays is Match for span i whose name's kinds the caller holds (the
// stage reads them once for every role).
func (r *role) plays(i int32, kinds uint8) bool { return kinds&r.bit != 0 || r.matchRest(i) }

// matchRest reports whether a selector that reads more than the name
// matches span i.
func (r *role) matchRest(i int32) bool { return len(r.others) > 0 && r.matchOthers(i) }

// matchOthers reports whether one of the selectors that read more than
// the name matches span i: out of matchRest, so that the common role,
// names only, is decided inline in the stage's loop (inlined itself, it
// would make matchRest too large to inline).
//
//go:noinline
func (r *role) matchOthers(i int32) bool {
	for _, m := range r.others {
		if m.Match(i) {
			return true
		}
	}
	return false
}

// failed reports whether span i ended in a failure that drops the pool's
// session: status error, unless the error is only the tool's own isError
// answer, which is a clean release.
func (v *Compiled) failed(i int32) bool {
	s := v.x.Span(i)
	return v.failedSpan(s, v.x.AttrsOf(s))
}

// failedSpan is failed for span s with attributes attrs.
func (v *Compiled) failedSpan(s *index.Span, attrs []index.Attr) bool {
	if s.Status != index.StatusError {
		return false
	}
	t := valIn(attrs, v.kErrType)
	return t < 0 || t != v.valToolError
}

// inherited returns the value of key on span i or its nearest ancestor that
// has it: the pool may set scope and key on the invoke span only.
// Each key's values are resolved as spans are asked about, each span once
// (index.UpValues), so a deep chain costs no walk per span and the spans
// no pool span lies under are never walked.
func (v *Compiled) inherited(i int32, key uint16) (int32, bool) {
	var vals *index.UpValues
	for _, k := range v.inh {
		if k.key == key {
			vals = k.vals
			break
		}
	}
	if vals == nil {
		vals = v.x.InheritedValues(key)
		v.inh = append(v.inh, inheritedKey{key, vals})
	}
	if val := vals.At(i); val >= 0 {
		return val, true
	}
	return 0, false
}

// scopeOf names the pool scope of span i as an interned value, -1 when
// nothing names it. With --scope-attr only that attribute counts.
func (v *Compiled) scopeOf(i int32) int32 {
	if v.kScope >= 0 {
		k := uint16(v.kScope)
		if val, ok := v.inherited(i, k); ok {
			return val
		}
		if val, ok := v.x.ResAttrVal(i, k); ok {
			return val
		}
		return -1
	}
	if val, ok := v.inherited(i, v.kPoolID); ok {
		return val
	}
	if val, ok := v.x.ResAttrVal(i, v.rInstance); ok {
		return val
	}
	if val, ok := v.x.ResAttrVal(i, v.rService); ok {
		return val
	}
	return -1
}

// rootClock answers, for the calls of one index, whether a call outlives
// the root span of its execution.
type rootClock struct {
	x *index.Index
	// session matches a span known to be a session, never an execution
	// (the vocabulary's enclosing session span: OpenLLMetry's
	// mcp.client.session); nil when the vocabulary names none.
	session *selector.Matcher
	// top answers, per span index, the topmost ancestor (itself for a
	// root), or -1 under a missing parent: made on first need
	// (index.Roots).
	top *index.UpValues
}

// traceRootOf returns the root span of i's trace above it, -1 when its
// chain ends at a missing parent (the root is not in the dump, so there is
// no end to compare with).
func (c *rootClock) traceRootOf(i int32) int32 {
	if c.top == nil {
		c.top = c.x.Roots()
	}
	return c.top.At(i)
}

// isSession reports whether span root (-1 none) is a session span, which
// spans many executions and is none.
func (c *rootClock) isSession(root int32) bool {
	return root >= 0 && c.session != nil && c.session.Match(root)
}

// outlives reports whether call i ends after root's end (strictly: a call
// ending with its root is within it). root -1 never is outlived.
func (c *rootClock) outlives(i, root int32) bool {
	return root >= 0 && c.x.Span(i).End > c.x.Span(root).End
}

// tie says whether call i is tied to its execution: exec is the
// execution's root span when byRoot (an execution root selector; -1 under
// none), else the call's trace, whose root span this finds. A call under no
// root, a call that is its own trace's root, and a call under a session
// span as its trace's root are outside; a call ending after its root's end
// outlives it; the rest are tied.
func (c *rootClock) tie(i, exec int32, byRoot bool) record.Tie {
	root := exec
	if !byRoot {
		if root = c.traceRootOf(i); root == i || c.isSession(root) {
			return record.TieOutsideRoot
		}
	}
	switch {
	case byRoot && root < 0:
		return record.TieOutsideRoot
	case c.outlives(i, root):
		return record.TieOutlivesRoot
	}
	return record.Tied
}

// execNames counts, per name of an execution's root span, the executions
// holding a call and those holding none, for a writer whose request spans
// are parented to a session span (nil for any other: there an execution
// without a call is one that called no tool). An execution is a trace,
// its root span's name the key, or with root a span root matches.
func (v *Compiled) execNames(e *record.Table, root *selector.Matcher) map[string][2]int {
	if v.voc.Capabilities.Parenting != rulefmt.ParentSession {
		return nil
	}
	x := v.x
	withCall := map[int32]bool{}
	for _, c := range e.Calls {
		if root != nil {
			withCall[c.Exec] = true
		} else {
			withCall[c.Trace] = true
		}
	}
	out := map[string][2]int{}
	for _, i := range x.Order {
		s := x.Span(i)
		key := i
		switch {
		case root != nil && !root.Match(i):
			continue
		case root == nil && s.Parent != index.ParentNone:
			continue
		case root == nil:
			key = s.Trace
		}
		n := out[x.Names[s.Name]]
		if withCall[key] {
			n[0]++
		} else {
			n[1]++
		}
		out[x.Names[s.Name]] = n
	}
	return out
}
