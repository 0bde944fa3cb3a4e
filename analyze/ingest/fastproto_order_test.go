package ingest

import (
	"slices"
	"strings"
	"testing"
)

// spanLayout is one span's fields, each encoded whole, in ascending
// field order; the attributes are one block, as both marshalers keep
// their order.
type spanLayout []pb

// ascending and descending are the span as Go's protobuf and pdata
// write it.
func (l spanLayout) ascending() pb { return slices.Concat(l...) }

func (l spanLayout) descending() pb {
	r := slices.Clone(l)
	slices.Reverse(r)
	return slices.Concat(r...)
}

// without returns the layout with the fields for which drop is true left
// out.
func (l spanLayout) without(drop func(pb) bool) spanLayout {
	return slices.DeleteFunc(slices.Clone(l), drop)
}

// fullSpan is a span with every field spanInOrder reads: ids, name,
// kind, times, three attributes (one with a two-byte length), status and
// flags.
func fullSpan() spanLayout {
	long := strings.Repeat("k", 150)
	return spanLayout{
		pb(nil).bytes(fieldSpanTraceID, testTraceID),
		pb(nil).bytes(fieldSpanSpanID, testSpanID),
		pb(nil).bytes(fieldSpanParentSpanID, testParent),
		pb(nil).str(fieldSpanName, "plugin.mcp.connection.acquire"),
		pb(nil).varint(fieldSpanKind, 3),
		pb(nil).fixed64(fieldSpanStart, 1777539600000000000),
		pb(nil).fixed64(fieldSpanEnd, 1777539600001000000),
		pb(nil).bytes(fieldSpanAttributes, boolAttr("plugin.mcp.cache_hit", true)).
			bytes(fieldSpanAttributes, strAttr("plugin.mcp.cache_key", long)).
			bytes(fieldSpanAttributes, strAttr("mcp.tool.name", "list_logs")),
		pb(nil).bytes(fieldSpanStatus, pb(nil).str(2, "boom").varint(3, 2)),
		pb(nil).fixed32(fieldSpanFlags, 0x301),
	}
}

// field reports whether an encoded field has field number num (a
// one-byte tag, or the flags' two).
func field(num int) func(pb) bool {
	return func(f pb) bool {
		if num == fieldSpanFlags {
			return len(f) > 1 && f[0] == 0x85 && f[1] == 0x01
		}
		return len(f) > 0 && int(f[0]>>3) == num
	}
}

// replaceField returns l with its field num replaced by f.
func replaceField(l spanLayout, num int, f pb) spanLayout {
	r := slices.Clone(l)
	r[slices.IndexFunc(r, field(num))] = f
	return r
}

// inOrder runs spanInOrder on one span, as span would.
func inOrder(t *testing.T, span []byte) (done, ok bool) {
	d := testProtoDec(t)
	return d.spanInOrder(span, d.out.newSpan(0))
}

// testProtoDec returns a decoder keeping testKeep, as decodeFastProto
// makes one for a record (testDec, of the JSON decoder, for protobuf).
func testProtoDec(t *testing.T) *protoDec {
	c := stringCaches.Get().(*stringCache)
	d := &protoDec{keep: newKeepSet(testKeep), out: getBatch(), strs: c}
	t.Cleanup(func() {
		putBatch(d.out)
		stringCaches.Put(c)
	})
	return d
}

func TestSpanInOrderReadsBothMarshalersLayouts(t *testing.T) {
	full := fullSpan()
	for name, l := range map[string]spanLayout{
		"every field":     full,
		"no parent":       full.without(field(fieldSpanParentSpanID)),
		"an empty parent": replaceField(full, fieldSpanParentSpanID, pb(nil).bytes(fieldSpanParentSpanID, nil)),
		"no kind":         full.without(field(fieldSpanKind)),
		"no times":        full.without(func(f pb) bool { return field(fieldSpanStart)(f) || field(fieldSpanEnd)(f) }),
		"no attributes":   full.without(field(fieldSpanAttributes)),
		"no status":       full.without(field(fieldSpanStatus)),
		"no flags":        full.without(field(fieldSpanFlags)),
		"no optional part": full.without(func(f pb) bool {
			return !field(fieldSpanTraceID)(f) && !field(fieldSpanSpanID)(f) && !field(fieldSpanName)(f)
		}),
	} {
		for order, span := range map[string]pb{"ascending": l.ascending(), "descending": l.descending()} {
			if done, ok := inOrder(t, span); !done || !ok {
				t.Errorf("%s, %s: spanInOrder done %v, ok %v; want it read: % x", name, order, done, ok, span)
			}
			// The same span read as a record: as pdata reads it.
			if rec := request(baseResource, span, span); !checkFastProtoMatchesPdata(t, rec) {
				t.Errorf("%s, %s: the record fell back: % x", name, order, rec)
			}
		}
	}
}

func TestSpanInOrderLeavesOtherLayoutsToTheLoop(t *testing.T) {
	full := fullSpan()
	long := strings.Repeat("n", 128) // the first two-byte length
	for name, l := range map[string]spanLayout{
		"a trace state":               append(slices.Clone(full[:2]), append(spanLayout{pb(nil).str(fieldSpanTraceState, "k=v")}, full[2:]...)...),
		"a name of 128 bytes":         replaceField(full, fieldSpanName, pb(nil).str(fieldSpanName, long)),
		"no name":                     full.without(field(fieldSpanName)),
		"a status of 128 bytes":       replaceField(full, fieldSpanStatus, pb(nil).bytes(fieldSpanStatus, pb(nil).str(2, long[:126]))), // a tag, a length and 126
		"an empty trace id":           replaceField(full, fieldSpanTraceID, pb(nil).bytes(fieldSpanTraceID, nil)),
		"a short span id":             replaceField(full, fieldSpanSpanID, pb(nil).bytes(fieldSpanSpanID, testSpanID[:7])),
		"a parent of seven bytes":     replaceField(full, fieldSpanParentSpanID, pb(nil).bytes(fieldSpanParentSpanID, testParent[:7])),
		"a kind OTLP does not define": replaceField(full, fieldSpanKind, pb(nil).varint(fieldSpanKind, maxSpanKind+1)),
		"a dropped attribute count":   append(slices.Clone(full[:9]), append(spanLayout{pb(nil).varint(fieldSpanDroppedAttrs, 1)}, full[9:]...)...),
		"an unknown field":            append(slices.Clone(full), pb(nil).varint(99, 1)),
		"a repeated name":             append(slices.Clone(full[:4]), full[3:]...),
	} {
		for order, span := range map[string]pb{"ascending": l.ascending(), "descending": l.descending()} {
			if done, _ := inOrder(t, span); done {
				t.Errorf("%s, %s: spanInOrder read it; span's loop should: % x", name, order, span)
			}
			// After such a span, the record's next span in a layout
			// spanInOrder reads goes to the loop too, and both read as
			// pdata reads them (or the record falls back).
			checkFastProtoMatchesPdata(t, request(baseResource, span, full.ascending()))
			checkFastProtoMatchesPdata(t, request(baseResource, full.descending(), span))
		}
	}
}

func TestSpanInOrderGivesUpTheRecordOnAFailedAttributeOrStatus(t *testing.T) {
	full := fullSpan()
	for name, f := range map[string]pb{
		"an attribute of two keys": pb(nil).bytes(fieldSpanAttributes, pb(nil).str(1, "x").str(1, "x")),
		"a status code as text":    pb(nil).bytes(fieldSpanStatus, pb(nil).str(3, "x")),
	} {
		l := replaceField(full, int(f[0]>>3), f)
		for order, span := range map[string]pb{"ascending": l.ascending(), "descending": l.descending()} {
			if done, ok := inOrder(t, span); !done || ok {
				t.Errorf("%s, %s: done %v, ok %v; want the record given up", name, order, done, ok)
			}
			if checkFastProtoMatchesPdata(t, request(baseResource, span)) {
				t.Errorf("%s, %s: the projection took the record", name, order)
			}
		}
	}
}

func TestSpanInOrderReadsNothingPastTheLastField(t *testing.T) {
	full := fullSpan()
	for order, span := range map[string]pb{
		"ascending, after the flags":      full.ascending().varint(99, 1),
		"descending, after the trace id":  full.descending().varint(99, 1),
		"descending, a second trace id":   full.descending().bytes(fieldSpanTraceID, testTraceID),
		"ascending, a second trace id":    full.ascending().bytes(fieldSpanTraceID, testTraceID),
		"descending, one byte after":      append(full.descending(), 0),
		"ascending, one byte after flags": append(full.ascending(), 0),
	} {
		if done, _ := inOrder(t, span); done {
			t.Errorf("%s: spanInOrder read it", order)
		}
		checkFastProtoMatchesPdata(t, request(baseResource, span))
	}
}

// TestSpanInOrderIsNotTriedPastTheMissesARecordAllows pins the budget of
// misses per record: spans in another layout are tried until
// maxInOrderMisses of them missed, and the record's later spans then go
// to span's loop without spanInOrder reading them first.
func TestSpanInOrderIsNotTriedPastTheMissesARecordAllows(t *testing.T) {
	full := fullSpan()
	other := append(full.ascending(), pb(nil).varint(99, 1)...)
	many := func(sp pb, n int) []pb { return slices.Repeat([]pb{sp}, n) }
	for name, c := range map[string]struct {
		spans         []pb
		tries, misses int
	}{
		"every span in order":              {[]pb{full.ascending(), full.descending(), full.ascending()}, 3, 0},
		"one span otherwise, first":        {[]pb{other, full.ascending(), full.descending()}, 3, 1},
		"as many otherwise as allowed":     {append(many(other, maxInOrderMisses), full.ascending()), maxInOrderMisses, maxInOrderMisses},
		"one fewer otherwise than allowed": {append(many(other, maxInOrderMisses-1), full.ascending()), maxInOrderMisses, maxInOrderMisses - 1},
		"every span otherwise":             {many(other, 2*maxInOrderMisses), maxInOrderMisses, maxInOrderMisses},
	} {
		d := testProtoDec(t)
		if !d.request(request(baseResource, c.spans...)) {
			t.Fatalf("%s: the record was given up", name)
		}
		if d.inOrderTries != c.tries || d.inOrderMisses != c.misses {
			t.Errorf("%s: %d tries, %d misses; want %d and %d", name, d.inOrderTries, d.inOrderMisses, c.tries, c.misses)
		}
	}
}

// TestSpanInOrderChecksEveryLength pins the lengths spanInOrder reads
// before it takes a field's bytes: a field of another length whose bytes
// would line up with the fields expected next must not be taken for them
// (pdata refuses such a record), and an attribute of a three-byte length
// is left to span's loop, which reads it.
func TestSpanInOrderChecksEveryLength(t *testing.T) {
	full := fullSpan()
	head := full.without(func(f pb) bool {
		return field(fieldSpanParentSpanID)(f) || field(fieldSpanSpanID)(f) || field(fieldSpanTraceID)(f)
	})
	// Descending: a parent of ten bytes, its last two a span id's tag and
	// length, then eight bytes and a trace id: 28 bytes after the parent's
	// first ten, as a span id and a trace id would be.
	parent10 := append(slices.Clone(testParent), tagSpanSpanID, 8)
	lined := slices.Concat(head.descending(), pb(nil).bytes(fieldSpanParentSpanID, parent10), testSpanID,
		pb(nil).bytes(fieldSpanTraceID, testTraceID))
	// Ascending: a trace id of 15 bytes whose next byte starts the span
	// id where a 16-byte one would end.
	short := slices.Concat(pb(nil).bytes(fieldSpanTraceID, testTraceID[:15]), []byte{0}, full[1:].ascending())
	// Ascending: a span id of nine bytes, its last a name's tag, then the
	// name's length and bytes where an eight-byte one would end.
	name := pb(nil).str(fieldSpanName, "n")
	span9 := slices.Concat(full[0], pb(nil).bytes(fieldSpanSpanID, append(slices.Clone(testSpanID), tagSpanName)), name[1:],
		full.without(func(f pb) bool {
			return field(fieldSpanTraceID)(f) || field(fieldSpanSpanID)(f) || field(fieldSpanParentSpanID)(f) || field(fieldSpanName)(f)
		}).ascending())
	// Descending: a trace id of 15 bytes and one byte more, the 18 bytes
	// a trace id field takes.
	trace15 := slices.Concat(full[1:].descending(), pb(nil).bytes(fieldSpanTraceID, testTraceID[:15]), []byte{0})
	// A field of an id's length where the id goes: the parent first in
	// ascending order, a trace state last in descending order.
	noSpanID := full.without(field(fieldSpanSpanID)).ascending()
	stateForSpanID := slices.Concat(full.without(func(f pb) bool { return field(fieldSpanSpanID)(f) || field(fieldSpanTraceID)(f) }).descending(),
		pb(nil).bytes(fieldSpanTraceState, testSpanID), full[0])
	// Descending: a span id of seven bytes and one byte more, the ten
	// bytes a span id field takes.
	span7 := slices.Concat(full[2:].descending(), pb(nil).bytes(fieldSpanSpanID, testSpanID[:7]), []byte{0}, full[0])
	stateLast := slices.Concat(full[1:].descending(), pb(nil).bytes(fieldSpanTraceState, testTraceID))
	for name, span := range map[string]pb{"the parent where the span id goes": noSpanID, "a trace state where the trace id goes": stateLast,
		"a trace state where the span id goes": stateForSpanID} {
		if done, _ := inOrder(t, span); done {
			t.Errorf("%s: spanInOrder read it: % x", name, span)
		}
		checkFastProtoMatchesPdata(t, request(baseResource, span)) // pdata takes these: read as it reads them
	}
	for name, span := range map[string]pb{"a parent of ten bytes lined up": lined, "a trace id of 15 bytes lined up": short,
		"a span id of nine bytes lined up": span9, "a last trace id of 15 bytes and a byte": trace15,
		"a span id of seven bytes and a byte": span7,
		"a parent of one byte lined up": slices.Concat(head.descending(), []byte{tagSpanParentID, 1, tagSpanSpanID, 8}, testSpanID,
			pb(nil).bytes(fieldSpanTraceID, testTraceID)),
		"an attribute past the span's end":  slices.Concat(full[:7].ascending(), []byte{tagSpanAttr, 0x7f, 1, 2, 3}),
		"an attribute past the end, first":  slices.Concat([]byte{tagSpanAttr, 0x90, 0x01, 1, 2, 3}, full[:7].descending()),
		"field 0 where the flags go, last":  slices.Concat(full[:9].ascending(), []byte{0x85, 0x00, 1, 2, 3, 4}),
		"field 0 where the flags go, first": slices.Concat([]byte{0x85, 0x00, 1, 2, 3, 4}, full[:9].descending())} {
		if done, _ := inOrder(t, span); done {
			t.Errorf("%s: spanInOrder read it: % x", name, span)
		}
		if checkFastProtoMatchesPdata(t, request(baseResource, span)) {
			t.Errorf("%s: the projection took a record pdata refuses", name)
		}
	}
	big := replaceField(full, fieldSpanAttributes, pb(nil).bytes(fieldSpanAttributes, strAttr("mcp.tool.name", strings.Repeat("t", 20000))))
	for order, span := range map[string]pb{"ascending": big.ascending(), "descending": big.descending()} {
		if done, _ := inOrder(t, span); done {
			t.Errorf("an attribute of 20000 bytes, %s: spanInOrder read it", order)
		}
		if !checkFastProtoMatchesPdata(t, request(baseResource, span)) {
			t.Errorf("an attribute of 20000 bytes, %s: the record fell back; span's loop reads it", order)
		}
	}
}
