package analyze

import (
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// writerReport says what the writer read with v can show: v's declared and
// derived capabilities (rulefmt.Vocabulary.Shows), its side resolved by
// the calls when v reads both (serverCalls of them written by a server),
// and, for a user's own vocabulary (user) whose calls carry no session,
// the key that would give them one.
func writerReport(v *rulefmt.Vocabulary, serverCalls int, user bool) *report.WriterReport {
	shows := v.Shows(serverCalls > 0)
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

// allCapabilities is every capability there is.
var allCapabilities = rulefmt.CapabilitiesOf((^rulefmt.Capability(0)).Names())
