package engine

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/selector"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestNotEqualsHoldsOnASpanWithoutTheAttribute pins != where the value
// compared is the index's first (id 0): a span without the attribute
// holds, one with another value holds, one with that value does not.
func TestNotEqualsHoldsOnASpanWithoutTheAttribute(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "svc")
	// The first value the index interns, read off an index of the same
	// spans but the last.
	without := d.add(ss, sp{trace: 1, name: "q"})
	d.add(ss, sp{trace: 1, parent: without, name: "q", attrs: []any{"db.sql.table", "orders"}})
	keep := rulefmt.IndexOptions{SpanAttrs: []string{"db.sql.table"}}
	x := index.New(keep)
	x.Add(d.td)
	x.Finish()
	first := x.Vals[0]
	d2 := newDump()
	ss2 := d2.resource(spans.ResourceServiceName, "svc")
	r := d2.add(ss2, sp{trace: 1, name: "q"})
	d2.add(ss2, sp{trace: 1, parent: r, name: "q", attrs: []any{"db.sql.table", "orders"}})
	d2.add(ss2, sp{trace: 1, parent: r, name: "q", attrs: []any{"db.sql.table", first}})
	x = index.New(keep)
	x.Add(d2.td)
	x.Finish()
	if id := x.LookupValue(first); id != 0 {
		t.Fatalf("value %q has id %d, want 0: the test compares with the first value", first, id)
	}
	m, err := selector.Compile(x, rulefmt.Selector{Attributes: []rulefmt.AttrMatch{{Key: "db.sql.table", Op: rulefmt.OpNotEquals, Value: first}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []bool
	for _, i := range x.Order {
		got = append(got, m.Match(i))
	}
	if len(got) != 3 || !got[0] || !got[1] || got[2] {
		t.Errorf("!= %q over (no attribute, orders, %[1]q): %v, want true, true, false", first, got)
	}
}

// TestASelectorOnAnAttributeTheIndexDidNotKeepIsRefused pins the
// selector's compile: a span attribute the index knows only as a resource
// attribute was not kept for spans, and a selector reading it is an error
// naming it, never a selector that silently matches nothing.
func TestASelectorOnAnAttributeTheIndexDidNotKeepIsRefused(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "svc")
	d.add(ss, sp{trace: 1, name: "q"})
	x := index.New(rulefmt.IndexOptions{})
	x.Add(d.td)
	x.Finish()
	if _, ok := x.LookupKey(spans.ResourceServiceName); !ok {
		t.Fatalf("the index does not know %s: the test needs a key known but not kept for spans", spans.ResourceServiceName)
	}
	_, err := selector.Compile(x, rulefmt.Selector{Attributes: []rulefmt.AttrMatch{{Key: spans.ResourceServiceName, Op: rulefmt.OpEquals, Value: "svc"}}})
	if err == nil || !strings.Contains(err.Error(), "did not keep") {
		t.Errorf("compile = %v, want an error saying the index did not keep the attribute", err)
	}
}
