package ingest

import (
	"fmt"
	"strings"
	"testing"
)

// unknownMembers is n members the one-document reader does not know, each
// a value of about size bytes: an object holding an array and a string.
func unknownMembers(n, size int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(",\n  ")
		}
		fmt.Fprintf(&b, `"m%d": {"a": [1, 2], "s": "%s"}`, i, strings.Repeat("x", max(size-24, 0)))
	}
	return b.String()
}

// TestUnknownMembersAreSkippedInAnyNumberAndPlace pins the skip of members
// a one-document reader does not know: any number of them, of sizes below,
// at and past the decoder's and the scan's buffers, before the record
// array, after it, on both sides, and inside Tempo's "trace" object, are
// skipped whole: every span is read and the input is not partial. Two
// skips in a row each start where the one before ended.
func TestUnknownMembersAreSkippedInAnyNumberAndPlace(t *testing.T) {
	rs := func(n int) string { return `{"scopeSpans":[{"spans":[{` + hostileSpanJSON(n) + `}]}]}` }
	recs := rs(1) + ",\n" + rs(2)
	places := []struct {
		name   string
		format Format
		doc    func(junk string) string
	}{
		{"before the records", FormatOTLPJSON, func(j string) string { return "{\n  " + j + ",\n\"resourceSpans\": [" + recs + "]}\n" }},
		{"after the records", FormatOTLPJSON, func(j string) string { return "{\"resourceSpans\": [" + recs + "],\n  " + j + "}\n" }},
		{"on both sides", FormatOTLPJSON, func(j string) string {
			return "{\n  " + j + ",\n\"resourceSpans\": [" + recs + "],\n  " + j + "}\n"
		}},
		{"inside a tempo trace", FormatTempo, func(j string) string {
			return "{\"trace\": {" + j + ",\n\"resourceSpans\": [" + recs + "], " + j + "}}\n"
		}},
	}
	for _, p := range places {
		for _, count := range []int{1, 2, 3, 40} {
			for _, size := range []int{24, 500, 520, 4096, 64<<10 - 40, 64 << 10, 64<<10 + 40, 200 << 10} {
				if count*size > 4<<20 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%d of %d bytes", p.name, count, size), func(t *testing.T) {
					doc := p.doc(unknownMembers(count, size))
					inputs, batches, err := readBytes(t, []byte(doc), ReadOptions{Strict: true, Format: p.format})
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for _, b := range batches {
						n += b.SpanCount()
					}
					if n != 2 || inputs[0].Partial {
						t.Errorf("%d spans (partial %v, warnings %q), want 2 and not partial", n, inputs[0].Partial, inputs[0].Warnings)
					}
				})
			}
		}
	}
}
