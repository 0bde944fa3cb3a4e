package ingest

import (
	"strings"
	"testing"
)

// TestADeepMemberSkippedBeforeWhiteSpaceAndAComma pins the document
// walker's scan of an element nested past encoding/json's limit when white
// space comes between the element and the comma before the next one (a
// pretty-printer's newline, a tab, a carriage return, a space): the scan
// consumes the white space and the comma, the element is read with its
// deep value cut (the only warning), and the next element still reads.
func TestADeepMemberSkippedBeforeWhiteSpaceAndAComma(t *testing.T) {
	const deep = 20_000 // past encoding/json's 10000 levels: the skip path
	const key = "plugin.mcp.cache_key"
	deepElem := strings.TrimSuffix(strings.TrimPrefix(otlpLineWithValue(2, key, nestedAnyValueJSON(deep, false)), `{"resourceSpans":[`), "]}\n")
	for _, ws := range []string{"\n", "\t", "\r", " ", "\r\n  "} {
		t.Run(strings.NewReplacer("\n", `\n`, "\t", `\t`, "\r", `\r`).Replace(ws), func(t *testing.T) {
			data := []byte("{\"resourceSpans\": [\n" + deepElem + ws + `,{"scopeSpans":[{"spans":[{` + hostileSpanJSON(3) + `}]}]}]}`)
			inputs, spans, err := readHostile(t, data, ReadOptions{}, false)
			if err != nil {
				t.Fatal(err)
			}
			if in := inputs[0]; spans != 2 || in.Partial || len(in.Warnings) != 1 || !strings.Contains(in.Warnings[0], "nested too deep") {
				t.Fatalf("%d spans, partial %v, warnings %q; want both elements read and one depth warning", spans, in.Partial, in.Warnings)
			}
		})
	}
}
