package main

import (
	"fmt"

	"github.com/minio/simdjson-go"
)

// walker reads what the projection decoder reads of each span, reusing
// its iterators, objects and arrays from one request to the next, and
// sums the lengths of the values read so no read can be left out.
type walker struct {
	spans, attrs, sum int
	obj               [4]*simdjson.Object
	arr               [4]*simdjson.Array
	elem              simdjson.Element
}

// request walks one ExportTraceServiceRequest down to its spans.
func (w *walker) request(pj *simdjson.ParsedJson) error {
	it := pj.Iter()
	it.Advance()
	var root simdjson.Iter
	if _, _, err := it.Root(&root); err != nil {
		return fmt.Errorf("root: %w", err)
	}
	return w.each(&root, 0, []string{"resourceSpans", "scopeSpans", "spans"}, w.span)
}

// each finds path[0] in the object at it and calls f on every element of
// that array, descending path first while more of it is left.
func (w *walker) each(it *simdjson.Iter, depth int, path []string, f func(*simdjson.Iter) error) error {
	o, err := it.Object(w.obj[depth])
	if err != nil {
		return fmt.Errorf("%s: %w", path[0], err)
	}
	w.obj[depth] = o
	e := o.FindKey(path[0], &w.elem)
	if e == nil {
		return nil
	}
	a, err := e.Iter.Array(w.arr[depth])
	if err != nil {
		return fmt.Errorf("%s: %w", path[0], err)
	}
	w.arr[depth] = a
	ai := a.Iter()
	for ai.Advance() == simdjson.TypeObject {
		el := ai
		if len(path) > 1 {
			err = w.each(&el, depth+1, path[1:], f)
		} else {
			err = f(&el)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// span reads one span's fields: ids, name, kind, times, status and
// attributes.
func (w *walker) span(it *simdjson.Iter) error {
	o, err := it.Object(w.obj[3])
	if err != nil {
		return fmt.Errorf("span: %w", err)
	}
	w.obj[3] = o
	var v simdjson.Iter
	for {
		name, t, err := o.NextElementBytes(&v)
		if err != nil {
			return fmt.Errorf("span: %w", err)
		}
		if t == simdjson.TypeNone {
			break
		}
		switch string(name) {
		case "traceId", "spanId", "parentSpanId", "name", "startTimeUnixNano", "endTimeUnixNano":
			b, err := v.StringBytes()
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			w.sum += len(b)
		case "kind":
			k, err := v.Int()
			if err != nil {
				return fmt.Errorf("kind: %w", err)
			}
			w.sum += int(k)
		case "status":
			so, err := v.Object(nil)
			if err != nil {
				return fmt.Errorf("status: %w", err)
			}
			if e := so.FindKey("code", &w.elem); e != nil {
				c, _ := e.Iter.Int()
				w.sum += int(c)
			}
		case "attributes":
			if err := w.attributes(&v); err != nil {
				return err
			}
		}
	}
	w.spans++
	return nil
}

// attributes reads every key and scalar value of a span's attributes.
func (w *walker) attributes(it *simdjson.Iter) error {
	a, err := it.Array(w.arr[3])
	if err != nil {
		return fmt.Errorf("attributes: %w", err)
	}
	w.arr[3] = a
	ai := a.Iter()
	var kv, val simdjson.Iter
	for ai.Advance() == simdjson.TypeObject {
		o, err := ai.Object(nil)
		if err != nil {
			return fmt.Errorf("attribute: %w", err)
		}
		for {
			name, t, err := o.NextElementBytes(&kv)
			if err != nil {
				return fmt.Errorf("attribute: %w", err)
			}
			if t == simdjson.TypeNone {
				break
			}
			if string(name) == "key" {
				b, _ := kv.StringBytes()
				w.sum += len(b)
				continue
			}
			vo, err := kv.Object(nil)
			if err != nil {
				return fmt.Errorf("attribute value: %w", err)
			}
			if _, vt, _ := vo.NextElementBytes(&val); vt == simdjson.TypeString {
				b, _ := val.StringBytes()
				w.sum += len(b)
			}
		}
		w.attrs++
	}
	return nil
}
