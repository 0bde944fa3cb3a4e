package index

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

func TestIndexCountsDuplicateSpansOnce(t *testing.T) {
	build := func() ptrace.Traces {
		d := dumptest.New()
		ss := d.Resource(spans.ResourceServiceName, "gw")
		d.Add(ss, dumptest.Span{Trace: 1, ID: 1, Name: "root", End: time.Second})
		d.Add(ss, dumptest.Span{Trace: 1, ID: 2, Parent: 1, Name: "child", End: time.Second})
		return d.Traces()
	}
	idx := New(rulefmt.IndexOptions{})
	idx.Add(build())
	idx.Add(build()) // the same batch exported twice
	if idx.Spans() != 2 || idx.Duplicates() != 2 || idx.Traces() != 1 || idx.IncompleteTraces() != 0 {
		t.Errorf("spans %d duplicates %d traces %d incomplete %d, want 2 2 1 0", idx.Spans(), idx.Duplicates(), idx.Traces(), idx.IncompleteTraces())
	}
	// Adding after a query re-finishes the
	idx.Add(build())
	if idx.Spans() != 2 || idx.Duplicates() != 4 {
		t.Errorf("after a third copy: spans %d duplicates %d, want 2 4", idx.Spans(), idx.Duplicates())
	}
}

func TestIndexSameSpanIDInTwoTracesIsTwoSpans(t *testing.T) {
	d := dumptest.New()
	ss := d.Resource()
	d.Add(ss, dumptest.Span{Trace: 1, ID: 7, Name: "a"})
	d.Add(ss, dumptest.Span{Trace: 2, ID: 7, Name: "a"})
	idx := New(rulefmt.IndexOptions{})
	idx.Add(d.Traces())
	if idx.Spans() != 2 || idx.Duplicates() != 0 || idx.Traces() != 2 {
		t.Errorf("spans %d duplicates %d traces %d, want 2 0 2", idx.Spans(), idx.Duplicates(), idx.Traces())
	}
}

func TestIndexMissingParentMakesTheTraceIncomplete(t *testing.T) {
	d := dumptest.New()
	ss := d.Resource()
	d.Add(ss, dumptest.Span{Trace: 1, ID: 1, Name: "root"})
	d.Add(ss, dumptest.Span{Trace: 1, ID: 2, Parent: 1, Name: "ok"})
	d.Add(ss, dumptest.Span{Trace: 2, ID: 3, Parent: 99, Name: "orphan"}) // its parent never landed
	d.Add(ss, dumptest.Span{Trace: 3, ID: 4, Parent: 4, Name: "self"})    // its own parent
	idx := New(rulefmt.IndexOptions{})
	idx.Add(d.Traces())
	if idx.Traces() != 3 || idx.IncompleteTraces() != 2 {
		t.Errorf("traces %d incomplete %d, want 3 2", idx.Traces(), idx.IncompleteTraces())
	}
}

func TestIndexParentInALaterBatchCompletesTheTrace(t *testing.T) {
	child, parent := dumptest.New(), dumptest.New()
	child.Add(child.Resource(), dumptest.Span{Trace: 1, ID: 2, Parent: 1, Name: "child"})
	parent.Add(parent.Resource(), dumptest.Span{Trace: 1, ID: 1, Name: "root"})
	idx := New(rulefmt.IndexOptions{})
	idx.Add(child.Traces())
	if idx.IncompleteTraces() != 1 {
		t.Fatalf("with the child alone the trace is incomplete, got %d", idx.IncompleteTraces())
	}
	idx.Add(parent.Traces())
	if idx.IncompleteTraces() != 0 || idx.Spans() != 2 {
		t.Errorf("once the parent landed: incomplete %d spans %d, want 0 2", idx.IncompleteTraces(), idx.Spans())
	}
}

func TestIndexKeepsOnlyTheAttributesItIsToldTo(t *testing.T) {
	d := dumptest.New()
	ss := d.Resource(spans.ResourceServiceName, "gw", "host.name", "h1", "deployment", "prod")
	d.Add(ss, dumptest.Span{Trace: 1, Name: "s", Attrs: []any{
		spans.AttrSessionID, "sess", spans.AttrJSONRPCRequestID, "17", "db.sql.table", "orgs", "http.url", "https://secret",
	}})
	idx := New(rulefmt.IndexOptions{SpanAttrs: []string{"db.sql.table"}, ResourceAttrs: []string{"deployment"}})
	idx.Add(d.Traces())
	idx.Finish()
	kept := map[string]string{}
	for _, i := range idx.Order {
		for _, a := range idx.AttrsOf(idx.Span(i)) {
			kept[idx.Keys[a.Key]] = idx.Vals[a.Val]
		}
	}
	want := map[string]string{spans.AttrSessionID: "sess", "db.sql.table": "orgs"}
	if len(kept) != len(want) || kept[spans.AttrSessionID] != "sess" || kept["db.sql.table"] != "orgs" {
		t.Errorf("kept span attributes %v, want %v (no request id, no url)", kept, want)
	}
	res := map[string]string{}
	for _, a := range idx.ResAttrs {
		res[idx.Keys[a.Key]] = idx.Vals[a.Val]
	}
	if len(res) != 2 || res[spans.ResourceServiceName] != "gw" || res["deployment"] != "prod" {
		t.Errorf("kept resource attributes %v, want service.name and deployment only", res)
	}
	for _, v := range idx.Vals {
		if v == "https://secret" || v == "17" || v == "h1" {
			t.Errorf("value %q of an unkept attribute was interned", v)
		}
	}
}

func TestIndexSharesResourcesAcrossBatches(t *testing.T) {
	idx := New(rulefmt.IndexOptions{})
	for i := range 50 {
		d := dumptest.New()
		d.Add(d.Resource(spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, "do-1"), dumptest.Span{Trace: uint64(i + 1), Name: "s"})
		idx.Add(d.Traces())
	}
	if idx.Spans() != 50 || len(idx.Resources) != 1 {
		t.Errorf("spans %d resources %d, want 50 spans sharing 1 resource", idx.Spans(), len(idx.Resources))
	}
}

// TestShardOfSpreadsEveryKindOfTraceID pins that the engine's shards share
// the traces whatever the ids look like: random ones, ids counting up in
// their last bytes under a constant first half (internal/tracegen's bench
// dumps, which the old hash sent to one shard of two), and ids whose random
// part is only their first half.
func TestShardOfSpreadsEveryKindOfTraceID(t *testing.T) {
	const n = 20000
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []struct {
		name string
		id   func(i int) pcommon.TraceID
	}{
		{"random", func(int) pcommon.TraceID {
			var id pcommon.TraceID
			binary.LittleEndian.PutUint64(id[:8], rng.Uint64())
			binary.LittleEndian.PutUint64(id[8:], rng.Uint64())
			return id
		}},
		{"counter in the last bytes", func(i int) pcommon.TraceID {
			var id pcommon.TraceID
			binary.BigEndian.PutUint64(id[:8], 0x6d63707472616365)
			binary.BigEndian.PutUint64(id[8:], uint64(i)+1)
			return id
		}},
		{"counter in the first bytes", func(i int) pcommon.TraceID {
			var id pcommon.TraceID
			binary.BigEndian.PutUint64(id[:8], uint64(i)+1)
			return id
		}},
		{"random first half only", func(int) pcommon.TraceID {
			var id pcommon.TraceID
			binary.LittleEndian.PutUint64(id[:8], rng.Uint64())
			return id
		}},
	}
	for _, k := range kinds {
		for _, parts := range []int{2, 3, 8} {
			t.Run(fmt.Sprintf("%s/%d shards", k.name, parts), func(t *testing.T) {
				count := make([]int, parts)
				for i := range n {
					p := ShardOf(k.id(i), parts)
					if p < 0 || p >= parts {
						t.Fatalf("shardOf = %d, want a part in [0, %d)", p, parts)
					}
					count[p]++
				}
				for p, c := range count {
					// Even within 10%: a binomial's deviation here is under 1.5%.
					if want := n / parts; c < want*9/10 || c > want*11/10 {
						t.Errorf("shard %d of %d holds %d of %d traces, want about %d (all: %v)", p, parts, c, n, want, count)
					}
				}
			})
		}
	}
}
