package ingest

import (
	"bytes"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// attrShape is the exact text of a span's attribute array as the last span
// of one name wrote it, values left out: the literals between the values
// (the keys among them) and each value's type. An exporter writes the
// spans of one name with the same attributes in the same order, so the
// next span's array is most often that text with other values. Reading it
// so compares each literal where it stands and reads only the values: the
// per-attribute work of compactAttr (finding the key, asking the filter,
// telling the type) was most of the cost of a span's attributes.
//
// A shape is learned only from an array the general path read (attributes)
// and every literal is compared byte for byte, so an array read by its
// shape is one the general path reads the same way: the same keys, so the
// same answers of the filter; the same value readers (rawString's stop,
// int64Val, boolLit). Anything else, a literal that differs or a value its
// reader refuses, puts the position back for the general path.
type attrShape struct {
	name  string     // the span name it was learned for; "" for an empty slot
	f     *keyFilter // the filter whose answers it holds
	text  []byte     // the literals, one after another
	slots []shapeSlot
	tail  int32  // where the literal after the last value starts in text
	hits  uint32 // how often it fitted since it was learned (shapeWays.hit)
}

// shapeSlot is one attribute of a shape: the literal before its value
// (text[lit:end]), the value's type, and the filter's answer for its key.
type shapeSlot struct {
	lit, end int32
	typ      pcommon.ValueType // ValueTypeStr, ValueTypeBool or ValueTypeInt
	// key is the filter's string for a kept key, "" for one not kept or
	// kept by an earlier attribute of the array (the first one wins).
	key string
	// last is the string value this attribute had last (kept strings
	// only): most often the next span's value too.
	last string
}

// Bounds of a shape: an array with more attributes or longer literals is
// read the general way, so a worker's shapes hold a bounded memory.
const (
	maxShapeSlots = 32
	maxShapeText  = 2048
)

// attrShapes is a decoding worker's shapes, in slots picked by where a
// span name's bytes lie (ways). A slot holds attrShapeWays shapes, of its
// names together: an acquire keeps two (one that hits, one that misses,
// a hit's array with one attribute more), and the few names of a writer
// land in 64 slots by where the allocator put them, so in some runs two
// or three of them share a slot. A slot that holds fewer shapes than its
// names read is taught one back in place of another on every span: with
// two ways, about one run of the bench dump in eight read up to a third of
// its arrays the general way. The way fitted more often is tried first;
// a new shape takes an empty way, else the last one, fitted least.
type attrShapes [1 << attrShapeBits]shapeWays

// attrShapeWays is how many shapes a name slot holds.
const attrShapeWays = 4

// shapeWays is one name slot of attrShapes, the way fitted most often
// first.
type shapeWays [attrShapeWays]attrShape

// hit counts a fit of way k, which moves ahead of the way before it once
// it has fitted more often (not as often). The counts are halved before
// they could wrap.
func (w *shapeWays) hit(k int) {
	w[k].hits++
	if k > 0 && w[k].hits > w[k-1].hits {
		w[k], w[k-1] = w[k-1], w[k]
	}
	if w[0].hits >= 1<<30 {
		for i := range w {
			w[i].hits /= 2
		}
	}
}

// attrShapeBits is the log2 of the name slots.
const attrShapeBits = 6

// ways returns the two shapes of name's slot, chosen by where its bytes
// lie: span names come from the worker's string cache, so one name is one
// string nearly always.
func (s *attrShapes) ways(name string) *shapeWays {
	p := uint64(uintptr(unsafe.Pointer(unsafe.StringData(name))))
	return &s[(p*0x9e3779b97f4a7c15)>>(64-attrShapeBits)]
}

// spanAttributes reads a span's attribute array: by one of the shapes
// learned for the span's name when one fits (counted a hit, see
// shapeWays.hit), else by the general path, whose array then
// becomes a shape of the name. A span whose name comes after its
// attributes, or has none, is read the general way.
func (d *fastDec) spanAttributes(name string) (start, n int32, ok bool) {
	kept, shapes := &d.keys.span, &d.strs.shapes
	if name != "" {
		w := shapes.ways(name)
		for k := range w {
			if w[k].name != name || w[k].f != kept {
				continue
			}
			if start, n, ok = d.shapedAttributes(&w[k]); ok {
				w.hit(k)
				return start, n, true
			}
		}
	}
	from := d.i
	if start, n, ok = d.attributes(kept); ok {
		shapes.learn(name, kept, d.b[from:d.i], d.out.Attrs[start:start+n])
	}
	return start, n, ok
}

// learn makes the shape of arr, an attribute array the general path read
// whole into kept for filter f, a shape of name's slot: in its first
// empty way, else in its last; when arr has no shape (not compact, too
// large), nothing is learned.
func (s *attrShapes) learn(name string, f *keyFilter, arr []byte, kept []Attr) {
	if name == "" {
		return
	}
	w := s.ways(name)
	sh := &w[len(w)-1]
	for k := range w {
		if w[k].name == "" {
			sh = &w[k]
			break
		}
	}
	sh.hits = 0
	if !sh.learn(f, arr, kept) {
		sh.name = ""
		return
	}
	sh.name = name
}

// learn makes sh the shape of arr for filter f, which the general path
// read into the attributes kept, reporting false when arr is not an array
// of compact attributes (compactAttr's form, without spaces) of at most
// maxShapeSlots, with literals of at most maxShapeText bytes. Which of
// its attributes a shape keeps is the general path's answer, not decided
// again: an attribute is kept when it is the next one in kept. It reuses
// sh's memory.
func (sh *attrShape) learn(f *keyFilter, arr []byte, kept []Attr) bool {
	sh.f, sh.text, sh.slots = f, sh.text[:0], sh.slots[:0]
	if len(arr) < 2 || arr[0] != '[' {
		return false
	}
	lit, i := 0, 1 // the current literal starts at lit; i reads on
	for arr[i] != ']' {
		var ok bool
		if lit, i, ok = sh.learnAttr(arr, lit, i, &kept); !ok {
			return false
		}
	}
	if i+1 != len(arr) || len(sh.text)+len(arr)-lit > maxShapeText || len(kept) > 0 {
		return false
	}
	sh.tail = int32(len(sh.text))
	sh.text = append(sh.text, arr[lit:]...)
	return true
}

// learnAttr adds the compact attribute at arr[i] to sh, its literal
// starting at arr[lit], and returns where the literal after its value
// starts and where the next element (or the closing bracket) does.
func (sh *attrShape) learnAttr(arr []byte, lit, i int, kept *[]Attr) (nextLit, next int, ok bool) {
	typ, key, n := compactKeyAt(arr[i:])
	if n < 0 || len(sh.slots) == maxShapeSlots {
		return 0, 0, false
	}
	i += n
	v := valueEnd(typ, arr, i)
	if v < 0 || !sh.add(arr[lit:i], typ, key, kept) {
		return 0, 0, false
	}
	closing := []byte(`}}`) // a string's closing quote is part of the literal after it
	if typ == pcommon.ValueTypeStr {
		closing = []byte(`"}}`)
	}
	next = v + len(closing)
	if !bytes.HasPrefix(arr[v:], closing) || next >= len(arr) {
		return 0, 0, false
	}
	switch {
	case arr[next] == ']':
		return v, next, true
	case arr[next] == ',' && next+1 < len(arr) && arr[next+1] != ']':
		return v, next + 1, true
	}
	return 0, 0, false
}

// compactKeyAt reads the opening of a compact attribute at the start of b,
// {"key":"k","value":{"stringValue":" (or boolValue, intValue, without the
// quote), returning its value type, its key and its length; n is -1 when
// b does not open so.
func compactKeyAt(b []byte) (typ pcommon.ValueType, key []byte, n int) {
	if !bytes.HasPrefix(b, []byte(keyPre)) {
		return 0, nil, -1
	}
	k := plainString(b[len(keyPre):])
	if k < 0 {
		return 0, nil, -1
	}
	key, n = b[len(keyPre):len(keyPre)+k], len(keyPre)+k+1
	rest := b[n:]
	switch {
	case bytes.HasPrefix(rest, []byte(compactStr.s)) && len(rest) > len(compactStr.s) && rest[len(compactStr.s)] == '"':
		return pcommon.ValueTypeStr, key, n + len(compactStr.s) + 1
	case bytes.HasPrefix(rest, []byte(compactBool.s)):
		return pcommon.ValueTypeBool, key, n + len(compactBool.s)
	case bytes.HasPrefix(rest, []byte(compactInt.s)):
		return pcommon.ValueTypeInt, key, n + len(compactInt.s)
	}
	return 0, nil, -1
}

// valueEnd returns where the value of type typ starting at arr[i] ends, as
// the value's reader reads it, or -1 where that reader refuses it.
func valueEnd(typ pcommon.ValueType, arr []byte, i int) int {
	d := fastDec{b: arr, i: i}
	var ok bool
	switch typ {
	case pcommon.ValueTypeStr:
		n := plainString(arr[i:])
		if n < 0 {
			return -1
		}
		return i + n
	case pcommon.ValueTypeBool:
		_, ok = d.boolLit()
	case pcommon.ValueTypeInt:
		_, ok = d.int64Val()
	}
	if !ok {
		return -1
	}
	return d.i
}

// add appends one attribute to sh: the literal before its value, its
// type, and whether the general path kept it: when it is the next of
// kept, which it then leaves (a key not kept, or kept already by an
// earlier attribute, is not there). It reports false past maxShapeText.
func (sh *attrShape) add(lit []byte, typ pcommon.ValueType, key []byte, kept *[]Attr) bool {
	if len(sh.text)+len(lit) > maxShapeText {
		return false
	}
	var k string
	if len(*kept) > 0 && (*kept)[0].Key == string(key) {
		k = (*kept)[0].Key
		*kept = (*kept)[1:]
	}
	start := int32(len(sh.text))
	sh.text = append(sh.text, lit...)
	sh.slots = append(sh.slots, shapeSlot{lit: start, end: int32(len(sh.text)), typ: typ, key: k})
	return true
}

// shapedAttributes reads the attribute array at d.i by its shape sh,
// appending the kept attributes to the batch as attributes does, and
// returns their range; when the array does not have that shape it puts
// the position and the batch back and reports false.
func (d *fastDec) shapedAttributes(sh *attrShape) (start, n int32, ok bool) {
	start = int32(len(d.out.Attrs))
	from := d.i
	if d.shapedValues(sh) {
		return start, int32(len(d.out.Attrs)) - start, true
	}
	d.i = from
	clear(d.out.Attrs[start:])
	d.out.Attrs = d.out.Attrs[:start]
	return start, 0, false
}

// shapedValues is shapedAttributes' loop: for each slot, its literal, then
// its value read as compactAttr and gather read it (a string up to its
// closing quote, which the next literal holds; a bool; an int), kept when
// the slot keeps it. It reports false at the first literal or value that
// does not fit, leaving d.i and the batch for the caller to put back.
func (d *fastDec) shapedValues(sh *attrShape) bool {
	b, i := d.b, d.i
	for k := range sh.slots {
		s := &sh.slots[k]
		if !bytes.HasPrefix(b[i:], sh.text[s.lit:s.end]) {
			return false
		}
		i += int(s.end - s.lit)
		var str string
		var bv, ok bool
		var iv int64
		switch s.typ {
		case pcommon.ValueTypeStr:
			str, i, ok = d.shapedString(s, i)
		case pcommon.ValueTypeBool:
			d.i = i
			bv, ok = d.boolLit()
			i = d.i
		default:
			d.i = i
			iv, ok = d.int64Val()
			i = d.i
		}
		if !ok {
			return false
		}
		if s.key != "" {
			a := d.out.appendAttr()
			a.Key, a.Type, a.Str, a.Bool, a.Int = s.key, s.typ, str, bv, iv
		}
	}
	tail := sh.text[sh.tail:]
	if !bytes.HasPrefix(b[i:], tail) {
		return false
	}
	d.i = i + len(tail)
	return true
}

// shapedString reads the string value of slot s at d.b[i] up to (not
// past) its closing quote, which the next literal holds, and returns it
// with where it ends: the slot's last value when the input repeats it,
// else the cached string of its text (a kept key's) or "" (one not kept).
func (d *fastDec) shapedString(s *shapeSlot, i int) (string, int, bool) {
	b := d.b
	if last := s.last; last != "" && closedAt(b, i, last) {
		return last, i + len(last), true
	}
	n := plainString(b[i:])
	if n < 0 {
		return "", i, false
	}
	if s.key == "" {
		return "", i + n, true
	}
	s.last = d.strs.str(b[i : i+n])
	return s.last, i + n, true
}
