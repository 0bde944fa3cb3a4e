package ingest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// shapeLine is one OTLP JSON line whose spans, all named name, carry the
// attribute arrays arrs in order (a "" array: no attributes field).
func shapeLine(name string, arrs []string) []byte {
	var spans []string
	for i, arr := range arrs {
		attrs := ""
		if arr != "" {
			attrs = `,"attributes":` + arr
		}
		spans = append(spans, fmt.Sprintf(`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"00000000000000%02x","name":%q,"kind":1,"startTimeUnixNano":"1","endTimeUnixNano":"2"%s,"status":{}}`,
			i+1, name, attrs))
	}
	return []byte(`{"resourceSpans":[{"resource":{},"scopeSpans":[{"scope":{},"spans":[` + strings.Join(spans, ",") + `]}]}]}`)
}

// decodeWithCache decodes line with the projection decoder on the worker
// cache c, as one worker reads line after line, and requires pdata to
// read the same kept content from it; it reports whether the decoder
// took the line.
func decodeWithCache(t *testing.T, c *stringCache, line []byte) bool {
	t.Helper()
	return decodeWithCacheKeeping(t, c, line, newKeepSet(testKeep))
}

// decodeWithCacheKeeping is decodeWithCache keeping keys.
func decodeWithCacheKeeping(t *testing.T, c *stringCache, line []byte, keys *keepSet) bool {
	t.Helper()
	d := fastDec{b: line, keys: keys, out: getBatch(), strs: c}
	defer putBatch(d.out)
	if !d.request() {
		return false
	}
	want, err := unmarshalOTLPJSON(line, nil)
	if err != nil {
		t.Fatalf("the decoder took a line pdata refuses (%v):\n%s", err, line)
	}
	if g, w := keptView(batchTraces(d.out), keys), keptView(want, keys); !slices.Equal(g, w) {
		t.Fatalf("the decoder and pdata differ on\n%s\ndecoder: %q\npdata:   %q", line, g, w)
	}
	return true
}

// testDec is a decoder of b keeping testKeep, with a batch and a worker
// cache of its own.
func testDec(t *testing.T, b []byte) *fastDec {
	d := &fastDec{b: b, keys: newKeepSet(testKeep), out: getBatch(), strs: &stringCache{m: map[string]string{}}}
	t.Cleanup(func() { putBatch(d.out) })
	return d
}

// attr writes one compact attribute.
func attr(key, typ, val string) string {
	return fmt.Sprintf(`{"key":%q,"value":{%q:%s}}`, key, typ, val)
}

func arr(attrs ...string) string { return "[" + strings.Join(attrs, ",") + "]" }

// TestShapedAttributesReadAsTheGeneralPath pins that a span's attributes
// read by the shape of an earlier span of its name (attrShape) come out
// as the general path and pdata read them, whatever differs from that
// shape: values, a key, a type, an attribute more or less, escapes,
// spaces. Each case's arrays are read in order by one worker's cache, so
// every array after the first meets the shapes the earlier ones left.
func TestShapedAttributesReadAsTheGeneralPath(t *testing.T) {
	key := attr("plugin.mcp.cache_key", "stringValue", `"k1"`)
	hit := attr("plugin.mcp.cache_hit", "boolValue", "true")
	attempt := attr("plugin.mcp.attempt", "intValue", `"1"`)
	miss := attr("plugin.mcp.miss_reason", "stringValue", `"cold"`)
	skipped := attr("not.kept", "stringValue", `"v"`)
	cases := []struct {
		name     string
		arrs     []string
		wantFast bool
	}{
		{"the values change", []string{
			arr(hit, key, attempt),
			arr(attr("plugin.mcp.cache_hit", "boolValue", "false"), attr("plugin.mcp.cache_key", "stringValue", `"k2"`), attr("plugin.mcp.attempt", "intValue", `"2"`)),
			arr(hit, attr("plugin.mcp.cache_key", "stringValue", `""`), attr("plugin.mcp.attempt", "intValue", "-3")),
			arr(hit, attr("plugin.mcp.cache_key", "stringValue", `"k1 longer"`), attr("plugin.mcp.attempt", "intValue", "17")),
			arr(hit, key, attempt),
		}, true},
		{"an attribute more, then less", []string{arr(hit, key), arr(hit, key, miss), arr(hit, key), arr(hit, key, miss), arr(hit)}, true},
		{"a key differs in one byte", []string{arr(key, hit), arr(attr("plugin.mcp.cache_kez", "stringValue", `"k1"`), hit), arr(key, hit)}, true},
		{"a type changes", []string{arr(key, attempt), arr(attr("plugin.mcp.cache_key", "intValue", "5"), attempt), arr(key, attr("plugin.mcp.attempt", "stringValue", `"1"`))}, true},
		{"the order changes", []string{arr(key, hit), arr(hit, key), arr(key, hit)}, true},
		{"a key not kept, with an escape", []string{arr(skipped, key), arr(attr("not.kept", "stringValue", `"a\"b"`), key), arr(skipped, key)}, true},
		{"a kept value with an escape", []string{arr(key), arr(attr("plugin.mcp.cache_key", "stringValue", `"a\"b"`))}, false},
		{"a repeated kept key: the first wins", []string{
			arr(key, attr("plugin.mcp.cache_key", "stringValue", `"second"`)),
			arr(attr("plugin.mcp.cache_key", "stringValue", `"first"`), attr("plugin.mcp.cache_key", "stringValue", `"again"`)),
		}, true},
		{"spaces", []string{arr(key), "[ " + key + " ]", `[{"key": "plugin.mcp.cache_key","value":{"stringValue":"k9"}}]`, arr(key)}, true},
		{"empty arrays", []string{"[]", arr(key), "[]", "", "[]"}, true},
		{"a double not kept", []string{arr(attr("not.kept", "doubleValue", "1.5"), key), arr(attr("not.kept", "doubleValue", "2.5"), key)}, true},
		{"an int bare and quoted", []string{arr(attr("server.port", "intValue", "443")), arr(attr("server.port", "intValue", `"8443"`)), arr(attr("server.port", "intValue", "80"))}, true},
		{"a value cut short", []string{arr(key), arr(key) + "X"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cache := &stringCache{m: map[string]string{}}
			for round := range 2 { // the second round meets the shapes of the first
				if got := decodeWithCache(t, cache, shapeLine("acquire", c.arrs)); got != c.wantFast {
					t.Fatalf("round %d: the decoder took the line: %v, want %v", round, got, c.wantFast)
				}
			}
		})
	}
}

// TestShapesAreLearnedAndUsed pins that the shapes engage: spans of one
// name with one array shape are read by it after the first, two shapes of
// one name are both kept (an acquire's hit and miss), and the one fitted
// more often is tried first.
func TestShapesAreLearnedAndUsed(t *testing.T) {
	hit := arr(attr("plugin.mcp.cache_hit", "boolValue", "true"), attr("plugin.mcp.cache_key", "stringValue", `"k"`))
	miss := arr(attr("plugin.mcp.cache_hit", "boolValue", "false"), attr("plugin.mcp.cache_key", "stringValue", `"k"`), attr("plugin.mcp.miss_reason", "stringValue", `"cold"`))
	cache := &stringCache{m: map[string]string{}}
	arrs := []string{miss, hit, hit, miss, hit, hit, hit}
	if !decodeWithCache(t, cache, shapeLine("plugin.mcp.connection.acquire", arrs)) {
		t.Fatal("the decoder gave up")
	}
	w := cache.shapes.ways(cache.str([]byte("plugin.mcp.connection.acquire")))
	if w[0].name != "plugin.mcp.connection.acquire" || w[1].name != "plugin.mcp.connection.acquire" {
		t.Fatalf("the slot holds shapes of %q and %q, want both of the acquire", w[0].name, w[1].name)
	}
	// Learned from spans 1 and 2; read by shape: the hit four times
	// (spans 3, 5, 6, 7), the miss once (span 4).
	if len(w[0].slots) != 2 || w[0].hits != 4 || len(w[1].slots) != 3 || w[1].hits != 1 {
		t.Fatalf("first way: %d slots, %d hits; second: %d slots, %d hits; want the hit's shape (2 slots) first with 4, the miss's (3) with 1",
			len(w[0].slots), w[0].hits, len(w[1].slots), w[1].hits)
	}
}

// TestShapeHitOrdersTheWays pins shapeWays.hit: the second way goes first
// only once it has fitted more often (not as often) as the first.
func TestShapeHitOrdersTheWays(t *testing.T) {
	var w shapeWays
	w[0].name, w[1].name = "a", "b"
	w[0].hits = 2
	w.hit(1)
	w.hit(1)
	if w[0].name != "a" {
		t.Fatalf("after two fits each the first way is %q, want a (ties keep the order)", w[0].name)
	}
	w.hit(1)
	if w[0].name != "b" || w[0].hits != 3 || w[1].hits != 2 {
		t.Fatalf("after three fits of b the ways are %q (%d), %q (%d); want b (3) first", w[0].name, w[0].hits, w[1].name, w[1].hits)
	}
	w[2].name, w[3].name = "c", "d"
	w[2].hits = 2
	w.hit(3)
	w.hit(3)
	w.hit(3)
	if w[2].name != "d" || w[3].name != "c" || w[1].name != "a" {
		t.Fatalf("after three fits of the last way the ways are %q, %q, %q, %q; want d one way up, past c only", w[0].name, w[1].name, w[2].name, w[3].name)
	}
	w[0].hits = 1<<30 - 1
	w.hit(0)
	if w[0].hits != 1<<29 || w[1].hits != 1 || w[2].hits != 1 || w[3].hits != 1 {
		t.Fatalf("at 1<<30 the counts are %d, %d, %d and %d, want all halved", w[0].hits, w[1].hits, w[2].hits, w[3].hits)
	}
}

// TestNamesSharingASlotKeepTheirShapes pins that the names whose strings
// land in one slot of attrShapes keep a shape each, and the acquire its
// two: spans of three names taking turns, four shapes in all, are read by
// shape after the first span of each. With a slot of two ways each span
// taught it a shape back in place of another: in about one run in eight,
// where the allocator placed a writer's names so.
func TestNamesSharingASlotKeepTheirShapes(t *testing.T) {
	cache := &stringCache{m: map[string]string{}}
	names := namesOfOneSlot(t, cache, 3)
	hit := arr(attr("plugin.mcp.cache_hit", "boolValue", "true"), attr("plugin.mcp.cache_key", "stringValue", `"k"`))
	miss := arr(attr("plugin.mcp.cache_hit", "boolValue", "false"), attr("plugin.mcp.cache_key", "stringValue", `"k"`), attr("plugin.mcp.miss_reason", "stringValue", `"cold"`))
	other := arr(attr("plugin.mcp.cache_key", "stringValue", `"k"`))
	third := arr(attr("plugin.mcp.attempt", "intValue", `"1"`))
	keys := newKeepSet(testKeep) // one worker's: a shape holds its filter
	const rounds = 20
	for round := range rounds {
		for _, sp := range []struct{ name, arr string }{{names[0], hit}, {names[1], other}, {names[0], miss}, {names[2], third}} {
			if !decodeWithCacheKeeping(t, cache, shapeLine(sp.name, []string{sp.arr}), keys) {
				t.Fatalf("round %d: the decoder gave up on a span of %q", round, sp.name)
			}
		}
	}
	w := cache.shapes.ways(names[0])
	var hits uint32
	for k := range w {
		hits += w[k].hits
	}
	if want := uint32(4*rounds - 4); hits != want {
		t.Fatalf("the slot's shapes fitted %d spans, want %d: every span but the first of each shape", hits, want)
	}
}

// namesOfOneSlot returns n span names of the cache c (its strings, as the
// decoder gets them) whose shapes share one slot of attrShapes.
func namesOfOneSlot(t *testing.T, c *stringCache, n int) []string {
	t.Helper()
	bySlot := map[*shapeWays][]string{}
	for i := range 64 * n {
		name := c.str(fmt.Appendf(nil, "span.name.%d", i))
		w := c.shapes.ways(name)
		if bySlot[w] = append(bySlot[w], name); len(bySlot[w]) == n {
			return bySlot[w]
		}
	}
	t.Fatalf("no %d of %d names share a slot", n, 64*n)
	return nil
}

// TestShapeLearnsOnlyCompactBoundedArrays pins what attrShape.learn
// takes: compact attributes with string, bool or int values, within the
// bounds on attributes and text.
func TestShapeLearnsOnlyCompactBoundedArrays(t *testing.T) {
	key := attr("k", "stringValue", `"v"`)
	many := func(n int) string {
		var as []string
		for i := range n {
			as = append(as, attr(fmt.Sprintf("k%d", i), "intValue", "1"))
		}
		return arr(as...)
	}
	// The text of a one-bool array is all of it but the value: with a key
	// of maxShapeText-35 bytes, maxShapeText.
	long := func(keyLen int) string { return arr(attr(strings.Repeat("k", keyLen), "boolValue", "true")) }
	cases := []struct {
		name string
		arr  string
		want bool
	}{
		{"empty", "[]", true},
		{"string, bool, int", arr(key, attr("b", "boolValue", "false"), attr("i", "intValue", `"-7"`), attr("j", "intValue", "8")), true},
		{"a space after the bracket", "[ " + key + "]", false},
		{"a space after a comma", "[" + key + ", " + key + "]", false},
		{"a double", arr(attr("d", "doubleValue", "1.5")), false},
		{"an array value", arr(`{"key":"a","value":{"arrayValue":{}}}`), false},
		{"an escaped key", arr(`{"key":"a\"b","value":{"stringValue":"v"}}`), false},
		{"an escaped value", arr(attr("k", "stringValue", `"a\\b"`)), false},
		{"value before key", arr(`{"value":{"stringValue":"v"},"key":"k"}`), false},
		{"bad bool", arr(attr("b", "boolValue", "yes")), false},
		{"maxShapeSlots attributes", many(maxShapeSlots), true},
		{"one more", many(maxShapeSlots + 1), false},
		{"maxShapeText of text", long(maxShapeText - 35), true},
		{"one byte more", long(maxShapeText - 34), false},
		{"trailing bytes", arr(key) + " ", false},
		{"a comma before the bracket", "[" + key + ",]", false},
		{"no closing bracket", "[" + key, false},
		{"a comma at the end", "[" + key + ",", false},
		{"something else after an element", "[" + key + ";" + key + "]", false},
	}
	keys := newKeepSet(testKeep)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A shape is learned from what the general path kept of an
			// array it read whole.
			d := fastDec{b: []byte(c.arr), keys: keys, out: getBatch(), strs: &stringCache{m: map[string]string{}}}
			defer putBatch(d.out)
			start, n, ok := d.attributes(&keys.span)
			var sh attrShape
			if got := ok && d.i == len(d.b) && sh.learn(&keys.span, []byte(c.arr), d.out.Attrs[start:start+n]); got != c.want {
				t.Fatalf("learn(%.80s) = %v, want %v", c.arr, got, c.want)
			}
		})
	}
}

// TestShapesAreTheirFiltersOwn pins that a shape holds its filter's
// answers: a worker reading for two sets of kept keys (two runs in one
// process) does not read one's spans by the other's shapes.
func TestShapesAreTheirFiltersOwn(t *testing.T) {
	cache := &stringCache{m: map[string]string{}}
	line := shapeLine("s", []string{arr(attr("a", "stringValue", `"1"`), attr("b", "stringValue", `"2"`))})
	keepA := newKeepSet(KeepAttrs{Span: []string{"a"}})
	keepB := newKeepSet(KeepAttrs{Span: []string{"b"}})
	for _, keys := range []*keepSet{keepA, keepB, keepA, keepB} {
		if !decodeWithCacheKeeping(t, cache, line, keys) {
			t.Fatal("the decoder gave up")
		}
	}
}

// TestShapeLearnsOnlyFromWhatTheGeneralPathKept pins that a shape takes
// its kept attributes from the general path's answer for the same array:
// an answer that does not match the array, in its keys or their number,
// teaches nothing rather than a shape that keeps otherwise.
func TestShapeLearnsOnlyFromWhatTheGeneralPathKept(t *testing.T) {
	keys := newKeepSet(testKeep)
	a := arr(attr("plugin.mcp.cache_key", "stringValue", `"k"`), attr("mcp.tool.name", "stringValue", `"t"`))
	key, tool := Attr{Key: "plugin.mcp.cache_key", Type: 1}, Attr{Key: "mcp.tool.name", Type: 1}
	cases := []struct {
		name string
		kept []Attr
		want int // slots kept; -1: no shape
	}{
		{"both kept", []Attr{key, tool}, 2},
		{"the first kept", []Attr{key}, 1},
		{"none kept", nil, 0},
		{"an attribute the array does not hold", []Attr{key, tool, {Key: "x"}}, -1},
		{"out of order", []Attr{tool, key}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var sh attrShape
			ok := sh.learn(&keys.span, []byte(a), c.kept)
			got := -1
			if ok {
				got = 0
				for _, s := range sh.slots {
					if s.key != "" {
						got++
					}
				}
			}
			if got != c.want {
				t.Fatalf("learn kept %d slots (-1: none learned), want %d", got, c.want)
			}
		})
	}
}

// TestShapedStringReadsPastTheLastValue pins shapedString's test for the
// closing quote after the last value: a value that starts with the last
// one but goes on ("k1", then "k12") is read by the shape, not taken for
// the last one and then refused by the literal after it.
func TestShapedStringReadsPastTheLastValue(t *testing.T) {
	key := func(v string) string { return arr(attr("plugin.mcp.cache_key", "stringValue", `"`+v+`"`)) }
	cache := &stringCache{m: map[string]string{}}
	if !decodeWithCache(t, cache, shapeLine("s", []string{key("k1"), key("k1"), key("k12"), key("k1")})) {
		t.Fatal("the decoder gave up")
	}
	// Learned from span 1, read by shape after: spans 2, 3 and 4.
	if w := cache.shapes.ways(cache.str([]byte("s"))); w[0].name != "s" || w[0].hits != 3 {
		t.Fatalf("the first way holds %q with %d hits; want s with 3", w[0].name, w[0].hits)
	}
}

// TestShapedAttributesPutBackWhatTheyRead pins shapedAttributes' promise
// when an array does not fit its shape after some of its attributes were
// read: the position at the array's start, and the batch's attributes as
// they were.
func TestShapedAttributesPutBackWhatTheyRead(t *testing.T) {
	first := arr(attr("plugin.mcp.cache_key", "stringValue", `"k1"`), attr("plugin.mcp.attempt", "intValue", `"1"`))
	d := testDec(t, []byte(first))
	var sh attrShape
	start, n, ok := d.attributes(&d.keys.span)
	if !ok || n != 2 || !sh.learn(&d.keys.span, d.b, d.out.Attrs[start:start+n]) {
		t.Fatalf("no shape from %s (%d attributes kept)", first, n)
	}
	d.b = []byte("  " + arr(attr("plugin.mcp.cache_key", "stringValue", `"k2"`), attr("plugin.mcp.attempt", "intValue", `"x"`)))
	d.i = 2
	before := len(d.out.Attrs)
	if _, _, ok := d.shapedAttributes(&sh); ok {
		t.Fatal("an array with an int the reader refuses fitted the shape")
	}
	if d.i != 2 || len(d.out.Attrs) != before {
		t.Fatalf("after the misfit: position %d (want 2), %d attributes (want %d)", d.i, len(d.out.Attrs), before)
	}
}
