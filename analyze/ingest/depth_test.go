package ingest

import (
	"strings"
	"testing"
)

// TestStrayClosersBeforeADeepRecordAreReadAsTooDeep pins the depth walk on
// malformed JSON: closing brackets and commas with nothing open (jsonDepth
// lets the depth go below zero, jsonDepthPlace finds no frame to pop or to
// count in, cutJSON keeps it at zero) are passed over, and the record,
// deeper than MaxDepth once its own brackets are counted, is cut and then
// reported by its decoder on its line where its JSON is malformed, never
// a panic of the walk.
func TestStrayClosersBeforeADeepRecordAreReadAsTooDeep(t *testing.T) {
	const jsonBase = 7 // otlpLineBrackets' levels besides its brackets
	for _, stray := range []string{"]", "}", "]}]", ",", ",]"} {
		t.Run(stray, func(t *testing.T) {
			deep := stray + otlpLineBrackets(2, MaxDepth-jsonBase+1+len(stray))
			inputs, _, err := readBytes(t, []byte(otlpLine(1)+deep), ReadOptions{})
			if err != nil || len(inputs) != 1 || inputs[0].Spans == 0 {
				t.Fatalf("inputs %+v, %v; want the first line read", inputs, err)
			}
			if w := strings.Join(inputs[0].Warnings, "\n"); !strings.Contains(w, "-:2 (byte ") {
				t.Errorf("warnings %q; want one naming line 2", inputs[0].Warnings)
			}
		})
	}
}

// TestPathKeyQuotesAllButPlainNames pins pathKey's name test at each
// range's edges (a key holding ':', '[', '{' or a byte past ASCII is
// never written bare in a place): a key is
// written as is when it is 1 to 40 letters, digits and '_', quoted else.
func TestPathKeyQuotesAllButPlainNames(t *testing.T) {
	plain := []string{"a", "z", "A", "Z", "0", "9", "_", "service_name2", strings.Repeat("k", 40)}
	quoted := []string{"", "/", ":", "@", "[", "`", "{", "~", "-", ".", " ", "é", "a.b", "x:", strings.Repeat("k", 41)}
	for _, k := range plain {
		if got := pathKey(k); got != k {
			t.Errorf("pathKey(%q) = %s, want it bare", k, got)
		}
	}
	for _, k := range quoted {
		if got, want := pathKey(k), QuoteText(k); got != want {
			t.Errorf("pathKey(%q) = %s, want it quoted, %s", k, got, want)
		}
	}
}

// deepKVList is an attribute whose value nests depth key-value lists, each
// holding one entry whose value holds the next.
func deepKVList(depth int) pb {
	v := pb(nil).str(fieldValueString, "leaf")
	for range depth {
		v = pb(nil).bytes(fieldValueKVList, pb(nil).bytes(fieldKVListValues, pb(nil).str(fieldKVKey, "k").bytes(fieldKVValue, v)))
	}
	return pb(nil).str(fieldKVKey, "deep").bytes(fieldKVValue, v)
}

// TestAProtobufKVListNestedPastTheLimitNamesItsPlace pins protoDepth's
// count through key-value lists (depth.go: `&& lvl != pbKVList` dropped:
// each list's entry counted as an attribute, from 0 again, so that the
// walk never passed the limit and pdata's bare "exceeded max recursion
// depth" was the error): the value is cut at the place the walk names, in
// the value of the outermost attribute, and its span read.
func TestAProtobufKVListNestedPastTheLimitNamesItsPlace(t *testing.T) {
	rec := framed(request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, deepKVList(60)))))
	inputs, tds, err := readBytes(t, rec, ReadOptions{Strict: true})
	want := `nested too deep in the value of attribute "deep", at resource_spans[0].scope_spans[0].spans[0].attributes[3].value.kvlist_value.values[0].value.kvlist_value.values[0]`
	if err != nil || len(tds) != 1 || len(inputs[0].Warnings) != 1 || !strings.Contains(inputs[0].Warnings[0], want) {
		t.Fatalf("%d batches, %v, warnings %q; want the span and a warning saying %q", len(tds), err, inputs[0].Warnings, want)
	}
}
