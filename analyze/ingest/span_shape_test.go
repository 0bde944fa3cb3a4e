package ingest

import (
	"fmt"
	"strings"
	"testing"
)

// spanFieldValues are the values spanText writes for each field name.
var spanFieldValues = map[string]string{
	"traceId":           `"0102030405060708090a0b0c0d0e0f10"`,
	"spanId":            `"00000000000000%02x"`,
	"parentSpanId":      `"00000000000000ff"`,
	"flags":             "1",
	"name":              `"span-%d"`,
	"kind":              "3",
	"startTimeUnixNano": `"%d"`,
	"endTimeUnixNano":   `"%d"`,
	"attributes":        `[{"key":"plugin.mcp.cache_key","value":{"stringValue":"v%d"}}]`,
	"status":            `{"code":2}`,
	"events":            "[]",
	"traceState":        `"t%d"`,
}

// spanText writes span number id with the fields named in order, each
// value from spanFieldValues (a %d in it gets id); a field of the form
// key=value writes that value instead.
func spanText(id int, fields ...string) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			v = spanFieldValues[f]
			if strings.Contains(v, "%") {
				v = fmt.Sprintf(v, id)
			}
		}
		parts[i] = fmt.Sprintf("%q:%s", k, v)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// spansLine is one OTLP JSON line holding spans.
func spansLine(spans ...string) []byte {
	return []byte(`{"resourceSpans":[{"resource":{},"scopeSpans":[{"scope":{},"spans":[` + strings.Join(spans, ",") + `]}]}]}`)
}

var (
	rootFields  = []string{"traceId", "spanId", "name", "kind", "startTimeUnixNano", "endTimeUnixNano", "status"}
	childFields = []string{"traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano", "endTimeUnixNano", "attributes", "status"}
)

// TestSpansReadByShapeAsTheGeneralPath pins that spans read by the shape
// of an earlier span (spanShape) come out as the general path and pdata
// read them, whatever differs from the shapes a worker holds: the fields'
// order, a field more or less, a rare field, spaces, a value the decoder
// refuses. Each case's spans are read in order, twice, by one worker's
// cache, so every span meets the shapes the earlier ones left.
func TestSpansReadByShapeAsTheGeneralPath(t *testing.T) {
	reversed := reversedFields(childFields)
	cases := []struct {
		name     string
		spans    []string
		wantFast bool
	}{
		{"roots and children", []string{spanText(1, rootFields...), spanText(2, childFields...), spanText(3, childFields...), spanText(4, rootFields...), spanText(5, childFields...)}, true},
		{"the order changes", []string{spanText(1, childFields...), spanText(2, reversed...), spanText(3, childFields...), spanText(4, reversed...)}, true},
		{"a field more, then less", []string{
			spanText(1, childFields...),
			spanText(2, append([]string{"flags"}, childFields...)...),
			spanText(3, childFields[:len(childFields)-1]...),
			spanText(4, childFields...),
		}, true},
		{"a rare field", []string{spanText(1, childFields...), spanText(2, append(childFields, "events")...), spanText(3, append(childFields, "traceState")...), spanText(4, childFields...)}, true},
		{"a value in another form", []string{
			spanText(1, childFields...),
			spanText(2, "traceId", "spanId", "parentSpanId=\"\"", "name", "kind=\"SPAN_KIND_SERVER\"", "startTimeUnixNano=5", "endTimeUnixNano", "status={}"),
			spanText(3, childFields...),
		}, true},
		{"spaces", []string{spanText(1, childFields...), strings.Replace(spanText(2, childFields...), `,"name"`, `, "name"`, 1), spanText(3, childFields...)}, true},
		{"a long gap", []string{spanText(1, childFields...), strings.Replace(spanText(2, childFields...), `,"name"`, ","+strings.Repeat(" ", maxPattern)+`"name"`, 1), spanText(3, childFields...)}, true},
		{"an empty span", []string{"{}", spanText(2, childFields...), "{}"}, true},
		{"a span id the decoder refuses", []string{spanText(1, childFields...), spanText(2, "traceId", "spanId=\"00000000000000zz\"", "name")}, false},
		{"a repeated field", []string{spanText(1, childFields...), spanText(2, append(childFields, "name")...)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cache := &stringCache{m: map[string]string{}}
			for round := range 2 {
				if got := decodeWithCache(t, cache, spansLine(c.spans...)); got != c.wantFast {
					t.Fatalf("round %d: the decoder took the line: %v, want %v", round, got, c.wantFast)
				}
			}
		})
	}
}

func reversedFields(s []string) []string {
	r := make([]string, len(s))
	for i, v := range s {
		r[len(s)-1-i] = v
	}
	return r
}

// TestSpanShapesAreLearnedAndUsed pins that span shapes engage: a
// writer's roots and children each get a shape from their first span and
// are read by it after, the one fitted more often first; a span with a
// rare field teaches none.
func TestSpanShapesAreLearnedAndUsed(t *testing.T) {
	cache := &stringCache{m: map[string]string{}}
	spans := []string{spanText(1, rootFields...), spanText(2, childFields...), spanText(3, append(childFields, "events")...)}
	for id := 4; id < 10; id++ {
		spans = append(spans, spanText(id, childFields...))
	}
	spans = append(spans, spanText(10, rootFields...))
	if !decodeWithCache(t, cache, spansLine(spans...)) {
		t.Fatal("the decoder gave up")
	}
	s := &cache.spans
	// Learned from spans 1 and 2; span 3 fits none and teaches none;
	// the children 4 to 9 fit the second shape, which went first, and
	// root 10 the first.
	if len(s[0].fields) != len(childFields) || s[0].hits != 6 || len(s[1].fields) != len(rootFields) || s[1].hits != 1 || len(s[2].fields) != 0 {
		t.Fatalf("ways: %d fields (%d hits), %d (%d), %d; want the child's %d (6) first, the root's %d (1), then none",
			len(s[0].fields), s[0].hits, len(s[1].fields), s[1].hits, len(s[2].fields), len(childFields), len(rootFields))
	}
}

// TestSpanShapeHitMovesAWayUp pins spanShapes.hit: a way passes the one
// before it once it has fitted more often (not as often), and the counts
// are halved at 1<<30.
func TestSpanShapeHitMovesAWayUp(t *testing.T) {
	var s spanShapes
	for k := range s {
		s[k].fields = make([]shapeField, k+1) // tells the ways apart
	}
	s[0].hits, s[1].hits = 1, 1
	s.hit(2)
	if len(s[2].fields) != 3 {
		t.Fatalf("one fit of the third way moved it past a way that fitted once")
	}
	s.hit(2)
	if len(s[1].fields) != 3 || len(s[2].fields) != 2 {
		t.Fatalf("two fits of the third way did not move it past the second (one fit)")
	}
	s[0].hits = 1<<30 - 1
	s.hit(0)
	if s[0].hits != 1<<29 || s[1].hits != 1 {
		t.Fatalf("at 1<<30 the counts are %d, %d; want both halved", s[0].hits, s[1].hits)
	}
}

// TestSpanShapeLearnsOnlyWhatItCanCompare pins what spanShapes.learn
// refuses: a span with a rare field, none, or a literal (between fields
// or after the last) longer than a pattern; and that a new shape fills the first empty way, else the last.
func TestSpanShapeLearnsOnlyWhatItCanCompare(t *testing.T) {
	learn := func(s *spanShapes, span string) {
		t.Helper()
		learnSpan(t, s, testDec(t, []byte(span)))
	}
	gap := strings.Replace(spanText(1, childFields...), `,"name"`, ","+strings.Repeat(" ", maxPattern-len(`,"name":`)+1)+`"name"`, 1)
	fits := strings.Replace(spanText(1, childFields...), `,"name"`, ","+strings.Repeat(" ", maxPattern-len(`,"name":`))+`"name"`, 1)
	longTail := strings.TrimSuffix(spanText(1, childFields...), "}") + strings.Repeat(" ", maxPattern) + "}"
	var s spanShapes
	for _, refused := range []string{spanText(1, append(childFields, "events")...), "{}", gap, longTail} {
		if learn(&s, refused); len(s[0].fields) != 0 {
			t.Fatalf("learned a shape from %s", refused)
		}
	}
	for _, fits := range []string{fits, strings.TrimSuffix(spanText(1, childFields...), "}") + strings.Repeat(" ", maxPattern-1) + "}"} {
		s = spanShapes{}
		if learn(&s, fits); len(s[0].fields) != len(childFields) {
			t.Fatalf("no shape from a span whose longest literal is maxPattern bytes: %s", fits)
		}
	}
	for k := 1; k < spanShapeWays; k++ {
		learn(&s, spanText(k, rootFields[:k+1]...))
		if len(s[k].fields) != k+1 {
			t.Fatalf("learning %d: way %d has %d fields, want the new shape's %d", k, k, len(s[k].fields), k+1)
		}
	}
	learn(&s, spanText(9, "traceId"))
	if last := s[spanShapeWays-1]; len(last.fields) != 1 || len(s[0].fields) != len(childFields) {
		t.Fatalf("with every way full a new shape did not replace the last")
	}
}

// TestSpanByShapePutsBackWhatItRead pins spanByShape's promise when a
// span does not fit: the position at the span's start, the span as
// newSpan made it and the batch's attributes as they were, whether a
// value is refused (a span id the decoder refuses, after the trace id was
// read) or the last literal differs (after every field, attributes
// included, was read).
func TestSpanByShapePutsBackWhatItRead(t *testing.T) {
	cases := []struct{ name, span string }{
		{"a value refused", spanText(2, "traceId", "spanId=\"00000000000000zz\"", "parentSpanId", "name", "kind", "startTimeUnixNano", "endTimeUnixNano", "attributes", "status")},
		{"the last literal differs", spanText(2, append(childFields, "flags")...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s spanShapes
			d := testDec(t, []byte(spanText(1, childFields...)))
			learnSpan(t, &s, d)
			d.b, d.i = []byte("  "+c.span), 2
			attrs := len(d.out.Attrs)
			sp := d.out.newSpan(7)
			if d.spanByShape(&s[0], sp) {
				t.Fatal("the span fitted the shape")
			}
			if d.i != 2 || *sp != (Span{Resource: 7}) || len(d.out.Attrs) != attrs {
				t.Fatalf("after the misfit: position %d (want 2), span %+v (want only its resource), %d attributes (want %d)", d.i, *sp, len(d.out.Attrs), attrs)
			}
		})
	}
}

// learnSpan reads the span at d.i by span's general path and makes it a
// shape of s, as span does.
func learnSpan(t *testing.T, s *spanShapes, d *fastDec) {
	t.Helper()
	rec := spanRecord{from: d.i}
	if !d.spanByKeys(d.out.newSpan(0), &rec) {
		t.Fatalf("the general path refused %s", d.b[rec.from:])
	}
	rec.to = d.i
	s.learn(d, &rec)
}
