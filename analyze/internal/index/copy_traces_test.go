package index

import (
	"testing"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// copySource is three traces under two resources; trace 2 holds a copy.
func copySource() *Index {
	d := dumptest.New()
	a := d.Resource(spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, "i-1")
	b := d.Resource(spans.ResourceServiceName, "other")
	d.Add(a, dumptest.Span{Trace: 1, ID: 1, Name: "one", Attrs: []any{spans.AttrSessionID, "s1"}})
	d.Add(b, dumptest.Span{Trace: 2, ID: 2, Name: "two", Attrs: []any{spans.AttrSessionID, "s2", spans.AttrPoolID, "p"}})
	d.Add(a, dumptest.Span{Trace: 3, ID: 3, Name: "three"})
	d.Add(b, dumptest.Span{Trace: 2, ID: 4, Parent: 2, Name: "two child", Attrs: []any{spans.AttrSessionID, "s2"}})
	x := New(rulefmt.IndexOptions{})
	x.NoCopyCache = true
	x.Add(d.Traces())
	d2 := dumptest.New()
	d2.Add(d2.Resource(spans.ResourceServiceName, "other"), dumptest.Span{Trace: 2, ID: 2, Name: "two"})
	x.Add(d2.Traces())
	x.Finish()
	return x
}

func TestCopyTracesTakesTheSelectedTracesWhole(t *testing.T) {
	for _, borrow := range []bool{false, true} {
		src := copySource()
		dst := New(rulefmt.IndexOptions{})
		dst.Add(func() *dumptest.Builder {
			d := dumptest.New()
			d.Add(d.Resource(), dumptest.Span{Trace: 9, Name: "already there", Attrs: []any{spans.AttrSessionID, "s9"}})
			return d
		}().Traces())
		if borrow {
			dst = New(rulefmt.IndexOptions{})
		}
		sel := make([]bool, len(src.TraceRecs))
		two := -1
		for i, tr := range src.TraceRecs {
			if tr.ID == dumptest.TraceID(2) {
				two = i
			}
		}
		sel[two] = true
		copyFn := CopyTraces
		if borrow {
			copyFn = BorrowTraces
		}
		newIdx, copied := copyFn(dst, src, sel)
		if copied != 3 {
			t.Errorf("borrow %v: copied %d spans, want 3 (the copy included)", borrow, copied)
		}
		for i, n := range newIdx {
			if (n >= 0) != (i == two) {
				t.Fatalf("borrow %v: new trace indexes %v, want only trace %d copied", borrow, newIdx, two)
			}
		}
		if dst.TraceRecs[newIdx[two]].ID != dumptest.TraceID(2) {
			t.Errorf("borrow %v: the copied trace has another id", borrow)
		}
		got := spanAttrs(dst)
		if len(got["two"]) != 2 || got["two"][spans.AttrSessionID] != "s2" || got["two"][spans.AttrPoolID] != "p" || got["two child"][spans.AttrSessionID] != "s2" {
			t.Errorf("borrow %v: copied attributes %v", borrow, got)
		}
		if _, ok := got["one"]; ok {
			t.Errorf("borrow %v: an unselected trace was copied", borrow)
		}
		if r := resAttrs(dst, "two"); len(r) != 1 || r[spans.ResourceServiceName] != "other" {
			t.Errorf("borrow %v: copied resource %v", borrow, r)
		}
		if dst.Duplicates() != 1 || dst.IncompleteTraces() != 0 {
			t.Errorf("borrow %v: duplicates %d incomplete %d, want 1 0", borrow, dst.Duplicates(), dst.IncompleteTraces())
		}
		child := byName(t, dst, "two child")
		if p := dst.Span(child).Parent; p < 0 || dst.Names[dst.Span(p).Name] != "two" {
			t.Errorf("borrow %v: the copied child's parent is %d", borrow, p)
		}
		if !borrow && got["already there"][spans.AttrSessionID] != "s9" {
			t.Errorf("the destination's own span reads %v", got["already there"])
		}
	}
}

func TestResourceTextNamesAResourceByItsSortedAttributes(t *testing.T) {
	x := copySource()
	one, two := byName(t, x, "one"), byName(t, x, "two")
	if got := x.ResourceText(x.Span(one).Res); got != "service.instance.id=i-1 service.name=gw" {
		t.Errorf("resource text %q", got)
	}
	if got := x.ResourceText(x.Span(two).Res); got != "service.name=other" {
		t.Errorf("resource text %q", got)
	}
	d := dumptest.New()
	d.Add(d.Resource(), dumptest.Span{Trace: 1, Name: "bare"})
	y := New(rulefmt.IndexOptions{})
	y.Add(d.Traces())
	if got := y.ResourceText(y.Span(byName(t, y, "bare")).Res); got != "(no resource attributes)" {
		t.Errorf("bare resource text %q", got)
	}
	if x.NameID("two") != x.Span(two).Name || x.NameID("one") != x.Span(one).Name || x.NameID("none") != -1 {
		t.Errorf("NameID: two %d one %d none %d", x.NameID("two"), x.NameID("one"), x.NameID("none"))
	}
}

func TestSetInputsRecordsEachInputInOrder(t *testing.T) {
	x := New(rulefmt.IndexOptions{})
	warn := []string{"w"}
	x.SetInputs([]ingest.Input{{Path: "a", Format: "otlp-json", Compression: "gzip", Spans: 3, Partial: true, Warnings: warn}, {Path: "b"}})
	warn[0] = "changed"
	in := x.Inputs()
	if len(in) != 2 || in[0].Path != "a" || in[1].Path != "b" || in[0].Format != "otlp-json" || in[0].Compression != "gzip" || in[0].Spans != 3 || !in[0].Partial {
		t.Errorf("inputs %+v", in)
	}
	if len(in[0].Warnings) != 1 || in[0].Warnings[0] != "w" {
		t.Errorf("warnings %q, want a copy of the input's", in[0].Warnings)
	}
}
