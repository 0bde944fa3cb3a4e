package rulefmt

import (
	"math/bits"
	"strings"

	"go.yaml.in/yaml/v3"
)

// What a writer's spans can show. A figure is the truth only when the
// spans carry what it counts: a server-side writer never sees an attempt
// refused before a handler, a writer without a server address cannot tell
// two targets apart, a writer that parents its request spans to a session
// span cannot tie a call to the execution that made it. Each vocabulary
// states its capabilities (derived from its roles and attribute keys where
// they say it, declared where they cannot: Vocabulary.Capabilities); each
// measure and each built-in rule states what it needs (report's measure
// table, Rule.Needs); the report derives from both, per figure, whether it
// is measurable, a bound, or not measurable, and why.

// Capability is a set of things a writer's spans can show, one bit each.
type Capability uint32

// The capabilities.
const (
	// CapCalls: tool-call spans.
	CapCalls Capability = 1 << iota
	// CapExecutions: a call's span is parented to the caller's context, so
	// it sits under the execution that made it.
	CapExecutions
	// CapSessionID: calls carry a session identity (an attribute or an
	// enclosing session span).
	CapSessionID
	// CapAcquires: acquires are seen, as acquire spans or as calls with a
	// session identity (the first call of a session its miss).
	CapAcquires
	// CapHandshakes: sessions opened are seen, as handshake spans or as the
	// first calls of sessions.
	CapHandshakes
	// CapAcquireSpans: the pool writes a span per acquire.
	CapAcquireSpans
	// CapInvocationSpans: the pool writes a span per invocation (lease).
	CapInvocationSpans
	// CapHandshakeSpans: the writer writes a span per handshake.
	CapHandshakeSpans
	// CapTargetIdentity: an acquire says which server it is for (a pool
	// key, or the server's address), so two targets are two keys.
	CapTargetIdentity
	// CapRefusedAttempts: the writer sees an attempt refused before a
	// handler (a 404 on a forgotten session): a client-side writer.
	CapRefusedAttempts
	// CapPoolSettings: the pool recorded its settings (idle TTL) on its
	// spans, so a miss after the TTL is told from an unexplained one.
	CapPoolSettings
	// CapCallAttempts: each attempt of a call is its own span (a writer
	// that retries inside one span counts fewer calls than were sent).
	CapCallAttempts
	// CapAcquireAttempts: an acquire span carries its attempt number (the
	// vocabulary maps attributes.attempt), so the transparent redial, a
	// second attempt after a reused session expired, is told from a miss
	// of another cause.
	CapAcquireAttempts

	capEnd
)

// capabilityNames are the names of the capabilities in reports and YAML,
// with why a figure needing one is not the truth without it.
var capabilityNames = []struct {
	c         Capability
	name, why string
}{
	{CapCalls, "calls", "the writer writes no tool-call span the vocabulary reads"},
	{CapExecutions, "executions", "the writer's request spans are not parented to the caller's context, so no call sits under the execution that made it"},
	{CapSessionID, "session_id", "the calls carry no session identity"},
	{CapAcquires, "acquires", "the writer shows no acquire: no acquire span, and no session identity on the calls to infer them from"},
	{CapHandshakes, "handshakes", "the writer shows no handshake: no handshake span, and no session identity on the calls to infer them from"},
	{CapAcquireSpans, "acquire_spans", "the writer writes no acquire span"},
	{CapInvocationSpans, "invocation_spans", "the writer writes no invocation span"},
	{CapHandshakeSpans, "handshake_spans", "the writer writes no handshake span"},
	{CapTargetIdentity, "target_identity", "the spans carry no target identity (no pool key, no server address): two targets read as one key"},
	{CapRefusedAttempts, "refused_attempts", "a server-side writer never sees an attempt refused before a handler (a 404 on a forgotten session)"},
	{CapPoolSettings, "pool_settings", "the pool recorded no settings on its spans"},
	{CapCallAttempts, "call_attempts", "the writer retries a call inside one span, so a span may be several attempts"},
	{CapAcquireAttempts, "acquire_attempts", "no acquire span carries an attempt number, so a redial (a second attempt after a reused session expired) reads as a miss of another cause"},
}

// LaterCapabilities are the capabilities a report's writer section may
// predate: a section naming one in neither its shows nor its lacks was
// written before the capability was, and showed what it claims of it
// (report.WriterReport reads it so, as a report without a writer section
// shows everything).
const LaterCapabilities = CapAcquireAttempts

// Has reports whether c holds every capability of need.
func (c Capability) Has(need Capability) bool { return need&^c == 0 }

// Names lists the names of c's capabilities, in declaration order.
func (c Capability) Names() []string {
	out := make([]string, 0, bits.OnesCount32(uint32(c)))
	for _, n := range capabilityNames {
		if c&n.c != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// Why says, for people, why a figure needing the capabilities of c (those
// the writer lacks) is not the truth: one reason per capability, joined.
func (c Capability) Why() string {
	var out []string
	for _, n := range capabilityNames {
		if c&n.c != 0 {
			out = append(out, n.why)
		}
	}
	return strings.Join(out, "; ")
}

// CapabilityByName returns the capability named name, false for none.
func CapabilityByName(name string) (Capability, bool) {
	for _, n := range capabilityNames {
		if n.name == name {
			return n.c, true
		}
	}
	return 0, false
}

// CapabilitiesOf reads a list of capability names (a report's
// writer.shows); unknown names are skipped, so a report written by a
// later version still reads.
func CapabilitiesOf(names []string) Capability {
	var c Capability
	for _, name := range names {
		if k, ok := CapabilityByName(name); ok {
			c |= k
		}
	}
	return c
}

// Side is where a writer sits on the MCP connection.
type Side string

// The sides.
const (
	// SideUnknown: the vocabulary reads both (the conventions'): the spans
	// say which, by their kind and client.address.
	SideUnknown Side = ""
	// SideClient: the writer is the client; it sees every attempt.
	SideClient Side = "client"
	// SideServer: the writer is the server; an attempt refused before a
	// handler never reaches it.
	SideServer Side = "server"
)

// Parenting is what a writer parents its request spans to.
type Parenting string

// The parentings.
const (
	// ParentCaller: the caller's context, so a call sits under the
	// execution that made it (the default).
	ParentCaller Parenting = "caller"
	// ParentSession: a long-lived session span (OpenLLMetry's): a call
	// sits under whichever execution opened the session, so executions
	// are measurable only where the spans show each session within one
	// execution (analyze/internal/engine/measurable.go and vocab's rootClock).
	ParentSession Parenting = "session"
	// ParentNone: nothing; request spans are roots (a server that gets no
	// context): executions are never measurable.
	ParentNone Parenting = "none"
)

// Capabilities are what a vocabulary declares of its writer beyond what
// its roles and attribute keys say (Vocabulary.Shows derives the rest).
// The zero value is a client-side writer parenting calls to the caller,
// sides unknown resolved by the spans, no pool settings recorded.
type Capabilities struct {
	// Side is where the writer sits; SideUnknown lets the spans say.
	Side Side
	// Parenting is what request spans are parented to; "" is ParentCaller.
	Parenting Parenting
	// PoolSettings says the pool records its settings on its spans.
	PoolSettings bool
	// NoTargetIdentity says the key and server address the attributes name
	// do not tell targets apart (a constant key): target identity is then
	// not shown whatever the attributes say.
	NoTargetIdentity bool
	// RetriesInOneSpan says the writer retries a call inside the span of
	// its first attempt: the call count is then a lower bound.
	RetriesInOneSpan bool
}

// Shows returns what v's spans can show, given the side the spans revealed
// when v's own is unknown (serverSeen: its calls were written by a
// server). It is derived from v's roles and attribute keys and its declared
// Capabilities: the one place a vocabulary's capabilities are read.
func (v *Vocabulary) Shows(serverSeen bool) Capability {
	var c Capability
	session := v.Session.Attribute != "" || v.Session.Enclosing != nil
	add := func(ok bool, k Capability) {
		if ok {
			c |= k
		}
	}
	add(len(v.Calls) > 0, CapCalls)
	add(session, CapSessionID)
	add(len(v.Acquires) > 0 || session, CapAcquires)
	add(len(v.Handshakes) > 0 || (len(v.Acquires) == 0 && session), CapHandshakes)
	add(len(v.Acquires) > 0, CapAcquireSpans)
	add(len(v.Invocations) > 0, CapInvocationSpans)
	add(len(v.Handshakes) > 0, CapHandshakeSpans)
	a := v.Attributes
	add(!v.Capabilities.NoTargetIdentity && (a.Key != "" || a.ServerAddress != ""), CapTargetIdentity)
	add(v.Capabilities.Parenting != ParentNone, CapExecutions)
	side := v.Capabilities.Side
	if side == SideUnknown && serverSeen {
		side = SideServer
	}
	add(side != SideServer, CapRefusedAttempts)
	add(v.Capabilities.PoolSettings, CapPoolSettings)
	add(!v.Capabilities.RetriesInOneSpan, CapCallAttempts)
	add(len(v.Acquires) > 0 && a.Attempt != "", CapAcquireAttempts)
	return c
}

// SessionKeyHint says which key of a vocabulary block gives calls a
// session identity: what a report without session figures tells the user
// to add.
const SessionKeyHint = "vocabulary.session: {attribute: KEY} (the calls' session id attribute) or {enclosing: SELECTOR} (a session span above them)"

// capabilityKeys are the keys of a vocabulary block's capabilities:
// mapping.
var capabilityKeys = []string{"side", "parenting", "pool_settings", "target_identity", "call_attempts"}

// parseCapabilities reads capabilities: {side: client|server, parenting:
// caller|session|none, pool_settings: BOOL, target_identity: BOOL,
// call_attempts: BOOL} over what dst holds (a base's).
func parseCapabilities(n *yaml.Node, dst *Capabilities) error {
	if n.Kind != yaml.MappingNode {
		return nodeErrorf(n, "capabilities must be a mapping with keys %s", strings.Join(capabilityKeys, ", "))
	}
	var errs ConfigErrors
	note := noter(&errs, n)
	c := *dst
	eachKeyAll(n, capabilityKeys, note, func(key string, _, v *yaml.Node) {
		switch key {
		case "side":
			var s string
			note(oneOf(v, "side", []string{string(SideClient), string(SideServer)}, &s))
			c.Side = Side(s)
		case "parenting":
			var s string
			note(oneOf(v, "parenting", []string{string(ParentCaller), string(ParentSession), string(ParentNone)}, &s))
			c.Parenting = Parenting(s)
		case "pool_settings":
			c.PoolSettings = yamlBool(v, key, note)
		case "target_identity":
			c.NoTargetIdentity = !yamlBool(v, key, note)
		case "call_attempts":
			c.RetriesInOneSpan = !yamlBool(v, key, note)
		}
	})
	if len(errs) > 0 {
		return errs
	}
	*dst = c
	return nil
}

// yamlBool reads a true or false scalar; false (and a note) else.
func yamlBool(v *yaml.Node, what string, note func(error)) bool {
	var b bool
	if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
		note(nodeErrorf(v, "%s must be true or false", what))
	}
	return b
}

// AllNeeds returns what r needs of the writer's spans: its own Needs and
// what its quantities need (sessions per execution need calls tied to
// executions and a session identity; a lost session is seen only where
// the refused call is). What its measures need is the report's to say
// (report.Report.FigureOf).
func (r *Rule) AllNeeds() Capability {
	c := r.Needs
	for _, ex := range r.Expect {
		switch {
		case ex.Of == QuantityPoolSessions:
			c |= CapCalls | CapExecutions | CapSessionID
		case ex.Of == QuantityLostSessions:
			c |= CapCalls | CapExecutions | CapSessionID | CapRefusedAttempts
		}
	}
	return c
}
