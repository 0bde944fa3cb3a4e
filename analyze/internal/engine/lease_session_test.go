package engine

import (
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestALeaseTakesItsSessionFromItsFirstCallWithOne pins which session the
// HTML timeline draws a lease on when its acquire names none: its
// handshake's for a miss, else the first call of its invocation that
// starts within the lease (at its start counts) and names a session; a
// call before the lease, or one naming no session, is passed over.
func TestALeaseTakesItsSessionFromItsFirstCallWithOne(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name  string
		build func(d *dump)
		want  string
	}{
		{"the first call within the lease that names a session", func(d *dump) {
			ss := d.resource(spans.ResourceServiceInstanceID, "gw-1")
			inv := d.add(ss, sp{trace: 1, name: spans.SpanInvoke, start: 0, end: 10 * time.Second, attrs: []any{spans.AttrCacheKey, "k"}})
			d.add(ss, sp{trace: 1, parent: inv, name: spans.SpanAcquire, start: time.Second, end: time.Second + ms, attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, true}})
			d.add(ss, callSpan(1, inv, 500*ms, 600*ms, "s-before-the-lease"))
			d.add(ss, sp{trace: 1, parent: inv, name: spans.SpanCallTool, start: 1500 * ms, end: 1600 * ms, attrs: []any{spans.AttrMethodName, spans.MethodToolsCall}})
			d.add(ss, callSpan(1, inv, 3*time.Second, 3100*ms, "s-3"))
			d.add(ss, callSpan(1, inv, 2*time.Second, 2100*ms, "s-2"))
		}, "s-2"},
		{"a call at the lease's very start", func(d *dump) {
			ss := d.resource(spans.ResourceServiceInstanceID, "gw-1")
			inv := d.add(ss, sp{trace: 1, name: spans.SpanInvoke, start: 0, end: 10 * time.Second, attrs: []any{spans.AttrCacheKey, "k"}})
			d.add(ss, sp{trace: 1, parent: inv, name: spans.SpanAcquire, start: time.Second, end: time.Second + ms, attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, true}})
			d.add(ss, callSpan(1, inv, 2*time.Second, 2100*ms, "s-2"))
			d.add(ss, callSpan(1, inv, time.Second, 1100*ms, "s-at-start"))
		}, "s-at-start"},
		{"a miss's handshake, though its acquire is the first span", func(d *dump) {
			ss := d.resource(spans.ResourceServiceInstanceID, "gw-1")
			acq := d.add(ss, sp{trace: 1, id: 2, parent: 1, name: spans.SpanAcquire, start: time.Second, end: 1500 * ms, attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false}})
			d.add(ss, sp{trace: 1, id: 1, name: spans.SpanInvoke, start: 0, end: 10 * time.Second, attrs: []any{spans.AttrCacheKey, "k"}})
			d.add(ss, sp{trace: 1, id: 3, parent: acq, name: spans.SpanHandshake, kind: ptrace.SpanKindClient, start: 1100 * ms, end: 1400 * ms, attrs: []any{spans.AttrSessionID, "s-handshake"}})
			call := callSpan(1, 1, 2*time.Second, 2100*ms, "s-call")
			call.id = 4 // the ids above are given: the next free one is taken
			d.add(ss, call)
		}, "s-handshake"},
		// The root, span 0, is an execution, not an invocation: a call
		// beside the acquire under it belongs to no invocation, so it
		// lends the lease no session, however near.
		{"a call under no invocation", func(d *dump) {
			ss := d.resource(spans.ResourceServiceInstanceID, "gw-1")
			root := d.add(ss, sp{trace: 1, name: "executor.execute", start: 0, end: 10 * time.Second})
			d.add(ss, sp{trace: 1, parent: root, name: spans.SpanAcquire, start: time.Second, end: time.Second + ms, attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, true}})
			d.add(ss, callSpan(1, root, 2*time.Second, 2100*ms, "s-outside"))
		}, ""},
		// "false" is the index's first value (string id 0): a session
		// named so, by a careless or hostile writer, is one like any other.
		{"a session named false", func(d *dump) {
			ss := d.resource(spans.ResourceServiceInstanceID, "gw-1")
			acq := d.add(ss, sp{trace: 1, id: 2, parent: 1, name: spans.SpanAcquire, start: time.Second, end: 1500 * ms, attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false}})
			d.add(ss, sp{trace: 1, id: 1, name: spans.SpanInvoke, start: 0, end: 10 * time.Second, attrs: []any{spans.AttrCacheKey, "k"}})
			d.add(ss, sp{trace: 1, id: 3, parent: acq, name: spans.SpanHandshake, kind: ptrace.SpanKindClient, start: 1100 * ms, end: 1400 * ms, attrs: []any{spans.AttrSessionID, "false"}})
		}, "false"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDump()
			c.build(d)
			x := NewDump(rulefmt.Config{}.IndexOptions())
			x.Add(d.td)
			evs, err := AcquireEvents(x, rulefmt.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != 1 || evs[0].Session != c.want {
				t.Fatalf("acquire events %+v, want one on session %q", evs, c.want)
			}
		})
	}
}
