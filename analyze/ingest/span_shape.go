package ingest

// spanShape is the text of a span's fields as the writer wrote an earlier
// span, values left out: the literal before each field's value (the comma,
// the key and the colon; the opening brace before the first) with the
// field it names, and the literal after the last value (the closing
// brace). A writer writes its spans' fields in one order, the same ones
// on every span of a kind (a root's fields, a child's), so most spans are
// an earlier span's text with other values. Reading a span by its shape
// compares each literal where it stands and reads the value with
// spanField, sparing span's general path its guessing and bookkeeping
// per field (a tenth of a JSON read's instructions).
//
// A shape is learned from a span the general path read whole, from
// fields it reads with spanField, each once, and every literal is compared
// byte for byte; so a span that fits a shape is one the general path
// reads with the same readers in the same order. A span that does not fit
// is put back (position, span and attributes) for the general path.
type spanShape struct {
	fields []shapeField
	tail   pattern
	hits   uint32 // how often it fitted since it was learned
}

// shapeField is one field of a spanShape: the literal before its value,
// and the field, an index in spanKeyOrder.
type shapeField struct {
	lit pattern
	at  int
}

// spanShapes is a decoding worker's span shapes, the one fitted most
// often first: a writer's roots and children write different fields (a
// parent, attributes), and the spans that fit none teach the one fitted
// least a new shape.
type spanShapes [spanShapeWays]spanShape

// spanShapeWays is how many span shapes a worker keeps.
const spanShapeWays = 4

// read reads the span at d.i into sp, which newSpan just made, by the
// first shape that fits, reporting false (and the position, sp and the
// batch's attributes as they were) when none does.
func (s *spanShapes) read(d *fastDec, sp *Span) bool {
	for k := range s {
		if len(s[k].fields) == 0 {
			return false // the ways fill from the first
		}
		if d.spanByShape(&s[k], sp) {
			s.hit(k)
			return true
		}
	}
	return false
}

// hit counts a fit of way k, which moves ahead of the way before it once
// it has fitted more often. The counts are halved before they could wrap.
func (s *spanShapes) hit(k int) {
	s[k].hits++
	if k > 0 && s[k].hits > s[k-1].hits {
		s[k], s[k-1] = s[k-1], s[k]
	}
	if s[0].hits >= 1<<30 {
		for i := range s {
			s[i].hits /= 2
		}
	}
}

// spanByShape reads the span at d.i by sh; when a literal differs or a
// value is refused it puts back the position, sp and the batch's
// attributes and reports false.
func (d *fastDec) spanByShape(sh *spanShape, sp *Span) bool {
	from, attrs := d.i, len(d.out.Attrs)
	for k := range sh.fields {
		f := &sh.fields[k]
		// The literal's words where they fit, in line: a call per field
		// cost as much as the comparison.
		if rest := d.b[d.i:]; len(rest) >= maxPattern && f.lit.words(rest) {
			d.i += len(f.lit.s)
		} else if !d.litAt(&f.lit) {
			d.unreadSpan(sp, from, attrs)
			return false
		}
		if !d.spanField(sp, f.at) {
			d.unreadSpan(sp, from, attrs)
			return false
		}
	}
	if !d.litAt(&sh.tail) {
		d.unreadSpan(sp, from, attrs)
		return false
	}
	return true
}

// litAt consumes the literal p at d.i when the input holds it there
// (compared as its words where they fit before the end of the input).
func (d *fastDec) litAt(p *pattern) bool {
	if !hasPrefixAt(d.b, d.i, p.s) {
		return false
	}
	d.i += len(p.s)
	return true
}

// unreadSpan puts back a span read in part: the position at its start,
// the span as newSpan made it, the attributes it added.
func (d *fastDec) unreadSpan(sp *Span, from, attrs int) {
	d.i = from
	*sp = Span{Resource: sp.Resource}
	clear(d.out.Attrs[attrs:])
	d.out.Attrs = d.out.Attrs[:attrs]
}

// spanRecord is where span's general path found a span's text (from, to)
// and each field's value (fields), for spanShapes.learn.
type spanRecord struct {
	from, to int
	fields   [spanFields]recordedField
	n        int
	rare     bool // a field spanRare read: not a shape's
}

// recordedField is one field of a spanRecord: its index in spanKeyOrder
// and where its value starts and ends.
type recordedField struct{ at, start, end int }

// field notes field at, its value at [start, end); a span whose fields
// are more than spanFields (a repeated key, refused anyway) is noted as
// rare.
func (r *spanRecord) field(at, start, end int) {
	if r.n == len(r.fields) {
		r.rare = true
		return
	}
	r.fields[r.n] = recordedField{at: at, start: start, end: end}
	r.n++
}

// learn makes the span r recorded, which the general path read whole, the
// shape of the last way, unless it read a rare field, has none, or a
// literal is longer than a pattern holds. The literals' strings come from
// the worker's string cache: a shape learned again costs no allocation.
func (s *spanShapes) learn(d *fastDec, r *spanRecord) {
	if r.rare || r.n == 0 {
		return
	}
	k := len(s) - 1
	for k > 0 && len(s[k-1].fields) == 0 {
		k--
	}
	sh := &s[k]
	sh.fields, sh.hits = sh.fields[:0], 0
	prev := r.from
	for _, f := range r.fields[:r.n] {
		if f.start-prev > maxPattern {
			sh.fields = sh.fields[:0]
			return
		}
		sh.fields = append(sh.fields, shapeField{lit: newPattern(d.strs.str(d.b[prev:f.start])), at: f.at})
		prev = f.end
	}
	if r.to-prev > maxPattern {
		sh.fields = sh.fields[:0]
		return
	}
	sh.tail = newPattern(d.strs.str(d.b[prev:r.to]))
}
