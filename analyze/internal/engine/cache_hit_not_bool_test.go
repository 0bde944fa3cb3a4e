package engine

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestCacheHitOfNoBooleanIsReadAsAbsent reads four invocations of one key:
// the first a miss with a handshake (cache_hit=false), the other three
// hits without one whose cache_hit holds each kind of value in turn. A
// boolean true is a hit; any value that is no boolean (an int, a float, an
// upper-case text, an empty value, an array) says nothing the vocabulary
// gives a meaning, so it is read as absent: the hit is inferred from the
// missing handshake, as with no attribute at all, and a warning names the
// attribute and the values. Read as false, the three hits would be
// unexplained misses and fail a gate. A text "true" is the boolean's own
// text, which the index keeps the same: a hit, with no warning.
func TestCacheHitOfNoBooleanIsReadAsAbsent(t *testing.T) {
	for _, tc := range []struct {
		name     string
		set      func(pcommon.Map) // nil: no attribute
		wantWarn string            // "" for no warning
	}{
		{"bool true", func(m pcommon.Map) { m.PutBool(spans.AttrCacheHit, true) }, ""},
		{"absent", nil, ""},
		{"string true", func(m pcommon.Map) { m.PutStr(spans.AttrCacheHit, "true") }, ""},
		{"int 1", func(m pcommon.Map) { m.PutInt(spans.AttrCacheHit, 1) }, `(values "1")`},
		{"double 1", func(m pcommon.Map) { m.PutDouble(spans.AttrCacheHit, 1) }, `(values "1")`},
		{"string TRUE", func(m pcommon.Map) { m.PutStr(spans.AttrCacheHit, "TRUE") }, `(values "TRUE")`},
		{"empty value", func(m pcommon.Map) { m.PutEmpty(spans.AttrCacheHit) }, `(values "")`},
		{"array", func(m pcommon.Map) { m.PutEmptySlice(spans.AttrCacheHit).AppendEmpty().SetBool(true) }, `(values "[true]")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceName, "gateway")
			for i := range 4 {
				l := lease{trace: uint64(i + 1), start: time.Duration(i) * time.Second, end: time.Duration(i)*time.Second + 500*time.Millisecond,
					key: "k1", session: "s-1"}
				if i == 0 {
					l.hit, l.handshake = false, true
				}
				d.invocation(ss, l)
			}
			if tc.set != nil {
				for k := range ss.Len() {
					s := ss.At(k)
					if s.Name() == spans.SpanAcquire && s.TraceID() != ss.At(0).TraceID() {
						tc.set(s.Attributes())
					}
				}
			}
			r := analyzeTD(t, rulefmt.Config{}, d.td)
			p := r.Pool
			if p.Acquires != 4 || p.Hits != 3 || p.Misses != 1 || p.UnexplainedMisses != 0 {
				t.Errorf("acquires %d, hits %d, misses %d, unexplained %d; want 4, 3, 1, 0", p.Acquires, p.Hits, p.Misses, p.UnexplainedMisses)
			}
			switch {
			case tc.wantWarn == "" && len(r.Warnings) != 0:
				t.Errorf("warnings %q, want none", r.Warnings)
			case tc.wantWarn != "" && (len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "3 acquire span(s) carry "+spans.AttrCacheHit+" as no boolean "+tc.wantWarn)):
				t.Errorf("warnings %q, want one naming %s and %s", r.Warnings, spans.AttrCacheHit, tc.wantWarn)
			}
		})
	}
}
