package analyze

import (
	"encoding/binary"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestTraceSetRemembersEveryTraceAdded pins the speculative run's memory of
// finalized traces through its growths: every id added is found, ids not
// added are not (the bench dumps' shape: a constant half and a counter), and
// adding an id twice counts it once.
func TestTraceSetRemembersEveryTraceAdded(t *testing.T) {
	id := func(n uint64) pcommon.TraceID {
		var b pcommon.TraceID
		binary.BigEndian.PutUint64(b[:8], 0x5eed)
		binary.BigEndian.PutUint64(b[8:], n)
		return b
	}
	var s traceSet
	if s.has(id(1)) {
		t.Fatal("an empty set has a trace")
	}
	const n = 100_000
	for i := range uint64(n) {
		s.add(id(2 * i))
		s.add(id(2 * i)) // again: still one
	}
	if s.n != n {
		t.Errorf("the set counts %d traces, want %d", s.n, n)
	}
	for i := range uint64(n) {
		if !s.has(id(2 * i)) {
			t.Fatalf("trace %d added but not found", 2*i)
		}
		if s.has(id(2*i + 1)) {
			t.Fatalf("trace %d never added but found", 2*i+1)
		}
	}
	if 2*s.n > len(s.slots) {
		t.Errorf("%d traces in %d slots: more than half full", s.n, len(s.slots))
	}
}
