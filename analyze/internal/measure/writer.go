package measure

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// WriterReport says what the writer read with v can show (Shows), its
// side resolved by the calls when v reads both (seen.serverCalls of them
// written by a server), and, for a user's own vocabulary (user) whose
// calls carry no session, the key that would give them one.
func WriterReport(v *rulefmt.Vocabulary, seen SpanEvidence, user bool) *report.WriterReport {
	serverCalls := seen.serverCalls
	shows := Shows(v, seen)
	side := v.Capabilities.Side
	switch {
	case side != rulefmt.SideUnknown:
	case serverCalls > 0:
		side = rulefmt.SideServer
	default:
		side = rulefmt.SideClient
	}
	parenting := v.Capabilities.Parenting
	if parenting == "" {
		parenting = rulefmt.ParentCaller
	}
	w := &report.WriterReport{Vocabulary: v.Name, Side: side, Parenting: parenting, ServerCalls: serverCalls,
		Shows: shows.Names(), Lacks: (^shows & allCapabilities).Names()}
	if showsBySpans(v, seen).Has(rulefmt.CapTargetIdentity) && !shows.Has(rulefmt.CapTargetIdentity) {
		// Only the lone surrogates took it: the vocabulary's reason would be wrong.
		w.IdentityLost = seen.identityLost()
	}
	if shows.Has(rulefmt.CapSessionID) && seen.loneSurrogates > 0 && seen.replacedSessions > 0 {
		w.SessionsMerged = seen.sessionsMerged()
	}
	if user && !shows.Has(rulefmt.CapSessionID) {
		w.SessionHint = rulefmt.SessionKeyHint
	}
	return w
}

// SpanEvidence is what the spans showed of their writer, beyond its
// vocabulary: counts, so observations merge by adding.
type SpanEvidence struct {
	// serverCalls counts the calls a server wrote; handshakeSpans the
	// handshake spans the vocabulary read; targetCalls the calls carrying
	// the server's address; keylessAcquires the acquire spans that carry
	// no cache key (nor inherit one).
	serverCalls, handshakeSpans, targetCalls, keylessAcquires int
	// replacedKeys counts the acquires whose pool scope or key holds
	// U+FFFD, what the JSON readers read an escaped lone UTF-16 surrogate
	// as; loneSurrogates the lone surrogates the inputs held
	// (AddInputs). Both at once: two keys may have been read as one.
	// replacedSessions counts the calls whose session identity holds
	// U+FFFD: with lone surrogates in the inputs, two sessions may have
	// been read as one.
	replacedKeys, loneSurrogates, replacedSessions int
	// hitsNotBool counts acquire spans whose hit attribute held no
	// boolean (read as absent); hitNotBoolValues names a few of those values.
	hitsNotBool      int
	hitAttr          string
	hitNotBoolValues []string
}

// Add adds o's counts to e.
func (e *SpanEvidence) Add(o SpanEvidence) {
	e.serverCalls += o.serverCalls
	e.handshakeSpans += o.handshakeSpans
	e.targetCalls += o.targetCalls
	e.keylessAcquires += o.keylessAcquires
	e.replacedKeys += o.replacedKeys
	e.loneSurrogates += o.loneSurrogates
	e.replacedSessions += o.replacedSessions
	e.hitsNotBool += o.hitsNotBool
	if o.hitAttr != "" {
		e.hitAttr = o.hitAttr
	}
	for _, v := range o.hitNotBoolValues {
		e.hitNotBoolValues = record.AddDistinct(e.hitNotBoolValues, v)
	}
}

// Warnings says what the spans carried that the measures could not read
// as written, and how they read it instead; nil when nothing.
func (e *SpanEvidence) Warnings() []string {
	if e.hitsNotBool == 0 {
		return nil
	}
	quoted := make([]string, len(e.hitNotBoolValues))
	for i, v := range e.hitNotBoolValues {
		quoted[i] = strconv.Quote(v)
	}
	return []string{fmt.Sprintf("%d acquire span(s) carry %s as no boolean (values %s): read as absent, a hit inferred from the missing handshake; write it as a boolean (true/false)",
		e.hitsNotBool, e.hitAttr, strings.Join(quoted, ", "))}
}

// AddInputs adds what the readers saw of inputs that the spans cannot
// say: the escaped lone surrogates read as U+FFFD.
func (e *SpanEvidence) AddInputs(inputs []report.InputReport) {
	for _, in := range inputs {
		e.loneSurrogates += in.LoneSurrogates
	}
}

// identityLost says why keys cannot be told apart when lone surrogates
// are what took the target identity away (Shows).
func (e *SpanEvidence) identityLost() string {
	return fmt.Sprintf("the inputs held %d escaped lone UTF-16 surrogates (\\uD800-\\uDFFF without their pair), read as U+FFFD, "+
		"and the pool scope or key of %d acquire(s) holds U+FFFD: keys that differ only in a lone surrogate read as one key",
		e.loneSurrogates, e.replacedKeys)
}

// sessionsMerged says why sessions cannot be told apart when lone
// surrogates may have merged session identities (WriterReport).
func (e *SpanEvidence) sessionsMerged() string {
	return fmt.Sprintf("the inputs held %d escaped lone UTF-16 surrogates (\\uD800-\\uDFFF without their pair), read as U+FFFD, "+
		"and the session identity of %d call(s) holds U+FFFD: sessions that differ only in a lone surrogate read as one session",
		e.loneSurrogates, e.replacedSessions)
}

// EvidenceOf is what e's spans showed of their writer.
func EvidenceOf(e *record.Table) SpanEvidence {
	keyless, replaced := 0, 0
	scope, key := replacementMemo{id: math.MinInt32}, replacementMemo{id: math.MinInt32}
	for i := range e.Acquires {
		a := &e.Acquires[i]
		if Keyless(a) {
			keyless++
		}
		if scope.holds(e, a.Scope) || key.holds(e, a.Key) {
			replaced++
		}
	}
	return SpanEvidence{serverCalls: e.ServerCalls, handshakeSpans: len(e.Handshakes), targetCalls: e.TargetCalls, keylessAcquires: keyless,
		replacedKeys: replaced, replacedSessions: replacedSessions(e), hitsNotBool: e.HitsNotBool, hitAttr: e.HitAttr, hitNotBoolValues: e.HitNotBoolValues}
}

// replacedSessions counts e's calls whose session identity holds U+FFFD
// (holdsReplacement); a call's session is mostly the one before it's, so
// most calls look at no text.
func replacedSessions(e *record.Table) int {
	n := 0
	session := replacementMemo{id: math.MinInt32}
	for i := range e.Calls {
		if session.holds(e, e.Calls[i].Session) {
			n++
		}
	}
	return n
}

// Keyless reports whether a is an acquire span that carries no cache key
// (nor inherits one): every such acquire of a pool scope reads as one key,
// whatever servers they were for, so its spans show no target identity
// (Shows).
func Keyless(a *record.Acquire) bool { return a.Explicit && a.Key < 0 }

// ForScope is e as one pool scope's spans show their writer: e's evidence
// of calls and handshakes, but keyless (Keyless) acquires among the
// scope's own. The pair stage keeps each scope's pairs apart, so another
// scope's keyless acquires merge no key of this one's: a driver counting
// figures per scope (the Collector connector) asks Shows of this.
func (e SpanEvidence) ForScope(keyless int) SpanEvidence {
	e.keylessAcquires = keyless
	return e
}

// replacementMemo remembers whether the string id it was last asked about
// holds U+FFFD: an acquire's scope, and often its key, is the one before
// it's, so most acquires look at no text.
type replacementMemo struct {
	id  int32
	has bool
}

// holds reports whether string id of e holds U+FFFD (holdsReplacement).
func (m *replacementMemo) holds(e *record.Table, id int32) bool {
	if id != m.id {
		m.id, m.has = id, holdsReplacement(e.Str(id))
	}
	return m.has
}

// holdsReplacement reports whether s holds U+FFFD itself, as the readers
// write it for a lone surrogate; a byte that is not valid UTF-8, which
// they keep as it is, does not count (strings.ContainsRune would).
func holdsReplacement(s string) bool { return strings.Contains(s, "\uFFFD") }

// allCapabilities is every capability there is.
var allCapabilities = rulefmt.CapabilitiesOf((^rulefmt.Capability(0)).Names())

// Shows is what the writer read with v can show, given what its spans
// showed (seen): v's declared and derived capabilities
// (rulefmt.Vocabulary.Shows, a server's side where its calls say so),
// handshake spans only where the dump holds one when acquires are
// inferred (semconv reads initialize spans a server-side writer may never
// write), and a target identity for a client's inferred acquires only
// where a call carries the server's address (a server's own calls all go
// to it), nor where the inputs held escaped lone surrogates and a pool
// scope or key holds U+FFFD: every reader reads each lone surrogate as
// U+FFFD, so two keys that differed only there are one. The report and
// every measure that depends on it ask here.
func Shows(v *rulefmt.Vocabulary, seen SpanEvidence) rulefmt.Capability {
	shows := showsBySpans(v, seen)
	if seen.loneSurrogates > 0 && seen.replacedKeys > 0 {
		// A scope or key holding U+FFFD may be two that differed only in
		// a lone surrogate: every reader reads each as U+FFFD.
		shows &^= rulefmt.CapTargetIdentity
	}
	return shows
}

// showsBySpans is Shows but for what the inputs' lone surrogates take.
func showsBySpans(v *rulefmt.Vocabulary, seen SpanEvidence) rulefmt.Capability {
	shows := v.Shows(seen.serverCalls > 0)
	if len(v.Acquires) == 0 && seen.handshakeSpans == 0 {
		shows &^= rulefmt.CapHandshakeSpans
	}
	if len(v.Acquires) == 0 && v.Attributes.Key == "" && seen.targetCalls == 0 && seen.serverCalls == 0 {
		// A client's inferred acquires keyed by no server: two targets, one key.
		shows &^= rulefmt.CapTargetIdentity
	}
	if seen.keylessAcquires > 0 {
		// Acquire spans without a cache key all read as one key, whatever
		// servers they were for.
		shows &^= rulefmt.CapTargetIdentity
	}
	return shows
}
