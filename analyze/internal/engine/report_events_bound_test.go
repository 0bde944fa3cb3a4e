package engine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestHTMLRunRetainsAFewDozenBytesAnAcquire pins what the HTML report's run
// keeps of a dump of many pool keys, one cold acquire each: the report and
// its events hold each acquire as its attributed event and a dozen bytes
// beside it, never an AcquireEvent with its ids in hex, nor the index. The
// bound is generous (the attributed event alone is some 64 bytes); an
// acquire held as an AcquireEvent, or the index kept, costs twice it.
func TestHTMLRunRetainsAFewDozenBytesAnAcquire(t *testing.T) {
	n := 200_000
	if raceEnabled {
		n = 50_000
	}
	path := manyKeysDump(t, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	run, err := AnalyzeDumps(context.Background(), ingest.Files{path}, rulefmt.Config{}, RunOptions{Events: true})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := run.Events.NumAcquires(); got != n {
		t.Fatalf("%d acquires in the events, want %d", got, n)
	}
	const perAcquire = 160
	if kept := int64(after.HeapAlloc) - int64(before.HeapAlloc); kept > int64(n)*perAcquire {
		t.Errorf("the run keeps %d bytes for %d acquires (%d an acquire), want at most %d an acquire", kept, n, kept/int64(n), perAcquire)
	}
	runtime.KeepAlive(run)
}

// manyKeysDump writes n pool keys of one scope, one cold acquire each, a
// microsecond apart, as OTLP JSON lines of a thousand spans (one line
// would pass the reader's record limit).
func manyKeysDump(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.otlp.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	const t0 = 1777539600_000_000_000
	for i := 0; i < n; {
		fmt.Fprintf(w, `{"resourceSpans":[{"resource":{"attributes":[{"key":%q,"value":{"stringValue":"gw"}}]},"scopeSpans":[{"spans":[`, spans.ResourceServiceName)
		for k := 0; k < 1000 && i < n; k, i = k+1, i+1 {
			if k > 0 {
				w.WriteString(",")
			}
			fmt.Fprintf(w, `{"traceId":"%032x","spanId":"%016x","name":%q,"kind":1,"startTimeUnixNano":"%d","endTimeUnixNano":"%d",`+
				`"attributes":[{"key":%q,"value":{"stringValue":"key-%d"}},{"key":%q,"value":{"boolValue":false}},{"key":%q,"value":{"stringValue":%q}}]}`,
				i+1, i+1, spans.SpanAcquire, t0+i*1000, t0+i*1000+500, spans.AttrCacheKey, i, spans.AttrCacheHit, spans.AttrMissReason, spans.MissCold)
		}
		w.WriteString("]}]}]}\n")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
