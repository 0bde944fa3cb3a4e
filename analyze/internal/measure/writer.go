package measure

import (
	"fmt"
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

// EvidenceOf is what e's spans showed of their writer.
func EvidenceOf(e *record.Table) SpanEvidence {
	keyless := 0
	for i := range e.Acquires {
		if e.Acquires[i].Explicit && e.Acquires[i].Key < 0 {
			keyless++
		}
	}
	return SpanEvidence{serverCalls: e.ServerCalls, handshakeSpans: len(e.Handshakes), targetCalls: e.TargetCalls, keylessAcquires: keyless,
		hitsNotBool: e.HitsNotBool, hitAttr: e.HitAttr, hitNotBoolValues: e.HitNotBoolValues}
}

// allCapabilities is every capability there is.
var allCapabilities = rulefmt.CapabilitiesOf((^rulefmt.Capability(0)).Names())

// Shows is what the writer read with v can show, given what its spans
// showed (seen): v's declared and derived capabilities
// (rulefmt.Vocabulary.Shows, a server's side where its calls say so),
// handshake spans only where the dump holds one when acquires are
// inferred (semconv reads initialize spans a server-side writer may never
// write), and a target identity for a client's inferred acquires only
// where a call carries the server's address (a server's own calls all go
// to it). The report and every measure that depends on it ask here.
func Shows(v *rulefmt.Vocabulary, seen SpanEvidence) rulefmt.Capability {
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
