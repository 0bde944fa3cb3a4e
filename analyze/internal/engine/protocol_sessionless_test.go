package engine

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestRevisionIsSessionlessByItsNameOrByItsCalls pins by_protocol's
// sessionless flag: a revision from SessionlessProtocol on is sessionless
// by its name whatever its calls carry (a session id, or no call at all);
// an earlier named revision is sessionless only when it has calls and none
// carried a session id; the unnamed group never is.
func TestRevisionIsSessionlessByItsNameOrByItsCalls(t *testing.T) {
	for _, tc := range []struct {
		name, revision string
		calls          bool
		session        string
		want           bool
	}{
		{"the sessionless revision, its calls with a session id", spans.ProtocolModern, true, "s1", true},
		{"the sessionless revision, no call", spans.ProtocolModern, false, "", true},
		{"the sessionless revision, its calls without one", spans.ProtocolModern, true, "", true},
		{"an earlier revision, its calls with a session id", spans.ProtocolLegacy, true, "s1", false},
		{"an earlier revision, its calls without one", spans.ProtocolLegacy, true, "", true},
		{"an earlier revision, no call", spans.ProtocolLegacy, false, "", false},
		{"no revision, calls without a session id", "", true, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceInstanceID, "gw")
			for tr := uint64(1); tr <= 2; tr++ {
				at := time.Duration(tr) * time.Second
				var ver []any
				if tc.revision != "" {
					ver = []any{spans.AttrProtocolVersion, tc.revision}
				}
				inv := d.add(ss, sp{trace: tr, name: spans.SpanInvoke, start: at, end: at + 100*time.Millisecond, attrs: []any{spans.AttrCacheKey, "k"}})
				d.add(ss, sp{trace: tr, parent: inv, name: spans.SpanAcquire, start: at, end: at + 10*time.Millisecond,
					attrs: append([]any{spans.AttrCacheKey, "k", spans.AttrCacheHit, tr > 1}, ver...)})
				if tc.calls {
					attrs := append([]any{spans.AttrMethodName, spans.MethodToolsCall}, ver...)
					if tc.session != "" {
						attrs = append(attrs, spans.AttrSessionID, tc.session)
					}
					d.add(ss, sp{trace: tr, parent: inv, name: spans.SpanCallTool, kind: ptrace.SpanKindClient, start: at + 10*time.Millisecond, end: at + 100*time.Millisecond, attrs: attrs})
				}
			}
			r := analyzeTD(t, rulefmt.Config{}, d.td)
			if len(r.ByProtocol) != 1 || r.ByProtocol[0].ProtocolVersion != tc.revision || r.ByProtocol[0].Acquires != 2 {
				t.Fatalf("by_protocol = %+v, want one group of revision %q with 2 acquires", r.ByProtocol, tc.revision)
			}
			if got := r.ByProtocol[0].Sessionless; got != tc.want {
				t.Errorf("sessionless = %v, want %v (%+v)", got, tc.want, r.ByProtocol[0])
			}
		})
	}
}
