package index

import (
	"fmt"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// TestTheKeyTableStopsShortOfItsLastID pins that keys past 65535 (the
// uint16 ids' room, less one) are not kept, and the ones before are.
func TestTheKeyTableStopsShortOfItsLastID(t *testing.T) {
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = fmt.Sprintf("key.%d", i)
	}
	x := New(rulefmt.IndexOptions{SpanAttrs: keys})
	if len(x.Keys) != 1<<16-1 {
		t.Fatalf("%d keys kept, want %d", len(x.Keys), 1<<16-1)
	}
	last := keys[1<<16-1-len(vocabSpanAttrs)-1] // the last one with room
	past := keys[1<<16-1-len(vocabSpanAttrs)]
	d := dumptest.New()
	d.Add(d.Resource(), dumptest.Span{Trace: 1, Name: "s", Attrs: []any{last, "kept", past, "not kept"}})
	x.Add(d.Traces())
	if got := spanAttrs(x)["s"]; len(got) != 1 || got[last] != "kept" {
		t.Errorf("span attributes %v, want only %s", got, last)
	}
}
