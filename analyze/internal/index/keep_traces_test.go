package index

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// keepDump is a dump of traces spread over three resources, arriving
// interleaved, with copies of spans and parents left out, in batches: the
// shapes KeepTraces must number again as a copy would.
func keepDump(rng *rand.Rand, traces, spansEach int) []*dumptest.Builder {
	var batches []*dumptest.Builder
	d := dumptest.New()
	res := []func() []string{
		func() []string {
			return []string{spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, "i-1"}
		},
		func() []string { return []string{spans.ResourceServiceName, "other"} },
		func() []string { return []string{spans.ResourceServiceName, "third"} },
	}
	n := 0
	for k := range spansEach {
		for tr := range traces {
			trace := uint64(tr + 1)
			if rng.IntN(8) == 0 && k > 0 {
				continue // traces of different sizes
			}
			id := uint64(k + 1) // the same span ids in every trace
			parent := uint64(0)
			if k > 0 {
				parent = uint64(rng.IntN(k) + 1)
				if rng.IntN(200) == 0 {
					parent = 1 << 40 // never arrives: the trace is incomplete
				}
			}
			s := dumptest.Span{Trace: trace, ID: id, Parent: parent, Name: fmt.Sprintf("op-%d", rng.IntN(5)),
				Start: time.Duration(n), End: time.Duration(n + 5),
				Attrs: []any{spans.AttrSessionID, fmt.Sprintf("s-%d", tr%7)}}
			ss := d.Resource(res[rng.IntN(len(res))]()...)
			d.Add(ss, s)
			if rng.IntN(10) == 0 {
				d.Add(ss, s) // a copy
			}
			n++
			if n%997 == 0 {
				batches = append(batches, d)
				d = dumptest.New()
			}
		}
	}
	return append(batches, d)
}

// describe writes out everything a query of the finished x can read: each
// trace in order, its spans in order with their names, attributes,
// resource and parent, and the counts.
func describe(x *Index) string {
	x.Finish()
	var b strings.Builder
	fmt.Fprintf(&b, "spans %d, traces %d, resources used %d, duplicates %d, incomplete %d\n",
		len(x.Order), len(x.TraceRecs), usedResources(x), x.Duplicates(), x.IncompleteTraces())
	for _, tr := range x.TraceRecs {
		fmt.Fprintf(&b, "trace %x incomplete %v\n", tr.ID, tr.Incomplete)
		for _, i := range x.Order[tr.First : tr.First+tr.N] {
			s := x.Span(i)
			parent := "-"
			if s.Parent >= 0 {
				parent = fmt.Sprintf("%x", x.Span(s.Parent).ID)
			}
			fmt.Fprintf(&b, "  %x<-%s %s %d..%d res %d %q", s.ID, parent, x.Names[s.Name], s.Start, s.End, s.Res, x.ResourceText(s.Res))
			for _, a := range x.AttrsOf(s) {
				fmt.Fprintf(&b, " %s=%s", x.Keys[a.Key], x.Vals[a.Val])
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func usedResources(x *Index) int {
	used := map[int32]bool{}
	for _, i := range x.Order {
		used[x.Span(i).Res] = true
	}
	return len(used)
}

// buildKeepSource indexes batches; a reused index (an engine's) keeps its
// lookup maps when finished.
func buildKeepSource(batches []*dumptest.Builder, noCopyCache, reused bool) *Index {
	x := New(rulefmt.IndexOptions{})
	if reused {
		x.Reset()
	}
	x.NoCopyCache = noCopyCache
	for _, d := range batches {
		x.Add(d.Traces())
	}
	return x
}

func TestKeepTracesLeavesWhatACopyOfTheSelectionBuilds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 37))
	for _, tc := range []struct {
		name             string
		traces, perTrace int
		noCopyCache      bool
		reused           bool
	}{
		{"a few traces in one chunk", 12, 6, true, false},
		{"thousands of spans over several chunks", 900, 30, true, false},
		{"a reused index, its maps kept", 300, 20, true, true},
		{"a reused index with the duplicate cache on", 300, 20, false, true},
	} {
		batches := keepDump(rng, tc.traces, tc.perTrace)
		for _, share := range []int{0, 1, 2, 3, 4} { // selects share quarters of the traces
			t.Run(fmt.Sprintf("%s, %d/4 selected", tc.name, share), func(t *testing.T) {
				src, kept := buildKeepSource(batches, tc.noCopyCache, tc.reused), buildKeepSource(batches, tc.noCopyCache, tc.reused)
				describe(kept) // a finished index, parents linked, is handed over too
				sel := make([]bool, len(src.TraceRecs))
				for i := range sel {
					sel[i] = rng.IntN(4) < share
				}
				copied := buildKeepSource(nil, tc.noCopyCache, tc.reused)
				_, n := CopyTraces(copied, src, sel)
				if got := kept.KeepTraces(sel); int(got) != n {
					t.Errorf("KeepTraces kept %d spans, the copy %d", got, n)
				}
				if d := cmp.Diff(describe(copied), describe(kept)); d != "" {
					t.Fatalf("KeepTraces differs from the copy (-copy +kept):\n%s", d)
				}
				// Spans added afterwards join the traces and resources
				// kept, as they join the copy's.
				more := keepDump(rng, tc.traces, 2)
				for _, d := range more {
					copied.Add(d.Traces())
					kept.Add(d.Traces())
				}
				if d := cmp.Diff(describe(copied), describe(kept)); d != "" {
					t.Fatalf("after more spans, KeepTraces differs from the copy (-copy +kept):\n%s", d)
				}
			})
		}
	}
}

// TestKeepTracesEndsAChunkExactly pins the boundary of truncateSpans: the
// spans kept fill whole chunks, and the next span starts a new one.
func TestKeepTracesEndsAChunkExactly(t *testing.T) {
	for _, keep := range []int{spanChunk - 1, spanChunk, spanChunk + 1} {
		d := dumptest.New()
		ss := d.Resource(spans.ResourceServiceName, "gw")
		for i := range 2*spanChunk + 5 {
			d.Add(ss, dumptest.Span{Trace: uint64(i + 1), ID: uint64(i + 1), Name: "one"})
		}
		x := New(rulefmt.IndexOptions{})
		x.Add(d.Traces())
		sel := make([]bool, len(x.TraceRecs))
		for i := range keep {
			sel[i] = true
		}
		if got := x.KeepTraces(sel); int(got) != keep {
			t.Fatalf("keep %d: kept %d", keep, got)
		}
		if full := keep / spanChunk; len(x.Chunks) != full+min(keep%spanChunk, 1) {
			t.Errorf("keep %d: %d chunks left", keep, len(x.Chunks))
		}
		late := dumptest.New()
		late.Add(late.Resource(spans.ResourceServiceName, "gw"), dumptest.Span{Trace: 1 << 30, ID: 1 << 30, Name: "late"})
		x.Add(late.Traces())
		x.Finish()
		if x.NumSpans != int32(keep+1) || len(x.TraceRecs) != keep+1 {
			t.Fatalf("keep %d: %d spans in %d traces after one more, want %d", keep, x.NumSpans, len(x.TraceRecs), keep+1)
		}
		if s := x.Span(int32(keep)); x.Names[s.Name] != "late" || s.Trace != int32(keep) {
			t.Errorf("keep %d: span %d is %q of trace %d, want the late one of trace %d", keep, keep, x.Names[s.Name], s.Trace, keep)
		}
		if s := x.Span(int32(keep - 1)); s.ID != uint64(keep) {
			t.Errorf("keep %d: the last kept span has id %d, want %d", keep, s.ID, keep)
		}
	}
}
