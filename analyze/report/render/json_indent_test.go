package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
)

// TestIndentToWritesWhatJSONIndentWould pins that the streaming indenter
// the JSON renderer writes through is byte for byte json.Indent's, on the
// shapes a report holds and on strings that look like structure.
func TestIndentToWritesWhatJSONIndentWould(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"empty object", `{}`},
		{"empty array and object inside", `{"a":[],"b":{},"c":[{}]}`},
		{"nested", `{"pool":{"by_scope":[{"scope":"p1","hits":0,"miss_reasons":{"cold":1}},{"scope":"p2","rate":null}],"n":-1.5e3},"ok":true}`},
		{"structure inside strings", `{"k{[,:]}":"v\"{},[]:\\","e":"\\\\","u":"\u00e9\n"}`},
		{"escaped quote then brace", `{"a":"x\\\"}","b":1}`},
		{"top-level array", `[1,"two",[3,[]],{"four":4}]`},
		{"whitespace between tokens", " {\"a\" : [ 1 , 2 ] ,\n\"b\":\t{ } } "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := bytes.TrimSpace([]byte(tc.src)) // as JSON hands it over
			var want bytes.Buffer
			if err := json.Indent(&want, src, "", "  "); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			w := bufio.NewWriter(&got)
			indentTo(w, src)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("indentTo(%s):\n%s\nwant json.Indent's:\n%s", tc.src, got.String(), want.String())
			}
		})
	}
}

// TestNullToNullsEachPathInPlace pins the null marks the renderer writes
// as it reads the compact report: the value at each path, in objects and
// in each element of an array, whatever the strings around it hold
// (brackets, quotes, commas, escapes), every other byte as it was.
func TestNullToNullsEachPathInPlace(t *testing.T) {
	const tricky = `"a\"}],{[\\"`
	for _, tc := range []struct {
		name, src, want string
		paths           [][]string
	}{
		{"no path", `{"a":1}`, `{"a":1}`, nil},
		{"a top-level key", `{"s":` + tricky + `,"a":{"b":2},"c":3}`, `{"s":` + tricky + `,"a":null,"c":3}`, [][]string{{"a"}}},
		{"a nested key", `{"a":{"s":` + tricky + `,"b":[1,{"x":"]"}],"c":4},"d":5}`, `{"a":{"s":` + tricky + `,"b":null,"c":4},"d":5}`, [][]string{{"a", "b"}}},
		{"each element", `{"a":[{"k":` + tricky + `,"v":1},{"v":2,"k":"}"}],"z":0}`, `{"a":[{"k":` + tricky + `,"v":null},{"v":null,"k":"}"}],"z":0}`, [][]string{{"a[]", "v"}}},
		{"a path through a number", `{"a":7,"b":"x"}`, `{"a":7,"b":"x"}`, [][]string{{"a", "b"}}},
		{"each of what is not an array", `{"a":{"v":1}}`, `{"a":{"v":1}}`, [][]string{{"a[]", "v"}}},
		{"a key the object lacks", `{"a":{}}`, `{"a":{}}`, [][]string{{"b"}}},
		{"the last key, an empty array", `{"a":1,"b":[]}`, `{"a":1,"b":null}`, [][]string{{"b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want bytes.Buffer
			if err := json.Indent(&want, []byte(tc.want), "", "  "); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			w := bufio.NewWriter(&got)
			in := indenter{w: w}
			nullTo(&in, []byte(tc.src), tc.paths)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("nullTo(%s, %q):\n%s\nwant:\n%s", tc.src, tc.paths, got.String(), want.String())
			}
		})
	}
}
