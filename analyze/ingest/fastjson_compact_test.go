package ingest

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestCompactAttrTakesTheCompactShapeAndOnlyIt asks compactAttr itself
// which attributes it reads: the tests against pdata cannot tell, since
// the general path reads every shape it refuses the same way, only
// slower. It must take an attribute written as the Collector writes it,
// with a string, bool or int value, the last of the input too, and
// refuse, leaving the position where it was, any other opening or ending
// and an attribute the input cuts short.
func TestCompactAttrTakesTheCompactShapeAndOnlyIt(t *testing.T) {
	const next = `,{"key":"next"}` // what follows an attribute in its array
	tests := []struct {
		name, attr, after string
		want              bool
		typ               pcommon.ValueType
	}{
		{"a string", `{"key":"k","value":{"stringValue":"v"}}`, next, true, pcommon.ValueTypeStr},
		{"a bool", `{"key":"k","value":{"boolValue":true}}`, next, true, pcommon.ValueTypeBool},
		{"an int", `{"key":"k","value":{"intValue":"7"}}`, next, true, pcommon.ValueTypeInt},
		{"the last of the input", `{"key":"k","value":{"intValue":"7"}}`, "", true, pcommon.ValueTypeInt},
		{"a space after the brace", `{ "key":"k","value":{"stringValue":"v"}}`, next, false, 0},
		{"a space before the colon", `{"key" :"k","value":{"stringValue":"v"}}`, next, false, 0},
		{"the value first", `{"value":{"stringValue":"v"},"key":"k"}`, next, false, 0},
		{"a field after the value", `{"key":"k","value":{"stringValue":"v"},"x":1}`, next, false, 0},
		{"no closing brace", `{"key":"k","value":{"stringValue":"v"}`, next, false, 0},
		{"cut in the opening", `{"key":`, "", false, 0},
		{"cut after the key", `{"key":"k","value":{`, "", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.attr + tt.after
			d := fastDec{b: []byte(in), strs: &stringCache{m: map[string]string{}}}
			var v fastValue
			k, keep, ok := d.compactAttr(nil, &v)
			switch {
			case ok != tt.want:
				t.Fatalf("compactAttr of %q took it: %v, want %v", in, ok, tt.want)
			case !ok && d.i != 0:
				t.Errorf("a refused attribute left the position at %d, want 0", d.i)
			case ok && (k != "" || keep || v.typ != tt.typ || d.i != len(tt.attr)):
				t.Errorf("read key %q kept %v type %v, stopping before %q", k, keep, v.typ, in[d.i:])
			}
		})
	}
}
