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
