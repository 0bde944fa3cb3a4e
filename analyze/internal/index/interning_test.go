package index

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestInternedStringsDoNotShareTheCallersBuffer pins that the index copies
// the names and values it keeps: a decoder's batch may hold strings that
// alias its read buffer, which it reuses for the next batch.
func TestInternedStringsDoNotShareTheCallersBuffer(t *testing.T) {
	buf := []byte("spanname" + "sessval1" + "service1")
	str := func(from, to int) string { return unsafe.String(&buf[from], to-from) }
	b := &ingest.Batch{
		Resources: []ingest.Resource{{Attrs: 0, N: 1}},
		Attrs: []ingest.Attr{
			{Key: spans.ResourceServiceName, Type: pcommon.ValueTypeStr, Str: str(16, 24)},
			{Key: spans.AttrSessionID, Type: pcommon.ValueTypeStr, Str: str(8, 16)},
		},
		Spans: []ingest.Span{{TraceID: dumptest.TraceID(1), SpanID: dumptest.SpanID(1), Name: str(0, 8), Attrs: 1, N: 1}},
	}
	x := New(rulefmt.IndexOptions{})
	x.AddFastPart(b, 0, 1)
	for i := range buf {
		buf[i] = 'X' // the decoder reads its next batch into the buffer
	}
	if got := spanAttrs(x)["spanname"]; got == nil || got[spans.AttrSessionID] != "sessval1" {
		t.Errorf("span attributes by name %v, want span \"spanname\" with session sessval1", spanAttrs(x))
	}
	if got := resAttrs(x, "spanname"); got[spans.ResourceServiceName] != "service1" {
		t.Errorf("resource attributes %v, want service1", got)
	}
	if x.LookupValue("sessval1") < 0 || x.LookupValue("service1") < 0 {
		t.Errorf("the values are no longer found by their text")
	}
}

func TestNamesAndValuesAreInternedOnceEach(t *testing.T) {
	d := dumptest.New()
	ss := d.Resource(spans.ResourceServiceName, "tools/call")
	for i := range 4 {
		d.Add(ss, dumptest.Span{Trace: 1, Name: "tools/call", Attrs: []any{spans.AttrSessionID, []string{"a", "b"}[i%2]}})
	}
	d.Add(ss, dumptest.Span{Trace: 1, Name: "a", Attrs: []any{spans.AttrMethodName, "tools/call"}})
	x := New(rulefmt.IndexOptions{})
	x.Add(d.Traces())
	x.Finish()
	if len(x.Names) != 2 {
		t.Errorf("names %q, want tools/call and a once each", x.Names)
	}
	// false, true, then tools/call (resource), a, b: one id per text.
	if len(x.Vals) != 5 {
		t.Errorf("values %q, want 5 distinct", x.Vals)
	}
	seen := map[string]bool{}
	for _, v := range x.Vals {
		if seen[v] {
			t.Errorf("value %q interned twice", v)
		}
		seen[v] = true
	}
	sess, _ := x.LookupKey(spans.AttrSessionID)
	method, _ := x.LookupKey(spans.AttrMethodName)
	var sessions []string
	for i := range x.NumSpans {
		s := x.Span(i)
		if x.Names[s.Name] == "a" {
			if v, ok := x.AttrVal(i, method); !ok || x.Vals[v] != "tools/call" {
				t.Errorf("span a's method reads %q, want tools/call", x.Vals[v])
			}
			continue
		}
		if x.Names[s.Name] != "tools/call" {
			t.Errorf("span %d named %q", i, x.Names[s.Name])
		}
		v, ok := x.AttrVal(i, sess)
		if !ok {
			t.Fatalf("span %d has no session", i)
		}
		sessions = append(sessions, x.Vals[v])
	}
	if want := "abab"; len(sessions) != 4 || sessions[0]+sessions[1]+sessions[2]+sessions[3] != want {
		t.Errorf("sessions in arrival order %q, want a b a b", sessions)
	}
}

func TestAnEmptyValueIsKeptAsTheEmptyText(t *testing.T) {
	for _, fast := range []bool{false, true} {
		x := New(rulefmt.IndexOptions{})
		if fast {
			x.AddFastPart(&ingest.Batch{
				Resources: []ingest.Resource{{}},
				Attrs:     []ingest.Attr{{Key: spans.AttrSessionID, Type: pcommon.ValueTypeStr}},
				Spans:     []ingest.Span{{TraceID: dumptest.TraceID(1), SpanID: dumptest.SpanID(1), Name: "s", Attrs: 0, N: 1}},
			}, 0, 1)
		} else {
			d := dumptest.New()
			d.Add(d.Resource(), dumptest.Span{Trace: 1, Name: "s", Attrs: []any{spans.AttrSessionID, ""}})
			x.Add(d.Traces())
		}
		if got, ok := spanAttrs(x)["s"][spans.AttrSessionID]; !ok || got != "" {
			t.Errorf("fast %v: session %q (kept %v), want the empty text kept", fast, got, ok)
		}
	}
}

// TestTypedValuesAreKeptAsTheirText pins the text each value type is kept
// as (OpenTelemetry's AsString), on spans and resources, on both paths.
func TestTypedValuesAreKeptAsTheirText(t *testing.T) {
	d := dumptest.New()
	ss := d.Resource()
	d.Add(ss, dumptest.Span{Trace: 1, Name: "s", Attrs: []any{
		spans.AttrCacheHit, true, spans.AttrAttempt, 3, spans.AttrServerPort, int64(-8080),
		spans.AttrMissReason, 1.5, spans.AttrSessionID, "sess", spans.AttrPoolID, false,
	}})
	d.Add(ss, dumptest.Span{Trace: 1, Name: "t", Attrs: []any{spans.AttrCacheHit, false, spans.AttrPoolID, true}})
	td := d.Traces()
	res := td.ResourceSpans().At(0).Resource().Attributes()
	res.PutInt(spans.ResourceServiceName, 7)
	res.PutEmptySlice(spans.ResourceServiceInstanceID).FromRaw([]any{"a", int64(1)})
	x := New(rulefmt.IndexOptions{SpanAttrs: []string{"arr", "map"}, ResourceAttrs: []string{"flag", "ratio"}})
	res.PutBool("flag", true)
	res.PutDouble("ratio", 0.25)
	sp := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	sp.Attributes().PutEmptySlice("arr").FromRaw([]any{"x", true})
	sp.Attributes().PutEmptyMap("map").PutStr("k", "v")
	x.Add(td)
	got := spanAttrs(x)
	want := map[string]string{
		spans.AttrCacheHit: "true", spans.AttrAttempt: "3", spans.AttrServerPort: "-8080",
		spans.AttrMissReason: "1.5", spans.AttrSessionID: "sess", spans.AttrPoolID: "false",
		"arr": `["x",true]`, "map": `{"k":"v"}`,
	}
	for k, v := range want {
		if got["s"][k] != v {
			t.Errorf("span attribute %s = %q, want %q", k, got["s"][k], v)
		}
	}
	if got["t"][spans.AttrCacheHit] != "false" || got["t"][spans.AttrPoolID] != "true" {
		t.Errorf("span t's booleans %v", got["t"])
	}
	wantRes := map[string]string{spans.ResourceServiceName: "7", spans.ResourceServiceInstanceID: `["a",1]`, "flag": "true", "ratio": "0.25"}
	gotRes := resAttrs(x, "s")
	for k, v := range wantRes {
		if gotRes[k] != v {
			t.Errorf("resource attribute %s = %q, want %q", k, gotRes[k], v)
		}
	}

	f := New(rulefmt.IndexOptions{ResourceAttrs: []string{"flag"}})
	f.AddFastPart(&ingest.Batch{
		Resources: []ingest.Resource{{Attrs: 0, N: 3}},
		Attrs: []ingest.Attr{
			{Key: spans.ResourceServiceName, Type: pcommon.ValueTypeInt, Int: 7},
			{Key: spans.ResourceServiceInstanceID, Type: pcommon.ValueTypeStr, Str: "i"},
			{Key: "flag", Type: pcommon.ValueTypeBool, Bool: true},
			{Key: spans.AttrCacheHit, Type: pcommon.ValueTypeBool, Bool: true},
			{Key: spans.AttrPoolID, Type: pcommon.ValueTypeBool, Bool: false},
			{Key: spans.AttrAttempt, Type: pcommon.ValueTypeInt, Int: -3},
			{Key: spans.AttrSessionID, Type: pcommon.ValueTypeStr, Str: "sess"},
		},
		Spans: []ingest.Span{{TraceID: dumptest.TraceID(1), SpanID: dumptest.SpanID(1), Name: "s", Attrs: 3, N: 4}},
	}, 0, 1)
	fs := spanAttrs(f)["s"]
	if fs[spans.AttrCacheHit] != "true" || fs[spans.AttrPoolID] != "false" || fs[spans.AttrAttempt] != "-3" || fs[spans.AttrSessionID] != "sess" {
		t.Errorf("fast span attributes %v", fs)
	}
	fr := resAttrs(f, "s")
	if fr[spans.ResourceServiceName] != "7" || fr[spans.ResourceServiceInstanceID] != "i" || fr["flag"] != "true" {
		t.Errorf("fast resource attributes %v", fr)
	}
}

func TestAValueNestedTooDeepIsKeptAsAPlaceholder(t *testing.T) {
	d := dumptest.New()
	d.Add(d.Resource(), dumptest.Span{Trace: 1, Name: "s"})
	td := d.Traces()
	m := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutEmptyMap("deep")
	for range ingest.MaxDepth + 2 {
		m = m.PutEmptyMap("k")
	}
	x := New(rulefmt.IndexOptions{SpanAttrs: []string{"deep"}})
	x.Add(td)
	if got := spanAttrs(x)["s"]["deep"]; got != TooDeepValue {
		t.Errorf("deep value kept as %q, want %q", got, TooDeepValue)
	}
}

// TestANameHandedAgainAfterAResetIsInternedAgain pins that the names a
// reset index forgets are forgotten by where their bytes lie too: a
// decoder hands the very same string for a name in every batch, and the
// index that was reset between two of them must intern it anew, not
// answer the id it had before the reset.
func TestANameHandedAgainAfterAResetIsInternedAgain(t *testing.T) {
	first, second := "first"+string(rune('!')), "second"+string(rune('!')) // made at run time: their own bytes
	batch := func(names ...string) *ingest.Batch {
		b := &ingest.Batch{Resources: []ingest.Resource{{}}}
		for i, n := range names {
			b.Spans = append(b.Spans, ingest.Span{TraceID: dumptest.TraceID(1), SpanID: dumptest.SpanID(uint64(i + 1)), Name: n})
		}
		return b
	}
	x := New(rulefmt.IndexOptions{})
	x.AddFastPart(batch(first, second, first), 0, 1)
	if len(x.Names) != 2 || x.Names[x.Span(2).Name] != first {
		t.Fatalf("names %q, span 2 named %q: want first and second once each", x.Names, x.Names[x.Span(2).Name])
	}
	x.Reset()
	x.AddFastPart(batch(second), 0, 1)
	if len(x.Names) != 1 || x.Span(0).Name != 0 || x.Names[0] != second {
		t.Errorf("after a reset: names %q, span 0 has name id %d; want [second] and 0", x.Names, x.Span(0).Name)
	}
}

// TestSpanNamesTakePairsOfSlotsApart pins seenPair's spread: fifty
// names made one after another, as a decoder makes them, a size class
// apart, must take nearly as many pairs of slots as there are names
// (about 47 at random; with the address's low bits alone, a few dozen
// strings of one length took every fourth slot and shared them).
func TestSpanNamesTakePairsOfSlotsApart(t *testing.T) {
	pairs := map[int]bool{}
	var keep []string // alive, so that no name's place is taken again
	for i := range 50 {
		name := strings.Clone(fmt.Sprintf("plugin.mcp.name.%04d", i))
		keep = append(keep, name)
		k := seenPair(name)
		if k%2 != 0 || k < 0 || k+1 >= seenSlots {
			t.Fatalf("%q: slot %d is not the first of a pair", name, k)
		}
		pairs[k] = true
	}
	if len(pairs) < 38 {
		t.Errorf("%d names took %d of %d pairs of slots", len(keep), len(pairs), seenSlots/2)
	}
}

// TestNamesSharingAPairOfSlotsKeepTheirIDs interns, span after span,
// three names whose places pick one pair of slots, then each again from
// another place: each keeps its one id.
func TestNamesSharingAPairOfSlotsKeepTheirIDs(t *testing.T) {
	first := strings.Clone("span.0")
	names := []string{first}
	var made []string // alive, so that no place is taken again
	for i := 1; len(names) < 3 && i < 1<<20; i++ {
		n := strings.Clone(fmt.Sprintf("span.%d", i))
		made = append(made, n)
		if seenPair(n) == seenPair(first) {
			names = append(names, n)
		}
	}
	if len(names) < 3 {
		t.Fatalf("no three names share a pair among %d", len(made))
	}
	x := New(rulefmt.IndexOptions{})
	x.ensureMaps()
	want := map[string]int32{}
	for round := range 4 {
		for _, n := range names {
			if round == 3 {
				n = strings.Clone(n)
			}
			id := x.internName(n)
			if w, ok := want[n]; ok && w != id {
				t.Fatalf("round %d: %q has id %d, had %d", round, n, id, w)
			}
			want[n] = id
			if x.Names[id] != n {
				t.Fatalf("round %d: %q has the id of %q", round, n, x.Names[id])
			}
		}
	}
	if len(x.Names) != 3 {
		t.Errorf("names %q, want three", x.Names)
	}
}

// TestTwoNamesSharingAPairAreFoundInIt pins the pair: two names whose
// places pick one pair of slots, interned in turns, are both found there
// without the name map (emptied here, so that a lookup in it would give a
// name a new id).
func TestTwoNamesSharingAPairAreFoundInIt(t *testing.T) {
	first := strings.Clone("span.0")
	var second string
	var made []string // alive, so that no place is taken again
	for i := 1; second == "" && i < 1<<20; i++ {
		n := strings.Clone(fmt.Sprintf("span.%d", i))
		made = append(made, n)
		if seenPair(n) == seenPair(first) {
			second = n
		}
	}
	if second == "" {
		t.Fatalf("no two names share a pair among %d", len(made))
	}
	x := New(rulefmt.IndexOptions{})
	x.ensureMaps()
	a, b := x.internName(first), x.internName(second)
	clear(x.nameIdx)
	for range 3 {
		if got := x.internName(first); got != a {
			t.Fatalf("%q: id %d, want %d from its slot", first, got, a)
		}
		if got := x.internName(second); got != b {
			t.Fatalf("%q: id %d, want %d from its slot", second, got, b)
		}
	}
}

// TestAnIntValueIsReadAsItsOwn pins the memo of a key's last int value
// (internKeyInt): spans alternating between two ports each read their
// own, a resource's int is not taken for a span's, and after a reset,
// which empties the value table, a port seen before is interned again
// rather than given the id its text had before (by then another value's).
func TestAnIntValueIsReadAsItsOwn(t *testing.T) {
	port := spans.AttrServerPort
	batch := func(ports ...int64) *ingest.Batch {
		b := &ingest.Batch{Resources: []ingest.Resource{{Attrs: 0, N: 1}}}
		b.Attrs = append(b.Attrs, ingest.Attr{Key: port, Type: pcommon.ValueTypeInt, Int: 7}) // the resource's, never a span's
		for i, p := range ports {
			b.Spans = append(b.Spans, ingest.Span{TraceID: dumptest.TraceID(1), SpanID: dumptest.SpanID(uint64(i + 1)),
				Name: fmt.Sprint("s", i), Attrs: int32(len(b.Attrs)), N: 2})
			b.Attrs = append(b.Attrs, ingest.Attr{Key: spans.AttrSessionID, Type: pcommon.ValueTypeStr, Str: fmt.Sprint("session ", p)},
				ingest.Attr{Key: port, Type: pcommon.ValueTypeInt, Int: p})
		}
		return b
	}
	x := New(rulefmt.IndexOptions{ResourceAttrs: []string{port}})
	check := func(when string, ports ...int64) {
		t.Helper()
		got := spanAttrs(x)
		for i, p := range ports {
			if v := got[fmt.Sprint("s", i)][port]; v != fmt.Sprint(p) {
				t.Errorf("%s: span %d reads port %q, want %d (%v)", when, i, v, p, got)
			}
		}
	}
	x.AddFastPart(batch(443, 443, 8443, 443, -1, 9), 0, 1)
	check("first", 443, 443, 8443, 443, -1, 9)
	x.Reset()
	x.AddFastPart(batch(9, 9), 0, 1) // the session values take the ids 443's text and its session had
	check("after a reset", 9, 9)
}
