package index

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// shardDump is 40 traces of two spans each, both spans of a trace next to
// each other, under one resource.
func shardDump() *dumptest.Builder {
	d := dumptest.New()
	ss := d.Resource(spans.ResourceServiceName, "gw")
	for tr := uint64(1); tr <= 40; tr++ {
		d.Add(ss, dumptest.Span{Trace: tr, ID: tr*10 + 1, Name: "root"})
		d.Add(ss, dumptest.Span{Trace: tr, ID: tr*10 + 2, Parent: tr*10 + 1, Name: "child"})
	}
	return d
}

// shardBatch is shardDump as a projection decoder's batch.
func shardBatch() *ingest.Batch {
	b := &ingest.Batch{
		Resources: []ingest.Resource{{Attrs: 0, N: 1}},
		Attrs:     []ingest.Attr{{Key: spans.ResourceServiceName, Type: pcommon.ValueTypeStr, Str: "gw"}},
	}
	for tr := uint64(1); tr <= 40; tr++ {
		b.Spans = append(b.Spans,
			ingest.Span{TraceID: dumptest.TraceID(tr), SpanID: dumptest.SpanID(tr*10 + 1), Name: "root"},
			ingest.Span{TraceID: dumptest.TraceID(tr), SpanID: dumptest.SpanID(tr*10 + 2), ParentSpanID: dumptest.SpanID(tr*10 + 1), Name: "child"})
	}
	return b
}

func TestEachPartIndexesExactlyTheTracesThatShardTo(t *testing.T) {
	for _, fast := range []bool{false, true} {
		for _, nparts := range []int{1, 2, 3} {
			seen := map[pcommon.TraceID]int{}
			total := 0
			for part := range nparts {
				x := New(rulefmt.IndexOptions{})
				if fast {
					x.AddFastPart(shardBatch(), part, nparts)
				} else {
					x.AddPart(shardDump().Traces(), part, nparts)
				}
				if x.IncompleteTraces() != 0 {
					t.Errorf("fast %v, part %d of %d: %d incomplete traces, want a trace's spans kept together", fast, part, nparts, x.IncompleteTraces())
				}
				for _, tr := range x.TraceRecs {
					if got := ShardOf(tr.ID, nparts); got != part {
						t.Errorf("fast %v: part %d of %d holds trace %s of part %d", fast, part, nparts, tr.ID, got)
					}
					seen[tr.ID]++
				}
				total += x.Spans()
				if len(x.Resources) > 1 {
					t.Errorf("fast %v, part %d of %d: %d resources, want at most 1", fast, part, nparts, len(x.Resources))
				}
			}
			if len(seen) != 40 || total != 80 {
				t.Errorf("fast %v, %d parts: %d traces and %d spans in all, want 40 and 80", fast, nparts, len(seen), total)
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("fast %v, %d parts: trace %s in %d parts", fast, nparts, id, n)
				}
			}
		}
	}
}

// TestAnAllZeroTraceIDIsATraceToo pins that the first span of a batch is
// interned whatever its trace id, the zero one included.
func TestAnAllZeroTraceIDIsATraceToo(t *testing.T) {
	d := dumptest.New()
	d.Add(d.Resource(), dumptest.Span{Trace: 0, ID: 1, Name: "zero"})
	x := New(rulefmt.IndexOptions{})
	x.Add(d.Traces())
	b := &ingest.Batch{Resources: []ingest.Resource{{}}, Spans: []ingest.Span{{SpanID: dumptest.SpanID(2), Name: "zero fast"}}}
	x.AddFastPart(b, 0, 1)
	if x.Traces() != 1 || x.Spans() != 2 || x.TraceRecs[0].ID != (pcommon.TraceID{}) {
		t.Errorf("traces %d spans %d, want the zero trace id's one trace of 2 spans", x.Traces(), x.Spans())
	}
}
